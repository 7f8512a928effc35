-- apply_ddl(): its options record (shardid.ddl_options) from the named
-- parameters, as a jsonb object (given; a key left out gets its default:
-- batch_size 256, batch_time 100 ms, loopback NULL, connections 4), checked
-- before anything changes: 22023 for a key that is no option (a router
-- newer than this node), batch_size below 1, a negative batch_time, or
-- connections outside 1 .. 64, and on a router (_apply_ddl_on_nodes) a
-- loopback: it would name one node's connect string to itself, and the
-- router's connections go to each node. The router sends the record to
-- every node as jsonb, read back and checked there by this function.
CREATE OR REPLACE FUNCTION shardid_internal._ddl_options(given jsonb) RETURNS shardid.ddl_options
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o       shardid.ddl_options := ROW(256, interval '100 ms', NULL, 4);
    unknown text;
BEGIN
    SELECT string_agg(k, ', ' ORDER BY k) INTO unknown
      FROM jsonb_object_keys(COALESCE(given, '{}')) AS k
     WHERE k <> ALL (ARRAY(SELECT a.attname::text FROM pg_attribute AS a
                            WHERE a.attrelid = 'shardid.ddl_options'::regclass AND a.attnum > 0 AND NOT a.attisdropped));
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'apply_ddl() has no option %', unknown
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Update shardid on this server to the router''s version (ALTER EXTENSION shardid UPDATE).';
    END IF;
    o := jsonb_populate_record(o, given);
    PERFORM shardid_internal._require_batch_size(o.batch_size);
    IF o.batch_time < interval '0' THEN
        RAISE EXCEPTION 'batch_time must not be negative, not %', o.batch_time
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF o.connections IS NULL OR o.connections NOT BETWEEN 1 AND 64 THEN
        RAISE EXCEPTION 'connections must be from 1 to 64, not %', COALESCE(o.connections::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'It is how many tables CREATE or DROP INDEX CONCURRENTLY changes at once, each on a dblink connection of its own.';
    END IF;
    IF o.loopback IS NOT NULL AND shardid_internal._apply_ddl_on_nodes() THEN
        RAISE EXCEPTION 'apply_ddl() takes no loopback on a router'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'loopback is a node''s connect string to itself; from a router, CONCURRENTLY runs on connections from the router to each node.',
                  HINT = 'Leave loopback out.';
    END IF;
    RETURN o;
END
$$;

COMMENT ON FUNCTION shardid_internal._ddl_options(jsonb) IS
    'apply_ddl(): its options record from the named parameters (a jsonb object; defaults for the keys left out), checked once: 22023 for an unknown option, batch_size below 1, a negative batch_time, connections outside 1 .. 64, a loopback on a router.';
