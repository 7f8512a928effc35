-- Node, offline moves: the functions not owned by a superuser whose code
-- runs when rows are written into the schema's tables by COPY: reached
-- from the tables and their indexes, constraints, defaults and generated
-- columns, through column types, domains and their constraints, operators
-- and other functions (pg_depend). An offline move replays the rows as a
-- superuser (pg_dump --data-only --disable-triggers: triggers are off, but
-- CHECK constraints, index expressions and domains are not), so such code
-- would run with a superuser's rights; online moves apply as the tables'
-- owners instead. Returns them as text, NULL when there are none.
CREATE OR REPLACE FUNCTION shardid._move_untrusted_code(schema_name name) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
WITH RECURSIVE rels AS (
    SELECT c.oid FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
     WHERE n.nspname = schema_name AND c.relkind IN ('r', 'p', 'i', 'I')
), reached(classid, objid) AS (
    SELECT 'pg_class'::regclass::oid, r.oid FROM rels AS r
    UNION
    SELECT 'pg_constraint'::regclass::oid, k.oid FROM pg_constraint AS k WHERE k.conrelid IN (SELECT oid FROM rels)
    UNION
    SELECT 'pg_attrdef'::regclass::oid, d.oid FROM pg_attrdef AS d WHERE d.adrelid IN (SELECT oid FROM rels)
    UNION
    SELECT 'pg_type'::regclass::oid, a.atttypid FROM pg_attribute AS a
     WHERE a.attrelid IN (SELECT oid FROM rels) AND a.attnum > 0 AND NOT a.attisdropped
    UNION
    SELECT x.classid, x.objid
      FROM reached AS r
     CROSS JOIN LATERAL (SELECT d.refclassid AS classid, d.refobjid AS objid FROM pg_depend AS d
                          WHERE d.classid = r.classid AND d.objid = r.objid AND d.deptype IN ('n', 'a')
                            AND d.refclassid IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_operator'::regclass)
                         UNION ALL
                         -- a domain's constraints
                         SELECT 'pg_constraint'::regclass::oid, k.oid FROM pg_constraint AS k
                          WHERE r.classid = 'pg_type'::regclass AND k.contypid = r.objid) AS x
     WHERE r.classid IN ('pg_type'::regclass, 'pg_operator'::regclass, 'pg_proc'::regclass, 'pg_constraint'::regclass)
        OR r.objid IN (SELECT oid FROM rels) OR r.classid = 'pg_attrdef'::regclass
)
SELECT string_agg(format('%s (owned by %s)', p.oid::regprocedure, quote_ident(pg_get_userbyid(p.proowner))), ', '
                  ORDER BY p.oid::regprocedure::text)
  FROM pg_proc AS p
 WHERE p.oid IN (SELECT r.objid FROM reached AS r WHERE r.classid = 'pg_proc'::regclass)
   AND NOT (SELECT o.rolsuper FROM pg_roles AS o WHERE o.oid = p.proowner)
$$;

REVOKE ALL ON FUNCTION shardid._move_untrusted_code(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid._move_untrusted_code(name) IS
    'Node, offline moves: functions not owned by a superuser that writing rows into the schema''s tables would run (constraints, indexes, defaults, domains, operators); NULL if none.';
