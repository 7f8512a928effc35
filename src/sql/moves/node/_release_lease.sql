-- Node: releases the freeze lease this session holds on a schema: the
-- advisory lock on the random key that its shardid_move_frozen triggers
-- name (freeze_shard_tables). Triggers are shardid's by their function,
-- whatever their name. Returns how many locks it released.
CREATE OR REPLACE FUNCTION shardid_internal._release_lease(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = error
AS $$
DECLARE
    k bigint;
    n integer := 0;
BEGIN
    FOR k IN SELECT DISTINCT a[4]::bigint
               FROM pg_trigger AS g JOIN pg_class AS c ON c.oid = g.tgrelid JOIN pg_namespace AS s ON s.oid = c.relnamespace,
                    LATERAL string_to_array(encode(g.tgargs, 'escape'), '\000') AS a
              WHERE s.nspname = _release_lease.schema_name AND g.tgfoid = 'shardid_internal._refuse_frozen_write()'::regprocedure
                AND g.tgnargs >= 4 AND a[3] = 'lease' AND a[4] ~ '^-?[0-9]+$' LOOP
        WHILE pg_advisory_unlock(k) LOOP
            n := n + 1;
        END LOOP;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._release_lease(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._release_lease(name) IS
    'Node, moves: releases the freeze lease this session holds on a schema (the advisory lock on the random key its freeze triggers name); returns how many locks.';
