-- CREATE EXTENSION creates schema shardid (owned by the installing
-- superuser) unless it exists. A pre-existing one could belong to a role
-- that may add its own functions beside shardid's, e.g. an overload
-- next_id(integer, text) that a DEFAULT spelled with an untyped literal
-- would call: refuse it unless only superusers own it and may create in it.
DO $check_schema$
DECLARE
    owner_name name;
    creators   text;
BEGIN
    SELECT r.rolname INTO owner_name
      FROM pg_catalog.pg_namespace AS n
      JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
     WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid' AND NOT r.rolsuper;
    IF FOUND THEN
        RAISE EXCEPTION 'schema "shardid" already exists and is owned by role %, not by a superuser',
                pg_catalog.quote_ident(owner_name)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Its owner could add functions that shardid''s callers would run.',
                  HINT = 'Check what the schema holds, drop it (or have a superuser own it and everything in it), then run CREATE EXTENSION shardid (or ALTER EXTENSION shardid UPDATE) again.';
    END IF;
    SELECT pg_catalog.string_agg(CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                      ELSE pg_catalog.quote_ident(r.rolname) END, ', ')
      INTO creators
      FROM pg_catalog.pg_namespace AS n,
           LATERAL pg_catalog.aclexplode(n.nspacl) AS a
      LEFT JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) a.grantee
     WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid'
       AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
       AND NOT COALESCE(r.rolsuper, false);
    IF creators IS NOT NULL THEN
        RAISE EXCEPTION 'schema "shardid" already exists and roles other than superusers may create objects in it: %',
                creators
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'They could add functions that shardid''s callers would run.',
                  HINT = 'Check what the schema holds, REVOKE CREATE ON SCHEMA shardid from them (or drop the schema), then run CREATE EXTENSION shardid (or ALTER EXTENSION shardid UPDATE) again.';
    END IF;
END
$check_schema$;

-- Owner and ACL are not enough: objects a squatter made before an
-- administrator fixed them stay, and an overload such as next_id(integer,
-- text) would still run instead of shardid's. So every object in the schema
-- must be the extension's: a member (none yet at CREATE EXTENSION, whose
-- schema must then be empty), or what PostgreSQL makes with a member (a
-- table's row type, index, constraints; an array type); shardid creates
-- nothing in its schema at run time (the PL/Proxy server and user mapping
-- belong to no schema). Each object is named once: what PostgreSQL made for
-- another one listed (a row type, an index, a statistics object of a table
-- listed) is not.
DO $check_members$
DECLARE
    nsp     oid := (SELECT n.oid FROM pg_catalog.pg_namespace AS n
                     WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid');
    ext     oid := (SELECT e.oid FROM pg_catalog.pg_extension AS e
                     WHERE e.extname OPERATOR(pg_catalog.=) 'shardid');
    n       bigint;
    listed  text;
BEGIN
    WITH RECURSIVE ours (classid, objid) AS (
        SELECT d.classid, d.objid FROM pg_catalog.pg_depend AS d
         WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
           AND d.refobjid OPERATOR(pg_catalog.=) ext
           AND d.deptype OPERATOR(pg_catalog.=) 'e'
        UNION
        SELECT d.classid, d.objid FROM pg_catalog.pg_depend AS d
          JOIN ours AS o ON d.refclassid OPERATOR(pg_catalog.=) o.classid
                        AND d.refobjid OPERATOR(pg_catalog.=) o.objid
         WHERE d.deptype OPERATOR(pg_catalog.=) ANY (ARRAY['i', 'a']::"char"[])
    ), in_schema (classid, objid) AS (
        SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_class AS x
         WHERE x.relnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_proc AS x
         WHERE x.pronamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_type AS x
         WHERE x.typnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_operator'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_operator AS x
         WHERE x.oprnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_opclass AS x
         WHERE x.opcnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_opfamily AS x
         WHERE x.opfnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_collation'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_collation AS x
         WHERE x.collnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_conversion'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_conversion AS x
         WHERE x.connamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_ts_config'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_ts_config AS x
         WHERE x.cfgnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_ts_dict'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_ts_dict AS x
         WHERE x.dictnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_ts_parser'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_ts_parser AS x
         WHERE x.prsnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_ts_template'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_ts_template AS x
         WHERE x.tmplnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_statistic_ext AS x
         WHERE x.stxnamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_constraint AS x
         WHERE x.connamespace OPERATOR(pg_catalog.=) nsp
        UNION ALL
        SELECT 'pg_catalog.pg_extension'::pg_catalog.regclass, x.oid FROM pg_catalog.pg_extension AS x
         WHERE x.extnamespace OPERATOR(pg_catalog.=) nsp AND x.oid OPERATOR(pg_catalog.<>) ext
    ), strangers AS (
        SELECT s.classid, s.objid FROM in_schema AS s
         WHERE NOT EXISTS (SELECT FROM ours AS o
                            WHERE o.classid OPERATOR(pg_catalog.=) s.classid
                              AND o.objid OPERATOR(pg_catalog.=) s.objid)
    )
    SELECT pg_catalog.count(*),
           pg_catalog.string_agg(pg_catalog.concat(i.type, ' ', i.identity), ', '
                                 ORDER BY i.type COLLATE pg_catalog."C", i.identity COLLATE pg_catalog."C")
      INTO n, listed
      FROM strangers AS s,
           LATERAL pg_catalog.pg_identify_object(s.classid, s.objid, 0) AS i
     WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS d
                         JOIN strangers AS o ON d.refclassid OPERATOR(pg_catalog.=) o.classid
                                            AND d.refobjid OPERATOR(pg_catalog.=) o.objid
                        WHERE d.classid OPERATOR(pg_catalog.=) s.classid
                          AND d.objid OPERATOR(pg_catalog.=) s.objid
                          AND d.deptype OPERATOR(pg_catalog.=) ANY (ARRAY['i', 'a']::"char"[])
                          AND (o.classid, o.objid) IS DISTINCT FROM (s.classid, s.objid));
    IF n OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'schema "shardid" holds objects that are not part of extension shardid: %', listed
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'shardid''s callers find functions, operators and types there by name: an object beside shardid''s, such as an overload of next_id(), could run instead of it.',
                  HINT = 'Drop them or move them to another schema (ALTER ... SET SCHEMA), then run CREATE EXTENSION shardid (or ALTER EXTENSION shardid UPDATE) again.';
    END IF;
END
$check_members$;
