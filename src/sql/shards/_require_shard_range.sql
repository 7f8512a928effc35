-- Refuses a range of shards first..last that is empty or that the layout
-- cannot hold, for every function that takes one. Callers have refused
-- NULL arguments with their own name in the message.
CREATE OR REPLACE FUNCTION shardid_internal._require_shard_range(first integer, last integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF first > last THEN
        RAISE EXCEPTION 'empty shard range % .. %', first, last
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the first shard, then the last (inclusive).';
    END IF;
    PERFORM shardid_internal._require_shard(first);
    PERFORM shardid_internal._require_shard(last);
END
$$;

COMMENT ON FUNCTION shardid_internal._require_shard_range(integer, integer) IS
    'Raises 22023 if the shard range first..last is empty or outside the layout.';
