-- abandon_ddl(template, undo => true), where the undo is driven (a node on
-- its own, or the router): the open change of the template and the
-- command that reverses it (_undo_ddl_inverse: refused, before anything
-- changes, when it has none; a previous value read on every node). On a
-- node the change is closed and its inverse recorded here
-- (_undo_ddl_prepare); on the router the change is closed as abandoned
-- and the inverse recorded as a change of every node (kind "... (undo of
-- change N)"), which _undo_ddl_nodes() then records on each node. An
-- open undo (interrupted) is returned as it is, to be resumed. Returns
-- {template, command: the inverse, change_id, original: the change
-- undone; on a node, reversed: how many tables it changes}.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_start(template text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn    CONSTANT text := 'shardid_undo_ddl';
    parts   text[];
    canon   text;
    c       shardid.ddl_changes;
    chk     record;
    nd      record;
    prev    jsonb := '[]';
    inverse text;
    undo    shardid.ddl_changes;
    orig    bigint;
BEGIN
    IF template IS NULL THEN
        RAISE EXCEPTION 'abandon_ddl() template must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF shardid_internal._apply_ddl_on_nodes() THEN
        parts := shardid_internal._router_template('abandon_ddl()', 'undo changes of sharded tables', template, '');
    ELSE
        SELECT ARRAY[t.template_schema::text, t.template_name::text] INTO parts
          FROM shardid.sharded_tables AS t
          JOIN pg_class AS k ON k.relname = t.template_name
          JOIN pg_namespace AS n ON n.oid = k.relnamespace AND n.nspname = t.template_schema
         WHERE k.oid = to_regclass(template);
        IF parts IS NULL THEN
            RAISE EXCEPTION '"%" is not the template of a sharded table', template
                USING ERRCODE = 'undefined_table',
                      HINT = 'shardid.sharded_tables lists the templates.';
        END IF;
    END IF;
    canon := format('%I.%I', parts[1], parts[2]);
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    SELECT d.* INTO c FROM shardid.ddl_changes AS d WHERE d.template = canon AND d.finished_at IS NULL;
    IF c.change_id IS NULL THEN
        RAISE EXCEPTION 'sharded table % has no unfinished change to undo', canon
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'abandon_ddl(template, undo => true) reverses the open apply_ddl() change of a template (shardid.ddl_progress lists them).',
                  HINT = 'To reverse a finished change, CALL shardid.apply_ddl() with its inverse.';
    END IF;
    IF NOT shardid_internal._apply_ddl_on_nodes() THEN
        PERFORM shardid_internal._apply_ddl_owner(c.table_name);
    END IF;
    IF c.kind LIKE '% (undo of change %)' THEN
        RETURN jsonb_build_object('template', canon, 'command', c.command, 'change_id', c.change_id,
                                  'original', substring(c.kind FROM '\(undo of change (\d+)\)$')::bigint,
                                  'reversed', CASE WHEN NOT c.on_nodes
                                                   THEN (SELECT count(*) FROM shardid_internal._apply_ddl_targets(c.change_id, NULL)) END);
    END IF;
    -- the previous value, where the statement sets one: from every node
    IF shardid_internal._apply_ddl_on_nodes() THEN
        FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
            PERFORM shardid_internal._node_close(conn);
            PERFORM shardid_internal._apply_ddl_connect(conn, nd.node, NULL);
            prev := prev || shardid_internal._node(conn, format('SELECT shardid_internal._undo_ddl_previous(%L, %L, %L)',
                                                                canon, c.command, shardid_internal._apply_ddl_origin(c.change_id)),
                                                   nd.node)::jsonb;
            PERFORM shardid_internal._node_close(conn);
        END LOOP;
    ELSE
        prev := shardid_internal._undo_ddl_previous(canon, c.command, NULL);
    END IF;
    SELECT COALESCE(jsonb_agg(DISTINCT v), '[]') INTO prev FROM jsonb_array_elements(prev) AS v;
    inverse := shardid_internal._undo_ddl_inverse(c, prev);
    IF NOT shardid_internal._apply_ddl_on_nodes() THEN
        RETURN jsonb_build_object('template', canon, 'command', inverse, 'original', c.change_id)
               || shardid_internal._undo_ddl_prepare(canon, inverse, NULL, NULL);
    END IF;
    chk := shardid_internal._apply_ddl_check(inverse, parts[1], parts[2]);
    UPDATE shardid.ddl_changes AS d SET finished_at = now(), abandoned = true WHERE d.change_id = c.change_id;
    INSERT INTO shardid.ddl_changes AS d (template, table_name, command, kind, concurrent, on_nodes)
        VALUES (canon, parts[2], inverse, format('%s (undo of change %s)', chk.kind, c.change_id), chk.concurrent, true)
        RETURNING d.* INTO undo;
    RAISE NOTICE 'abandon_ddl: change % of % abandoned on the router; its undo, change %, on every node: %',
        c.change_id, canon, undo.change_id, inverse;
    RETURN jsonb_build_object('template', canon, 'command', inverse, 'change_id', undo.change_id, 'original', c.change_id);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_start(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_start(text) IS
    'abandon_ddl(undo), where it is driven: the open change of a template and its inverse (refused before anything changes when it has none), the change closed as abandoned and the inverse recorded (on a node with its ledger; on the router as a change of every node); an open undo is returned to be resumed. Returns {template, command, change_id, original}.';
