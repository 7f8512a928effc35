-- Router: empties a node so that remove_node() can remove it: moves every
-- shard off it with move_shard(), one at a time, committing after each,
-- each to the node that is then the emptiest (drain_plan(), re-made
-- before every move, as rebalance() re-plans). A job of the one rebalance
-- driver run in this session (_rebalance_job_run(), as drain_node_start()
-- runs it in the background): a move from the node left in progress is
-- resumed first (one being rolled back is rolled back to the end; an
-- offline one is refused with a hint). One at a time with rebalance() and
-- the background rebalance (the rebalance lock). Stops at the first
-- failure by raising it; CALL it again to go on. The move options are
-- passed to every move_shard() call.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds only the CALL; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid.drain_node(node text, strategy text DEFAULT 'by_size',
    drop_old boolean DEFAULT NULL, lock_timeout interval DEFAULT NULL, cutover_timeout interval DEFAULT NULL,
    catchup_timeout interval DEFAULT NULL, node_timeout interval DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.drain_node()', 'after every move');
    CALL shardid_internal._rebalance_job_run(shardid_internal._rebalance_job_create('drain', node, shardid_internal._rebalance_options(
        'drain', node, strategy, NULL, NULL, drop_old, lock_timeout, cutover_timeout, catchup_timeout, node_timeout, 1, 1, 0, '10 s'),
        in_session => true));
END
$$;

REVOKE ALL ON PROCEDURE shardid.drain_node(text, text, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.drain_node(text, text, boolean, interval, interval, interval, interval) IS
    'Router: moves every shard off a node with move_shard(), one at a time, each to the then emptiest other node (drain_plan(), re-made before each), committing after each, so that remove_node() succeeds; resumes a move from the node left in progress first.';
