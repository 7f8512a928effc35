-- The ledger of apply_ddl(): one row per change of a sharded table's
-- template and every shard's copy (on a node), or of every node (on the
-- router). finished_at is NULL while the change is open; a re-CALL of the
-- same command goes on with it, abandon_ddl() closes it as it is
-- (abandoned), and another command for the same template is refused until
-- it is closed. A change a router sent carries the router's change in
-- origin, so a re-CALL after any interruption finds it on the node,
-- finished or not, and never runs it twice. Not dumped: a restored
-- database's tables carry the changes themselves.
CREATE TABLE shardid.ddl_changes (
    change_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    template      text NOT NULL,
    table_name    name NOT NULL,
    command       text NOT NULL,
    kind          text NOT NULL,
    concurrent  boolean NOT NULL,
    on_nodes      boolean NOT NULL,
    requested_by  name NOT NULL DEFAULT CURRENT_USER,
    started_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    finished_at   timestamptz,
    abandoned     boolean NOT NULL DEFAULT false,
    origin        text
);

-- one open change per template
CREATE UNIQUE INDEX ddl_changes_unfinished ON shardid.ddl_changes (template) WHERE finished_at IS NULL;
-- a router's change, once per node
CREATE UNIQUE INDEX ddl_changes_origin ON shardid.ddl_changes (origin) WHERE origin IS NOT NULL;

GRANT SELECT ON shardid.ddl_changes TO PUBLIC;

COMMENT ON TABLE shardid.ddl_changes IS
    'apply_ddl() ledger: one row per change (template, sharded table, command with %s, kind, whether CONCURRENTLY, on the nodes or here, who, when started and closed; finished_at NULL while open, abandoned when abandon_ddl() closed it; origin: the router''s change it was sent for).';
