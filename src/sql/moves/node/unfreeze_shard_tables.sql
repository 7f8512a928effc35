-- Node: undoes freeze_shard_tables() (abort of a move), and releases a
-- freeze lease this session holds. shardid's freeze triggers are those
-- whose function is _refuse_frozen_write, whatever their name: a tenant's
-- trigger called shardid_move_frozen is left alone. Returns the number of
-- triggers dropped.
CREATE OR REPLACE FUNCTION shardid.unfreeze_shard_tables(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    PERFORM shardid_internal._release_lease(schema_name);
    FOR t IN SELECT c.relname, g.tgname
               FROM pg_trigger AS g JOIN pg_class AS c ON c.oid = g.tgrelid JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = unfreeze_shard_tables.schema_name AND g.tgfoid = 'shardid_internal._refuse_frozen_write()'::regprocedure
              ORDER BY c.relname, g.tgname LOOP
        EXECUTE format('DROP TRIGGER %I ON %I.%I', t.tgname, schema_name, t.relname);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid.unfreeze_shard_tables(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.unfreeze_shard_tables(name) IS
    'Node: drops shardid''s freeze triggers of a schema (those calling _refuse_frozen_write, whatever their name) and releases this session''s freeze lease; returns how many triggers.';
