CREATE OR REPLACE FUNCTION shardid.adopt(tbl regclass, shard integer, seq regclass, id_column name DEFAULT 'id')
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l          shardid.layout_report := shardid.layout();
    c          pg_catalog.pg_class;
    tblnsp     name;
    seqnsp     name;
    seqname    name;
    att        pg_catalog.pg_attribute;
    reg        shardid.shard_registry;
    negatives  bigint;
    foreign_n  bigint;
    example    bigint;
    max_id     bigint;
    target     bigint;
    cur_value  bigint;
    cur_called boolean;
    max_drift  bigint;
    seq_mask   bigint;
BEGIN
    IF tbl IS NULL OR seq IS NULL OR id_column IS NULL THEN
        RAISE EXCEPTION 'adopt() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM shardid_internal._require_shard(shard);
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid = tbl;
    IF c.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;
    SELECT n.nspname INTO tblnsp FROM pg_catalog.pg_namespace AS n WHERE n.oid = c.relnamespace;
    PERFORM shardid_internal._require_generator(seq);
    SELECT n.nspname, x.relname INTO seqnsp, seqname
        FROM pg_catalog.pg_class AS x JOIN pg_catalog.pg_namespace AS n ON n.oid = x.relnamespace
        WHERE x.oid = seq;
    SELECT * INTO att FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid = tbl AND a.attname = id_column
          AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of table "%" does not exist', id_column, tbl USING ERRCODE = 'undefined_column';
    END IF;
    IF att.atttypid <> 'pg_catalog.int8'::regtype THEN
        RAISE EXCEPTION 'column "%" of table "%" is %, not bigint', id_column, tbl,
                pg_catalog.format_type(att.atttypid, att.atttypmod)
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF att.attidentity <> '' OR att.attgenerated <> '' THEN
        RAISE EXCEPTION 'column "%" of table "%" is an identity or generated column', id_column, tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY first.';
    END IF;
    IF NOT pg_catalog.pg_has_role(c.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT pg_catalog.pg_has_role((SELECT x.relowner FROM pg_catalog.pg_class AS x WHERE x.oid = seq), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of sequence %', seq USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM shardid_internal._require_registry_privileges('adopt tables', false);
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;

    -- A shard has one generator, and a schema holds one shard.
    SELECT * INTO reg FROM shardid.shard_registry AS s WHERE s.shard = adopt.shard;
    IF FOUND AND (reg.sequence_schema, reg.sequence_name) IS DISTINCT FROM (seqnsp, seqname) THEN
        RAISE EXCEPTION 'shard % already has generator %.%', shard,
                pg_catalog.quote_ident(reg.sequence_schema), pg_catalog.quote_ident(reg.sequence_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Two generators for one shard could issue the same ID.',
                  HINT = 'Adopt the table with the shard''s registered sequence.';
    END IF;
    IF NOT FOUND AND EXISTS (SELECT FROM shardid.shard_registry AS s WHERE s.schema_name = tblnsp) THEN
        RAISE EXCEPTION 'schema "%" already holds shard %', tblnsp,
                (SELECT s.shard FROM shardid.shard_registry AS s WHERE s.schema_name = tblnsp)
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;

    -- No row may be inserted with the old DEFAULT from here on, and no
    -- next_id() may run on the sequence until this transaction ends: ALTER
    -- SEQUENCE takes a lock that conflicts with nextval() and next_id().
    EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
    EXECUTE pg_catalog.format('ALTER SEQUENCE %s AS bigint MAXVALUE 9223372036854775807', seq);

    seq_mask := (1::bigint << l.seq_bits) - 1;
    EXECUTE pg_catalog.format(
        'SELECT count(*) FILTER (WHERE %1$I < 0),
                count(*) FILTER (WHERE %1$I >= 0 AND ((%1$I >> $1) & $2) <> $3),
                min(%1$I) FILTER (WHERE %1$I < 0 OR ((%1$I >> $1) & $2) <> $3),
                max(%1$I)
           FROM %2$s', id_column, tbl)
        INTO negatives, foreign_n, example, max_id
        USING l.seq_bits, l.max_shard::bigint, shard::bigint;
    IF negatives > 0 THEN
        RAISE EXCEPTION 'table "%" holds % negative IDs', tbl, negatives
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('For example %s. IDs of this layout are positive 63-bit values.', example);
    END IF;
    IF foreign_n > 0 THEN
        RAISE EXCEPTION 'table "%" holds % IDs that do not belong to shard %', tbl, foreign_n, shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('For example %s decodes to shard %s under this layout (%s shard bits, %s seq bits).',
                                             example, shardid.id_shard(example), l.shard_bits, l.seq_bits),
                  HINT = 'Adopt the table with the shard its IDs were made for, or configure the layout they were made with.';
    END IF;
    SELECT COALESCE(pg_catalog.max(s.setting::bigint), 2000) INTO max_drift
        FROM pg_catalog.pg_settings AS s WHERE s.name = 'shardid.max_drift';
    IF max_id IS NOT NULL AND shardid.id_time(max_id) >
            (pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => max_drift / 1000.0)) THEN
        RAISE EXCEPTION 'the IDs of table "%" lie in the future under this layout', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('ID %s decodes to %s; the clock reads %s.', max_id,
                                             shardid.id_time(max_id), pg_catalog.clock_timestamp()),
                  HINT = 'The IDs were made with another epoch: configure this database''s layout to match (in a database that has issued no ID) before adopting.';
    END IF;

    -- The generator state whose ID on this shard is max_id; the next state
    -- is above it, so every new ID is above every existing one. A state the
    -- sequence already holds (an earlier adopt, or native IDs) is never lowered.
    IF max_id IS NOT NULL THEN
        target := ((max_id >> (l.shard_bits + l.seq_bits)) << l.seq_bits)
                  | (max_id & seq_mask);
        EXECUTE pg_catalog.format('SELECT last_value, is_called FROM %s', seq) INTO cur_value, cur_called;
        IF NOT cur_called OR cur_value < target THEN
            PERFORM pg_catalog.setval(seq, target, true);
        END IF;
    END IF;

    EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, %L::regclass)',
                              tbl, id_column, shard, pg_catalog.format('%I.%I', seqnsp, seqname));
    IF reg.shard IS NULL THEN
        INSERT INTO shardid.shard_registry (shard, schema_name, sequence_schema, sequence_name)
            VALUES (shard, tblnsp, seqnsp, seqname);
    END IF;
    RETURN max_id;
END
$$;

COMMENT ON FUNCTION shardid.adopt(regclass, integer, regclass, name) IS
    'Switches a table filled by Instagram''s PL/pgSQL next_id() to shardid.next_id(shard, seq): sets the generator above every existing ID, refuses IDs that do not decode to shard under this layout, registers the shard. Returns the largest existing ID.';
