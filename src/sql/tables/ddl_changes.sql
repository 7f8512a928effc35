-- The ledger of apply_ddl(): one row per change of a sharded table's
-- template and every shard's copy (on a node), or of every node (on the
-- router). finished_at is NULL while the change is unfinished; a re-CALL of
-- the same command goes on with it, and another command for the same
-- template is refused until it is finished. Not dumped: a restored
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
    finished_at   timestamptz
);

-- one unfinished change per template
CREATE UNIQUE INDEX ddl_changes_unfinished ON shardid.ddl_changes (template) WHERE finished_at IS NULL;

GRANT SELECT ON shardid.ddl_changes TO PUBLIC;

COMMENT ON TABLE shardid.ddl_changes IS
    'apply_ddl() ledger: one row per change (template, sharded table, command with %s, kind, whether CONCURRENTLY, on the nodes or here, who, when started and finished; finished_at NULL while unfinished).';
