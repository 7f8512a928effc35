-- The freeze record: next_id() inserts a row (from C, bypassing privileges)
-- in the transaction of the first ID a backend issues, until a committed
-- row is there. Unlike the marker sequence shardid.ids_issued, nothing but
-- DROP EXTENSION removes a row: setval() cannot touch it, PostgreSQL 19's
-- sequence replication does not copy it, and its trigger refuses UPDATE,
-- DELETE and TRUNCATE from any session, replication's included. Not dumped:
-- a restored database is frozen by its restored sequences, and writes its
-- own record at its first ID.
CREATE TABLE shardid.layout_freeze (
    issued_at  timestamptz NOT NULL,
    epoch_ms   bigint      NOT NULL,
    shard_bits integer     NOT NULL,
    seq_bits   integer     NOT NULL
);

COMMENT ON TABLE shardid.layout_freeze IS
    'Freeze record: a row written by next_id() when it first issues IDs in this database (with the layout then); while any row exists the layout cannot change. Append-only.';
