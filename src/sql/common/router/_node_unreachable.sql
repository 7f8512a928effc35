-- Router, moves: whether an error's SQLSTATE says the node could not be
-- talked to (connection errors, a node shutting down or starting up)
-- rather than that it refused something.
CREATE OR REPLACE FUNCTION shardid_internal._node_unreachable(sqlstate text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT sqlstate LIKE '08%' OR sqlstate IN ('57P01', '57P02', '57P03')
$$;

REVOKE ALL ON FUNCTION shardid_internal._node_unreachable(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._node_unreachable(text) IS
    'Router, moves: true for SQLSTATEs of a node that cannot be reached (class 08, 57P01-57P03).';
