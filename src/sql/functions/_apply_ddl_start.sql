-- apply_ddl() on a node: checks the template, the caller and the command,
-- then finds the unfinished change of that template (the same command:
-- resumed) or records a new one; a different unfinished command is
-- refused (55000). Returns the change, how many targets (the template and
-- each shard) it has left and how many there are. here: this session runs
-- the statements, so one outside a transaction block needs dblink here
-- (false when the router drives this node over its own connection).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_start(template text, command text, here boolean,
                                                    OUT change shardid.ddl_changes, OUT todo integer, OUT total integer)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel    regclass;
    t      shardid.sharded_tables;
    owner  name;
    chk    record;
    canon  text;
BEGIN
    IF template IS NULL OR command IS NULL THEN
        RAISE EXCEPTION 'apply_ddl() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    rel := to_regclass(template);
    SELECT s.* INTO t FROM shardid.sharded_tables AS s
        JOIN pg_class AS c ON c.relname = s.template_name
        JOIN pg_namespace AS n ON n.oid = c.relnamespace AND n.nspname = s.template_schema
        WHERE c.oid = rel;
    IF t.table_name IS NULL THEN
        RAISE EXCEPTION '"%" is not the template of a sharded table', template
            USING ERRCODE = 'undefined_table',
                  HINT = 'shardid.sharded_tables lists the templates; register one with shardid.create_table_proc().';
    END IF;
    PERFORM shardid_internal._check_template(t);
    canon := format('%I.%I', t.template_schema, t.template_name);
    owner := shardid_internal._apply_ddl_owner(t.table_name);
    PERFORM shardid_internal._apply_ddl_owners(t.table_name, owner);
    chk := shardid_internal._apply_ddl_check(command, t.template_schema, t.template_name);
    -- and for a shard's copy: a command that names the template itself
    -- rather than %s is refused before anything changes
    PERFORM shardid_internal._apply_ddl_check(command, 'shard_0000', t.table_name);
    IF chk.concurrent AND here AND NOT EXISTS (SELECT FROM pg_extension AS e WHERE e.extname = 'dblink') THEN
        RAISE EXCEPTION 'apply_ddl() of a statement that cannot run in a transaction block needs the dblink extension'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('%s runs one table at a time on a connection of its own, to this database itself.', chk.kind),
                  HINT = 'CREATE EXTENSION dblink; in this database (contrib, shipped with PostgreSQL).';
    END IF;
    -- one change per template at a time; waits for another apply_ddl() start
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    SELECT c.* INTO change FROM shardid.ddl_changes AS c WHERE c.template = canon AND c.finished_at IS NULL;
    IF change.change_id IS NOT NULL AND (change.command <> command OR change.on_nodes) THEN
        RAISE EXCEPTION 'sharded table % has an unfinished change: %', t.table_name, change.command
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Change %s, started by %I (shardid.ddl_progress shows how far it got); a different command waits until it is finished.',
                                  change.change_id, change.requested_by),
                  HINT = format('Finish it first: CALL shardid.apply_ddl(%L, %L);', canon, change.command);
    END IF;
    IF change.change_id IS NULL THEN
        INSERT INTO shardid.ddl_changes AS c (template, table_name, command, kind, concurrent, on_nodes)
            VALUES (canon, t.table_name, command, chk.kind, chk.concurrent, false)
            RETURNING c.* INTO change;
    END IF;
    SELECT 1 + count(*) INTO total FROM shardid.shard_registry;
    SELECT total - count(*) INTO todo FROM shardid.ddl_applied AS a WHERE a.change_id = change.change_id AND a.done;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_start(text, text, boolean) IS
    'apply_ddl() on a node: checks template, caller and command, then resumes the unfinished change of the same command or records a new one (55000 for a different one); returns it with the targets left and in all; here: this session runs the statements (dblink needed for CONCURRENTLY).';
