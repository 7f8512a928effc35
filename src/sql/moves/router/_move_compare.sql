-- Router, moves: raises 55000 when two definitions of a shard differ
-- (_definition_diff, each side named by its label): the message, then the
-- first three differences (and how many more), every one in the detail.
CREATE OR REPLACE FUNCTION shardid_internal._move_compare(ds jsonb, dt jsonb, source_label text, target_label text,
                                                 message text, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    diff text[] := shardid_internal._definition_diff(ds, dt, source_label, target_label);
BEGIN
    IF cardinality(diff) > 0 THEN
        PERFORM shardid_internal._raise('55000',
            message || ': ' || array_to_string(diff[1:3], '; ')
                    || CASE WHEN cardinality(diff) > 3 THEN format('; and %s more', cardinality(diff) - 3) ELSE '' END,
            array_to_string(diff, E'\n'), hint);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_compare(jsonb, jsonb, text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_compare(jsonb, jsonb, text, text, text, text) IS
    'Router, moves: raises 55000 with the message and every difference when two definitions of a shard differ.';
