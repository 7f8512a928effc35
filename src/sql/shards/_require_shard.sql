-- Refuses a shard number the layout cannot hold.
CREATE OR REPLACE FUNCTION shardid_internal._require_shard(shard integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l shardid.layout_report := shardid.layout();
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'shard must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF shard < 0 OR shard > l.max_shard THEN
        RAISE EXCEPTION 'shard % is out of range', shard
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('this layout has %s shard bits (0..%s)',
                                             l.shard_bits, l.max_shard);
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_shard(integer) IS
    'Raises 22023 if a shard number is outside the layout.';
