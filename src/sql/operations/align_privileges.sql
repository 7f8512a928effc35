-- Node: check_cluster()'s fix of privileges_differ. Brings one shard's
-- privileges in line with what the templates here record
-- (_privilege_steps(): each copy gets exactly its template's grants, the
-- schema and the generator the USAGE those grants need), each statement
-- run through the one fence as the owner of what it touches
-- (_align_privileges: a security-restricted operation, never as the
-- caller). Returns each statement it ran; none when nothing differs. One
-- transaction: an error leaves the shard as it was.
CREATE OR REPLACE FUNCTION shardid.align_privileges(shard integer) RETURNS SETOF text
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'align_privileges() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.shard_registry AS r WHERE r.shard = align_privileges.shard) THEN
        RAISE EXCEPTION 'shard % is not registered on this node', shard
            USING ERRCODE = 'undefined_object',
                  HINT = 'shardid.shard_registry lists the shards of this node; check_cluster() names the node of each.';
    END IF;
    RETURN QUERY SELECT * FROM shardid_internal._align_privileges(ARRAY[shard], NULL, false, false);
END
$$;

REVOKE ALL ON FUNCTION shardid.align_privileges(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.align_privileges(integer) IS
    'Node: check_cluster()''s fix of privileges_differ: gives a shard''s copies exactly their templates'' grants and its schema and generator the USAGE those grants need, each statement run as the owner of what it touches in a security-restricted operation; returns the statements it ran.';
