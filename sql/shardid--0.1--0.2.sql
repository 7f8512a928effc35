-- shardid 0.1 -> 0.2: ALTER EXTENSION shardid UPDATE TO '0.2'.
-- Everything this script creates or changes is also in sql/install/*.sql,
-- the 0.2 install script; test/update checks that both give the same objects.

\echo Use "ALTER EXTENSION shardid UPDATE TO '0.2'" to load this file. \quit

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
