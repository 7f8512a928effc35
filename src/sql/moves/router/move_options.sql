-- The one options record of a move: built and checked once from the named
-- parameters of the entry points that make moves (_move_options), passed
-- whole from move_shard() to the step that uses each option, and kept in a
-- rebalance job's options, from which its moves read it back. A new
-- option is an attribute here, its default in _move_options() and its
-- consumer.
CREATE TYPE shardid.move_options AS (
    drop_old        boolean,   -- drop the old copy at the end (else it is retired, kept)
    offline         boolean,   -- the shard takes no writes while its rows are copied (no replication)
    lock_timeout    interval,  -- how long the cut-over and the finish wait for a lock
    cutover_timeout interval,  -- how long the cut-over may take, writes refused meanwhile
    catchup_timeout interval,  -- how long the copy may take to catch up
    node_timeout    interval   -- how long a node that does not answer is retried (a failover under way)
);

COMMENT ON TYPE shardid.move_options IS
    'The options of one move, built and checked once (shardid_internal._move_options) and passed whole: drop_old, offline, lock_timeout, cutover_timeout, catchup_timeout, node_timeout.';
