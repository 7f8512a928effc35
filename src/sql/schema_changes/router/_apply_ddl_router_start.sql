-- apply_ddl() on the router: checks the caller (an administrator, who may
-- read shardid.nodes), dblink and the command (for the template's name as
-- given, schema-qualified), then resumes the unfinished change of the same
-- command or records a new one; 55000 for a different unfinished one.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_router_start(template text, command text) RETURNS shardid.ddl_changes
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts  text[];
    canon  text;
    chk    record;
    change shardid.ddl_changes;
BEGIN
    parts := shardid_internal._router_template('apply_ddl()', 'change sharded tables', template, command);
    canon := format('%I.%I', parts[1], parts[2]);
    chk := shardid_internal._apply_ddl_check(command, parts[1], parts[2]);
    PERFORM shardid_internal._apply_ddl_check(command, 'shard_0000', parts[2]);
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    SELECT c.* INTO change FROM shardid.ddl_changes AS c WHERE c.template = canon AND c.finished_at IS NULL;
    IF change.change_id IS NOT NULL AND (change.command <> command OR NOT change.on_nodes) THEN
        RAISE EXCEPTION 'sharded table % has an unfinished change: %', parts[2], change.command
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Change %s, started by %I (shardid.ddl_progress shows how far it got); a different command waits until it is finished or abandoned.',
                                  change.change_id, change.requested_by),
                  HINT = format('Finish it: CALL shardid.apply_ddl(%L, %L); or leave it as far as it got: SELECT * FROM shardid.abandon_ddl(%L);',
                                canon, change.command, canon);
    END IF;
    IF change.change_id IS NULL THEN
        INSERT INTO shardid.ddl_changes AS c (template, table_name, command, kind, concurrent, on_nodes)
            VALUES (canon, parts[2], command, chk.kind, chk.concurrent, true)
            RETURNING c.* INTO change;
    END IF;
    RETURN change;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_router_start(text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_router_start(text, text) IS
    'apply_ddl() on the router: checks caller, dblink and command, then resumes the unfinished change of the same command or records a new one (55000 for a different one).';
