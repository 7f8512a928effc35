-- Router, drop_retired_copies(): one retired copy the view
-- shardid.retired_copies listed: dropped on its node when it said
-- droppable (_drop_retired_copy_on, where the node checks again under its
-- lock), else reported with its reason (WARNING) and kept. Returns the
-- counts with it: {copies dropped, bytes freed, copies kept}. The caller
-- commits.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy_counted(counts bigint[], node text, schema_name name,
                                                                       droppable boolean, reason text)
    RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    res jsonb;
BEGIN
    IF NOT droppable THEN
        RAISE WARNING 'kept % on node "%": %', quote_ident(schema_name), node, reason
            USING HINT = 'See shardid.retired_copies; drop_retired_copies() drops only a copy a move recorded that holds nothing but its own objects.';
        RETURN ARRAY[counts[1], counts[2], counts[3] + 1];
    END IF;
    res := shardid_internal._drop_retired_copy_on(node, schema_name);
    RETURN CASE res->>'status'
               WHEN 'dropped' THEN ARRAY[counts[1] + 1, counts[2] + (res->>'bytes')::bigint, counts[3]]
               WHEN 'skipped' THEN ARRAY[counts[1], counts[2], counts[3] + 1]
               ELSE counts
           END;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy_counted(bigint[], text, name, boolean, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy_counted(bigint[], text, name, boolean, text) IS
    'Router, drop_retired_copies(): drops one retired copy if droppable, else reports it (WARNING) and keeps it; returns the counts of copies dropped, bytes freed and copies kept.';
