-- revoke_shards(template, role, privileges): grant_shards() undone: the
-- privileges revoked from the role on the template and every shard's copy
-- (run_on_shards() with a REVOKE it composes, each statement as the owner
-- of what it touches in a security-restricted operation), then the USAGE
-- on a shard's schema and generator that no template's grant and no
-- privilege on that shard's relations needs any more.
CREATE OR REPLACE FUNCTION shardid.revoke_shards(template text, role name, privileges text[] DEFAULT ARRAY['ALL'],
                                                 batch_size integer DEFAULT 256, loopback text DEFAULT NULL)
    RETURNS TABLE (shard integer, node text, success boolean, result text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM shardid.run_on_shards(
        template, shardid_internal._grant_shards_command('revoke_shards', false, template, role, privileges), batch_size, loopback);
END
$$;

COMMENT ON FUNCTION shardid.revoke_shards(text, name, text[], integer, text) IS
    'Node or router: revokes a role''s table privileges on a sharded table''s template and every shard''s copy, then the USAGE on shards'' schemas and generators nothing needs any more. run_on_shards() with the REVOKE it composes: one row per template and copy, on a router on every node.';
