CREATE OR REPLACE VIEW shardid.stored_decodes AS
WITH decoders AS (
    SELECT p.oid
      FROM pg_catalog.pg_proc AS p
     WHERE p.pronamespace OPERATOR(pg_catalog.=) 'shardid'::pg_catalog.regnamespace
       AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['id_time', 'id_shard', 'id_seq', 'id_decode',
                                                        'make_id', 'time_to_id']::pg_catalog.name[])
), users AS (
    SELECT DISTINCT d.classid, d.objid, d.objsubid
      FROM pg_catalog.pg_depend AS d
     WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
       AND d.refobjid IN (SELECT oid FROM decoders)
       AND d.deptype OPERATOR(pg_catalog.=) 'n'
)
-- expression and partial indexes
SELECT 'index'::text AS kind,
       pg_catalog.pg_describe_object(u.classid, u.objid, u.objsubid) AS object,
       i.indrelid::pg_catalog.regclass AS relation
  FROM users AS u
  JOIN pg_catalog.pg_index AS i ON i.indexrelid OPERATOR(pg_catalog.=) u.objid
 WHERE u.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
UNION ALL
-- stored generated columns, and defaults whose values are stored by inserts
SELECT CASE WHEN a.attgenerated OPERATOR(pg_catalog.=) 's' THEN 'generated column'
            ELSE 'column default' END,
       pg_catalog.pg_describe_object(u.classid, u.objid, u.objsubid),
       ad.adrelid::pg_catalog.regclass
  FROM users AS u
  JOIN pg_catalog.pg_attrdef AS ad ON ad.oid OPERATOR(pg_catalog.=) u.objid
  JOIN pg_catalog.pg_attribute AS a
    ON a.attrelid OPERATOR(pg_catalog.=) ad.adrelid AND a.attnum OPERATOR(pg_catalog.=) ad.adnum
 WHERE u.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
UNION ALL
-- CHECK constraints of tables and domains
SELECT 'constraint',
       pg_catalog.pg_describe_object(u.classid, u.objid, u.objsubid),
       NULLIF(c.conrelid, 0::pg_catalog.oid)::pg_catalog.regclass
  FROM users AS u
  JOIN pg_catalog.pg_constraint AS c ON c.oid OPERATOR(pg_catalog.=) u.objid
 WHERE u.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass
UNION ALL
-- materialized views (plain views store nothing)
SELECT 'materialized view',
       pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, r.ev_class, 0),
       r.ev_class::pg_catalog.regclass
  FROM users AS u
  JOIN pg_catalog.pg_rewrite AS r ON r.oid OPERATOR(pg_catalog.=) u.objid
  JOIN pg_catalog.pg_class AS m ON m.oid OPERATOR(pg_catalog.=) r.ev_class
 WHERE u.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
   AND m.relkind OPERATOR(pg_catalog.=) 'm'
UNION ALL
-- partition bounds are stored as constants, so pg_depend does not see
-- time_to_id() in them: count every partition of a table range-partitioned
-- on a column whose default is shardid.next_id()
SELECT 'partition bound',
       'partition bound of ' OPERATOR(pg_catalog.||)
           pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, inh.inhrelid, 0),
       inh.inhrelid::pg_catalog.regclass
  FROM pg_catalog.pg_partitioned_table AS pt
  JOIN pg_catalog.pg_attrdef AS ad
    ON ad.adrelid OPERATOR(pg_catalog.=) pt.partrelid
   AND ad.adnum OPERATOR(pg_catalog.=) pt.partattrs[0]
  JOIN pg_catalog.pg_inherits AS inh ON inh.inhparent OPERATOR(pg_catalog.=) pt.partrelid
 WHERE pt.partstrat OPERATOR(pg_catalog.=) 'r'
   AND pt.partnatts OPERATOR(pg_catalog.=) 1
   AND EXISTS (SELECT FROM pg_catalog.pg_depend AS d
                WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
                  AND d.objid OPERATOR(pg_catalog.=) ad.oid
                  AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                  AND d.refobjid IN (SELECT p.oid FROM pg_catalog.pg_proc AS p
                                      WHERE p.pronamespace OPERATOR(pg_catalog.=) 'shardid'::pg_catalog.regnamespace
                                        AND p.proname OPERATOR(pg_catalog.=) 'next_id'));

GRANT SELECT ON shardid.stored_decodes TO PUBLIC;

COMMENT ON VIEW shardid.stored_decodes IS
    'Objects that store values computed by shardid decoders (indexes, generated columns, defaults, constraints, materialized views, partition bounds of next_id keys): while any exists, configure() refuses to change the layout.';
