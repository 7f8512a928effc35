-- On the old node after a move: any write that still reaches the retired
-- copy of a shard fails instead of being lost there.
CREATE OR REPLACE FUNCTION shardid_internal._refuse_retired_write() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'shard % moved to node %: %.% is its retired copy', TG_ARGV[0], TG_ARGV[1],
            pg_catalog.quote_ident(TG_TABLE_SCHEMA), pg_catalog.quote_ident(TG_TABLE_NAME)
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry through the router.';
END
$$;

-- It fires for every role writing to a retired copy, EXECUTE or not; only
-- retire_shard() (administrators) attaches it.
REVOKE ALL ON FUNCTION shardid_internal._refuse_retired_write() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_retired_write() IS
    'Trigger on the retired copy of a moved shard: refuses writes (25006, retry through the router).';
