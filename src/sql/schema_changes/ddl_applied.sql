-- Which tables (the template, each shard's copy) or nodes have a change of
-- shardid.ddl_changes: written in the transaction that changes them, or,
-- for statements that run outside a transaction block, marked running
-- before the statement is sent and done after it returned.
CREATE TABLE shardid.ddl_applied (
    change_id   bigint NOT NULL REFERENCES shardid.ddl_changes (change_id) ON DELETE CASCADE,
    target      text NOT NULL,
    shard       integer,
    done        boolean NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    PRIMARY KEY (change_id, target)
);

GRANT SELECT ON shardid.ddl_applied TO PUBLIC;

COMMENT ON TABLE shardid.ddl_applied IS
    'apply_ddl() ledger: the targets that have a change (target ''template'', a shard''s schema, or on the router a node), done or still running (statements outside a transaction block), and when.';
