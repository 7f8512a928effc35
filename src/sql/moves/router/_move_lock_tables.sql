-- Router, moves: runs on the source a statement that locks the shard's
-- tables for 300 ms at most (its lock_timeout), again and again while it
-- fails with 55P03, for lock_timeout in all, so writers never queue behind
-- it for long. Returns its value as jsonb.
CREATE OR REPLACE FUNCTION shardid_internal._move_lock_tables(shard integer, sql text, lock_timeout interval) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m        shardid.shard_moves;
    deadline timestamptz := clock_timestamp() + lock_timeout;
    r        jsonb;
BEGIN
    SELECT * INTO STRICT m FROM shardid.shard_moves AS x WHERE x.shard = _move_lock_tables.shard;
    LOOP
        BEGIN
            r := shardid_internal._node('shardid_move_source', sql, m.source)::jsonb;
            RETURN r;
        EXCEPTION WHEN lock_not_available THEN
            IF clock_timestamp() > deadline THEN
                RAISE EXCEPTION 'could not lock the tables of shard % on node "%": writers held them for %', shard, m.source, lock_timeout
                    USING ERRCODE = 'lock_not_available',
                          HINT = 'Retry when writes are fewer, or with a longer lock_timeout.';
            END IF;
        END;
        PERFORM pg_sleep(0.05);
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_lock_tables(integer, text, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_lock_tables(integer, text, interval) IS
    'Router, moves: runs a statement that locks the shard''s tables on the source, retrying lock timeouts for lock_timeout in all.';
