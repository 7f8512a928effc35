-- Privileges follow the shards (issue 46): what brings shards' copies,
-- schemas and generators in line with the privileges recorded on the
-- templates, as steps, each a statement and the role it runs as (the
-- owner of what it touches; run through the fence by _align_privileges).
--
-- The record is the templates' ACLs: a template is the truth for every
-- shard's tables, a GRANT through grant_shards() or run_on_shards() lands
-- on it first, and it survives restarts, pg_dump and updates. From it:
--   table      each copy has exactly its template's grants to other roles
--              (those its owner gave: a grant option's delegated grants
--              are the grantee's business); a copy-only grant is revoked
--              (CASCADE), a missing one granted;
--   schema     every role with a privilege on a template (or a column of
--              one) has USAGE on each shard's schema;
--   generator  every role with INSERT on a template has USAGE on each
--              shard's generator, which next_id() needs.
-- Schema and generator USAGE is only added; tidy (after a REVOKE) also
-- revokes it from a role that no template grant and no privilege on a
-- copy (or, for the schema, the generator) of that shard need any more.
-- Roles named shardid_move_% are a move's own (15's subscription role)
-- and left out. shards NULL: every
-- registered shard; only_table: that sharded table's copies only (the
-- schema and generator steps still follow every template).
CREATE OR REPLACE FUNCTION shardid_internal._privilege_steps(shards integer[], only_table name DEFAULT NULL,
                                                             tidy boolean DEFAULT false)
    RETURNS TABLE (shard integer, object text, what text, run_as oid, statement text)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    templates oid[] := ARRAY(SELECT to_regclass(format('%I.%I', t.template_schema, t.template_name))
                               FROM shardid.sharded_tables AS t);
BEGIN
    -- PL/pgSQL keeps the plan for the session: a shard at a time
    -- (_create_shard_table(), run_on_shards()) must not plan it each time;
    -- the templates by OID, never a scan of the catalog
    RETURN QUERY
WITH tmpl AS (
    SELECT t.table_name, c.oid, c.relowner, c.relacl
      FROM pg_class AS c
      JOIN pg_namespace AS n ON n.oid = c.relnamespace
      JOIN shardid.sharded_tables AS t ON t.template_schema = n.nspname AND t.template_name = c.relname
     WHERE c.oid = ANY (templates)
), want AS (
    SELECT t.table_name, a.grantee, a.privilege_type AS priv, a.is_grantable AS opt
      FROM tmpl AS t, aclexplode(t.relacl) AS a
     WHERE a.grantor = t.relowner AND a.grantee <> t.relowner
), needs AS (
    -- the roles that need USAGE on every shard's schema, and whether they write
    SELECT u.grantee, bool_or(u.priv = 'INSERT') AS writes
      FROM (SELECT w.grantee, w.priv FROM want AS w
            UNION ALL
            SELECT a.grantee, NULL
              FROM tmpl AS t
              JOIN pg_attribute AS att ON att.attrelid = t.oid AND att.attnum > 0 AND att.attacl IS NOT NULL,
                   aclexplode(att.attacl) AS a
             WHERE a.grantee <> t.relowner) AS u
     GROUP BY u.grantee
), reg AS (
    SELECT r.shard, n.oid AS nsp, n.nspowner, n.nspacl, format('%I', r.schema_name) AS qschema,
           s.oid AS seq, s.relowner AS seqowner, s.relacl AS seqacl
      FROM shardid.shard_registry AS r
      JOIN pg_namespace AS n ON n.nspname = r.schema_name
      LEFT JOIN pg_namespace AS sn ON sn.nspname = r.sequence_schema
      LEFT JOIN pg_class AS s ON s.relnamespace = sn.oid AND s.relname = r.sequence_name AND s.relkind = 'S'
     WHERE shards IS NULL OR r.shard = ANY (shards)
), copies AS (
    SELECT g.shard, t.table_name, c.oid, c.relowner, c.relacl
      FROM reg AS g
      CROSS JOIN tmpl AS t
      JOIN pg_class AS c ON c.relnamespace = g.nsp AND c.relname = t.table_name AND c.relkind IN ('r', 'p')
     WHERE only_table IS NULL OR t.table_name = only_table
), have AS (
    SELECT c.shard, c.table_name, a.grantee, a.privilege_type AS priv, a.is_grantable AS opt
      FROM copies AS c, aclexplode(c.relacl) AS a
     WHERE a.grantor = c.relowner AND a.grantee <> c.relowner
       AND (a.grantee = 0 OR pg_get_userbyid(a.grantee) NOT LIKE 'shardid\_move\_%')
), tdiff AS (
    -- per copy and grantee: what it lacks (add) and what it has beyond
    -- its template (extra), each with or without the grant option
    SELECT c.shard, c.oid, c.relowner, d.grantee, d.opt, d.add, string_agg(d.priv, ', ' ORDER BY d.priv) AS privs
      FROM copies AS c
      CROSS JOIN LATERAL (
          SELECT COALESCE(w.grantee, h.grantee) AS grantee, COALESCE(w.priv, h.priv) AS priv,
                 COALESCE(w.opt, h.opt) AS opt, h.grantee IS NULL AS add
            FROM (SELECT * FROM want WHERE want.table_name = c.table_name) AS w
            FULL JOIN (SELECT * FROM have WHERE have.shard = c.shard AND have.table_name = c.table_name) AS h
              ON h.grantee = w.grantee AND h.priv = w.priv AND h.opt = w.opt
           WHERE w.grantee IS NULL OR h.grantee IS NULL) AS d
     GROUP BY c.shard, c.oid, c.relowner, d.grantee, d.opt, d.add
), acl AS (
    -- the exact entries of each shard's schema and generator
    SELECT g.shard, 'schema' AS object, a.grantee, a.grantor, a.privilege_type AS priv
      FROM reg AS g, aclexplode(COALESCE(g.nspacl, acldefault('n', g.nspowner))) AS a
    UNION ALL
    SELECT g.shard, 'generator', a.grantee, a.grantor, a.privilege_type
      FROM reg AS g, aclexplode(COALESCE(g.seqacl, acldefault('s', g.seqowner))) AS a
     WHERE g.seq IS NOT NULL
), held AS (
    -- tidy: per shard, the roles with a privilege on a copy or on the
    -- generator (but its USAGE), and whether one of them is INSERT
    SELECT c.shard, e.grantee, e.privilege_type = 'INSERT' AS inserts
      FROM copies AS c, aclexplode(c.relacl) AS e
     WHERE tidy
    UNION ALL
    SELECT q.shard, q.grantee, false FROM acl AS q
     WHERE tidy AND q.object = 'generator' AND q.priv <> 'USAGE'
), steps AS (
    SELECT d.shard, 'table' AS object, CASE WHEN d.add THEN 2 ELSE 1 END AS ord,
           format(CASE WHEN d.add THEN 'table %s: %s lacks %s%s' ELSE 'table %s: %s has %s%s, which its template does not give' END,
                  d.oid::regclass, shardid_internal._grantee(d.grantee), d.privs,
                  CASE WHEN d.opt THEN ' WITH GRANT OPTION' ELSE '' END) AS what,
           d.relowner AS run_as,
           CASE WHEN d.add
                THEN format('GRANT %s ON TABLE %s TO %s%s', d.privs, d.oid::regclass, shardid_internal._grantee(d.grantee),
                            CASE WHEN d.opt THEN ' WITH GRANT OPTION' ELSE '' END)
                ELSE format('REVOKE %s ON TABLE %s FROM %s CASCADE', d.privs, d.oid::regclass, shardid_internal._grantee(d.grantee)) END
               AS statement
      FROM tdiff AS d
    UNION ALL
    SELECT g.shard, 'schema', 3, format('schema %s: %s lacks USAGE', g.qschema, shardid_internal._grantee(x.grantee)),
           g.nspowner, format('GRANT USAGE ON SCHEMA %s TO %s', g.qschema, shardid_internal._grantee(x.grantee))
      FROM reg AS g, needs AS x
     WHERE x.grantee <> g.nspowner
       AND NOT EXISTS (SELECT FROM acl AS a WHERE a.shard = g.shard AND a.object = 'schema' AND a.grantee = x.grantee AND a.priv = 'USAGE')
    UNION ALL
    SELECT g.shard, 'generator', 4, format('generator %s: %s lacks USAGE', g.seq::regclass, shardid_internal._grantee(x.grantee)),
           g.seqowner, format('GRANT USAGE ON SEQUENCE %s TO %s', g.seq::regclass, shardid_internal._grantee(x.grantee))
      FROM reg AS g, needs AS x
     WHERE x.writes AND g.seq IS NOT NULL AND x.grantee <> g.seqowner
       AND NOT EXISTS (SELECT FROM acl AS a WHERE a.shard = g.shard AND a.object = 'generator' AND a.grantee = x.grantee
                                              AND a.priv IN ('USAGE', 'UPDATE'))
    UNION ALL
    -- tidy: a generator's USAGE no template's INSERT and no copy's INSERT needs
    SELECT g.shard, 'generator', 5, format('generator %s: %s has USAGE nothing needs', g.seq::regclass, shardid_internal._grantee(a.grantee)),
           g.seqowner, format('REVOKE USAGE ON SEQUENCE %s FROM %s', g.seq::regclass, shardid_internal._grantee(a.grantee))
      FROM reg AS g
      JOIN acl AS a ON a.shard = g.shard AND a.object = 'generator' AND a.priv = 'USAGE' AND a.grantor = g.seqowner AND a.grantee <> g.seqowner
     WHERE tidy
       AND NOT EXISTS (SELECT FROM needs AS x WHERE x.grantee = a.grantee AND x.writes)
       AND NOT EXISTS (SELECT FROM held AS h WHERE h.shard = g.shard AND h.grantee = a.grantee AND h.inserts)
    UNION ALL
    -- tidy: a schema's USAGE no template grant and no privilege on a relation of it needs
    SELECT g.shard, 'schema', 6, format('schema %s: %s has USAGE nothing needs', g.qschema, shardid_internal._grantee(a.grantee)),
           g.nspowner, format('REVOKE USAGE ON SCHEMA %s FROM %s', g.qschema, shardid_internal._grantee(a.grantee))
      FROM reg AS g
      JOIN acl AS a ON a.shard = g.shard AND a.object = 'schema' AND a.priv = 'USAGE' AND a.grantor = g.nspowner AND a.grantee <> g.nspowner
     WHERE tidy
       AND NOT EXISTS (SELECT FROM needs AS x WHERE x.grantee = a.grantee)
       AND NOT EXISTS (SELECT FROM held AS h WHERE h.shard = g.shard AND h.grantee = a.grantee)
)
SELECT s.shard, s.object, s.what, s.run_as, s.statement
  FROM steps AS s
 ORDER BY s.shard, s.ord, s.what COLLATE "C";
END
$$;

-- EXECUTE stays with PUBLIC: create_shard() and run_on_shards() reach it with the caller's rights.

COMMENT ON FUNCTION shardid_internal._privilege_steps(integer[], name, boolean) IS
    'Internal: what brings shards'' copies (their template''s grants, exactly), schemas (USAGE for every role a template grants to) and generators (USAGE for every role a template grants INSERT to) in line with the templates'' privileges, as steps: shard, object, what differs, the owner it runs as, the statement; tidy also revokes schema and generator USAGE nothing needs. Executable by PUBLIC (the shard functions call it with the caller''s rights).';
