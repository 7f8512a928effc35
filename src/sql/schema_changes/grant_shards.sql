-- grant_shards(template, role, privileges): gives a role privileges on a
-- sharded table everywhere it is, in one call: the template (the record:
-- shards made later are made with its privileges, _create_shard_table),
-- every shard's copy, USAGE on every shard's schema and, for INSERT, on
-- every shard's generator (next_id() needs it). It is run_on_shards() with
-- a GRANT it composes (_grant_shards_command): on a node in batches over
-- a dblink connection to itself, on a router on every node, each
-- statement as the owner of what it touches in a security-restricted
-- operation; the caller needs the privileges of the template's owner
-- (42501). One row per template and copy, as run_on_shards() gives them.
CREATE OR REPLACE FUNCTION shardid.grant_shards(template text, role name, privileges text[] DEFAULT ARRAY['SELECT'],
                                                batch_size integer DEFAULT 256, loopback text DEFAULT NULL)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM shardid.run_on_shards(
        template, shardid_internal._grant_shards_command('grant_shards', true, template, role, privileges), batch_size, loopback);
END
$$;

COMMENT ON FUNCTION shardid.grant_shards(text, name, text[], integer, text) IS
    'Node or router: gives a role table privileges on a sharded table''s template and every shard''s copy, USAGE on every shard''s schema and, with INSERT, on every shard''s generator; recorded on the template, so shards made later get them and check_cluster() reports a copy or schema that lacks them. run_on_shards() with the GRANT it composes: one row per template and copy (shard NULL: the template), on a router on every node.';
