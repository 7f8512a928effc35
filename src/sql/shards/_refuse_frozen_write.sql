-- On the source node during a move's cut-over: writes to the shard fail
-- at once with 25006 (retry), instead of waiting behind a lock. A lease
-- freeze (third argument 'lease') lapses when the session that froze the
-- shard holds the advisory lock on the fourth argument, a random key, no
-- more: the write goes through then (see freeze_shard_tables). (A lease
-- frozen by 0.2 has no fourth argument and its key is (1936222564, shard).)
CREATE OR REPLACE FUNCTION shardid_internal._refuse_frozen_write() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_NARGS >= 3 AND TG_ARGV[2] = 'lease'
       AND (CASE WHEN TG_NARGS >= 4 THEN pg_try_advisory_xact_lock_shared(TG_ARGV[3]::bigint)
                 ELSE pg_try_advisory_xact_lock_shared(1936222564, TG_ARGV[0]::integer) END) THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'shard % is being moved to node %: %.% refuses writes for the cut-over', TG_ARGV[0], TG_ARGV[1],
            quote_ident(TG_TABLE_SCHEMA), quote_ident(TG_TABLE_NAME)
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry in a new transaction: the move finishes within seconds.';
END
$$;

-- It fires for every role writing to a frozen shard, EXECUTE or not; only
-- freeze_shard_tables() (administrators) attaches it.
REVOKE ALL ON FUNCTION shardid_internal._refuse_frozen_write() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_frozen_write() IS
    'Trigger on the tables of a shard during a move''s cut-over: refuses writes at once (25006, retry); a lease freeze lapses with the session that froze the shard.';
