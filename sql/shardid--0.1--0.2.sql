-- shardid 0.1 -> 0.2: ALTER EXTENSION shardid UPDATE TO '0.2'.
-- Everything this script creates or changes is also in sql/install/*.sql,
-- the 0.2 install script; test/update checks that both give the same objects.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.2'" to load this file. \quit

-- hardening (issue 10): the layout marker is advanced only when an ID is issued,
-- and by no ordinary role; configure()'s refusal says how to proceed.
REVOKE USAGE ON SEQUENCE shardid.ids_issued FROM PUBLIC;
GRANT SELECT ON SEQUENCE shardid.ids_issued TO PUBLIC;
COMMENT ON SEQUENCE shardid.ids_issued IS
    'Marker: advanced by next_id() once an ID has been issued; from then on the layout is frozen. Readable by PUBLIC, advanced by no ordinary role.';
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
    new_epoch_ms := shardid._check_layout(epoch, shard_bits, seq_bits);
    -- Serialise with other configure() calls and with the first next_id()
    -- of every backend, which reads this table after marking ids_issued.
    LOCK TABLE shardid.layout_config IN ACCESS EXCLUSIVE MODE;
    IF (SELECT s.is_called FROM shardid.ids_issued AS s) THEN
        RAISE EXCEPTION 'the layout cannot change: IDs have already been issued'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Changing the layout would make old and new IDs collide or decode wrongly.',
                  HINT = 'Keep this layout (shardid.layout() shows it), or create a new database, run configure() there before its first next_id() call, and move the data.';
    END IF;
    INSERT INTO shardid.layout_config AS c (singleton, epoch_ms, shard_bits, seq_bits)
        VALUES (true, new_epoch_ms, configure.shard_bits, configure.seq_bits)
        ON CONFLICT (singleton) DO UPDATE
        SET epoch_ms = excluded.epoch_ms, shard_bits = excluded.shard_bits,
            seq_bits = excluded.seq_bits;
    RETURN shardid.layout();
END
$$;
