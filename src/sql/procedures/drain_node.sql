-- Router: empties a node so that remove_node() can remove it: moves every
-- shard off it with move_shard(), one at a time, committing after each,
-- each to the node that is then the emptiest (drain_plan(), re-made
-- before every move, as rebalance() re-plans). A move from the node left
-- in progress is resumed first. One at a time with rebalance() and the
-- background rebalance (the rebalance lock). Stops at the first failure
-- by raising it; CALL it again to go on. The move options are passed to
-- every move_shard() call.
-- No SET search_path: PostgreSQL refuses COMMIT in a procedure that has
-- one, so every name and operator here is schema-qualified.
CREATE OR REPLACE PROCEDURE shardid.drain_node(
    node text,
    strategy text DEFAULT 'by_size',
    drop_old boolean DEFAULT false,
    lock_timeout interval DEFAULT '10 s',
    cutover_timeout interval DEFAULT '30 s',
    catchup_timeout interval DEFAULT '1 day',
    node_timeout interval DEFAULT '30 s')
    LANGUAGE plpgsql
AS $$
DECLARE
    left_over record;
    next_move record;
    made      integer := 0;
BEGIN
    IF NOT shardid_internal._commit_allowed() THEN
        RAISE EXCEPTION 'shardid.drain_node() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after every move, which a CALL inside BEGIN ... COMMIT, a function, an EXCEPTION block or a multi-statement query string cannot do.',
                  HINT = 'CALL it on its own (autocommit).';
    END IF;
    PERFORM shardid_internal._check_rebalance_options(strategy, NULL);
    PERFORM shardid_internal._drain_start(node);
    COMMIT;
    FOR left_over IN
        SELECT m.shard, m.target, m.phase FROM shardid.shard_moves AS m
         WHERE m.source OPERATOR(pg_catalog.=) node AND m.phase OPERATOR(pg_catalog.<>) 'aborting'
           AND m.mode OPERATOR(pg_catalog.=) 'online'
         ORDER BY m.shard
    LOOP
        RAISE NOTICE 'drain_node: resuming the move of shard % to node "%" (phase %)', left_over.shard, left_over.target, left_over.phase;
        CALL shardid.move_shard(left_over.shard, left_over.target, drop_old => drop_old,
                                lock_timeout => lock_timeout, cutover_timeout => cutover_timeout,
                                catchup_timeout => catchup_timeout, node_timeout => node_timeout);
        PERFORM shardid_internal._check_move_done(left_over.shard, left_over.target);
        made := made OPERATOR(pg_catalog.+) 1;
        COMMIT;
    END LOOP;
    LOOP
        SELECT p.shard, p.target, p.bytes INTO next_move FROM shardid.drain_plan(node, strategy, 1) AS p;
        EXIT WHEN NOT FOUND;
        RAISE NOTICE 'drain_node: shard % from node "%" to node "%"%', next_move.shard, node, next_move.target,
            CASE WHEN next_move.bytes IS NULL THEN ''
                 ELSE pg_catalog.format(' (%s)', pg_catalog.pg_size_pretty(next_move.bytes)) END;
        CALL shardid.move_shard(next_move.shard, next_move.target, drop_old => drop_old,
                                lock_timeout => lock_timeout, cutover_timeout => cutover_timeout,
                                catchup_timeout => catchup_timeout, node_timeout => node_timeout);
        PERFORM shardid_internal._check_move_done(next_move.shard, next_move.target);
        made := made OPERATOR(pg_catalog.+) 1;
        COMMIT;
    END LOOP;
    PERFORM shardid_internal._drain_finish(node, made);
END
$$;

REVOKE ALL ON PROCEDURE shardid.drain_node(text, text, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.drain_node(text, text, boolean, interval, interval, interval, interval) IS
    'Router: moves every shard off a node with move_shard(), one at a time, each to the then emptiest other node (drain_plan(), re-made before each), committing after each, so that remove_node() succeeds; resumes a move from the node left in progress first.';
