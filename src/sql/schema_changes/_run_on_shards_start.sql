-- run_on_shards() on a node: the sharded table whose template the caller
-- named (42P01 otherwise; NULL when optional and this node has neither
-- such a template nor any shard: a node with only the extension, reached
-- from a router), its template there (55000 when dropped), the caller
-- (as_role: the role the statements are for; 42501 unless it has the
-- privileges of the template's owner) and the command, checked for the
-- template and for a shard's copy (a command that names the template
-- itself rather than %s is refused before anything runs). Returns the
-- sharded table, the command's kind, whether it reads.
CREATE OR REPLACE FUNCTION shardid_internal._run_on_shards_start(template text, command text, as_role name, optional boolean,
                                                                 OUT t shardid.sharded_tables, OUT kind text, OUT reads boolean)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner oid;
    chk   record;
BEGIN
    IF template IS NULL OR command IS NULL THEN
        RAISE EXCEPTION 'run_on_shards() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT s.* INTO t FROM shardid.sharded_tables AS s
        JOIN pg_namespace AS n ON n.nspname = s.template_schema
        JOIN pg_class AS c ON c.relnamespace = n.oid AND c.relname = s.template_name
        WHERE c.oid = to_regclass(template);
    IF t.table_name IS NULL THEN
        IF optional AND NOT EXISTS (SELECT FROM shardid.shard_registry)
           AND NOT EXISTS (SELECT FROM shardid.sharded_tables AS s
                            WHERE format('%I.%I', s.template_schema, s.template_name) = template) THEN
            t := NULL;
            RETURN;
        END IF;
        RAISE EXCEPTION '"%" is not the template of a sharded table', template
            USING ERRCODE = 'undefined_table',
                  HINT = 'shardid.sharded_tables lists the templates; name one schema-qualified, as in ''public.photos''.';
    END IF;
    PERFORM shardid_internal._require_template(t);
    SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = to_regclass(template);
    IF NOT pg_has_role(COALESCE(as_role, current_user), owner, 'USAGE') THEN
        RAISE EXCEPTION 'permission denied to run a command on the copies of sharded table %', t.table_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('run_on_shards() runs it as each copy''s owner; role %I lacks the privileges of the template''s owner %I.',
                                  COALESCE(as_role, current_user), pg_get_userbyid(owner));
    END IF;
    chk := shardid_internal._run_on_shards_check(command, t.template_schema, t.template_name);
    PERFORM shardid_internal._run_on_shards_check(command, 'shard_0000', t.table_name);
    kind := chk.kind;
    reads := chk.reads;
END
$$;

COMMENT ON FUNCTION shardid_internal._run_on_shards_start(text, text, name, boolean) IS
    'Internal: run_on_shards() on a node: the sharded table of a template (42P01; NULL when optional on a node with no such template and no shard), the caller (42501 without the template owner''s privileges) and the command checked for the template and a copy; returns the table, the kind, whether it reads.';
