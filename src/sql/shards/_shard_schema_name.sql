-- The schema name of a shard number: shard_ and the number zero-padded to
-- 4 digits, or to the width of the layout's largest shard if that is wider.
CREATE OR REPLACE FUNCTION shardid_internal._shard_schema_name(shard integer) RETURNS name
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.concat('shard_',
               pg_catalog.lpad($1::text,
                               GREATEST(4, pg_catalog.length(((shardid.layout()).max_shard)::text)),
                               '0'))::name
$$;

COMMENT ON FUNCTION shardid_internal._shard_schema_name(integer) IS
    'The schema name create_shard() uses for a shard: shard_ and the number zero-padded to 4 digits (more if the layout has more shards).';
