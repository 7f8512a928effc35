-- Router: rolls back a move that has not been repointed.
CREATE OR REPLACE PROCEDURE shardid.abort_move(shard integer)
    LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'shardid.abort_move() is not implemented yet' USING ERRCODE = 'feature_not_supported';
END
$$;

REVOKE ALL ON PROCEDURE shardid.abort_move(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.abort_move(integer) IS
    'Router: rolls back a shard move that has not been repointed yet.';
