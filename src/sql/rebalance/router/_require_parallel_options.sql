-- Refuses parallel and retry options of a rebalance or drain that cannot
-- work (22023, 22004 for NULL), before anything is started. max_parallel
-- NULL: no bound but max_moves_per_node.
CREATE OR REPLACE FUNCTION shardid_internal._require_parallel_options(max_parallel integer, max_moves_per_node integer,
                                                                    move_retries integer, retry_pause interval) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF max_moves_per_node IS NULL OR move_retries IS NULL OR retry_pause IS NULL THEN
        RAISE EXCEPTION 'max_moves_per_node, move_retries and retry_pause must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF max_parallel < 1 OR max_moves_per_node < 1 THEN
        RAISE EXCEPTION 'max_parallel and max_moves_per_node must be 1 or more (they are % and %)', max_parallel, max_moves_per_node
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF move_retries < 0 OR retry_pause < '0 s' THEN
        RAISE EXCEPTION 'move_retries and retry_pause must not be negative (they are % and %)', move_retries, retry_pause
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._require_parallel_options(integer, integer, integer, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._require_parallel_options(integer, integer, integer, interval) IS
    'Internal: raises 22023 for max_parallel or max_moves_per_node under 1, or a negative move_retries or retry_pause (22004 for NULL).';
