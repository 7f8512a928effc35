-- Router: rolls a move back unless it has been repointed, committing as it
-- goes. The phase is read under the lock on shard_placement that
-- repoint_shard() takes and turned to 'aborting' in that transaction, so
-- a move that the router already points at the target is never undone
-- (it stays repointed). Then, each step on its own so one unreachable
-- node stops none of the others, and the source first (the target is not
-- routed, so the shard must be writable where it is):
--   1. source: the freeze triggers dropped (thaw_shard_tables);
--   2. target: the subscription disabled, detached, dropped (and 15's role);
--   3. source: the move's slot, the table-sync slots, the publication;
--   4. target: the copy unregistered and dropped (not if step 2 failed).
-- When all succeeded the row is deleted; else it stays in phase 'aborting'
-- with last_error listing what is left ('rollback incomplete, left: ...',
-- or 'rollback cancelled, left: ...' when a cancel stopped the steps), for
-- abort_move() or move_shard() to finish. The caller reads the outcome
-- from the row (_move_outcome). Never raises: its caller holds the shard's
-- lock.
CREATE OR REPLACE PROCEDURE shardid_internal._move_rollback(shard integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    m         shardid.shard_moves;
    nm        name;
    remaining text[];
    res       jsonb;
    step      jsonb;
    msg       text;
    st        text;
    cancelled boolean := false;
    tgt_done  boolean := false;
    outcome   text;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid_internal._move_rollback() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after each step, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'It is called by shardid.move_shard() and shardid.abort_move(): CALL those on their own.';
    END IF;
    BEGIN
        LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
        SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) _move_rollback.shard FOR UPDATE;
        IF m.shard IS NULL THEN
            outcome := 'none';
        ELSIF m.phase OPERATOR(pg_catalog.=) 'repointed' THEN
            outcome := 'repointed';
        ELSE
            UPDATE shardid.shard_moves AS x SET phase = 'aborting', updated_at = pg_catalog.clock_timestamp()
             WHERE x.shard OPERATOR(pg_catalog.=) _move_rollback.shard;
        END IF;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
        outcome := CASE WHEN st OPERATOR(pg_catalog.=) '57014' THEN 'cancelled' ELSE 'failed: ' OPERATOR(pg_catalog.||) msg END;
    END;
    COMMIT;
    IF outcome IS NOT NULL THEN
        RETURN;
    END IF;
    RAISE NOTICE 'rolling back the move of shard %: it stays on "%"', shard, m.source;
    nm := shardid_internal._move_name(m.shard, m.move_id);

    -- 1. the source writable again, before anything else
    step := shardid_internal._move_rollback_step('shardid_move_source', m.source,
                                        pg_catalog.format('SELECT shardid.thaw_shard_tables(%L)', m.schema_name),
                                        pg_catalog.format('the freeze of shard %s', shard));
    remaining := ARRAY[step OPERATOR(pg_catalog.->>) 'left'];
    -- 2. the subscription, without the source
    IF NOT step OPERATOR(pg_catalog.?) 'cancelled' THEN
        step := shardid_internal._move_rollback_step('shardid_move_target', m.target,
                                            pg_catalog.format('SELECT shardid_internal._move_unsubscribe(%L)', nm),
                                            pg_catalog.format('subscription %s', nm));
        tgt_done := step OPERATOR(pg_catalog.?) 'value';
        res := (step OPERATOR(pg_catalog.->>) 'value')::jsonb;
        remaining := remaining OPERATOR(pg_catalog.||) (step OPERATOR(pg_catalog.->>) 'left');
    END IF;
    -- 3. the slots (table-sync ones too) and the publication
    IF NOT step OPERATOR(pg_catalog.?) 'cancelled' THEN
        step := shardid_internal._move_rollback_step('shardid_move_source', m.source,
                                            pg_catalog.format('SELECT shardid_internal._move_unpublish(%L, %L, %L, 10000)', nm,
                                                              COALESCE(m.subscription, (res OPERATOR(pg_catalog.->>) 'subid')::oid),
                                                              COALESCE(m.target_sysid, res OPERATOR(pg_catalog.->>) 'sysid')),
                                            pg_catalog.format('publication and slots %s', nm));
        IF step OPERATOR(pg_catalog.->>) 'value' OPERATOR(pg_catalog.<>) '' THEN
            remaining := remaining OPERATOR(pg_catalog.||)
                         pg_catalog.format('replication slots %s on node "%s" (in use)', step OPERATOR(pg_catalog.->>) 'value', m.source);
        END IF;
        remaining := remaining OPERATOR(pg_catalog.||) (step OPERATOR(pg_catalog.->>) 'left');
    END IF;
    -- 4. the target's copy, once nothing replicates into it
    IF NOT step OPERATOR(pg_catalog.?) 'cancelled' THEN
        IF tgt_done THEN
            step := shardid_internal._move_rollback_step('shardid_move_target', m.target,
                                                pg_catalog.format('SELECT shardid_internal._move_drop_copy(%s, %L)', shard, m.schema_name),
                                                pg_catalog.format('the copy %s', pg_catalog.quote_ident(m.schema_name)));
            remaining := remaining OPERATOR(pg_catalog.||) (step OPERATOR(pg_catalog.->>) 'left');
        ELSE
            remaining := remaining OPERATOR(pg_catalog.||) pg_catalog.format('the copy %s on node "%s"', pg_catalog.quote_ident(m.schema_name), m.target);
        END IF;
    END IF;
    cancelled := step OPERATOR(pg_catalog.?) 'cancelled';
    remaining := pg_catalog.array_remove(remaining, NULL);

    BEGIN
        IF cancelled THEN
            remaining := remaining OPERATOR(pg_catalog.||) 'the rest: the rollback was cancelled'::text;
        END IF;
        IF pg_catalog.cardinality(remaining) OPERATOR(pg_catalog.=) 0 THEN
            DELETE FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) _move_rollback.shard;
            RAISE NOTICE 'move of shard % rolled back: nothing left on "%", shard writable on "%"', shard, m.target, m.source;
        ELSE
            UPDATE shardid.shard_moves AS x
               SET last_error = CASE WHEN cancelled THEN 'rollback cancelled, left: ' ELSE 'rollback incomplete, left: ' END
                                OPERATOR(pg_catalog.||) pg_catalog.array_to_string(remaining, '; '),
                   updated_at = pg_catalog.clock_timestamp()
             WHERE x.shard OPERATOR(pg_catalog.=) _move_rollback.shard;
        END IF;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        NULL;
    END;
    COMMIT;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._move_rollback(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._move_rollback(integer) IS
    'Router: rolls back a move not yet repointed (phase read under the repoint''s lock), the source made writable first; deletes its row, or leaves it aborting with what is left.';
