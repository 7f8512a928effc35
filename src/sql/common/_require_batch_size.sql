-- Refuses a batch size of the *_proc procedures below 1, before their first
-- batch. Callers have refused NULL with their own name in the message.
CREATE OR REPLACE FUNCTION shardid_internal._require_batch_size(batch_size integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, not %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_batch_size(integer) IS
    'Raises 22023 if the batch size of create_shards_proc() or create_table_proc() is below 1.';
