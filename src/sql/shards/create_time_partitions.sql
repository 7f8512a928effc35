CREATE OR REPLACE FUNCTION shardid.create_time_partitions(parent regclass, from_time timestamptz,
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
    existing regclass;
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
        -- the parent's name cut at a character boundary, so that the suffix
        -- (and with it the name's uniqueness) survives in 63 bytes
        part := shardid_internal._fit_name(relname, to_char(t, fmt));
        existing := to_regclass(format('%I.%I', nsp, part));
        IF existing IS NULL THEN
            EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%s) TO (%s)',
                           nsp, part, parent, shardid.time_to_id(t), shardid.time_to_id(t + every));
            RETURN NEXT format('%I.%I', nsp, part)::regclass;
        ELSIF NOT EXISTS (SELECT FROM pg_inherits AS i
                           WHERE i.inhrelid = existing AND i.inhparent = parent) THEN
            -- another table took the name (one whose name starts with the
            -- same 63 bytes less the suffix, say): never take it for ours
            RAISE EXCEPTION 'relation %.% already exists and is not a partition of %',
                    quote_ident(nsp), quote_ident(part), parent
                USING ERRCODE = 'duplicate_table',
                      HINT = 'Rename one of the tables: partition names are the parent''s name, cut to fit 63 bytes, and _pYYYYMMDD.';
        END IF;
        t := t + every;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid.create_time_partitions(regclass, timestamptz, timestamptz, interval) IS
    'Creates the partitions [t, t + every) for t from from_time until to_time of a table partitioned by RANGE on its bigint ID, with time_to_id() bounds, named parent_pYYYYMMDD (the parent''s name cut at a character boundary to fit 63 bytes); skips its partitions that exist, refuses a name another table holds, and returns those it created.';
