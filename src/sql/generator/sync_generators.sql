-- Raises every generator to at least the state of the largest ID that it
-- serves, after rows arrived without it (logical replication, a restore).
--
-- What it trusts. A DEFAULT names a generator by OID, and a numeric regclass
-- literal needs no privilege on the sequence, so anyone who may create a
-- table could name shard 5's generator and store the last ID of the layout.
-- A column's rows therefore raise a generator only when
--   - its table is a registered table of the generator's shard: in the
--     schema that shardid.shard_registry gives for that sequence (tables of
--     create_shard()/create_table(), adopt()ed ones), and the DEFAULT's
--     shard is the registered one; or
--   - its table's owner may UPDATE the sequence (could setval() it anyway).
-- Other DEFAULTs are returned as 'untrusted' and their tables never read.
--
-- Every generator on its own: one call raises all it can. A trusted
-- column that cannot be used (a negative ID, an ID of another shard, a
-- table the caller may not read, a policy in the way) is returned as
-- 'failed', with the error in detail, and its generator is left as it was;
-- so is a generator whose raise fails. No bad row in any table makes the
-- call fail or keeps another generator from being raised. Temporary tables
-- (another session's cannot be read; no replicated row lands in one) and
-- temporary or unlogged sequences (next_id() refuses them) are passed over;
-- a column that is not bigint is returned as 'skipped' (its type's ordering
-- could be its owner's code).
--
-- Reading runs as the caller, with row_security off: a policy that hid rows
-- would make the largest ID too low, so such a table fails (42501) instead.
--
-- Locking. Each generator is raised by _raise_generator() under the
-- sequence's buffer lock, holding RowExclusiveLock as next_id() and setval()
-- do: writers are neither blocked nor waited for, whatever order they use
-- generators in. Generators are visited in OID order; the tables are read
-- with AccessShareLock (only DDL waits for it).
CREATE OR REPLACE FUNCTION shardid.sync_generators()
    RETURNS TABLE (generator regclass, action text, table_name regclass, column_name name,
                   max_id bigint, detail text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET row_security = off
AS $$
DECLARE
    l          shardid.layout_report := shardid.layout();
    time_shift integer := l.shard_bits + l.seq_bits;
    seq_mask   bigint := (1::bigint << l.seq_bits) - 1;
    c          record;
    lo         bigint;
    hi         bigint;
    target     bigint;
    cur_seq    pg_catalog.regclass;
    wanted     bigint;
    wanted_tbl pg_catalog.regclass;
    wanted_col name;
    wanted_id  bigint;
    failed     boolean := false;
    e_msg      text;
    e_detail   text;
    e_state    text;
BEGIN
    -- Every column DEFAULT that calls next_id(), by generator (found in
    -- the catalog, without the registry: shardid_internal._next_id_defaults). A
    -- NULL row ends the last generator.
    FOR c IN
        SELECT x.* FROM (
            SELECT s.oid::pg_catalog.regclass AS seq, nd.rel::pg_catalog.regclass AS tbl, a.attname AS col,
                   nd.shard,
                   a.atttypid = 'pg_catalog.int8'::pg_catalog.regtype AS is_bigint,
                   pg_catalog.format_type(a.atttypid, a.atttypmod) AS col_type,
                   t.relowner AS owner,
                   tn.nspname AS tbl_schema, sn.nspname AS seq_schema, s.relname AS seq_name
              FROM shardid_internal._next_id_defaults AS nd
              JOIN pg_catalog.pg_attribute AS a
                ON a.attrelid = nd.rel AND a.attnum = nd.attnum
              JOIN pg_catalog.pg_class AS t ON t.oid = nd.rel
              JOIN pg_catalog.pg_namespace AS tn ON tn.oid = t.relnamespace
              JOIN pg_catalog.pg_class AS s
                ON s.oid = nd.seq AND s.relkind = 'S'
              JOIN pg_catalog.pg_namespace AS sn ON sn.oid = s.relnamespace
             WHERE t.relkind = ANY (ARRAY['r', 'p']::"char"[])
               AND t.relpersistence <> 't'
               AND s.relpersistence = 'p'
               AND NOT a.attisdropped
            UNION ALL
            SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        ) AS x
        ORDER BY x.seq::pg_catalog.oid NULLS LAST, x.tbl::pg_catalog.oid, x.col
    LOOP
        -- The previous generator is complete: raise it (its lock is the
        -- one writers hold, so no order of theirs can deadlock with this).
        IF cur_seq IS DISTINCT FROM c.seq AND wanted IS NOT NULL AND NOT failed THEN
            BEGIN
                IF shardid_internal._raise_generator(cur_seq, wanted) THEN
                    generator := cur_seq; action := 'raised'; table_name := wanted_tbl; column_name := wanted_col;
                    max_id := wanted_id; detail := NULL;
                    RETURN NEXT;
                END IF;
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT;
                generator := cur_seq; action := 'failed'; table_name := wanted_tbl; column_name := wanted_col;
                max_id := wanted_id;
                detail := pg_catalog.format('%s (SQLSTATE %s); the generator is left as it was', e_msg, e_state);
                RETURN NEXT;
            END;
        END IF;
        IF cur_seq IS DISTINCT FROM c.seq THEN
            cur_seq := c.seq;
            wanted := NULL;
            failed := false;
        END IF;
        EXIT WHEN c.seq IS NULL;

        IF NOT (pg_catalog.has_sequence_privilege(c.owner, c.seq::pg_catalog.oid, 'UPDATE')
                OR EXISTS (SELECT FROM shardid.shard_registry AS r
                            WHERE r.sequence_schema = c.seq_schema
                              AND r.sequence_name = c.seq_name
                              AND r.schema_name = c.tbl_schema
                              AND r.shard = c.shard)) THEN
            generator := c.seq; action := 'untrusted'; table_name := c.tbl; column_name := c.col;
            max_id := NULL;
            detail := pg_catalog.format('not a registered table of the shard of %s, and its owner %s may not UPDATE that sequence: not read',
                                        c.seq, pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(c.owner)::text));
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF NOT c.is_bigint THEN
            generator := c.seq; action := 'skipped'; table_name := c.tbl; column_name := c.col;
            max_id := NULL;
            detail := pg_catalog.format('the column is %s, not bigint: not read', c.col_type);
            RETURN NEXT;
            CONTINUE;
        END IF;
        -- min() and max() of an indexed column are two index lookups; any
        -- error reading or checking them is this generator's alone
        BEGIN
            EXECUTE pg_catalog.format('SELECT pg_catalog.min(%1$I), pg_catalog.max(%1$I) FROM %2$s', c.col, c.tbl)
                INTO lo, hi;
            IF lo < 0 THEN
                RAISE EXCEPTION 'column "%" of table "%" holds a negative ID', c.col, c.tbl
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = pg_catalog.format('For example %s. IDs of this layout are positive 63-bit values.', lo);
            END IF;
            IF c.shard IS NOT NULL AND shardid.id_shard(hi) <> c.shard THEN
                RAISE EXCEPTION 'the largest ID of "%"."%" is not of shard %', c.tbl, c.col, c.shard
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = pg_catalog.format('ID %s decodes to shard %s under this layout (%s shard bits, %s seq bits); the column DEFAULT issues shard %s.',
                                                     hi, shardid.id_shard(hi), l.shard_bits, l.seq_bits, c.shard);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT, e_detail = PG_EXCEPTION_DETAIL;
            failed := true;
            generator := c.seq; action := 'failed'; table_name := c.tbl; column_name := c.col; max_id := NULL;
            detail := pg_catalog.format('%s%s (SQLSTATE %s); the generator is left as it was', e_msg,
                                        COALESCE(': ' OPERATOR(pg_catalog.||) NULLIF(e_detail, ''), ''), e_state);
            RETURN NEXT;
            CONTINUE;
        END;
        CONTINUE WHEN hi IS NULL;
        -- The generator state whose ID is hi. Without a literal shard in the
        -- DEFAULT, the whole millisecond of hi is skipped: IDs of lower
        -- shards may hold higher counters.
        target := ((hi >> time_shift) << l.seq_bits)
                  |
                  CASE WHEN c.shard IS NULL THEN seq_mask
                       ELSE hi & seq_mask END;
        IF wanted IS NULL OR target > wanted THEN
            wanted := target; wanted_tbl := c.tbl; wanted_col := c.col; wanted_id := hi;
        END IF;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid.sync_generators() IS
    'Raises each generator named in a column DEFAULT shardid.next_id(shard, seq) to at least the state of the largest ID in the columns it serves (after logical replication or a data restore); never lowers one, takes no lock writers wait for. Trusts only registered tables of the generator''s shard and tables whose owner may UPDATE the sequence; returns a row per generator raised and per DEFAULT it did not read (untrusted, skipped). Every generator on its own: a column it cannot use (a negative ID, another shard''s ID, a table it cannot read) is returned as failed and leaves that generator as it was; every other generator is still raised. The caller needs SELECT on the tables and UPDATE on the generators it raises: a superuser, or the owner of all of them.';
