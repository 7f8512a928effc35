-- Generated names (partitions, retired shards, publications, slots) must fit
-- PostgreSQL's 63 bytes: PostgreSQL would cut base || suffix at byte 63,
-- dropping the suffix (so two names collide) and possibly splitting a
-- multibyte character. This cuts the base instead, at a character boundary.
CREATE OR REPLACE FUNCTION shardid_internal._fit_name(base text, suffix text) RETURNS name
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    keep integer := char_length(base);
BEGIN
    IF octet_length(suffix) > 63 THEN
        RAISE EXCEPTION 'name suffix "%" is longer than 63 bytes', suffix
            USING ERRCODE = 'name_too_long';
    END IF;
    WHILE octet_length(left(base, keep)) + octet_length(suffix) > 63 LOOP
        keep := keep - 1;
    END LOOP;
    RETURN left(base, keep) || suffix;
END
$$;

-- PUBLIC may execute it: create_time_partitions(), which table owners run,
-- names partitions with it; it only computes.
COMMENT ON FUNCTION shardid_internal._fit_name(text, text) IS
    'Internal: base || suffix in at most 63 bytes, base cut at a character boundary so the suffix survives. Used by create_time_partitions().';
