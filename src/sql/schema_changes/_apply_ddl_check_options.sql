-- apply_ddl(): refuses (22023) a batch_time below zero and a number of
-- connections for CONCURRENTLY outside 1 .. 64, before anything changes.
-- batch_time NULL means no time bound (batch_size tables a batch).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_check_options(batch_time interval, connections integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF batch_time < interval '0' THEN
        RAISE EXCEPTION 'batch_time must not be negative, not %', batch_time
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF connections IS NULL OR connections NOT BETWEEN 1 AND 64 THEN
        RAISE EXCEPTION 'connections must be from 1 to 64, not %', COALESCE(connections::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'It is how many tables CREATE or DROP INDEX CONCURRENTLY changes at once, each on a dblink connection of its own.';
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_check_options(interval, integer) IS
    'apply_ddl(): raises 22023 for a negative batch_time or a number of CONCURRENTLY connections outside 1 .. 64.';
