-- Node, last move step on the source: unregisters the shard and retires
-- its schema: dropped, or kept under new_name with a trigger on every table
-- that refuses writes. Returns the schema's new name (NULL when dropped).
-- Nothing a tenant made can stop it once the router points elsewhere: the
-- retirement trigger is named shardid_retired, or shardid_retired_2, ...
-- when a table has a trigger of that name already (shardid's are known by
-- their function, not their name), and new_name is followed by _2, _3, ...
-- (cut to fit) when a schema of that name exists. It runs no tenant code:
-- DROP SCHEMA, ALTER SCHEMA RENAME and shardid's own triggers.
CREATE OR REPLACE FUNCTION shardid.retire_shard(shard integer, target text, new_name name) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp  name;
    t    record;
    tg   name;
    dest name := new_name;
    i    integer := 1;
BEGIN
    nsp := shardid.detach_shard(shard);
    PERFORM shardid.thaw_shard_tables(nsp);
    IF new_name IS NULL THEN
        EXECUTE pg_catalog.format('DROP SCHEMA %I CASCADE', nsp);
        RETURN NULL;
    END IF;
    FOR t IN SELECT c.oid, c.relname FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = nsp AND c.relkind IN ('r', 'p') ORDER BY c.relname LOOP
        tg := 'shardid_retired';
        i := 1;
        WHILE EXISTS (SELECT FROM pg_trigger AS g WHERE g.tgrelid = t.oid AND g.tgname = tg) LOOP
            i := i + 1;
            tg := 'shardid_retired_' || i;
        END LOOP;
        EXECUTE pg_catalog.format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
                                   FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_retired_write(%L, %L)',
                                  tg, nsp, t.relname, shard, target);
    END LOOP;
    i := 1;
    WHILE EXISTS (SELECT FROM pg_namespace AS s WHERE s.nspname = dest) LOOP
        i := i + 1;
        dest := shardid_internal._fit_name(new_name, '_' || i);
    END LOOP;
    EXECUTE pg_catalog.format('ALTER SCHEMA %I RENAME TO %I', nsp, dest);
    RETURN dest;
END
$$;

REVOKE ALL ON FUNCTION shardid.retire_shard(integer, text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.retire_shard(integer, text, name) IS
    'Node, after a move: detaches the shard and drops its schema (new_name NULL) or renames it to new_name (or new_name_2, ... if taken) with triggers refusing writes (shardid_retired, or _2, ... if a table has a trigger of that name).';
