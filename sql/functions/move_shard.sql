-- Router: moves one logical shard to another node while it takes writes
-- (see docs/moves.md). Interface first; the body follows.
CREATE OR REPLACE PROCEDURE shardid.move_shard(
    shard integer,
    to_node text,
    drop_old boolean DEFAULT false,
    offline boolean DEFAULT false,
    lock_timeout interval DEFAULT '10 s',
    cutover_timeout interval DEFAULT '30 s',
    catchup_timeout interval DEFAULT '1 day',
    node_timeout interval DEFAULT '30 s')
    LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'shardid.move_shard() is not implemented yet' USING ERRCODE = 'feature_not_supported';
END
$$;

REVOKE ALL ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.move_shard(integer, text, boolean, boolean, interval, interval, interval, interval) IS
    'Router: moves a shard to another node online (CALL it again to resume an interrupted move).';
