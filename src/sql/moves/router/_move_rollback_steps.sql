-- Router, the steps of _move_rollback() for the move's row m (phase
-- 'aborting'), each on its own so one unreachable node stops none of the
-- others, and the source first (the target is not routed, so the shard
-- must be writable where it is):
--   1. source: the freeze triggers dropped (unfreeze_shard_tables);
--   2. target: the subscription disabled, detached, dropped (and 15's role);
--   3. source: the move's slot, the table-sync slots, the publication;
--   4. target: the copy unregistered and dropped (not if step 2 failed).
-- When all succeeded the row is deleted; else it stays in phase 'aborting'
-- with last_error listing what is left ('rollback incomplete, left: ...',
-- or 'rollback cancelled, left: ...' when a cancel stopped the steps).
-- Returns whether something was left because its node could not be
-- reached (_move_rollback may then try again: a failover under way).
-- Never raises; the caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._move_rollback_steps(m shardid.shard_moves) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nm        name := shardid_internal._move_name(m.shard, m.move_id);
    remaining text[];
    res       jsonb;
    step      jsonb;
    cancelled boolean := false;
    tgt_done  boolean := false;
    outage    boolean := false;
BEGIN
    -- 1. the source writable again, before anything else
    step := shardid_internal._move_rollback_step('shardid_move_source', m.source,
                                        format('SELECT shardid.unfreeze_shard_tables(%L)', m.schema_name),
                                        format('the freeze of shard %s', m.shard));
    remaining := ARRAY[step ->> 'left'];
    outage := outage OR COALESCE((step ->> 'unreachable')::boolean, false);
    -- 2. the subscription, without the source
    IF NOT step ? 'cancelled' THEN
        step := shardid_internal._move_rollback_step('shardid_move_target', m.target,
                                            format('SELECT shardid_internal._move_unsubscribe(%L)', nm),
                                            format('subscription %s', nm));
        tgt_done := step ? 'value';
        res := (step ->> 'value')::jsonb;
        remaining := remaining || (step ->> 'left');
        outage := outage OR COALESCE((step ->> 'unreachable')::boolean, false);
    END IF;
    -- 3. the slots (table-sync ones too) and the publication
    IF NOT step ? 'cancelled' THEN
        step := shardid_internal._move_rollback_step('shardid_move_source', m.source,
                                            format('SELECT shardid_internal._move_unpublish(%L, %L, %L, 10000)', nm,
                                                   COALESCE(m.subscription, (res ->> 'subid')::oid),
                                                   COALESCE(m.target_sysid, res ->> 'sysid')),
                                            format('publication and slots %s', nm));
        IF step ->> 'value' <> '' THEN
            remaining := remaining || format('replication slots %s on node "%s" (in use)', step ->> 'value', m.source);
        END IF;
        remaining := remaining || (step ->> 'left');
        outage := outage OR COALESCE((step ->> 'unreachable')::boolean, false);
    END IF;
    -- 4. the target's copy, once nothing replicates into it
    IF NOT step ? 'cancelled' THEN
        IF tgt_done THEN
            step := shardid_internal._move_rollback_step('shardid_move_target', m.target,
                                                format('SELECT shardid_internal._move_drop_copy(%s, %L)', m.shard, m.schema_name),
                                                format('the copy %s', quote_ident(m.schema_name)));
            remaining := remaining || (step ->> 'left');
            outage := outage OR COALESCE((step ->> 'unreachable')::boolean, false);
        ELSE
            remaining := remaining || format('the copy %s on node "%s"', quote_ident(m.schema_name), m.target);
        END IF;
    END IF;
    cancelled := step ? 'cancelled';
    remaining := array_remove(remaining, NULL);

    BEGIN
        IF cancelled THEN
            remaining := remaining || 'the rest: the rollback was cancelled'::text;
        END IF;
        IF cardinality(remaining) = 0 THEN
            DELETE FROM shardid.shard_moves AS x WHERE x.shard = m.shard;
            RAISE NOTICE 'move of shard % rolled back: nothing left on "%", shard writable on "%"', m.shard, m.target, m.source;
        ELSE
            UPDATE shardid.shard_moves AS x
               SET last_error = CASE WHEN cancelled THEN 'rollback cancelled, left: ' ELSE 'rollback incomplete, left: ' END
                                || array_to_string(remaining, '; '),
                   updated_at = clock_timestamp()
             WHERE x.shard = m.shard;
        END IF;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        NULL;
    END;
    RETURN outage AND NOT cancelled AND cardinality(remaining) > 0;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_rollback_steps(shardid.shard_moves) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_rollback_steps(shardid.shard_moves) IS
    'Router, moves: the steps of a rollback (source writable, subscription, slots and publication, target copy), each on its own; deletes the move''s row, or records what is left and returns whether a node could not be reached; never raises.';
