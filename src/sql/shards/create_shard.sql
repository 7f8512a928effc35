CREATE OR REPLACE FUNCTION shardid.create_shard(shard integer) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp         name;
    other       shardid.shard_registry;
BEGIN
    PERFORM shardid_internal._require_shard(shard);
    PERFORM shardid_internal._require_registry_privileges('create shards', true);
    -- One registry writer at a time: two sessions cannot create one shard.
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    nsp := shardid_internal._shard_schema_name(shard);
    SELECT * INTO other FROM shardid.shard_registry AS s
        WHERE s.shard = create_shard.shard;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % is already registered', shard
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Its schema is %I.', other.schema_name);
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.pg_namespace AS n
                WHERE n.nspname = nsp) THEN
        RAISE EXCEPTION 'schema "%" already exists', nsp
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('Shard %s would be created in it.', shard),
                  HINT = pg_catalog.format('If it holds shard %s (restored from a dump), register it with shardid.attach_shard(%s).', shard, shard);
    END IF;
    PERFORM shardid_internal._require_templates();

    EXECUTE pg_catalog.format('CREATE SCHEMA %I', nsp);
    EXECUTE pg_catalog.format('CREATE SEQUENCE %I.id_seq AS bigint', nsp);
    EXECUTE pg_catalog.format('COMMENT ON SEQUENCE %I.id_seq IS %L', nsp,
                              pg_catalog.format('Generator of shard %s: state = ms since the layout epoch << seq_bits | counter. Do not setval() it lower.', shard));
    INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
        VALUES (shard, nsp, nsp, 'id_seq');
    PERFORM shardid_internal._create_shard_tables(shard);
    RETURN nsp;
END
$$;

COMMENT ON FUNCTION shardid.create_shard(integer) IS
    'Creates logical shard N: schema shard_NNNN, its generator sequence shard_NNNN.id_seq and every sharded table; registers it; returns the schema.';
