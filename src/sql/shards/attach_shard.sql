CREATE OR REPLACE FUNCTION shardid.attach_shard(shard integer, schema_name name DEFAULT NULL) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp    name := COALESCE(schema_name, shardid_internal._shard_schema_name(shard));
    other  shardid.shard_registry;
    seq    regclass;
    l      shardid.layout_report := shardid.layout();
    t      shardid.sharded_tables;
    state  bigint;
    max_id bigint;
    ahead  timestamptz := pg_catalog.clock_timestamp() + '1 day'::interval;
    layout_text text;
BEGIN
    PERFORM shardid_internal._require_shard(shard);
    PERFORM shardid_internal._require_registry_privileges('attach shards', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO other FROM shardid.shard_registry AS s
        WHERE s.shard = attach_shard.shard OR s.schema_name = nsp;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % (schema %) is already registered', other.shard, pg_catalog.quote_ident(other.schema_name)
            USING ERRCODE = 'duplicate_object';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_namespace AS n WHERE n.nspname = nsp) THEN
        RAISE EXCEPTION 'schema "%" does not exist', nsp USING ERRCODE = 'invalid_schema_name';
    END IF;
    seq := pg_catalog.to_regclass(pg_catalog.format('%I.id_seq', nsp));
    IF seq IS NULL THEN
        RAISE EXCEPTION 'schema "%" has no generator sequence id_seq', nsp
            USING ERRCODE = 'undefined_table';
    END IF;
    PERFORM shardid_internal._require_generator(seq);
    PERFORM shardid_internal._require_templates();

    -- A generator state or IDs made under another layout (a dump of a
    -- database with another epoch or other bit widths) would issue IDs here
    -- that collide or decode wrongly: refuse what shows it, a state or an ID
    -- past this layout's end, more than a day ahead of the clock, or an ID
    -- of another shard.
    layout_text := pg_catalog.format('This database''s layout: epoch %s, %s shard bits, %s seq bits.',
                                     l.epoch, l.shard_bits, l.seq_bits);
    EXECUTE pg_catalog.format('SELECT last_value FROM %s', seq) INTO state;
    IF state > (9223372036854775807 >> l.shard_bits) THEN
        RAISE EXCEPTION 'generator % holds state %, past the end of this database''s layout', seq, state
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = layout_text,
                  HINT = 'The shard was made under another layout: attach it in a database configured with that layout.';
    END IF;
    IF l.epoch + pg_catalog.make_interval(secs => (state >> l.seq_bits) / 1000.0)
            > ahead THEN
        RAISE EXCEPTION 'generator % holds a state of %, more than a day ahead of the clock', seq,
                l.epoch + pg_catalog.make_interval(secs => (state >> l.seq_bits) / 1000.0)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = layout_text,
                  HINT = 'The shard was made under another layout: attach it in a database configured with that layout.';
    END IF;
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        CONTINUE WHEN pg_catalog.to_regclass(pg_catalog.format('%I.%I', nsp, t.table_name)) IS NULL;
        EXECUTE pg_catalog.format('SELECT max(%I) FROM %I.%I', t.id_column, nsp, t.table_name) INTO max_id;
        CONTINUE WHEN max_id IS NULL;
        IF max_id < 0 OR shardid.id_shard(max_id) <> shard
           OR shardid.id_time(max_id) > ahead THEN
            RAISE EXCEPTION 'table %.% holds ID %, not an ID of shard % under this database''s layout',
                    pg_catalog.quote_ident(nsp), pg_catalog.quote_ident(t.table_name), max_id, shard
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = CASE WHEN max_id < 0 THEN 'It is negative. '
                                    ELSE pg_catalog.format('It decodes to shard %s at %s. ', shardid.id_shard(max_id), shardid.id_time(max_id))
                               END || layout_text,
                      HINT = 'Attach the shard under its own number, in a database configured with the layout its IDs were made under.';
        END IF;
    END LOOP;

    INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
        VALUES (shard, nsp, nsp, 'id_seq');
    RETURN shardid_internal._create_shard_tables(shard, true);
END
$$;

COMMENT ON FUNCTION shardid.attach_shard(integer, name) IS
    'Registers an existing shard schema (e.g. restored with pg_dump -n) and creates the sharded tables it lacks; returns how many. Refuses a generator state or IDs that do not fit this database''s layout.';
