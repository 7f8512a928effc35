-- Router, check_cluster() step 7: the PL/Proxy cluster 'shardid' against
-- the placement (_proxy_diff()), when PL/Proxy is installed and a shard
-- is placed: one row, the number of partitions that differ and the first.
CREATE OR REPLACE FUNCTION shardid_internal._check_proxy_out_of_step(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_foreign_data_wrapper AS w WHERE w.fdwname = 'plproxy')
       AND EXISTS (SELECT FROM shardid.shard_placement) THEN
        RETURN QUERY
        SELECT 'proxy_out_of_step'::text, pg_catalog.min(d.shard), NULL::text,
               pg_catalog.format('the PL/Proxy cluster ''shardid'' differs from the placement in %s partitions (the first: shard %s)',
                                 pg_catalog.count(*), pg_catalog.min(d.shard)),
               NULL::text,
               'SELECT shardid.refresh_cluster();'::text
          FROM shardid_internal._proxy_diff() AS d
        HAVING pg_catalog.count(*) > 0;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_proxy_out_of_step(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_proxy_out_of_step(jsonb, jsonb) IS
    'Router, check_cluster(): proxy_out_of_step, when the PL/Proxy cluster shardid differs from the placement, with the refresh_cluster() that aligns it.';
