-- abandon_ddl(template, undo => true): what the undo will do, read only,
-- so that a refusal comes before anything changes and in the caller's
-- own session: the open change of the template (55000 when there is
-- none) and the command that reverses it (_undo_ddl_inverse: 0A000, with
-- the completing apply_ddl() call in the HINT, when it has none; for a
-- previous value, the tables that lack the change are read on every node
-- from a router). An open undo (interrupted: kind "... (undo of change
-- N)") is to be resumed as it is. Returns {template, command: the
-- inverse, original: the change undone, resume: the open undo's
-- change_id, NULL for a new undo}.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_plan(template text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn    CONSTANT text := 'shardid_undo_ddl';
    parts   text[];
    canon   text;
    c       shardid.ddl_changes;
    nd      record;
    prev    jsonb := '[]';
    inverse text;
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
        RETURN jsonb_build_object('template', canon, 'command', c.command, 'resume', c.change_id,
                                  'original', substring(c.kind FROM '\(undo of change (\d+)\)$')::bigint);
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
    RETURN jsonb_build_object('template', canon, 'command', inverse, 'original', c.change_id, 'resume', NULL);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_plan(text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_plan(text) IS
    'abandon_ddl(undo), read only: the open change of a template and the command that reverses it, or its refusal (55000 no open change; 0A000 no safe inverse, the completing apply_ddl() call in the HINT; 55000 previous value not known); an open undo is returned to be resumed.';
