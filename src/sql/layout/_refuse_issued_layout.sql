-- The layout freeze, in one place: configure() calls it before it writes a
-- layout, and the trigger layout_freeze before any other write that would
-- change shardid.layout_config. IDs have been issued, and the layout is
-- frozen, when any of these shows it:
--   - shardid.layout_freeze holds a row (next_id() writes one with its
--     first ID; nothing can remove it);
--   - the marker shardid.ids_issued is_called (pg_dump carries it);
--   - a generator holds a state: a permanent sequence named by a next_id()
--     column DEFAULT, or a registered shard's sequence, is_called.
-- setval() or PostgreSQL 19's sequence replication can reset the sequences,
-- not the table. The lock serialises with the first next_id() of every
-- backend, which marks, then reads the layout.
CREATE OR REPLACE FUNCTION shardid_internal._refuse_issued_layout() RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    evidence text;
    gen      pg_catalog.regclass;
BEGIN
    LOCK TABLE shardid.layout_config IN ACCESS EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM shardid.layout_freeze) THEN
        evidence := 'next_id() has issued IDs: shardid.layout_freeze records it';
    ELSIF (SELECT s.is_called FROM shardid.ids_issued AS s) THEN
        evidence := 'the marker shardid.ids_issued is set';
    ELSE
        FOR gen IN
            SELECT c.oid::pg_catalog.regclass
              FROM (SELECT nd.seq FROM shardid_internal._next_id_defaults AS nd
                    UNION
                    SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', r.sequence_schema, r.sequence_name))
                      FROM shardid.shard_registry AS r) AS g
              JOIN pg_catalog.pg_class AS c
                ON c.oid = g.seq AND c.relkind = 'S'
               AND c.relpersistence = 'p'
             ORDER BY c.oid::pg_catalog.regclass::text
        LOOP
            IF pg_catalog.pg_sequence_last_value(gen) IS NOT NULL THEN
                evidence := pg_catalog.format('generator %s holds a state', gen);
                EXIT;
            END IF;
        END LOOP;
    END IF;
    IF evidence IS NOT NULL THEN
        RAISE EXCEPTION 'the layout cannot change: IDs have already been issued'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('Changing the layout would make old and new IDs collide or decode wrongly (%s).', evidence),
                  HINT = 'Keep this layout (shardid.layout() shows it), or create a new database, run configure() there before its first next_id() call, and move the data.';
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refuse_issued_layout() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._refuse_issued_layout() IS
    'Raises 55000 once IDs have been issued (a freeze record, the ids_issued marker, or a generator holding a state); called by configure() and by the trigger on layout_config.';
