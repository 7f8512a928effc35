-- shardid 0.1 -> 0.2: ALTER EXTENSION shardid UPDATE TO '0.2'.
-- Everything this script creates or changes is also in sql/install/*.sql,
-- the 0.2 install script; test/e2e/update.sh checks that both give the same objects.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.2'" to load this file. \quit

-- hardening (issue 10): the schema check of the install script, so a 0.1
-- installed into a schema that a non-superuser owns or may create in is
-- not updated either.
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
                  HINT = 'Check what the schema holds, drop it (or have a superuser own it and everything in it), then run ALTER EXTENSION shardid UPDATE again.';
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
                  HINT = 'Check what the schema holds, REVOKE CREATE ON SCHEMA shardid from them (or drop the schema), then run ALTER EXTENSION shardid UPDATE again.';
    END IF;
END
$check_schema$;

-- sync_generators(): generators raised above rows copied in without them (issue 12)
CREATE FUNCTION shardid.sync_generators() RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l          shardid.layout_report := shardid.layout();
    time_shift integer := l.shard_bits OPERATOR(pg_catalog.+) l.seq_bits;
    seq_mask   bigint := (1::bigint OPERATOR(pg_catalog.<<) l.seq_bits) OPERATOR(pg_catalog.-) 1;
    g          record;
    i          integer;
    tbl        pg_catalog.regclass;
    col        name;
    shard      integer;
    min_id     bigint;
    max_id     bigint;
    target     bigint;
    wanted     bigint;
    cur_value  bigint;
    cur_called boolean;
    raised     integer := 0;
BEGIN
    -- Every generator named in a table column DEFAULT that calls next_id(),
    -- with the columns it serves: the DEFAULT depends on the function and
    -- on its sequence (a regclass constant), so the catalog finds them
    -- without the shard registry. The shard is read from the DEFAULT's text
    -- (NULL unless it is a literal).
    FOR g IN
        SELECT sdep.refobjid AS seq, sq.seqtypid,
               pg_catalog.array_agg(d.adrelid ORDER BY d.adrelid, a.attname) AS tbls,
               pg_catalog.array_agg(a.attname ORDER BY d.adrelid, a.attname) AS cols,
               pg_catalog.array_agg(pg_catalog.substring(pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                                                         '^shardid\.next_id\((-?[0-9]+),')::integer
                                    ORDER BY d.adrelid, a.attname) AS shards
          FROM pg_catalog.pg_attrdef AS d
          JOIN pg_catalog.pg_attribute AS a
            ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid AND a.attnum OPERATOR(pg_catalog.=) d.adnum
          JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) d.adrelid
          JOIN pg_catalog.pg_depend AS fdep
            ON fdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
           AND fdep.objid OPERATOR(pg_catalog.=) d.oid
           AND fdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
           AND fdep.refobjid OPERATOR(pg_catalog.=) 'shardid.next_id(integer, pg_catalog.regclass)'::pg_catalog.regprocedure
          JOIN pg_catalog.pg_depend AS sdep
            ON sdep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
           AND sdep.objid OPERATOR(pg_catalog.=) d.oid
           AND sdep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
          JOIN pg_catalog.pg_sequence AS sq ON sq.seqrelid OPERATOR(pg_catalog.=) sdep.refobjid
         WHERE t.relkind IN ('r', 'p') AND NOT a.attisdropped
         GROUP BY sdep.refobjid, sq.seqtypid
         ORDER BY 1
    LOOP
        -- ALTER SEQUENCE (to the type it has: no change) locks out next_id()
        -- on this generator until the transaction ends, so no ID is issued
        -- between reading its state and raising it.
        EXECUTE pg_catalog.format('ALTER SEQUENCE %s AS %s', g.seq::pg_catalog.regclass,
                                  pg_catalog.format_type(g.seqtypid, NULL));
        wanted := NULL;
        FOR i IN 1 .. pg_catalog.array_length(g.tbls, 1) LOOP
            tbl := g.tbls[i];
            col := g.cols[i];
            shard := g.shards[i];
            -- min() and max() of an indexed column are two index lookups
            EXECUTE pg_catalog.format('SELECT min(%1$I), max(%1$I) FROM %2$s', col, tbl)
                INTO min_id, max_id;
            CONTINUE WHEN max_id IS NULL;
            IF min_id OPERATOR(pg_catalog.<) 0 THEN
                RAISE EXCEPTION 'column "%" of table "%" holds a negative ID', col, tbl
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = pg_catalog.format('For example %s. IDs of this layout are positive 63-bit values.', min_id);
            END IF;
            IF shard IS NOT NULL AND shardid.id_shard(max_id) OPERATOR(pg_catalog.<>) shard THEN
                RAISE EXCEPTION 'the largest ID of "%"."%" is not of shard %', tbl, col, shard
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = pg_catalog.format('ID %s decodes to shard %s under this layout (%s shard bits, %s seq bits); the column DEFAULT issues shard %s.',
                                                     max_id, shardid.id_shard(max_id), l.shard_bits, l.seq_bits, shard),
                          HINT = 'Configure this database with the layout the IDs were made with (shardid.layout() on their server).';
            END IF;
            -- The generator state whose ID is max_id. Without a literal
            -- shard in the DEFAULT, the whole millisecond of max_id is
            -- skipped: IDs of lower shards may hold higher counters.
            target := ((max_id OPERATOR(pg_catalog.>>) time_shift) OPERATOR(pg_catalog.<<) l.seq_bits)
                      OPERATOR(pg_catalog.|)
                      CASE WHEN shard IS NULL THEN seq_mask
                           ELSE max_id OPERATOR(pg_catalog.&) seq_mask END;
            wanted := GREATEST(wanted, target);
        END LOOP;
        CONTINUE WHEN wanted IS NULL;
        EXECUTE pg_catalog.format('SELECT last_value, is_called FROM %s', g.seq::pg_catalog.regclass)
            INTO cur_value, cur_called;
        IF NOT cur_called OR cur_value OPERATOR(pg_catalog.<) wanted THEN
            PERFORM pg_catalog.setval(g.seq::pg_catalog.regclass, wanted, true);
            raised := raised OPERATOR(pg_catalog.+) 1;
        END IF;
    END LOOP;
    RETURN raised;
END
$$;

COMMENT ON FUNCTION shardid.sync_generators() IS
    'Raises every generator named in a column DEFAULT shardid.next_id(shard, seq) to at least the state of the largest ID in the columns it serves (after logical replication or a data restore); never lowers one; returns how many it raised.';
-- indexable decoders: IMMUTABLE, with configure() refusing a layout change
-- while indexes, generated columns, constraints, materialized views or
-- partition bounds store their values (sql/install/05_stored_decodes.sql)
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

ALTER FUNCTION shardid.id_time(bigint) IMMUTABLE;
ALTER FUNCTION shardid.id_shard(bigint) IMMUTABLE;
ALTER FUNCTION shardid.id_seq(bigint) IMMUTABLE;
ALTER FUNCTION shardid.id_decode(bigint) IMMUTABLE;
ALTER FUNCTION shardid.make_id(timestamptz, integer, integer) IMMUTABLE;
ALTER FUNCTION shardid.time_to_id(timestamptz) IMMUTABLE;

CREATE OR REPLACE FUNCTION shardid.configure(epoch timestamptz, shard_bits integer DEFAULT 13,
                                  seq_bits integer DEFAULT 10)
    RETURNS shardid.layout_report
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_epoch_ms bigint;
BEGIN
    IF epoch IS NULL OR shard_bits IS NULL OR seq_bits IS NULL THEN
        RAISE EXCEPTION 'configure() arguments must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    new_epoch_ms := shardid._check_layout(epoch, shard_bits, seq_bits);
    -- Serialise with other configure() calls and with the first next_id()
    -- of every backend, which reads this table after marking ids_issued.
    LOCK TABLE shardid.layout_config IN ACCESS EXCLUSIVE MODE;
    IF (SELECT s.is_called FROM shardid.ids_issued AS s) THEN
        RAISE EXCEPTION 'the layout cannot change: IDs have already been issued'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Changing the layout would make old and new IDs collide or decode wrongly.',
                  HINT = 'Configure the layout in a new database before the first next_id() call.';
    END IF;
    PERFORM shardid._refuse_stored_decodes(new_epoch_ms, configure.shard_bits, configure.seq_bits);
    INSERT INTO shardid.layout_config AS c (singleton, epoch_ms, shard_bits, seq_bits)
        VALUES (true, new_epoch_ms, configure.shard_bits, configure.seq_bits)
        ON CONFLICT (singleton) DO UPDATE
        SET epoch_ms = excluded.epoch_ms, shard_bits = excluded.shard_bits,
            seq_bits = excluded.seq_bits;
    RETURN shardid.layout();
END
$$;

-- time partitions (sql/install/40_time_partitions.sql)
CREATE FUNCTION shardid.create_time_partitions(parent regclass, from_time timestamptz,
                                               to_time timestamptz, every interval)
    RETURNS SETOF regclass
    LANGUAGE plpgsql STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_partitions CONSTANT integer := 1000;
    nsp name;
    relname name;
    key_type regtype;
    fmt text;
    t timestamptz;
    n integer := 0;
    part name;
BEGIN
    SELECT n.nspname, c.relname, a.atttypid::regtype INTO nsp, relname, key_type
      FROM pg_class AS c
      JOIN pg_namespace AS n ON n.oid = c.relnamespace
      JOIN pg_partitioned_table AS pt ON pt.partrelid = c.oid
      LEFT JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = pt.partattrs[0]
     WHERE c.oid = parent AND pt.partstrat = 'r' AND pt.partnatts = 1;
    IF key_type IS DISTINCT FROM 'bigint'::regtype THEN
        RAISE EXCEPTION 'table % is not partitioned by range on one bigint column', parent
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Create it with PARTITION BY RANGE (id), id being the bigint ID column.';
    END IF;
    IF from_time >= to_time OR from_time + every <= from_time THEN
        RAISE EXCEPTION 'no partitions from % to % every %', from_time, to_time, every
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'from_time must be before to_time, and every must be positive.';
    END IF;
    -- partition names: parent_pYYYYMMDD, with _HH24MI when partitions are shorter than a day
    fmt := CASE WHEN from_time + every < from_time + interval '1 day' THEN '"_p"YYYYMMDD"_"HH24MI'
                ELSE '"_p"YYYYMMDD' END;
    t := from_time;
    WHILE t < to_time LOOP
        n := n + 1;
        IF n > max_partitions THEN
            RAISE EXCEPTION 'more than % partitions from % to % every %', max_partitions, from_time, to_time, every
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Create them in several calls, or with a longer interval.';
        END IF;
        part := left(relname, 63 - length(to_char(t, fmt))) || to_char(t, fmt);
        IF to_regclass(format('%I.%I', nsp, part)) IS NULL THEN
            EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%s) TO (%s)',
                           nsp, part, parent, shardid.time_to_id(t), shardid.time_to_id(t + every));
            RETURN NEXT format('%I.%I', nsp, part)::regclass;
        END IF;
        t := t + every;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid.create_time_partitions(regclass, timestamptz, timestamptz, interval) IS
    'Creates the partitions [t, t + every) for t from from_time until to_time of a table partitioned by RANGE on its bigint ID, with time_to_id() bounds, named parent_pYYYYMMDD; skips names that exist and returns those it created.';
-- hardening (issue 10): the layout marker is advanced only when an ID is issued,
-- and by no ordinary role; configure()'s refusal says how to proceed.
REVOKE USAGE ON SEQUENCE shardid.ids_issued FROM PUBLIC;
GRANT SELECT ON SEQUENCE shardid.ids_issued TO PUBLIC;
COMMENT ON SEQUENCE shardid.ids_issued IS
    'Marker: advanced by next_id() once an ID has been issued; from then on the layout is frozen. Readable by PUBLIC, advanced by no ordinary role.';
CREATE OR REPLACE FUNCTION shardid.configure(epoch timestamptz, shard_bits integer DEFAULT 13,
                                  seq_bits integer DEFAULT 10)
    RETURNS shardid.layout_report
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_epoch_ms bigint;
BEGIN
    IF epoch IS NULL OR shard_bits IS NULL OR seq_bits IS NULL THEN
        RAISE EXCEPTION 'configure() arguments must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    new_epoch_ms := shardid._check_layout(epoch, shard_bits, seq_bits);
    -- Serialise with other configure() calls and with the first next_id()
    -- of every backend, which reads this table after marking ids_issued.
    LOCK TABLE shardid.layout_config IN ACCESS EXCLUSIVE MODE;
    IF (SELECT s.is_called FROM shardid.ids_issued AS s) THEN
        RAISE EXCEPTION 'the layout cannot change: IDs have already been issued'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Changing the layout would make old and new IDs collide or decode wrongly.',
                  HINT = 'Keep this layout (shardid.layout() shows it), or create a new database, run configure() there before its first next_id() call, and move the data.';
    END IF;
    PERFORM shardid._refuse_stored_decodes(new_epoch_ms, configure.shard_bits, configure.seq_bits);
    INSERT INTO shardid.layout_config AS c (singleton, epoch_ms, shard_bits, seq_bits)
        VALUES (true, new_epoch_ms, configure.shard_bits, configure.seq_bits)
        ON CONFLICT (singleton) DO UPDATE
        SET epoch_ms = excluded.epoch_ms, shard_bits = excluded.shard_bits,
            seq_bits = excluded.seq_bits;
    RETURN shardid.layout();
END
$$;

-- hardening (issue 10): attach_shard() refuses a generator state or IDs that do
-- not fit this database's layout.
CREATE OR REPLACE FUNCTION shardid.attach_shard(shard integer, schema_name name DEFAULT NULL) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp    name := COALESCE(schema_name, shardid._shard_schema_name(shard));
    other  shardid.shard_registry;
    seq    regclass;
    l      shardid.layout_report := shardid.layout();
    t      shardid.sharded_tables;
    state  bigint;
    max_id bigint;
    ahead  timestamptz := pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) '1 day'::interval;
    layout_text text;
BEGIN
    PERFORM shardid._check_shard(shard);
    PERFORM shardid._check_registry_privileges('attach shards', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO other FROM shardid.shard_registry AS s
        WHERE s.shard OPERATOR(pg_catalog.=) attach_shard.shard OR s.schema_name OPERATOR(pg_catalog.=) nsp;
    IF FOUND THEN
        RAISE EXCEPTION 'shard % (schema %) is already registered', other.shard, pg_catalog.quote_ident(other.schema_name)
            USING ERRCODE = 'duplicate_object';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_namespace AS n WHERE n.nspname OPERATOR(pg_catalog.=) nsp) THEN
        RAISE EXCEPTION 'schema "%" does not exist', nsp USING ERRCODE = 'invalid_schema_name';
    END IF;
    seq := pg_catalog.to_regclass(pg_catalog.format('%I.id_seq', nsp));
    IF seq IS NULL THEN
        RAISE EXCEPTION 'schema "%" has no generator sequence id_seq', nsp
            USING ERRCODE = 'undefined_table';
    END IF;
    PERFORM shardid._check_generator(seq);
    PERFORM shardid._check_templates();

    -- A generator state or IDs made under another layout (a dump of a
    -- database with another epoch or other bit widths) would issue IDs here
    -- that collide or decode wrongly: refuse what shows it, a state or an ID
    -- past this layout's end, more than a day ahead of the clock, or an ID
    -- of another shard.
    layout_text := pg_catalog.format('This database''s layout: epoch %s, %s shard bits, %s seq bits.',
                                     l.epoch, l.shard_bits, l.seq_bits);
    EXECUTE pg_catalog.format('SELECT last_value FROM %s', seq) INTO state;
    IF state OPERATOR(pg_catalog.>) (9223372036854775807 OPERATOR(pg_catalog.>>) l.shard_bits) THEN
        RAISE EXCEPTION 'generator % holds state %, past the end of this database''s layout', seq, state
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = layout_text,
                  HINT = 'The shard was made under another layout: attach it in a database configured with that layout.';
    END IF;
    IF l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0)
            OPERATOR(pg_catalog.>) ahead THEN
        RAISE EXCEPTION 'generator % holds a state of %, more than a day ahead of the clock', seq,
                l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = layout_text,
                  HINT = 'The shard was made under another layout: attach it in a database configured with that layout.';
    END IF;
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        CONTINUE WHEN pg_catalog.to_regclass(pg_catalog.format('%I.%I', nsp, t.table_name)) IS NULL;
        EXECUTE pg_catalog.format('SELECT max(%I) FROM %I.%I', t.id_column, nsp, t.table_name) INTO max_id;
        CONTINUE WHEN max_id IS NULL;
        IF max_id OPERATOR(pg_catalog.<) 0 OR shardid.id_shard(max_id) OPERATOR(pg_catalog.<>) shard
           OR shardid.id_time(max_id) OPERATOR(pg_catalog.>) ahead THEN
            RAISE EXCEPTION 'table %.% holds ID %, not an ID of shard % under this database''s layout',
                    pg_catalog.quote_ident(nsp), pg_catalog.quote_ident(t.table_name), max_id, shard
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = CASE WHEN max_id OPERATOR(pg_catalog.<) 0 THEN 'It is negative. '
                                    ELSE pg_catalog.format('It decodes to shard %s at %s. ', shardid.id_shard(max_id), shardid.id_time(max_id))
                               END OPERATOR(pg_catalog.||) layout_text,
                      HINT = 'Attach the shard under its own number, in a database configured with the layout its IDs were made under.';
        END IF;
    END LOOP;

    INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
        VALUES (shard, nsp, nsp, 'id_seq');
    RETURN shardid._create_shard_tables(shard, true);
END
$$;
COMMENT ON FUNCTION shardid.attach_shard(integer, name) IS
    'Registers an existing shard schema (e.g. restored with pg_dump -n) and creates the sharded tables it lacks; returns how many. Refuses a generator state or IDs that do not fit this database''s layout.';

-- hardening (issue 10): the shards view leaves a state outside the layout
-- undecoded; detach_shard() refuses a NULL shard like the other shard functions.
CREATE OR REPLACE FUNCTION shardid.detach_shard(shard integer) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
BEGIN
    IF shard IS NULL THEN
        RAISE EXCEPTION 'shard must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid._check_registry_privileges('detach shards', false);
    DELETE FROM shardid.shard_registry AS s WHERE s.shard OPERATOR(pg_catalog.=) detach_shard.shard
        RETURNING s.schema_name INTO nsp;
    IF nsp IS NULL THEN
        RAISE EXCEPTION 'shard % is not registered in this database', shard USING ERRCODE = 'undefined_object';
    END IF;
    RETURN nsp;
END
$$;
-- The registered shards and the state of their generators. A state
-- outside the layout (negative, or past its last state: the sequence was
-- set there by hand or restored from another layout) is not decoded.
CREATE OR REPLACE VIEW shardid.shards AS
SELECT r.shard,
       r.schema_name AS schema,
       g.seq AS sequence,
       ((st.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog.<<) (l.shard_bits OPERATOR(pg_catalog.+) l.seq_bits))
       OPERATOR(pg_catalog.|) (r.shard::bigint OPERATOR(pg_catalog.<<) l.seq_bits)
       OPERATOR(pg_catalog.|) (st.state OPERATOR(pg_catalog.&) ((1::bigint OPERATOR(pg_catalog.<<) l.seq_bits) OPERATOR(pg_catalog.-) 1))
           AS last_id,
       st.time AS last_time,
       CASE WHEN st.time IS NOT NULL THEN
           GREATEST(st.time OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp(), '0'::interval)
       END AS drift
  FROM shardid.shard_registry AS r
 CROSS JOIN shardid.layout() AS l
 -- from the catalog, not to_regclass(): a reader without USAGE on a shard
 -- schema still sees the registry
 CROSS JOIN LATERAL (SELECT (SELECT c.oid FROM pg_catalog.pg_class AS c
                               JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                              WHERE n.nspname OPERATOR(pg_catalog.=) r.sequence_schema
                                AND c.relname OPERATOR(pg_catalog.=) r.sequence_name)::regclass AS seq) AS g
 CROSS JOIN LATERAL (SELECT CASE WHEN g.seq IS NOT NULL AND pg_catalog.has_sequence_privilege(g.seq, 'SELECT, USAGE')
                                 THEN pg_catalog.pg_sequence_last_value(g.seq) END AS raw_state) AS raw
 CROSS JOIN LATERAL (SELECT v.state,
                            l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (v.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0) AS time
                       FROM (SELECT CASE WHEN raw.raw_state OPERATOR(pg_catalog.>=) 0
                                          AND raw.raw_state OPERATOR(pg_catalog.<=) (9223372036854775807 OPERATOR(pg_catalog.>>) l.shard_bits)
                                         THEN raw.raw_state END AS state) AS v) AS st;
COMMENT ON VIEW shardid.shards IS
    'Registered shards with their generator state: last issued ID and time, and how far the generator runs ahead of the clock (drift). NULL state: no ID yet, no SELECT/USAGE on the sequence, or a state outside the layout (negative, or past its end).';

-- moves: online shard moves (issue 11), node passwords (issue 10, item 5)
-- Connect strings must not hold passwords: the PL/Proxy server's options and
-- shardid.nodes are readable by other roles and copied by pg_dump.
DO $$
BEGIN
    IF EXISTS (SELECT FROM shardid.nodes AS n WHERE n.connstr OPERATOR(pg_catalog.~*) '(^|\s)password\s*=') THEN
        RAISE EXCEPTION 'shardid 0.2 refuses node connect strings that hold a password: %',
                (SELECT pg_catalog.string_agg(n.node, ', ' ORDER BY n.node) FROM shardid.nodes AS n
                  WHERE n.connstr OPERATOR(pg_catalog.~*) '(^|\s)password\s*=')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Put the passwords in ~/.pgpass of the router''s server user, remove password=... with UPDATE shardid.nodes SET connstr = ...; SELECT shardid.refresh_cluster(); then update again.';
    END IF;
END
$$;
ALTER TABLE shardid.nodes ADD CONSTRAINT nodes_connstr_no_password
    CHECK (connstr OPERATOR(pg_catalog.!~*) '(^|\s)password\s*=');
REVOKE SELECT ON shardid.nodes FROM PUBLIC;

CREATE TABLE shardid.shard_moves (
    shard       integer PRIMARY KEY REFERENCES shardid.shard_placement (shard),
    source      text NOT NULL REFERENCES shardid.nodes (node),
    target      text NOT NULL REFERENCES shardid.nodes (node),
    schema_name name NOT NULL,
    mode        text NOT NULL CHECK (mode OPERATOR(pg_catalog.=) ANY (ARRAY['online', 'offline'])),
    phase       text NOT NULL CHECK (phase OPERATOR(pg_catalog.=) ANY (ARRAY['schema', 'copy', 'frozen', 'caught_up', 'repointed', 'aborting'])),
    source_lsn  pg_lsn,
    progress    text,
    started_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    CHECK (source OPERATOR(pg_catalog.<>) target)
);
GRANT SELECT ON shardid.shard_moves TO PUBLIC;

DROP VIEW shardid.placement;
CREATE VIEW shardid.placement AS
SELECT p.shard, p.node, p.frozen, p.placed_at, m.target AS moving_to, m.phase AS move_phase
  FROM shardid.shard_placement AS p
  LEFT JOIN shardid.shard_moves AS m ON m.shard OPERATOR(pg_catalog.=) p.shard;
GRANT SELECT ON shardid.placement TO PUBLIC;

CREATE OR REPLACE FUNCTION shardid.add_node(name text, connstr text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF name IS NULL OR connstr IS NULL THEN
        RAISE EXCEPTION 'add_node() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF name OPERATOR(pg_catalog.!~) '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$' THEN
        RAISE EXCEPTION 'invalid node name "%"', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A node name is 1 to 63 characters: letters, digits, "_", "." and "-", not starting with "." or "-".';
    END IF;
    IF connstr OPERATOR(pg_catalog.~) '^\s*$' OR connstr OPERATOR(pg_catalog.~*) '^\s*postgres(ql)?://' THEN
        RAISE EXCEPTION 'invalid connect string for node %: %', name, pg_catalog.quote_literal(connstr)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a libpq key=value connect string, e.g. ''host=10.0.0.5 port=5432 dbname=app''.';
    END IF;
    IF connstr OPERATOR(pg_catalog.~*) '(^|\s)password\s*=' THEN
        RAISE EXCEPTION 'the connect string of node % must not hold a password', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Connect strings are stored in the PL/Proxy cluster''s options, which every role can read, and in dumps.',
                  HINT = 'Put the password in ~/.pgpass of the OS user that connects (the router''s and each node''s server user), or name a passfile= or service= in the connect string.';
    END IF;
    IF connstr OPERATOR(pg_catalog.~*) '(^|\s)options\s*=' THEN
        RAISE EXCEPTION 'the connect string of node % must not set options', name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Freezing a shard for a move appends options=''-c default_transaction_read_only=on'', which would replace them.',
                  HINT = 'Set per-database or per-role settings on the node instead (ALTER DATABASE/ROLE ... SET).';
    END IF;
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node OPERATOR(pg_catalog.=) add_node.name) THEN
        RAISE EXCEPTION 'node "%" already exists', name
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Its connect string is %s.',
                                             (SELECT pg_catalog.quote_literal(n.connstr) FROM shardid.nodes AS n
                                               WHERE n.node OPERATOR(pg_catalog.=) add_node.name));
    END IF;
    INSERT INTO shardid.nodes (node, connstr) VALUES (name, connstr);
    PERFORM shardid.refresh_cluster();
END
$$;

CREATE OR REPLACE FUNCTION shardid._refresh_partition(shard integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur  text;
    want text;
BEGIN
    SELECT o.option_value INTO cur
      FROM pg_catalog.pg_foreign_server AS s, pg_catalog.pg_options_to_table(s.srvoptions) AS o
     WHERE s.srvname OPERATOR(pg_catalog.=) 'shardid'
       AND o.option_name OPERATOR(pg_catalog.=) ('p' OPERATOR(pg_catalog.||) _refresh_partition.shard);
    IF cur IS NULL THEN
        RETURN shardid.refresh_cluster();
    END IF;
    SELECT CASE WHEN p.shard IS NULL THEN
                    pg_catalog.format('service=''shardid: shard %s is not placed on any node''', g.s)
                WHEN p.frozen THEN
                    n.connstr OPERATOR(pg_catalog.||) ' options=''-c default_transaction_read_only=on'''
                ELSE n.connstr END
      INTO want
      FROM (SELECT _refresh_partition.shard AS s) AS g
      LEFT JOIN shardid.shard_placement AS p ON p.shard OPERATOR(pg_catalog.=) g.s
      LEFT JOIN shardid.nodes AS n ON n.node OPERATOR(pg_catalog.=) p.node;
    IF want OPERATOR(pg_catalog.=) cur THEN
        RETURN 0;
    END IF;
    EXECUTE pg_catalog.format('ALTER SERVER shardid OPTIONS (SET %I %L)', ('p' OPERATOR(pg_catalog.||) shard), want);
    RETURN 1;
END
$$;

CREATE OR REPLACE FUNCTION shardid.freeze_shard(shard integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard OPERATOR(pg_catalog.=) freeze_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF p.frozen THEN
        RAISE EXCEPTION 'shard % is already frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Another move of this shard is running, or one failed without cleaning up.',
                  HINT = pg_catalog.format('If no move is running, check node %s and run SELECT shardid.unfreeze_shard(%s);', p.node, shard);
    END IF;
    UPDATE shardid.shard_placement AS x SET frozen = true WHERE x.shard OPERATOR(pg_catalog.=) freeze_shard.shard;
    PERFORM shardid._refresh_partition(shard);
    RETURN p.node;
END
$$;

CREATE OR REPLACE FUNCTION shardid.unfreeze_shard(shard integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    UPDATE shardid.shard_placement AS x SET frozen = false
     WHERE x.shard OPERATOR(pg_catalog.=) unfreeze_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    PERFORM shardid._refresh_partition(shard);
END
$$;

CREATE OR REPLACE FUNCTION shardid.repoint_shard(shard integer, node text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p shardid.shard_placement;
    m shardid.shard_moves;
BEGIN
    LOCK TABLE shardid.shard_placement IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO p FROM shardid.shard_placement AS x WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'shard % is not placed on any node', shard USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT EXISTS (SELECT FROM shardid.nodes AS n WHERE n.node OPERATOR(pg_catalog.=) repoint_shard.node) THEN
        RAISE EXCEPTION 'node "%" does not exist', node USING ERRCODE = 'undefined_object';
    END IF;
    SELECT * INTO m FROM shardid.shard_moves AS x WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard FOR UPDATE;
    IF m.shard IS NOT NULL AND (m.phase OPERATOR(pg_catalog.<>) 'caught_up' OR m.target OPERATOR(pg_catalog.<>) repoint_shard.node) THEN
        RAISE EXCEPTION 'shard % is being moved to node "%" (phase %)', shard, m.target, m.phase
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Only a move that has caught up on its target may be repointed, to that target.',
                  HINT = 'Resume the move with bin/shardid-move-shard, or abort it with --abort.';
    END IF;
    IF m.shard IS NULL AND NOT p.frozen THEN
        RAISE EXCEPTION 'shard % is not frozen', shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Repointing a shard that takes writes would lose the writes made during the copy.',
                  HINT = 'Use bin/shardid-move-shard, which freezes, copies, checks and repoints.';
    END IF;
    UPDATE shardid.shard_placement AS x
       SET node = repoint_shard.node, frozen = false, placed_at = pg_catalog.now()
     WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard;
    UPDATE shardid.shard_moves AS x SET phase = 'repointed', updated_at = pg_catalog.now()
     WHERE x.shard OPERATOR(pg_catalog.=) repoint_shard.shard;
    PERFORM shardid._refresh_partition(shard);
END
$$;

CREATE OR REPLACE FUNCTION shardid._refuse_frozen_write() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'shard % is being moved to node %: %.% refuses writes for the cut-over', TG_ARGV[0], TG_ARGV[1],
            pg_catalog.quote_ident(TG_TABLE_SCHEMA), pg_catalog.quote_ident(TG_TABLE_NAME)
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry in a new transaction: the move finishes within seconds.';
END
$$;

CREATE OR REPLACE FUNCTION shardid.freeze_shard_tables(schema_name name, shard integer, target text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.oid, c.relname FROM pg_catalog.pg_class AS c
              WHERE c.relnamespace OPERATOR(pg_catalog.=)
                    (SELECT x.oid FROM pg_catalog.pg_namespace AS x WHERE x.nspname OPERATOR(pg_catalog.=) freeze_shard_tables.schema_name)
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])
              ORDER BY c.relname LOOP
        n := n OPERATOR(pg_catalog.+) 1;
        CONTINUE WHEN EXISTS (SELECT FROM pg_catalog.pg_trigger AS g
                               WHERE g.tgrelid OPERATOR(pg_catalog.=) t.oid AND g.tgname OPERATOR(pg_catalog.=) 'shardid_move_frozen');
        EXECUTE pg_catalog.format('CREATE TRIGGER shardid_move_frozen BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
                                   FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_frozen_write(%L, %L)',
                                  schema_name, t.relname, shard, target);
    END LOOP;
    RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION shardid.thaw_shard_tables(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class AS c
               JOIN pg_catalog.pg_trigger AS g ON g.tgrelid OPERATOR(pg_catalog.=) c.oid
              WHERE c.relnamespace OPERATOR(pg_catalog.=)
                    (SELECT x.oid FROM pg_catalog.pg_namespace AS x WHERE x.nspname OPERATOR(pg_catalog.=) thaw_shard_tables.schema_name)
                AND g.tgname OPERATOR(pg_catalog.=) 'shardid_move_frozen' LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER shardid_move_frozen ON %I.%I', schema_name, t.relname);
        n := n OPERATOR(pg_catalog.+) 1;
    END LOOP;
    RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION shardid.retire_shard(shard integer, target text, new_name name) RETURNS name
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
    t   record;
BEGIN
    nsp := shardid.detach_shard(shard);
    PERFORM shardid.thaw_shard_tables(nsp);
    IF new_name IS NULL THEN
        EXECUTE pg_catalog.format('DROP SCHEMA %I CASCADE', nsp);
        RETURN NULL;
    END IF;
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class AS c
              WHERE c.relnamespace OPERATOR(pg_catalog.=)
                    (SELECT x.oid FROM pg_catalog.pg_namespace AS x WHERE x.nspname OPERATOR(pg_catalog.=) nsp)
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[]) LOOP
        EXECUTE pg_catalog.format('CREATE TRIGGER shardid_retired BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
                                   FOR EACH STATEMENT EXECUTE FUNCTION shardid._refuse_retired_write(%L, %L)',
                                  nsp, t.relname, shard, target);
    END LOOP;
    EXECUTE pg_catalog.format('ALTER SCHEMA %I RENAME TO %I', nsp, new_name);
    RETURN new_name;
END
$$;

REVOKE ALL ON FUNCTION shardid._refresh_partition(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.freeze_shard_tables(name, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.thaw_shard_tables(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION shardid.retire_shard(integer, text, name) FROM PUBLIC;

COMMENT ON TABLE shardid.nodes IS
    'Router: the data nodes, by name, with a libpq key=value connect string (never a password). Written by add_node(), remove_node(). Readable by administrators only.';
COMMENT ON TABLE shardid.shard_moves IS
    'Router: moves in progress (bin/shardid-move-shard), one row per shard: source, target, phase (schema, copy, frozen, caught_up, repointed, or aborting), progress. Deleted when the move is done or aborted.';
COMMENT ON VIEW shardid.placement IS
    'Router: each placed shard with its node, whether it is frozen on the router, and the target and phase of its move in progress.';
COMMENT ON TABLE shardid.shard_placement IS
    'Router: the node holding each placed logical shard; frozen (read-only through the router) by freeze_shard().';
COMMENT ON FUNCTION shardid.freeze_shard(integer) IS
    'Router: makes the shard''s partition read-only (writes fail with 25006, reads go on); returns its node.';
COMMENT ON FUNCTION shardid.unfreeze_shard(integer) IS
    'Router: undoes freeze_shard().';
COMMENT ON FUNCTION shardid._refresh_partition(integer) IS
    'Router: updates the PL/Proxy partition of one shard from the placement (one ALTER SERVER option); returns 0 or 1.';
COMMENT ON FUNCTION shardid.repoint_shard(integer, text) IS
    'Router, last move step: points the partition of a frozen shard, or of a caught-up move to that node, at its new node, writable.';
COMMENT ON FUNCTION shardid._refuse_frozen_write() IS
    'Trigger on the tables of a shard during a move''s cut-over: refuses writes at once (25006, retry).';
COMMENT ON FUNCTION shardid.freeze_shard_tables(name, integer, text) IS
    'Node, move cut-over: puts trigger shardid_move_frozen on every table of the schema (writes fail with 25006); returns the number of tables.';
COMMENT ON FUNCTION shardid.thaw_shard_tables(name) IS
    'Node: drops the shardid_move_frozen triggers of a schema (abort of a move); returns how many.';
COMMENT ON FUNCTION shardid.retire_shard(integer, text, name) IS
    'Node, after a move: detaches the shard and drops its schema (new_name NULL) or renames it to new_name with triggers refusing writes.';
