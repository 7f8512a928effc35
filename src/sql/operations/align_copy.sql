-- Node: check_cluster()'s fix of copy_differs. Brings one shard's copy of
-- a sharded table in line with its template here by the steps
-- _copy_drift() builds from the template's catalog entries (only the
-- table's name changes), each run through the one fence as the copy's
-- owner (_run_as_owner(): a security-restricted operation), never as the
-- caller, in three phases:
--   1. removals (the copy's constraints and indexes that differ, a
--      default or NOT NULL the template lacks), which run no code, as the
--      copy's owner;
--   2. the owner, when it is not the template's: given to the template's
--      owner by the caller (ALTER TABLE ... OWNER runs no table code), and
--      only when that hands no code of the copy's owner to another role:
--      the copy's owner is a superuser or a member of the template's
--      owner, or after phase 1 the copy holds nothing its template lacks
--      (a column, an index, a trigger but shardid's, a rule, a policy,
--      extended statistics); otherwise 42501, and nothing is changed;
--   3. additions (columns, types, NOT NULL, defaults, the template's
--      constraints), which run the template's code (a rewrite evaluates
--      CHECKs), as the owner the copy has now.
-- The copy is locked (ACCESS EXCLUSIVE) first. An index the copy lacks is
-- not built here, where it would hold that lock: build_copy_index()
-- builds it CONCURRENTLY (check_cluster() gives each its own row). A
-- column the template lacks, or the columns' order, is no repair: it is
-- left. What is left is said in a NOTICE. Returns each statement it ran, in order. One transaction:
-- an error leaves the copy as it was.
CREATE OR REPLACE FUNCTION shardid.align_copy(shard integer, table_name name) RETURNS SETOF text
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    copy  regclass;
    tmpl  regclass;
    d     jsonb;
    st    jsonb;
    owner oid;
    other text[];
BEGIN
    SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.schema_name, t.table_name)),
           pg_catalog.to_regclass(pg_catalog.format('%I.%I', t.template_schema, t.template_name))
      INTO copy, tmpl
      FROM shardid.shard_registry AS r, shardid.sharded_tables AS t
     WHERE r.shard = align_copy.shard AND t.table_name = align_copy.table_name;
    IF copy IS NULL OR tmpl IS NULL THEN
        RAISE EXCEPTION 'shard % has no copy of sharded table % here', shard, pg_catalog.quote_ident(table_name)
            USING ERRCODE = 'undefined_table',
                  HINT = 'shardid.shard_registry lists the shards of this node, shardid.sharded_tables the sharded tables.';
    END IF;
    EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', copy);
    SELECT e INTO d FROM jsonb_array_elements(shardid_internal._copy_drift()) AS e
     WHERE (e->>'shard')::integer = align_copy.shard AND e->>'table_name' = align_copy.table_name;
    IF d IS NULL THEN
        RETURN;
    END IF;
    -- the owner first: refused before anything changes
    SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = copy;
    FOR st IN SELECT s FROM jsonb_array_elements(d->'steps') AS s WHERE (s->>0)::integer = 2 LOOP
        other := shardid_internal._align_copy_owner_check(copy, tmpl);
        IF other IS NOT NULL THEN
            RAISE EXCEPTION 'copy % is owned by %, not by its template''s owner %, and holds what its template lacks: %',
                            copy, pg_catalog.quote_ident(pg_get_userbyid(owner)),
                            pg_catalog.quote_ident(st->>1), pg_catalog.array_to_string(other, ', ')
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = pg_catalog.format('Given to %I, the code of %I there would run as %I.', st->>1, pg_get_userbyid(owner), st->>1),
                      HINT = pg_catalog.format('Let %I drop them, then call shardid.align_copy(%s, %L) again; or give the template to %I.',
                                               pg_get_userbyid(owner), shard, table_name, pg_get_userbyid(owner));
        END IF;
    END LOOP;
    -- (phase 4, an index to build, is build_copy_index()'s: CONCURRENTLY)
    FOR st IN SELECT s FROM jsonb_array_elements(d->'steps') AS s WHERE (s->>0)::integer < 4 LOOP
        SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = copy;
        IF (st->>0)::integer = 2 THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s OWNER TO %I', copy, st->>1);
            RETURN NEXT pg_catalog.format('ALTER TABLE %s OWNER TO %I', copy, st->>1);
        ELSE
            PERFORM shardid_internal._run_as_owner(owner::regrole, st->>1);
            RETURN NEXT st->>1;
        END IF;
    END LOOP;
    SELECT e INTO d FROM jsonb_array_elements(shardid_internal._copy_drift()) AS e
     WHERE (e->>'shard')::integer = align_copy.shard AND e->>'table_name' = align_copy.table_name;
    IF d IS NOT NULL THEN
        RAISE NOTICE 'copy % still differs from its template: %', copy, (SELECT pg_catalog.string_agg(x, '; ') FROM jsonb_array_elements_text(d->'differences') AS x)
            USING HINT = 'An index of the template is built CONCURRENTLY by CALL shardid.build_copy_index(); a column the template lacks holds data, and the columns'' order is no repair: check_cluster() shows each.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid.align_copy(integer, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid.align_copy(integer, name) IS
    'Node: check_cluster()''s fix of copy_differs: brings a shard''s copy of a sharded table in line with its template (removals, the owner, additions; an index it lacks is build_copy_index()''s, CONCURRENTLY), each statement built from the template''s catalog entries and run as the copy''s owner in a security-restricted operation; gives the copy to the template''s owner only when that hands no other role''s code to it (42501 otherwise); returns the statements it ran.';
