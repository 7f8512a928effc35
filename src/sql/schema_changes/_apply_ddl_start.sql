-- apply_ddl() on a node: checks the template, the caller and the command,
-- then finds the open change of that template (the same command:
-- resumed) or records a new one; a different open command is refused
-- (55000). Returns the change, how many targets (the template and each
-- shard) it has left and how many there are, and state: new, resumed,
-- finished (origin, a router's change, was finished here already: nothing
-- to run again) or no template (origin given, and this node has no such
-- sharded table: a node with only the extension has nothing to change).
-- here: this session runs the statements, so one outside a transaction
-- block needs dblink here (false when the router drives this node over
-- its own connection). A new change is returned unrecorded (change_id
-- NULL): _apply_ddl_record() records it, with the first batch of a
-- statement that runs in a transaction block (_apply_ddl_first_batch), so
-- a change whose first batch fails is not kept.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_start(template text, command text, here boolean, origin text DEFAULT NULL,
                                                    OUT change shardid.ddl_changes, OUT todo integer, OUT total integer,
                                                    OUT state text)
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
    IF origin IS NOT NULL THEN
        SELECT c.* INTO change FROM shardid.ddl_changes AS c WHERE c.origin = _apply_ddl_start.origin;
        IF change.finished_at IS NOT NULL THEN
            state := 'finished';
            RETURN;
        END IF;
        IF NOT EXISTS (SELECT FROM shardid.sharded_tables AS s
                        WHERE format('%I.%I', s.template_schema, s.template_name) = _apply_ddl_start.template) THEN
            state := 'no template';
            RETURN;
        END IF;
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
    PERFORM shardid_internal._require_template(t);
    PERFORM shardid_internal._apply_ddl_grants();
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
    IF change.change_id IS NOT NULL AND (change.command <> command OR change.on_nodes
                                         OR change.origin IS DISTINCT FROM COALESCE(origin, change.origin)) THEN
        RAISE EXCEPTION 'sharded table % has an unfinished change: %', t.table_name, change.command
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Change %s, started by %I (shardid.ddl_progress shows how far it got); a different command waits until it is finished or abandoned.',
                                  change.change_id, change.requested_by),
                  HINT = format('Finish it: CALL shardid.apply_ddl(%L, %L); or leave it as far as it got: SELECT * FROM shardid.abandon_ddl(%L);',
                                canon, change.command, canon);
    END IF;
    state := 'resumed';
    IF change.change_id IS NULL THEN
        change := ROW(NULL, canon, t.table_name, command, chk.kind, chk.concurrent, false, current_user, now(), NULL, false, origin);
        state := 'new';
    END IF;
    SELECT 1 + count(*) INTO total FROM shardid.shard_registry;
    SELECT total - count(*) INTO todo FROM shardid.ddl_applied AS a WHERE a.change_id IS NOT DISTINCT FROM change.change_id AND a.done;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_start(text, text, boolean, text) IS
    'apply_ddl() on a node: checks template, caller and command, then resumes the open change of the same command or returns a new one unrecorded (55000 for a different one); returns it with the targets left and in all and its state (new, resumed; for a router''s change: finished, no template); here: this session runs the statements (dblink needed for CONCURRENTLY).';
