-- apply_ddl() on a node: whether a change the router sent is not to run
-- here (state from _apply_ddl_start: finished, the router's change was
-- finished here already; no template, this node has no such sharded
-- table, e.g. a node with only the extension, which the first move there
-- gives the changed templates), said in a NOTICE.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_skip(template text, command text, state text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF state = 'finished' THEN
        RAISE NOTICE 'apply_ddl: this node has finished the change already: %', command;
    ELSIF state = 'no template' THEN
        RAISE NOTICE 'apply_ddl: this node has no sharded table with the template %: nothing to change', template;
    END IF;
    RETURN state IN ('finished', 'no template');
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_skip(text, text, text) IS
    'apply_ddl() on a node: whether a change the router sent is not to run here (finished here already, or no such template), said in a NOTICE.';
