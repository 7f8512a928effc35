-- abandon_ddl(template, undo => true), where the undo is driven (a node on
-- its own, or the router): the plan made again under the ledger's lock
-- (_undo_ddl_plan), then, for a new undo, on a node the change closed and
-- its inverse recorded here with the tables it needs (_undo_ddl_prepare);
-- on the router the change closed as abandoned and the inverse recorded
-- as a change of every node (kind "... (undo of change N)"), which
-- _undo_ddl_nodes() then records on each node. An open undo is returned
-- as it is, to be resumed. Returns the plan with change_id (the undo's)
-- and, on a node, reversed (how many tables it changes).
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_start(template text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p    jsonb;
    u    shardid.ddl_changes;
    chk  record;
    tmpl text[];
BEGIN
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    p := shardid_internal._undo_ddl_plan(template);
    IF NOT shardid_internal._apply_ddl_on_nodes() THEN
        RETURN p || shardid_internal._undo_ddl_prepare(p->>'template', p->>'command', NULL, NULL);
    END IF;
    IF p->>'resume' IS NOT NULL THEN
        RETURN p || jsonb_build_object('change_id', p->'resume');
    END IF;
    tmpl := parse_ident(p->>'template');
    chk := shardid_internal._apply_ddl_check(p->>'command', tmpl[1], tmpl[2]);
    UPDATE shardid.ddl_changes AS d SET finished_at = now(), abandoned = true WHERE d.change_id = (p->>'original')::bigint;
    INSERT INTO shardid.ddl_changes AS d (template, table_name, command, kind, concurrent, on_nodes)
        VALUES (p->>'template', tmpl[2], p->>'command', format('%s (undo of change %s)', chk.kind, p->>'original'), chk.concurrent, true)
        RETURNING d.* INTO u;
    RAISE NOTICE 'abandon_ddl: change % of % abandoned on the router; its undo, change %, on every node: %',
        p->>'original', p->>'template', u.change_id, p->>'command';
    RETURN p || jsonb_build_object('change_id', u.change_id);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_start(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_start(text) IS
    'abandon_ddl(undo), where it is driven: the plan (_undo_ddl_plan) under the ledger''s lock, the change closed as abandoned and its inverse recorded (on a node with the tables it needs; on the router as a change of every node); an open undo is returned to be resumed. Returns the plan with the undo''s change_id (and on a node, reversed).';
