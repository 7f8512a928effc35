-- Router, moves: one session at a time works on a shard's move. Takes the
-- lock 'move <shard>' of shardid.session_locks (_session_lock), which is
-- free again once this session ends, however it ends, and which only
-- administrators may take or hold (0.2's advisory key could be held by
-- any role, blocking every move of the shard); 55006 naming the backend
-- that holds it otherwise. The caller commits at once. Also refuses what a move
-- cannot run in: a transaction block (a move commits once per phase), a
-- NULL shard, a router without dblink.
CREATE OR REPLACE FUNCTION shardid_internal._move_lock(shard integer, what text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    holder integer;
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'shard must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- a transaction that began before this statement: BEGIN; CALL ...
    IF transaction_timestamp() < statement_timestamp() THEN
        RAISE EXCEPTION '% cannot run inside a transaction block', what
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits once per phase, so that an interruption resumes or rolls back from there.',
                  HINT = 'CALL it on its own (autocommit).';
    END IF;
    PERFORM shardid_internal._dblink_schema();
    holder := shardid_internal._session_lock('move ' || shard);
    IF holder IS NOT NULL THEN
        RAISE EXCEPTION 'shard % is being moved by another session (backend %)', shard, holder
            USING ERRCODE = 'object_in_use',
                  HINT = format('Wait for it, or stop it: SELECT pg_cancel_backend(%s); rolls the move back, pg_terminate_backend(%s) leaves it to be resumed or aborted.', holder, holder);
    END IF;
    -- the move's connections are its own (_node_connect keeps one that is
    -- open): none an earlier move of this session left to other nodes
    PERFORM shardid_internal._move_disconnect();
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_lock(integer, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_lock(integer, text) IS
    'Router, moves: takes the lock of a shard''s move in shardid.session_locks (55006 naming its holder), refusing a transaction block; the caller commits.';
