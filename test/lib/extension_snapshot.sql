-- test/lib/extension_snapshot.sql — a text picture of the shardid extension
-- as installed in the current database, one sorted line per property:
--
--   <object> | <property>
--
-- where <object> is pg_describe_object() of an extension member (pg_depend
-- deptype 'e'). Two databases whose pictures are equal have the same member
-- objects with the same definitions: functions (pg_get_functiondef: source,
-- language, volatility, strictness, security, parallel safety, cost, SET
-- clauses, signature and defaults), tables (columns in order, defaults,
-- constraints, indexes, triggers, policies, options), views, sequences,
-- types, comments, owners, privileges (expanded, PUBLIC and default ACLs
-- made explicit) and pg_init_privs (what pg_dump treats as the extension's
-- own grants; an entry equal to the default ACL counts as none, as pg_dump
-- reads it), and the extension's configuration tables for pg_dump.
-- No OIDs appear, so pictures of two databases compare with diff.
--
-- Run with psql -X -At -v ON_ERROR_STOP=1 -f; it creates one pg_temp function.

-- ACL as sorted "grantee:PRIVILEGE[*]/grantor" words; a NULL ACL is the
-- object kind's default when kind is given, "(none)" otherwise.
CREATE FUNCTION pg_temp.acl(acl aclitem[], kind "char", owner oid) RETURNS text
    LANGUAGE sql STABLE
AS $$
    SELECT coalesce(string_agg(w, ' ' ORDER BY w COLLATE "C"), '(none)')
      FROM (SELECT format('%s:%s%s/%s',
                          CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END,
                          a.privilege_type,
                          CASE WHEN a.is_grantable THEN '*' ELSE '' END,
                          pg_get_userbyid(a.grantor)) AS w
              FROM aclexplode(CASE WHEN kind IS NULL THEN acl
                                   ELSE coalesce(acl, acldefault(kind, owner)) END) AS a) AS s
$$;

WITH ext AS (
    SELECT e.* FROM pg_extension AS e WHERE e.extname = 'shardid'
), m AS (
    SELECT d.classid, d.objid, d.objsubid,
           pg_describe_object(d.classid, d.objid, d.objsubid) AS obj
      FROM pg_depend AS d, ext
     WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
), rel AS (
    SELECT m.obj, c.* FROM m JOIN pg_class AS c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
), cols AS (
    SELECT r.obj, r.oid AS relid, a.*, row_number() OVER (PARTITION BY r.oid ORDER BY a.attnum) AS pos
      FROM rel AS r JOIN pg_attribute AS a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
), typ AS (
    SELECT m.obj, t.* FROM m JOIN pg_type AS t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
), items (obj, ord, sub, val) AS (
    -- the extension itself
    SELECT 'extension ' || ext.extname, 0, '', format('version %s, schema %s, relocatable %s',
           ext.extversion, ext.extnamespace::regnamespace, ext.extrelocatable)
      FROM ext
    UNION ALL
    SELECT 'extension ' || ext.extname, 1, c.cfg::regclass::text,
           format('pg_dump configuration: %s WHERE %L', c.cfg::regclass, c.cond)
      FROM ext, unnest(ext.extconfig, ext.extcondition) AS c(cfg, cond)
    UNION ALL
    -- its schema (created by CREATE EXTENSION, so not a member)
    SELECT 'extension ' || ext.extname, 2, '', format('schema %s: owner %s, privileges %s%s', n.nspname,
           pg_get_userbyid(n.nspowner), pg_temp.acl(n.nspacl, 'n', n.nspowner),
           coalesce(', comment: ' || obj_description(n.oid, 'pg_namespace'), ''))
      FROM ext JOIN pg_namespace AS n ON n.oid = ext.extnamespace
    UNION ALL
    SELECT 'extension ' || ext.extname, 3, '', format('schema %s: pg_init_privs (%s): %s', n.nspname,
           i.privtype, pg_temp.acl(i.initprivs, NULL, 0))
      FROM ext JOIN pg_namespace AS n ON n.oid = ext.extnamespace
      JOIN pg_init_privs AS i ON i.classoid = 'pg_namespace'::regclass AND i.objoid = n.oid
     WHERE pg_temp.acl(i.initprivs, NULL, 0) <> pg_temp.acl(NULL, 'n', n.nspowner)
    UNION ALL
    -- membership, comments, initial privileges: every kind of member
    SELECT m.obj, 0, '', 'member' FROM m
    UNION ALL
    SELECT m.obj, 1, '', 'comment: ' || d.description
      FROM m JOIN pg_description AS d
        ON d.classoid = m.classid AND d.objoid = m.objid AND d.objsubid = m.objsubid
    UNION ALL
    SELECT m.obj, 2, lpad(i.objsubid::text, 5, '0'),
           format('pg_init_privs%s (%s): %s',
                  CASE WHEN i.objsubid <> 0 THEN ' of column ' || quote_ident(a.attname) ELSE '' END,
                  i.privtype, pg_temp.acl(i.initprivs, NULL, 0))
      FROM m JOIN pg_init_privs AS i ON i.classoid = m.classid AND i.objoid = m.objid
      LEFT JOIN pg_attribute AS a
        ON i.classoid = 'pg_class'::regclass AND a.attrelid = i.objoid AND a.attnum = i.objsubid
      LEFT JOIN pg_class AS c ON i.classoid = 'pg_class'::regclass AND c.oid = i.objoid
      LEFT JOIN pg_proc AS p ON i.classoid = 'pg_proc'::regclass AND p.oid = i.objoid
      LEFT JOIN pg_type AS t ON i.classoid = 'pg_type'::regclass AND t.oid = i.objoid
      LEFT JOIN pg_namespace AS n ON i.classoid = 'pg_namespace'::regclass AND n.oid = i.objoid
     -- pg_dump takes a missing entry as the kind's default ACL: so does this
     WHERE pg_temp.acl(i.initprivs, NULL, 0) <> CASE
               WHEN i.objsubid <> 0 THEN '(none)'
               WHEN c.oid IS NOT NULL THEN pg_temp.acl(NULL, CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner)
               WHEN p.oid IS NOT NULL THEN pg_temp.acl(NULL, 'f', p.proowner)
               WHEN t.oid IS NOT NULL THEN pg_temp.acl(NULL, 'T', t.typowner)
               WHEN n.oid IS NOT NULL THEN pg_temp.acl(NULL, 'n', n.nspowner)
               ELSE '' END
    UNION ALL
    -- functions and procedures
    SELECT m.obj, 10, '', CASE WHEN p.prokind = 'a' THEN
               format('aggregate: %s', (SELECT row(ag.aggkind, ag.aggtransfn::regprocedure, ag.aggfinalfn::regprocedure,
                                                   ag.aggcombinefn::regprocedure, format_type(ag.aggtranstype, NULL),
                                                   ag.agginitval)::text
                                          FROM pg_aggregate AS ag WHERE ag.aggfnoid = p.oid))
           ELSE pg_get_functiondef(p.oid) END
      FROM m JOIN pg_proc AS p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
    UNION ALL
    SELECT m.obj, 11, '', format('owner %s, privileges %s', pg_get_userbyid(p.proowner),
                                 pg_temp.acl(p.proacl, 'f', p.proowner))
      FROM m JOIN pg_proc AS p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
    UNION ALL
    -- tables, views, sequences, composite types' relations
    SELECT r.obj, 20, '', format('relkind %s, persistence %s, owner %s, privileges %s, options %s, row security %s%s, replica identity %s%s%s',
           r.relkind, r.relpersistence, pg_get_userbyid(r.relowner),
           pg_temp.acl(r.relacl, CASE WHEN r.relkind = 'S' THEN 's' ELSE 'r' END::"char", r.relowner),
           coalesce(array_to_string(r.reloptions, ','), '(none)'),
           r.relrowsecurity, CASE WHEN r.relforcerowsecurity THEN ' (forced)' ELSE '' END, r.relreplident,
           CASE WHEN r.relkind = 'p' THEN ', partitioned by ' || pg_get_partkeydef(r.oid) ELSE '' END,
           CASE WHEN r.relispartition THEN ', partition ' || pg_get_expr(r.relpartbound, r.oid) ELSE '' END)
      FROM rel AS r
    UNION ALL
    SELECT r.obj, 21, h.inhseqno::text, 'inherits ' || h.inhparent::regclass::text
      FROM rel AS r JOIN pg_inherits AS h ON h.inhrelid = r.oid
    UNION ALL
    SELECT c.obj, 22, lpad(c.pos::text, 5, '0'),
           format('column %s: %s %s%s%s%s%s%s%s%s',
                  c.pos, quote_ident(c.attname), format_type(c.atttypid, c.atttypmod),
                  CASE WHEN c.attnotnull THEN ' NOT NULL' ELSE '' END,
                  CASE WHEN c.attcollation <> t.typcollation THEN ' COLLATE ' || c.attcollation::regcollation::text ELSE '' END,
                  CASE c.attidentity WHEN 'a' THEN ' GENERATED ALWAYS AS IDENTITY'
                                     WHEN 'd' THEN ' GENERATED BY DEFAULT AS IDENTITY' ELSE '' END,
                  CASE WHEN c.attgenerated <> '' THEN format(' GENERATED ALWAYS AS (%s) STORED', pg_get_expr(ad.adbin, ad.adrelid))
                       WHEN ad.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid) ELSE '' END,
                  CASE WHEN c.attstorage <> t.typstorage THEN ' STORAGE ' || c.attstorage::text ELSE '' END,
                  CASE WHEN c.attacl IS NOT NULL THEN ', privileges ' || pg_temp.acl(c.attacl, NULL, 0) ELSE '' END,
                  coalesce(', comment: ' || col_description(c.relid, c.attnum), ''))
      FROM cols AS c JOIN pg_type AS t ON t.oid = c.atttypid
      LEFT JOIN pg_attrdef AS ad ON ad.adrelid = c.relid AND ad.adnum = c.attnum
    UNION ALL
    SELECT r.obj, 23, k.conname::text, format('constraint %I: %s%s', k.conname, pg_get_constraintdef(k.oid),
                                              coalesce(', comment: ' || obj_description(k.oid, 'pg_constraint'), ''))
      FROM rel AS r JOIN pg_constraint AS k ON k.conrelid = r.oid
    UNION ALL
    SELECT r.obj, 24, ic.relname::text, format('index: %s%s', pg_get_indexdef(x.indexrelid),
                                               coalesce(', comment: ' || obj_description(x.indexrelid, 'pg_class'), ''))
      FROM rel AS r JOIN pg_index AS x ON x.indrelid = r.oid JOIN pg_class AS ic ON ic.oid = x.indexrelid
    UNION ALL
    SELECT r.obj, 25, g.tgname::text, format('trigger (enabled %s): %s%s', g.tgenabled, pg_get_triggerdef(g.oid),
                                             coalesce(', comment: ' || obj_description(g.oid, 'pg_trigger'), ''))
      FROM rel AS r JOIN pg_trigger AS g ON g.tgrelid = r.oid AND NOT g.tgisinternal
    UNION ALL
    SELECT r.obj, 26, pl.polname::text,
           format('policy %I: %s %s FOR %s TO %s USING (%s) WITH CHECK (%s)', pl.polname,
                  CASE WHEN pl.polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END, pl.polcmd,
                  (SELECT string_agg(CASE WHEN o = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(o) END, ', ' ORDER BY 1)
                     FROM unnest(pl.polroles) AS o),
                  pg_get_expr(pl.polqual, pl.polrelid), pg_get_expr(pl.polwithcheck, pl.polrelid))
      FROM rel AS r JOIN pg_policy AS pl ON pl.polrelid = r.oid
    UNION ALL
    SELECT r.obj, 27, w.rulename::text, 'rule: ' || pg_get_ruledef(w.oid)
      FROM rel AS r JOIN pg_rewrite AS w ON w.ev_class = r.oid AND w.rulename <> '_RETURN'
    UNION ALL
    SELECT r.obj, 28, '', 'view definition:' || E'\n' || pg_get_viewdef(r.oid)
      FROM rel AS r WHERE r.relkind IN ('v', 'm')
    UNION ALL
    SELECT r.obj, 29, '', format('sequence: AS %s START %s INCREMENT %s MINVALUE %s MAXVALUE %s CACHE %s%s',
                                 format_type(s.seqtypid, NULL), s.seqstart, s.seqincrement, s.seqmin, s.seqmax,
                                 s.seqcache, CASE WHEN s.seqcycle THEN ' CYCLE' ELSE '' END)
      FROM rel AS r JOIN pg_sequence AS s ON s.seqrelid = r.oid
    UNION ALL
    SELECT r.obj, 30, '', format('owned by %s.%I', d.refobjid::regclass, a.attname)
      FROM rel AS r JOIN pg_depend AS d
        ON d.classid = 'pg_class'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
       AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0
      JOIN pg_attribute AS a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
     WHERE r.relkind = 'S'
    UNION ALL
    -- types
    SELECT t.obj, 40, '', format('type: typtype %s, owner %s, privileges %s%s%s%s', t.typtype,
           pg_get_userbyid(t.typowner), pg_temp.acl(t.typacl, 'T', t.typowner),
           CASE WHEN t.typtype = 'd' THEN format(', domain over %s%s%s', format_type(t.typbasetype, t.typtypmod),
                                                 CASE WHEN t.typnotnull THEN ' NOT NULL' ELSE '' END,
                                                 coalesce(' DEFAULT ' || t.typdefault, '')) ELSE '' END,
           CASE WHEN t.typtype = 'e' THEN ', labels ' || (SELECT string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder)
                                                           FROM pg_enum AS e WHERE e.enumtypid = t.oid) ELSE '' END,
           CASE WHEN t.typtype = 'r' THEN ', range of ' || (SELECT format_type(g.rngsubtype, NULL)
                                                              FROM pg_range AS g WHERE g.rngtypid = t.oid) ELSE '' END)
      FROM typ AS t
    UNION ALL
    SELECT t.obj, 41, lpad(a.pos::text, 5, '0'), format('attribute %s: %s %s%s%s', a.pos, quote_ident(a.attname),
           format_type(a.atttypid, a.atttypmod),
           CASE WHEN a.attcollation <> at.typcollation THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END,
           coalesce(', comment: ' || col_description(a.attrelid, a.attnum), ''))
      FROM typ AS t
      -- a stand-alone composite type (a table's row type is its table's columns)
      JOIN pg_class AS tc ON tc.oid = t.typrelid AND tc.relkind = 'c'
      JOIN LATERAL (SELECT pa.*, row_number() OVER (ORDER BY pa.attnum) AS pos FROM pg_attribute AS pa
                     WHERE pa.attrelid = t.typrelid AND pa.attnum > 0 AND NOT pa.attisdropped) AS a ON true
      JOIN pg_type AS at ON at.oid = a.atttypid
    UNION ALL
    SELECT t.obj, 42, k.conname::text, format('constraint %I: %s', k.conname, pg_get_constraintdef(k.oid))
      FROM typ AS t JOIN pg_constraint AS k ON k.contypid = t.oid
    UNION ALL
    -- schemas
    SELECT m.obj, 50, '', format('owner %s, privileges %s', pg_get_userbyid(n.nspowner),
                                 pg_temp.acl(n.nspacl, 'n', n.nspowner))
      FROM m JOIN pg_namespace AS n ON m.classid = 'pg_namespace'::regclass AND n.oid = m.objid
    UNION ALL
    -- event triggers, casts, operators
    SELECT m.obj, 60, '', format('event trigger: ON %s EXECUTE %s, tags %s, enabled %s', v.evtevent,
                                 v.evtfoid::regprocedure, coalesce(v.evttags::text, '(all)'), v.evtenabled)
      FROM m JOIN pg_event_trigger AS v ON m.classid = 'pg_event_trigger'::regclass AND v.oid = m.objid
    UNION ALL
    SELECT m.obj, 61, '', format('cast: function %s, context %s, method %s', ca.castfunc::regprocedure,
                                 ca.castcontext, ca.castmethod)
      FROM m JOIN pg_cast AS ca ON m.classid = 'pg_cast'::regclass AND ca.oid = m.objid
    UNION ALL
    SELECT m.obj, 62, '', format('operator: %s, commutator %s, negator %s, restrict %s, join %s, merges %s, hashes %s',
                                 o.oprcode::regprocedure, o.oprcom::regoperator, o.oprnegate::regoperator,
                                 o.oprrest, o.oprjoin, o.oprcanmerge, o.oprcanhash)
      FROM m JOIN pg_operator AS o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
)
SELECT i.obj || ' | ' || l.line
  FROM items AS i, unnest(string_to_array(rtrim(i.val, E'\n'), E'\n')) WITH ORDINALITY AS l(line, n)
 ORDER BY i.obj COLLATE "C", i.ord, i.sub COLLATE "C", l.n;
