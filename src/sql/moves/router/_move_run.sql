-- What one CALL of shardid.move_shard() carries from step to step
-- (_move_start, _move_step, _move_rolled_back), so that the procedure holds
-- only its loop and its COMMITs.
CREATE TYPE shardid_internal._move_run AS (
    m        shardid.shard_moves,  -- the move's row as the last step left it (kept when the row is gone)
    phase    text,                 -- the phase to run next; NULL when the move is done
    state    jsonb,                -- what one poll of the copy tells the next (_move_copy)
    steps    jsonb,                -- the cut-over's steps (_move_cutover)
    old      text,                 -- what became of the old copy (_move_finish)
    routed   boolean,              -- this step repointed a frozen shard: writes are routed once it commits
    waiting  boolean,              -- an offline move waits for its rows: the CALL ends
    aborting boolean,              -- the move was being rolled back when the CALL began
    err      text[]                -- SQLSTATE, message, detail and hint of a failure
);

COMMENT ON TYPE shardid_internal._move_run IS
    'Internal: what one CALL of shardid.move_shard() carries from step to step: the move''s row, the next phase, the copy''s state, the cut-over''s steps, the old copy, and the error of a failure.';
