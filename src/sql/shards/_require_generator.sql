-- Refuses a sequence that next_id() would refuse, with the same SQLSTATEs.
CREATE OR REPLACE FUNCTION shardid_internal._require_generator(seq regclass) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c pg_catalog.pg_class;
BEGIN
    SELECT * INTO c FROM pg_catalog.pg_class WHERE oid = seq;
    IF c.relkind IS DISTINCT FROM 'S' THEN
        RAISE EXCEPTION '"%" is not a sequence', seq
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'next_id() keeps its state in a sequence: CREATE SEQUENCE ... AS bigint.';
    END IF;
    IF c.relpersistence <> 'p' THEN
        RAISE EXCEPTION 'sequence "%" is %', seq,
                CASE c.relpersistence WHEN 't' THEN 'temporary' ELSE 'unlogged' END
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A crash resets temporary and unlogged sequences, so IDs would repeat.';
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_generator(regclass) IS
    'Raises 42809 or 55000 for a relation next_id() cannot keep its state in.';
