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
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.abort_move()',
                                             'after each step of the rollback');
    s := shardid_internal._move_abort_start(shard);
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
    CALL shardid_internal._move_rollback(shard);
    s := shardid_internal._move_rolled_back(s, 'abort');
    COMMIT;
    PERFORM shardid_internal._move_raise(s);
END
$$;

REVOKE ALL ON PROCEDURE shardid.abort_move(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.abort_move(integer) IS
    'Router: rolls back a shard move that has not been repointed (source writable first, then subscription, slots, publication, target copy); refused while another session runs the move.';
