-- Router, check_cluster() step 8: unfinished apply_ddl() changes, on the
-- router (by start) and then on the nodes, each with the CALL that
-- finishes it; the detail names abandon_ddl(), which leaves it as far as
-- it got. The router's change whose template or command has a control
-- character is reported here as unsafe_name, finished by its ID
-- (_ddl_finish_by_id()); a node's is unsafe_name's, left out of facts.
CREATE OR REPLACE FUNCTION shardid_internal._check_ddl_unfinished(nodes jsonb, facts jsonb)
    RETURNS TABLE (kind text, shard integer, node text, detail text, run_on text, fix text)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT CASE WHEN x.unsafe THEN 'unsafe_name' ELSE 'ddl_unfinished' END, NULL::integer, NULL::text,
           CASE WHEN x.unsafe
                THEN pg_catalog.format('apply_ddl() change %s on the router is unfinished, and its template or command has a control character: %s; the fix finishes it by its ID, without the text',
                                       c.change_id, pg_catalog.to_jsonb(c.template || ' ' || c.command)::text)
                ELSE pg_catalog.format('apply_ddl() of %s on %s, started %s, is unfinished', c.command, c.template, c.started_at) END,
           NULL::text,
           CASE WHEN x.unsafe THEN shardid_internal._ddl_finish_by_id(c.change_id)
                ELSE pg_catalog.format('CALL shardid.apply_ddl(%L, %L);', c.template, c.command) END
      FROM shardid.ddl_changes AS c,
           LATERAL (SELECT shardid_internal._unsafe_text(c.template || ' ' || c.command) AS unsafe) AS x
     WHERE c.finished_at IS NULL
     ORDER BY c.started_at;
    RETURN QUERY
    SELECT 'ddl_unfinished'::text, NULL::integer, f.key,
           pg_catalog.format('apply_ddl() of %s on %s is unfinished on node "%s"; to leave it as far as it got instead: SELECT * FROM shardid.abandon_ddl(%L);',
                             c->>'command', c->>'template', f.key, c->>'template'),
           f.key,
           pg_catalog.format('CALL shardid.apply_ddl(%L, %L);', c->>'template', c->>'command')
      FROM jsonb_each(facts) AS f, jsonb_array_elements(f.value->'ddl_unfinished') AS c
     ORDER BY f.key COLLATE "C";
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._check_ddl_unfinished(jsonb, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._check_ddl_unfinished(jsonb, jsonb) IS
    'Router, check_cluster(): ddl_unfinished, an apply_ddl() change not finished on the router or a node, with the CALL that finishes it (a router''s change with a control character: unsafe_name, finished by its ID).';
