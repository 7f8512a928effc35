-- Router: where the PL/Proxy cluster 'shardid' (the partition options pN of
-- its SQL/MED server) differs from the placement (partition_connstrs()):
-- one row per partition option to ADD, SET or DROP (the ALTER SERVER
-- action), with the shard it stands for and the connect string it wants.
-- Other options of the server (connection_lifetime, ...) are the
-- administrator's and are not compared. Without the server every
-- partition is to ADD. Shared by refresh_cluster(), which applies it (once
-- the server exists), and check_cluster(), which reports it
-- (proxy_out_of_step).
CREATE OR REPLACE FUNCTION shardid_internal._proxy_diff()
    RETURNS TABLE (option_name text, shard integer, action text, connstr text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH cur AS (
        SELECT o.option_name AS k, o.option_value AS v
          FROM pg_foreign_server AS s, pg_options_to_table(s.srvoptions) AS o
         WHERE s.srvname = 'shardid' AND o.option_name ~ '^p[0-9]+$'
    ), want AS (
        SELECT 'p' || c.shard AS k, c.connstr AS v, c.shard
          FROM shardid.partition_connstrs() AS c
    )
    SELECT COALESCE(want.k, cur.k), COALESCE(want.shard, substr(cur.k, 2)::integer),
           CASE WHEN cur.k IS NULL THEN 'ADD' WHEN want.k IS NULL THEN 'DROP' ELSE 'SET' END, want.v
      FROM want FULL JOIN cur ON cur.k = want.k
     WHERE cur.v IS DISTINCT FROM want.v
     ORDER BY 2, 1
$$;

REVOKE ALL ON FUNCTION shardid_internal._proxy_diff() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._proxy_diff() IS
    'Router: the partition options of the PL/Proxy cluster ''shardid'' that differ from the placement: the ALTER SERVER action (ADD, SET, DROP), the shard and the wanted connect string; every partition (ADD) without the cluster.';
