-- Node: why the recorded retired copy in the schema schema_oid may not be
-- dropped, or NULL when it may. It may be dropped only while it holds
-- nothing but its own objects: the relations retire_shard() recorded
-- (relations) that are still in it, and what depends on those alone
-- (indexes, constraints, defaults, triggers, policies, TOAST, row types:
-- dropped with them). Anything else is another's and keeps the schema:
-- a registered shard there (attach_shard() took it back), an object in
-- the schema that was not recorded (a table moved in, a view, a function,
-- a type), an object elsewhere that depends on its objects (a view over
-- them, a foreign key to them, a partition attached to them, a default
-- that uses its generator, as a recorded table moved out keeps). Names
-- in the reason are described by PostgreSQL, control characters shown
-- as '?': it is read, never executed.
CREATE OR REPLACE FUNCTION shardid_internal._retired_copy_check(schema_oid oid, relations oid[]) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp    name;
    shard  integer;
    others text[];
BEGIN
    SELECT n.nspname INTO nsp FROM pg_namespace AS n WHERE n.oid = schema_oid;
    IF NOT FOUND THEN
        RETURN 'its schema was dropped by hand: drop_retired_copies() forgets the record';
    END IF;
    SELECT r.shard INTO shard FROM shardid.shard_registry AS r WHERE r.schema_name = nsp;
    IF FOUND THEN
        RETURN format('it is registered as shard %s here', shard);
    END IF;
    WITH RECURSIVE
    own AS (  -- the recorded relations still in the schema
        SELECT 'pg_class'::regclass::oid AS classid, c.oid AS objid
          FROM pg_class AS c
         WHERE c.oid = ANY (relations) AND c.relnamespace = schema_oid),
    mine (classid, objid) AS (  -- and what depends on them alone, in the schema (or TOAST)
        SELECT o.classid, o.objid FROM own AS o
        UNION
        SELECT d.classid, d.objid
          FROM mine AS m
          JOIN pg_depend AS d ON d.refclassid = m.classid AND d.refobjid = m.objid AND d.deptype IN ('a', 'i')
          LEFT JOIN pg_class AS c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
         WHERE c.oid IS NULL OR c.relnamespace IN (schema_oid, 'pg_toast'::regnamespace)),
    foreign_ AS (
        -- in the schema, not recorded
        SELECT d.classid, d.objid, d.objsubid
          FROM pg_depend AS d
         WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = schema_oid
           AND NOT EXISTS (SELECT FROM own AS o WHERE o.classid = d.classid AND o.objid = d.objid)
        UNION
        -- depending on its objects, not its own
        SELECT d.classid, d.objid, d.objsubid
          FROM pg_depend AS d
          JOIN mine AS m ON m.classid = d.refclassid AND m.objid = d.refobjid
         WHERE d.deptype NOT IN ('e', 'x')
           AND NOT EXISTS (SELECT FROM mine AS m2 WHERE m2.classid = d.classid AND m2.objid = d.objid))
    SELECT array_agg(DISTINCT regexp_replace(COALESCE(pg_describe_object(COALESCE(v.classid, f.classid), COALESCE(v.objid, f.objid), 0),
                                                      'an object'), '[[:cntrl:]]', '?', 'g'))
      INTO others
      FROM foreign_ AS f
      LEFT JOIN LATERAL (  -- a view's rule: the view
          SELECT 'pg_class'::regclass::oid AS classid, w.ev_class AS objid
            FROM pg_rewrite AS w WHERE f.classid = 'pg_rewrite'::regclass AND w.oid = f.objid) AS v ON true;
    IF others IS NOT NULL THEN
        RETURN format('it holds or is used by objects it did not record: %s%s',
                      array_to_string(others[1:5], ', '),
                      CASE WHEN cardinality(others) > 5 THEN format(' and %s more', cardinality(others) - 5) ELSE '' END);
    END IF;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_copy_check(oid, oid[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_copy_check(oid, oid[]) IS
    'Node: why a recorded retired copy may not be dropped (registered again, objects it did not record in it or depending on its objects), or NULL when it holds only its own.';
