CREATE OR REPLACE FUNCTION shardid.configure(epoch timestamptz, shard_bits integer DEFAULT 13,
                                  seq_bits integer DEFAULT 10)
    RETURNS shardid.layout_report
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_epoch_ms bigint;
BEGIN
    IF epoch IS NULL OR shard_bits IS NULL OR seq_bits IS NULL THEN
        RAISE EXCEPTION 'configure() arguments must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    new_epoch_ms := shardid_internal._require_layout(epoch, shard_bits, seq_bits);
    -- Refused once IDs have been issued, even with the layout in force
    -- (the rule, and the lock that serialises with the first next_id() of
    -- every backend, are in _refuse_issued_layout()).
    PERFORM shardid_internal._refuse_issued_layout();
    PERFORM shardid_internal._refuse_stored_decodes(new_epoch_ms, configure.shard_bits, configure.seq_bits);
    INSERT INTO shardid.layout_config AS c (singleton, epoch_ms, shard_bits, seq_bits)
        VALUES (true, new_epoch_ms, configure.shard_bits, configure.seq_bits)
        ON CONFLICT (singleton) DO UPDATE
        SET epoch_ms = excluded.epoch_ms, shard_bits = excluded.shard_bits,
            seq_bits = excluded.seq_bits;
    RETURN shardid.layout();
END
$$;

REVOKE ALL ON FUNCTION shardid.configure(timestamptz, integer, integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.configure(timestamptz, integer, integer) IS
    'Sets the ID layout of this database (epoch, shard_bits, seq_bits); refused once any generator has issued an ID, whatever setval() or replication did to the marker shardid.ids_issued.';
