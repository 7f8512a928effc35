-- Router: rolls back a move that the router does not point at yet (see
-- _move_rollback: the source made writable first, then the subscription,
-- the slots and publication, the target's copy), e.g. one left by a
-- session that was terminated, or a rollback that could not finish
-- because a node was down. A move being run by another session is refused
-- (cancel that session instead: its rollback is the same); a repointed one
-- too: CALL move_shard() again to finish it. No SET clause (it COMMITs):
-- this holds the calls and their COMMITs, the checks and errors are
-- functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.abort_move(shard integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    s shardid_internal._move_run;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.abort_move() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after each step of the rollback, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own (autocommit).';
    END IF;
    s := shardid_internal._move_abort_start(shard);
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
    CALL shardid_internal._move_rollback(shard);
    s := shardid_internal._move_abort_end(s);
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
END
$$;

REVOKE ALL ON PROCEDURE shardid.abort_move(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.abort_move(integer) IS
    'Router: rolls back a shard move that has not been repointed (source writable first, then subscription, slots, publication, target copy); refused while another session runs the move.';
