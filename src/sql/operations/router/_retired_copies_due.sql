-- Router, drop_retired_copies(): the retired copies retired at least
-- older_than ago (one that tells no time, not recorded, only with
-- older_than = 0), with whether each may be dropped and why not, in node
-- and schema order; 22023 for a NULL or negative older_than.
CREATE OR REPLACE FUNCTION shardid_internal._retired_copies_due(older_than interval)
    RETURNS TABLE (node text, schema_name name, droppable boolean, reason text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF older_than IS NULL OR older_than < '0'::interval THEN
        RAISE EXCEPTION 'older_than must be an interval of 0 or more, not %', COALESCE(older_than::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
        SELECT c.node, c.schema_name, c.droppable, c.reason
          FROM shardid.retired_copies AS c
         WHERE (c.retired_at IS NULL AND older_than = '0'::interval)
            OR c.retired_at <= (now() - older_than)
         ORDER BY c.node COLLATE "C", c.schema_name;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._retired_copies_due(interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._retired_copies_due(interval) IS
    'Router, drop_retired_copies(): the retired copies retired at least older_than ago, whether each may be dropped and why not, in node and schema order; 22023 for a NULL or negative interval.';
