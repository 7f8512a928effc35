-- Node, source of a move, start of the cut-over: freezes the shard
-- (freeze_shard_tables, lease or permanent, waiting at most lock_timeout_ms
-- for its tables) and returns, from the same transaction, the WAL insert
-- position and the state of every generator of the schema. Every write to
-- the shard committed before the freeze lies below that position (the
-- freeze waited for writes in flight), and the generators are final.
CREATE OR REPLACE FUNCTION shardid_internal._move_freeze(schema_name name, shard integer, target text, lease boolean, lock_timeout_ms integer)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    PERFORM set_config('lock_timeout', lock_timeout_ms || 'ms', true);
    n := shardid.freeze_shard_tables(schema_name, shard, target, lease);
    RETURN jsonb_build_object(
        'tables', n,
        'lsn', pg_current_wal_insert_lsn()::text,
        'states', (SELECT COALESCE(jsonb_object_agg(x.relname, x.v) FILTER (WHERE x.v IS NOT NULL), '{}')
                     FROM (SELECT c.relname, pg_sequence_last_value(c.oid) AS v
                             FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
                            WHERE n.nspname = _move_freeze.schema_name AND c.relkind = 'S') AS x));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_freeze(name, integer, text, boolean, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_freeze(name, integer, text, boolean, integer) IS
    'Node, move cut-over on the source: freezes the shard''s tables and returns the WAL insert position and its generators'' states.';
