-- Node, for check_cluster() and align_copy(): every registered shard's
-- copy of a sharded table that differs from its template here, in one
-- statement: each relation's definition read by index, the copies
-- compared with their template's, the differences spelled out for those
-- that differ only. Compared: the columns (order, type, NOT NULL, default;
-- the id column's default names the shard's own generator and is left
-- out), the constraints (not foreign keys: a copy is made LIKE its
-- template, which copies none; nor NOT NULL, which PostgreSQL 18 keeps as
-- constraints too: it is compared per column) and the template's indexes
-- by name and shape (_index_statement()), and the owner. Indexes a copy
-- has beyond its template are the shard's own (a DBA's index on one shard,
-- which moves keep) and are not a difference.
--
-- Definitions are read from the catalog as they are (pg_get_expr,
-- pg_get_constraintdef, _index_statement() under the pinned search_path:
-- every name outside pg_catalog with its schema) and compared unchanged:
-- no name is rewritten, so a copy's CHECK that calls a function of
-- another schema than its template's is a difference. One element per
-- differing copy: shard, schema, table (qualified), table_name and its
-- template (qualified), the differences as sentences, and steps: the
-- statements that bring the copy in line, each with its phase (1:
-- removals, which run no code; 2: the owner; 3: additions, which run the
-- template's code), built from the template's catalog entries with only
-- the table's name changed, and 4: an index of the template the copy
-- lacks (or has invalid, a failed build's), by name, with how many keys
-- the copy holds twice for a unique one (_copy_index_duplicates(), read
-- as the copy's owner): build_copy_index() builds it CONCURRENTLY, so
-- that writes go on, and a unique one over duplicates is reported, not
-- built. A column the template lacks holds data, and dropping it is a
-- choice, not a repair, nor is the columns' order (a move's copy takes it
-- from the template): they have no step; extra names each such column
-- with its type, for the advice. shardid.align_copy() runs the steps of
-- phases 1 to 3.
CREATE OR REPLACE FUNCTION shardid_internal._copy_drift() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
WITH tmpl AS (
    SELECT t.table_name, t.template_schema, t.template_name, t.id_column, c.oid, c.relowner
      FROM shardid.sharded_tables AS t
      JOIN pg_namespace AS n ON n.nspname = t.template_schema
      JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = t.template_name
), rels AS (
    -- every copy and every template
    SELECT s.shard, s.schema_name, t.table_name, t.template_schema, t.id_column, t.oid AS tmpl_oid, t.relowner AS tmpl_owner,
           c.oid, c.relowner, format('%I.%I', s.schema_name, t.table_name) AS qname,
           format('%I.%I', t.template_schema, t.template_name) AS tmpl_qname
      FROM shardid.shard_registry AS s
      CROSS JOIN tmpl AS t
      JOIN pg_namespace AS n ON n.nspname = s.schema_name
      JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = t.table_name AND c.relkind IN ('r', 'p')
    UNION ALL
    SELECT NULL, t.template_schema, t.table_name, t.template_schema, t.id_column, t.oid, t.relowner, t.oid, t.relowner, NULL, NULL
      FROM tmpl AS t
), sig AS (
    -- each relation's definition, read by index (a lookup per relation,
    -- no join of one catalog aggregate with another)
    SELECT r.*,
           (SELECT jsonb_build_object(
                       'names', jsonb_agg(a.attname ORDER BY a.attnum),
                       'defs', jsonb_object_agg(a.attname, jsonb_build_object(
                           'type', format_type(a.atttypid, a.atttypmod),
                           'not null', a.attnotnull,
                           'default', CASE WHEN a.attname = r.id_column THEN NULL
                                           ELSE pg_get_expr(d.adbin, d.adrelid) END)))
              FROM pg_attribute AS a
              LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
             WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped) AS cols,
           (SELECT COALESCE(jsonb_object_agg(k.conname, pg_get_constraintdef(k.oid)), '{}')
              FROM pg_constraint AS k WHERE k.conrelid = r.oid AND k.contype NOT IN ('f', 'n')) AS cons,
           (SELECT COALESCE(jsonb_object_agg(i.relname, shardid_internal._index_statement(x.indexrelid)
                                                        || CASE WHEN x.indisvalid THEN '' ELSE ' (invalid)' END), '{}')
              FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid WHERE x.indrelid = r.oid) AS idx,
           (SELECT COALESCE(jsonb_object_agg(i.relname, x.indexrelid), '{}')
              FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid WHERE x.indrelid = r.oid) AS idx_oids
      FROM rels AS r
), copy AS (
    -- the copies that differ, each beside its template's definition
    SELECT c.shard, c.schema_name, c.table_name, c.template_schema, c.qname, c.tmpl_qname, c.relowner, c.tmpl_owner, c.tmpl_oid, c.oid,
           c.cols AS ccols, c.cons AS ccons, c.idx AS cidx, t.cols AS tcols, t.cons AS tcons, t.idx AS tidx, t.idx_oids AS tidx_oids
      FROM sig AS c
      -- the templates' definitions apart: a few rows to join every copy with
      JOIN (SELECT * FROM sig WHERE sig.shard IS NULL OFFSET 0) AS t ON t.table_name = c.table_name
     WHERE c.shard IS NOT NULL
       AND (c.cols IS DISTINCT FROM t.cols OR c.cons IS DISTINCT FROM t.cons OR c.relowner <> c.tmpl_owner
            OR NOT c.idx @> t.idx)
), diff AS (
    -- columns, by name (a: the template's, b: the copy's)
    SELECT x.shard, x.qname, x.table_name, 1 AS ord, COALESCE(d.akey, d.bkey) AS what,
           CASE WHEN d.bkey IS NULL THEN format('column %I is missing', d.akey)
                WHEN d.akey IS NULL THEN format('column %I is not the template''s', d.bkey)
                ELSE format('column %I: %s', d.akey,
                            concat_ws(', ',
                                CASE WHEN d.aval->'type' <> d.bval->'type' THEN format('type %s, the template''s %s', d.bval->>'type', d.aval->>'type') END,
                                CASE WHEN d.aval->'not null' <> d.bval->'not null'
                                     THEN CASE WHEN (d.aval->>'not null')::boolean THEN 'nullable, the template''s NOT NULL'
                                               ELSE 'NOT NULL, the template''s nullable' END END,
                                CASE WHEN d.aval->'default' IS DISTINCT FROM d.bval->'default'
                                     THEN format('default %s, the template''s %s', COALESCE(d.bval->>'default', 'none'), COALESCE(d.aval->>'default', 'none')) END)) END AS sentence,
           CASE WHEN d.bkey IS NULL
                THEN jsonb_build_array(jsonb_build_array(3, format('ALTER TABLE %s ADD COLUMN %I %s%s%s', x.qname, d.akey, d.aval->>'type',
                            CASE WHEN d.aval->>'default' IS NOT NULL THEN ' DEFAULT ' || (d.aval->>'default') ELSE '' END,
                            CASE WHEN (d.aval->>'not null')::boolean THEN ' NOT NULL' ELSE '' END)))
                -- a column the template lacks holds data: dropping it is a choice
                WHEN d.akey IS NULL THEN NULL
                ELSE (SELECT jsonb_agg(e) FROM (VALUES
                        (CASE WHEN d.aval->'not null' <> d.bval->'not null' AND NOT (d.aval->>'not null')::boolean
                              THEN jsonb_build_array(1, format('ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL', x.qname, d.akey)) END),
                        (CASE WHEN d.aval->'default' IS DISTINCT FROM d.bval->'default' AND d.aval->>'default' IS NULL
                              THEN jsonb_build_array(1, format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', x.qname, d.akey)) END),
                        (CASE WHEN d.aval->'type' <> d.bval->'type'
                              THEN jsonb_build_array(3, format('ALTER TABLE %s ALTER COLUMN %I TYPE %s', x.qname, d.akey, d.aval->>'type')) END),
                        (CASE WHEN d.aval->'not null' <> d.bval->'not null' AND (d.aval->>'not null')::boolean
                              THEN jsonb_build_array(3, format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', x.qname, d.akey)) END),
                        (CASE WHEN d.aval->'default' IS DISTINCT FROM d.bval->'default' AND d.aval->>'default' IS NOT NULL
                              THEN jsonb_build_array(3, format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', x.qname, d.akey, d.aval->>'default')) END)
                      ) AS v(e) WHERE e IS NOT NULL) END AS steps,
           -- a column the template lacks: what advice names (its type)
           CASE WHEN d.akey IS NULL THEN jsonb_build_object('column', d.bkey, 'type', d.bval->>'type') END AS extra
      FROM copy AS x
      CROSS JOIN LATERAL (SELECT a.key, a.value, b.key, b.value
                            FROM jsonb_each(x.tcols->'defs') AS a FULL JOIN jsonb_each(x.ccols->'defs') AS b ON b.key = a.key
                           WHERE a.value IS DISTINCT FROM b.value) AS d(akey, aval, bkey, bval)
    UNION ALL
    -- the column order, when the same columns differ only in it
    SELECT x.shard, x.qname, x.table_name, 2, 'order', format('columns in the order %s, the template''s %s',
                                                 (SELECT string_agg(quote_ident(v), ', ') FROM jsonb_array_elements_text(x.ccols->'names') AS v),
                                                 (SELECT string_agg(quote_ident(v), ', ') FROM jsonb_array_elements_text(x.tcols->'names') AS v)),
           NULL, NULL
      FROM copy AS x
     WHERE x.tcols->'names' <> x.ccols->'names'
       AND (x.tcols->'defs') ?& ARRAY(SELECT jsonb_object_keys(x.ccols->'defs'))
       AND (x.ccols->'defs') ?& ARRAY(SELECT jsonb_object_keys(x.tcols->'defs'))
    UNION ALL
    -- constraints, by name: the copy's dropped, the template's added with
    -- its definition as the catalog gives it
    SELECT x.shard, x.qname, x.table_name, 3, COALESCE(d.akey, d.bkey),
           CASE WHEN d.bkey IS NULL THEN format('constraint %I is missing', d.akey)
                WHEN d.akey IS NULL THEN format('constraint %I is not the template''s', d.bkey)
                ELSE format('constraint %I is %s, the template''s %s', d.akey, d.bval, d.aval) END,
           (SELECT jsonb_agg(e) FROM (VALUES
               (CASE WHEN d.bkey IS NOT NULL THEN jsonb_build_array(1, format('ALTER TABLE %s DROP CONSTRAINT %I', x.qname, d.bkey)) END),
               (CASE WHEN d.akey IS NOT NULL THEN jsonb_build_array(3, format('ALTER TABLE %s ADD CONSTRAINT %I %s', x.qname, d.akey, d.aval)) END)
             ) AS v(e) WHERE e IS NOT NULL), NULL
      FROM copy AS x
      CROSS JOIN LATERAL (SELECT a.key, a.value #>> '{}', b.key, b.value #>> '{}'
                            FROM jsonb_each(x.tcons) AS a FULL JOIN jsonb_each(x.ccons) AS b ON b.key = a.key
                           WHERE a.value IS DISTINCT FROM b.value) AS d(akey, aval, bkey, bval)
    UNION ALL
    -- the template's indexes (not the copy's own), by name: the copy's of
    -- that name dropped, the template's made on the copy (_index_statement())
    SELECT x.shard, x.qname, x.table_name, 4, d.akey,
           CASE WHEN d.bval IS NULL THEN format('index %I is missing', d.akey)
                WHEN d.invalid THEN format('index %I is invalid (a failed build)', d.akey)
                ELSE format('index %I is %s, the template''s %s', d.akey, d.bval, d.aval) END
           || CASE WHEN d.dups > 0 THEN format(', and the copy holds %s %s this unique index refuses', d.dups,
                                               CASE WHEN d.dups = 1 THEN 'key' ELSE 'keys' END) ELSE '' END,
           (SELECT jsonb_agg(e) FROM (VALUES
               (CASE WHEN d.bval IS NOT NULL AND NOT d.invalid THEN jsonb_build_array(1, format('DROP INDEX %I.%I', x.schema_name, d.akey)) END),
               -- built CONCURRENTLY by build_copy_index(), not by align_copy()
               (jsonb_build_array(4, d.akey, d.dups))
             ) AS v(e) WHERE e IS NOT NULL), NULL
      FROM copy AS x
      CROSS JOIN LATERAL (SELECT a.key, a.value #>> '{}', x.cidx->>a.key, COALESCE(x.cidx->>a.key LIKE '% (invalid)', false),
                                 shardid_internal._copy_index_duplicates(x.oid::regclass, (x.tidx_oids->>a.key)::oid, false)::bigint
                            FROM jsonb_each(x.tidx) AS a
                           WHERE (x.cidx->a.key) IS DISTINCT FROM a.value) AS d(akey, aval, bval, invalid, dups)
     -- an index that belongs to a constraint is the constraint's
     WHERE NOT EXISTS (SELECT FROM pg_constraint AS k JOIN pg_class AS i ON i.oid = k.conindid
                        WHERE k.conrelid = x.tmpl_oid AND i.relname = d.akey)
    UNION ALL
    -- the owner (align_copy() gives the copy to the template's owner)
    SELECT x.shard, x.qname, x.table_name, 5, 'owner',
           format('owner %I, the template''s %I', pg_get_userbyid(x.relowner), pg_get_userbyid(x.tmpl_owner)),
           jsonb_build_array(jsonb_build_array(2, pg_get_userbyid(x.tmpl_owner))), NULL
      FROM copy AS x WHERE x.relowner <> x.tmpl_owner
)
SELECT COALESCE(jsonb_agg(jsonb_build_object('shard', g.shard, 'table', g.qname, 'table_name', g.table_name,
                                             'template', g.tmpl_qname, 'differences', g.sentences, 'steps', g.steps,
                                             'extra', g.extra)
                          ORDER BY g.shard, g.qname), '[]')
  FROM (SELECT d.shard, d.qname, d.table_name, (SELECT c.tmpl_qname FROM copy AS c WHERE c.shard = d.shard AND c.table_name = d.table_name) AS tmpl_qname,
               jsonb_agg(d.sentence ORDER BY d.ord, d.what) AS sentences,
               COALESCE(jsonb_agg(d.extra ORDER BY d.what) FILTER (WHERE d.extra IS NOT NULL), '[]') AS extra,
               COALESCE((SELECT jsonb_agg(st ORDER BY (st->>0)::integer, o.ord, o.what, o.i)
                           FROM (SELECT e.ord, e.what, s.st, s.i FROM diff AS e, jsonb_array_elements(e.steps) WITH ORDINALITY AS s(st, i)
                                  WHERE e.shard = d.shard AND e.qname = d.qname) AS o), '[]') AS steps
          FROM diff AS d GROUP BY d.shard, d.qname, d.table_name) AS g
$$;

REVOKE ALL ON FUNCTION shardid_internal._copy_drift() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._copy_drift() IS
    'Node, for check_cluster() and align_copy(): every shard''s copy of a sharded table that differs from its template here (columns, their order, types, NOT NULL, defaults but the id column''s, constraints but foreign keys, the template''s indexes, owner), definitions read from the catalog unchanged, with the differences as sentences and the steps that align it (statements built from the template''s catalog entries, by phase); one statement.';
