-- apply_ddl() on a node, driven by the router for a statement outside a
-- transaction block: the change of the router's origin started, resumed
-- or recorded here (_apply_ddl_start, _apply_ddl_record); returns its
-- change_id, or NULL when there is nothing to run here (finished here
-- already, or no such template: _apply_ddl_skip).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_open(template text, command text, origin text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s record;
BEGIN
    SELECT * INTO s FROM shardid_internal._apply_ddl_start(template, command, false, origin) AS x;
    IF shardid_internal._apply_ddl_skip(template, command, s.state) OR shardid_internal._apply_ddl_rerun(s.change) THEN
        RETURN NULL;
    END IF;
    RETURN (shardid_internal._apply_ddl_record(s.change, s.todo, s.total, 'outside a transaction block, on connections from the router')).change_id;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_open(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_open(text, text, text) IS
    'apply_ddl() on a node, for the router, CONCURRENTLY: starts, resumes or records the change of the router''s origin; returns its change_id, NULL when there is nothing to run here.';
