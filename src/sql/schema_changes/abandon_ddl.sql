-- abandon_ddl(template): closes the open apply_ddl() change of a sharded
-- table without finishing it, leaving every table as it is, and says
-- which have it: on a node its own change; on a router the router's and
-- each node's (over dblink, search_path pinned), node by node. A node's
-- change is closed as soon as the node answers, so a node that cannot be
-- reached fails the call, naming it, and a second call closes what is
-- left. Afterwards another command may run; the tables that lack the
-- change are for the user to bring in line (check_cluster() shows copies
-- that differ from their template). With undo, the change is reversed
-- where it was applied instead (_abandon_ddl_undo).
CREATE OR REPLACE FUNCTION shardid.abandon_ddl(template text, undo boolean DEFAULT false)
    RETURNS TABLE (node text, change_id bigint, command text, targets_with integer, targets_without integer, without text[])
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conn   CONSTANT text := 'shardid_abandon_ddl';
    canon  text;
    parts  text[];
    c      shardid.ddl_changes;
    nd     record;
    got    jsonb;
BEGIN
    IF template IS NULL OR undo IS NULL THEN
        RAISE EXCEPTION 'abandon_ddl() arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF undo THEN
        RETURN QUERY SELECT * FROM shardid_internal._abandon_ddl_undo(template);
        RETURN;
    END IF;
    SELECT format('%I.%I', n.nspname, k.relname) INTO canon
      FROM pg_class AS k JOIN pg_namespace AS n ON n.oid = k.relnamespace WHERE k.oid = to_regclass(template);
    IF canon IS NULL THEN
        parts := parse_ident(template);
        IF cardinality(parts) <> 2 THEN
            RAISE EXCEPTION 'template "%" must be schema-qualified (no such table here)', template
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        canon := format('%I.%I', parts[1], parts[2]);
    END IF;
    SELECT d.* INTO c FROM shardid.ddl_changes AS d WHERE d.template = canon AND d.finished_at IS NULL FOR UPDATE;
    IF shardid_internal._apply_ddl_on_nodes() THEN
        PERFORM shardid_internal._dblink_schema();
        FOR nd IN SELECT n.node FROM shardid.nodes AS n ORDER BY n.node COLLATE "C" LOOP
            PERFORM shardid_internal._node_close(conn);
            PERFORM shardid_internal._apply_ddl_connect(conn, nd.node, NULL);
            got := shardid_internal._node(conn, format('SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(r)), ''[]'')::pg_catalog.text '
                                                       'FROM shardid.abandon_ddl(%L) AS r', canon), nd.node)::jsonb;
            PERFORM shardid_internal._node_close(conn);
            RETURN QUERY SELECT nd.node, x.change_id, x.command, x.targets_with, x.targets_without, x.without
                           FROM jsonb_to_recordset(got) AS x(change_id bigint, command text, targets_with integer,
                                                             targets_without integer, without text[]);
        END LOOP;
        IF c.change_id IS NOT NULL THEN
            UPDATE shardid.ddl_changes AS d SET finished_at = now(), abandoned = true WHERE d.change_id = c.change_id;
            RAISE NOTICE 'abandon_ddl: change % of % abandoned on the router and every node: %', c.change_id, canon, c.command;
        END IF;
        RETURN;
    END IF;
    IF c.change_id IS NULL THEN
        RAISE NOTICE 'abandon_ddl: % has no open change here', canon;
        RETURN;
    END IF;
    PERFORM shardid_internal._apply_ddl_owner(c.table_name);
    UPDATE shardid.ddl_changes AS d SET finished_at = now(), abandoned = true WHERE d.change_id = c.change_id;
    RAISE NOTICE 'abandon_ddl: change % of % abandoned: %', c.change_id, canon, c.command;
    -- the tables that lack it: what a re-CALL would have changed
    RETURN QUERY
        SELECT NULL::text, c.change_id, c.command,
               (1 + (SELECT count(*) FROM shardid.shard_registry))::integer - cardinality(x.without), cardinality(x.without), x.without
          FROM (SELECT ARRAY(SELECT t.target FROM shardid_internal._apply_ddl_targets(c.change_id, NULL) AS t
                              ORDER BY t.shard NULLS FIRST) AS without) AS x;
END
$$;

COMMENT ON FUNCTION shardid.abandon_ddl(text, boolean) IS
    'Closes the open apply_ddl() change of a sharded table without finishing it (on a router: there and on every node), leaving every table as it is; one row per node (NULL here) with the change, how many tables have it and lack it, and which lack it. Then another command may run. With undo => true, reverses the change where it was applied instead, as a change of its own run by apply_ddl() (DROP INDEX [CONCURRENTLY] of the index a CREATE INDEX made and of the invalid ones a failed build left, DROP CONSTRAINT of the constraint an ADD CONSTRAINT added, the previous default or statistics target); a change with no safe inverse is refused (0A000) with the apply_ddl() call that completes it in the HINT.';
