CREATE OR REPLACE FUNCTION shardid.sync_generators() RETURNS integer
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
