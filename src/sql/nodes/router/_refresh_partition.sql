-- Brings the partition of one shard in line with the placement: a single
-- ALTER SERVER ... OPTIONS (SET pN ...), instead of refresh_cluster()'s diff
-- of every partition (the whole cluster when the server or the option is
-- missing; nothing on a router without PL/Proxy: _refresh_proxy()).
-- Returns the number of partitions changed (0 or 1).
CREATE OR REPLACE FUNCTION shardid_internal._refresh_partition(shard integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur  text;
    want text;
BEGIN
    SELECT o.option_value INTO cur
      FROM pg_catalog.pg_foreign_server AS s, pg_catalog.pg_options_to_table(s.srvoptions) AS o
     WHERE s.srvname = 'shardid'
       AND o.option_name = ('p' || _refresh_partition.shard);
    IF cur IS NULL THEN
        RETURN shardid_internal._refresh_proxy();
    END IF;
    SELECT CASE WHEN p.shard IS NULL THEN
                    pg_catalog.format('service=''shardid: shard %s is not placed on any node''', g.s)
                WHEN p.frozen THEN
                    n.connstr || ' options=''-c default_transaction_read_only=on'''
                ELSE n.connstr END
      INTO want
      FROM (SELECT _refresh_partition.shard AS s) AS g
      LEFT JOIN shardid.shard_placement AS p ON p.shard = g.s
      LEFT JOIN shardid.nodes AS n ON n.node = p.node;
    IF want = cur THEN
        RETURN 0;
    END IF;
    EXECUTE pg_catalog.format('ALTER SERVER shardid OPTIONS (SET %I %L)', ('p' || shard), want);
    RETURN 1;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refresh_partition(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refresh_partition(integer) IS
    'Router: updates the PL/Proxy partition of one shard from the placement (one ALTER SERVER option); returns 0 or 1.';
