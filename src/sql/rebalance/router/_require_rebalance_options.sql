-- Refuses a rebalance strategy shardid does not know, or a negative
-- max_moves, before anything reads the placement or reaches a node.
CREATE OR REPLACE FUNCTION shardid_internal._require_rebalance_options(strategy text, max_moves integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF strategy IS NULL THEN
        RAISE EXCEPTION 'rebalance strategy must not be NULL' USING ERRCODE = 'null_value_not_allowed',
            HINT = 'Use by_size (the nodes'' total shard size, the default) or by_count (shards per node).';
    END IF;
    IF strategy <> ALL (ARRAY['by_size', 'by_count']) THEN
        RAISE EXCEPTION 'unknown rebalance strategy "%"', strategy
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The strategies are by_size and by_count.',
                  HINT = 'Use by_size (the nodes'' total shard size, the default) or by_count (shards per node).';
    END IF;
    IF max_moves < 0 THEN
        RAISE EXCEPTION 'max_moves must not be negative (it is %)', max_moves
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the most moves to plan or make, or NULL for no limit.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._require_rebalance_options(text, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_rebalance_options(text, integer) IS
    'Internal: raises 22023 for a rebalance strategy other than by_size and by_count, or a negative max_moves.';
