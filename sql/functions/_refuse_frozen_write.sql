-- On the source node during a move's cut-over: writes to the shard fail
-- at once with 25006 (retry), instead of waiting behind a lock.
CREATE OR REPLACE FUNCTION shardid._refuse_frozen_write() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'shard % is being moved to node %: %.% refuses writes for the cut-over', TG_ARGV[0], TG_ARGV[1],
            pg_catalog.quote_ident(TG_TABLE_SCHEMA), pg_catalog.quote_ident(TG_TABLE_NAME)
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry in a new transaction: the move finishes within seconds.';
END
$$;

-- It fires for every role writing to a frozen shard, EXECUTE or not; only
-- freeze_shard_tables() (administrators) attaches it.
REVOKE ALL ON FUNCTION shardid._refuse_frozen_write() FROM PUBLIC;

COMMENT ON FUNCTION shardid._refuse_frozen_write() IS
    'Trigger on the tables of a shard during a move''s cut-over: refuses writes at once (25006, retry).';
