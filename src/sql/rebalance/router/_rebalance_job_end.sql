-- Router, the driver's end (_rebalance_job_run()): the job finished
-- (balanced, drained or max_moves, with its NOTICE) or stopped
-- (rebalance_stop()); releases the rebalance lock. A job with moves that
-- failed after their retries (_rebalance_job_step()) fails, listing them
-- with their last errors; a drain that leaves
-- shards on its node (frozen on the router, or in a move) fails: the
-- error (55000 naming them) is recorded in the job's row and returned, for
-- the driver to raise once this has committed (the lock released).
CREATE OR REPLACE FUNCTION shardid_internal._rebalance_job_end(job_id bigint) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j           shardid.rebalance_jobs;
    o           jsonb;
    left_shards text;
    err         text[];
BEGIN
    SELECT * INTO j FROM shardid.rebalance_jobs AS x WHERE x.job_id = _rebalance_job_end.job_id;
    o := j.options;
    IF j.state = 'stopping' THEN
        RAISE NOTICE '%: stopped (moves made: %)', CASE WHEN j.kind = 'drain' THEN 'drain_node' ELSE 'rebalance' END, j.moves_done;
    ELSIF EXISTS (SELECT FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id AND x.state = 'failed') THEN
        SELECT ARRAY['55000',
                     pg_catalog.format('%s: %s move(s) failed after their retries: %s (moves made: %s)',
                                       CASE WHEN j.kind = 'drain' THEN 'drain_node' ELSE 'rebalance' END, pg_catalog.count(*),
                                       pg_catalog.string_agg(pg_catalog.format('shard %s to node "%s"', x.shard, x.target), ', ' ORDER BY x.shard),
                                       j.moves_done),
                     pg_catalog.string_agg(pg_catalog.format('shard %s (%s tries): %s', x.shard, x.tries, x.last_error), '; ' ORDER BY x.shard),
                     'The other moves were made. Fix the cause and start the rebalance or drain again: it plans those shards anew (check_cluster() names a move left in progress).']
          INTO err
          FROM shardid.rebalance_job_moves AS x WHERE x.job_id = j.job_id AND x.state = 'failed';
    ELSIF j.kind = 'drain' THEN
        SELECT pg_catalog.string_agg(p.shard::text, ', ' ORDER BY p.shard) INTO left_shards
          FROM shardid.shard_placement AS p WHERE p.node = j.drain_node;
        IF left_shards IS NOT NULL THEN
            err := ARRAY['55000',
                         pg_catalog.format('node "%s" still holds shards %s (moves made: %s)', j.drain_node, left_shards, j.moves_done),
                         'They are frozen on the router (freeze_shard()) or in a move.',
                         'unfreeze_shard() them or finish their moves, then CALL shardid.drain_node() again.'];
        ELSE
            RAISE NOTICE 'drain_node: node "%" holds no shard (moves made: %); SELECT shardid.remove_node(%); removes it',
                j.drain_node, j.moves_done, pg_catalog.quote_literal(j.drain_node);
        END IF;
    ELSIF (o->>'max_moves')::integer IS NOT NULL AND j.moves_done >= (o->>'max_moves')::integer THEN
        RAISE NOTICE 'rebalance: stopped at max_moves (moves made: %): CALL rebalance() again for more', j.moves_done;
    ELSIF j.moves_done = 0 THEN
        RAISE NOTICE 'rebalance: balanced: nothing to move';
    ELSE
        RAISE NOTICE 'rebalance: balanced (moves made: %)', j.moves_done;
    END IF;
    PERFORM shardid_internal._rebalance_unlock();
    UPDATE shardid.rebalance_jobs AS x
       SET state = CASE WHEN err IS NOT NULL THEN 'failed' WHEN x.state = 'stopping' THEN 'stopped' ELSE 'finished' END,
           last_error = CASE WHEN err IS NOT NULL THEN err[2] ELSE x.last_error END,
           current_shard = NULL, current_source = NULL, current_target = NULL,
           finished_at = pg_catalog.clock_timestamp(), updated_at = pg_catalog.clock_timestamp()
     WHERE x.job_id = _rebalance_job_end.job_id;
    RETURN err;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._rebalance_job_end(bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._rebalance_job_end(bigint) IS
    'Router, the rebalance driver''s end: marks the job finished (with its NOTICE), stopped, or failed (moves that failed after their retries, or a drain that leaves shards: the error returned, to be raised after the commit), and releases the rebalance lock.';
