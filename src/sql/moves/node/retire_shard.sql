-- Node, last move step on the source: unregisters the shard and retires
-- its schema: dropped, or kept under new_name with a trigger on every table
-- that refuses writes. Returns the schema's new name (NULL when dropped).
-- Nothing a tenant made can stop it once the router points elsewhere: the
-- retirement trigger is named shardid_retired, or shardid_retired_2, ...
-- when a table has a trigger of that name already (shardid's are known by
-- their function, not their name), and new_name is followed by _2, _3, ...
-- (cut to fit) when a schema of that name exists. It runs no tenant code:
-- DROP SCHEMA, ALTER SCHEMA RENAME and shardid's own triggers. A kept
-- copy is recorded in shardid.retired_schemas (its schema's OID, and the
-- relations shardid made in it: the shard's tables and their partitions,
-- its generator, the sequences those tables own), which is all that
-- drop_retired_copies() will ever drop. Holds the registry's lock (SHARE
-- ROW EXCLUSIVE on shard_registry and sharded_tables), as attach_shard(),
-- a move's copy on its target and drop_retired_copies() on this node do,
-- so none of them runs between its steps.
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
    seq  oid;
    own  oid[];
BEGIN
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.sequence_schema, r.sequence_name)) INTO seq
      FROM shardid.shard_registry AS r WHERE r.shard = retire_shard.shard;
    nsp := shardid.detach_shard(shard);
    PERFORM shardid.unfreeze_shard_tables(nsp);
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
    -- what shardid made here: the templates' tables, their partitions, the
    -- generator, the sequences those tables own; not a tenant's addition
    WITH tabs AS (
        SELECT c.oid FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
         WHERE s.nspname = nsp AND c.relkind IN ('r', 'p')
           AND EXISTS (SELECT FROM shardid.sharded_tables AS st, pg_class AS root
                        WHERE root.oid = COALESCE(pg_catalog.pg_partition_root(c.oid), c.oid)
                          AND root.relnamespace = c.relnamespace AND root.relname = st.table_name))
    SELECT pg_catalog.array_agg(x.oid ORDER BY x.oid) INTO own
      FROM (SELECT tabs.oid FROM tabs
            UNION
            SELECT d.objid FROM pg_depend AS d JOIN pg_class AS q ON q.oid = d.objid
             WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
               AND d.refobjid IN (SELECT tabs.oid FROM tabs) AND q.relkind = 'S' AND d.deptype IN ('a', 'i')
            UNION
            SELECT q.oid FROM pg_class AS q JOIN pg_namespace AS s ON s.oid = q.relnamespace
             WHERE q.oid = seq AND s.nspname = nsp) AS x;
    EXECUTE pg_catalog.format('ALTER SCHEMA %I RENAME TO %I', nsp, dest);
    INSERT INTO shardid.retired_schemas AS x (schema_oid, schema_name, shard, moved_to, relations)
        SELECT s.oid, dest, shard, target, COALESCE(own, '{}') FROM pg_namespace AS s WHERE s.nspname = dest
        ON CONFLICT (schema_oid) DO UPDATE
           SET schema_name = excluded.schema_name, shard = excluded.shard, moved_to = excluded.moved_to,
               relations = excluded.relations, retired_at = excluded.retired_at;
    RETURN dest;
END
$$;

REVOKE ALL ON FUNCTION shardid.retire_shard(integer, text, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.retire_shard(integer, text, name) IS
    'Node, after a move: detaches the shard and drops its schema (new_name NULL) or renames it to new_name (or new_name_2, ... if taken) with triggers refusing writes (shardid_retired, or _2, ... if a table has a trigger of that name), recorded in shardid.retired_schemas for drop_retired_copies().';
