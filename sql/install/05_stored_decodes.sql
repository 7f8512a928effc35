-- shardid install script, part 05: stored decodes keep the layout frozen.
--
-- The decoders are IMMUTABLE (part 00), so indexes, generated columns,
-- constraints and materialized views may store what they compute. Those
-- values depend on the layout, so configure() refuses a change while any of
-- them exists (found through pg_depend), and a layout row that arrives after
-- the rows (pg_dump restores shardid.layout_config after the tables of
-- schemas that sort before "shardid") recomputes the stored generated
-- columns and rechecks the constraints that were computed with the default.

CREATE VIEW shardid.stored_decodes AS
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

-- Called by configure() with the layout it is about to write (a new layout
-- would make every stored decode stale; the same one changes nothing), and
-- by the trigger below without one (any change).
CREATE FUNCTION shardid._refuse_stored_decodes(new_epoch_ms bigint DEFAULT NULL,
                                               new_shard_bits integer DEFAULT NULL,
                                               new_seq_bits integer DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
    first_object text;
BEGIN
    IF (new_epoch_ms, new_shard_bits, new_seq_bits) =
       (SELECT (extract(epoch FROM l.epoch) * 1000)::bigint, l.shard_bits, l.seq_bits
          FROM shardid.layout() AS l) THEN
        RETURN;
    END IF;
    SELECT count(*), min(s.object) INTO n, first_object FROM shardid.stored_decodes AS s;
    IF n > 0 THEN
        RAISE EXCEPTION 'the layout cannot change: % object(s) store values of shardid decoders, such as %',
                        n, first_object
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Their stored values were computed with the current layout and would go stale.',
                  HINT = 'SELECT * FROM shardid.stored_decodes lists them; drop them, configure the layout, then create them again.';
    END IF;
END
$$;

-- Triggers on layout_config. configure() has already refused if anything
-- stores decodes and the layout changes, so they act on other writers. A row
-- inserted is taken for a restore (pg_dump's COPY of the layout after the
-- tables whose generated columns and CHECK constraints were computed with
-- the default layout): after the statement, once layout_changed has made the
-- decoders read the new layout, those are recomputed and rechecked. Indexes
-- and materialized views made before it, and any other change that would
-- leave a stored decode stale, are refused.
CREATE FUNCTION shardid._layout_stored_decodes() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
    col name;
BEGIN
    IF NOT EXISTS (SELECT FROM shardid.stored_decodes) THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'TRUNCATE'
       OR TG_OP = 'UPDATE' AND (NEW.epoch_ms, NEW.shard_bits, NEW.seq_bits) IS DISTINCT FROM
                               (OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits)
       OR TG_OP = 'DELETE' AND (OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits) IS DISTINCT FROM
                               (1314220021721::bigint, 13, 10) THEN
        PERFORM shardid._refuse_stored_decodes();
    END IF;
    IF TG_OP <> 'INSERT' THEN
        RETURN NULL;
    END IF;
    -- inserted_layout exists only in the INSERT trigger: query it only here
    IF NOT EXISTS (SELECT FROM inserted_layout AS c
                    WHERE (c.epoch_ms, c.shard_bits, c.seq_bits) IS DISTINCT FROM
                          (1314220021721::bigint, 13, 10)) THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT FROM shardid.stored_decodes AS s WHERE s.kind IN ('index', 'materialized view')) THEN
        PERFORM shardid._refuse_stored_decodes();
    END IF;
    FOR rel IN
        SELECT DISTINCT s.relation FROM shardid.stored_decodes AS s
          JOIN pg_class AS c ON c.oid = s.relation
         WHERE s.kind IN ('generated column', 'constraint') AND c.relkind = 'r'
    LOOP
        SELECT a.attname INTO col FROM pg_attribute AS a
         WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
         ORDER BY a.attnum LIMIT 1;
        EXECUTE format('UPDATE ONLY %s SET %I = %I', rel, col, col);
    END LOOP;
    RETURN NULL;
END
$$;
-- after layout_changed (triggers fire in name order)
CREATE TRIGGER layout_stored_decodes_insert
    AFTER INSERT ON shardid.layout_config REFERENCING NEW TABLE AS inserted_layout
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._layout_stored_decodes();
CREATE TRIGGER layout_stored_decodes_change
    AFTER UPDATE OR DELETE ON shardid.layout_config
    FOR EACH ROW EXECUTE FUNCTION shardid._layout_stored_decodes();
CREATE TRIGGER layout_stored_decodes_truncate
    AFTER TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._layout_stored_decodes();

COMMENT ON VIEW shardid.stored_decodes IS
    'Objects that store values computed by shardid decoders (indexes, generated columns, defaults, constraints, materialized views, partition bounds of next_id keys): while any exists, configure() refuses to change the layout.';
COMMENT ON FUNCTION shardid._refuse_stored_decodes(bigint, integer, integer) IS
    'Raises 55000 if anything stores values of shardid decoders and the layout would change; called by configure().';
COMMENT ON FUNCTION shardid._layout_stored_decodes() IS
    'Trigger: a layout row restored after the tables recomputes their generated columns; other changes under stored decodes are refused.';
