-- abandon_ddl(template, undo => true) on a node: the change to undo
-- (_undo_ddl_original: the router's, by origin, or the open one) closed as
-- abandoned, and its inverse recorded as a change of its own (kind: the
-- inverse's, "undo of change N"; origin: the router's undo, NULL on a
-- node on its own) with every target that needs no undoing marked done
-- in its ledger, so that apply_ddl() of the inverse, which resumes it,
-- reverses the change only where it was applied: on the tables that have
-- it, and, for a CREATE INDEX CONCURRENTLY, on those a failed or
-- interrupted build left with an index of its name, invalid or the
-- template's (_apply_ddl_same_indexes: built before the ledger heard). Checked
-- first: the caller may change the table (_apply_ddl_owner), and the
-- inverse drops, on every copy, the very index the change made. A second
-- call for the same undo (undo_origin recorded here already, or an undo
-- open here) changes nothing. Returns {change_id, reversed: how many
-- tables the inverse will change}; NULL when this node has no such
-- template.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_prepare(template text, inverse text, origin text, undo_origin text)
    RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t      shardid.sharded_tables;
    orig   shardid.ddl_changes;
    undo   shardid.ddl_changes;
    chk    record;
    oc     record;
    idx    text;
    o      record;
    n      integer;
    needs  text[];
    orig_index text;
BEGIN
    SELECT s.* INTO t FROM shardid.sharded_tables AS s WHERE format('%I.%I', s.template_schema, s.template_name) = template;
    IF t.table_name IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM shardid_internal._apply_ddl_owner(t.table_name);
    LOCK TABLE shardid.ddl_changes IN SHARE ROW EXCLUSIVE MODE;
    SELECT c.* INTO undo FROM shardid.ddl_changes AS c
     WHERE c.template = _undo_ddl_prepare.template
       AND CASE WHEN undo_origin IS NULL THEN c.finished_at IS NULL AND c.kind LIKE '% (undo of change %)'
                ELSE c.origin = undo_origin END;
    IF undo.change_id IS NOT NULL THEN
        RETURN jsonb_build_object('change_id', undo.change_id,
                                  'reversed', (SELECT count(*) FROM shardid_internal._apply_ddl_targets(undo.change_id, NULL)));
    END IF;
    SELECT c.* INTO orig FROM shardid.ddl_changes AS c
     WHERE c.change_id = (SELECT x.change_id FROM shardid_internal._undo_ddl_original(_undo_ddl_prepare.template, _undo_ddl_prepare.origin) AS x LIMIT 1);
    IF orig.change_id IS NOT NULL THEN
        oc := shardid_internal._apply_ddl_check(orig.command, t.template_schema, t.template_name);
        orig_index := oc.index_name;
    END IF;
    chk := shardid_internal._apply_ddl_check(inverse, t.template_schema, t.template_name);
    -- the inverse drops, on every table, the index the change made there
    IF chk.index_name IS NOT NULL AND orig.change_id IS NOT NULL THEN
        FOR o IN SELECT * FROM shardid_internal._undo_ddl_original(_undo_ddl_prepare.template, _undo_ddl_prepare.origin) LOOP
            idx := (shardid_internal._apply_ddl_check(inverse, o.schema_name, o.table_name)).index_name;
            IF idx IS DISTINCT FROM orig_index THEN
                RAISE EXCEPTION 'abandon_ddl() cannot undo % of %: % would drop index %, not %', orig.kind, template,
                                CASE WHEN o.target = 'template' THEN 'on the template it' ELSE 'on ' || o.target || ' it' END,
                                quote_ident(idx), quote_ident(orig_index)
                    USING ERRCODE = 'feature_not_supported',
                          DETAIL = 'The copies'' table name differs from the template''s, so DROP INDEX %s_suffix does not name the index the change made on each.',
                          HINT = format('Complete it on the tables that lack it instead: CALL shardid.apply_ddl(%L, %L);', template, orig.command);
            END IF;
        END LOOP;
    END IF;
    -- what needs undoing: a table with the change, or a running one
    -- (interrupted or failed) with an index of its name that is invalid
    -- or the template's (the build ended before the ledger heard of it)
    SELECT COALESCE(array_agg(g.target), '{}') INTO needs
      FROM shardid_internal._undo_ddl_original(_undo_ddl_prepare.template, _undo_ddl_prepare.origin) AS g
     WHERE g.has OR (g.running AND orig_index IS NOT NULL
                     AND EXISTS (SELECT FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                                  WHERE x.indrelid = to_regclass(format('%I.%I', g.schema_name, g.table_name))
                                    AND i.relname = orig_index
                                    AND (NOT x.indisvalid OR shardid_internal._apply_ddl_same_indexes(orig.change_id, g.target))));
    IF orig.finished_at IS NULL AND orig.change_id IS NOT NULL THEN
        UPDATE shardid.ddl_changes AS c SET finished_at = now(), abandoned = true WHERE c.change_id = orig.change_id;
    END IF;
    INSERT INTO shardid.ddl_changes AS c (template, table_name, command, kind, concurrent, on_nodes, origin)
        VALUES (_undo_ddl_prepare.template, t.table_name, inverse,
                format('%s (undo of change %s)', chk.kind, COALESCE(orig.change_id::text, 'none here')),
                chk.concurrent, false, undo_origin)
        RETURNING c.* INTO undo;
    INSERT INTO shardid.ddl_applied (change_id, target, shard, done)
        SELECT undo.change_id, g.target, g.shard, true
          FROM shardid_internal._undo_ddl_original(_undo_ddl_prepare.template, _undo_ddl_prepare.origin) AS g
         WHERE g.target <> ALL (needs);
    n := cardinality(needs);
    RAISE NOTICE 'abandon_ddl: change % of % abandoned; its undo, change %, reverses it on % tables: %',
        orig.change_id, template, undo.change_id, n, inverse;
    RETURN jsonb_build_object('change_id', undo.change_id, 'reversed', n);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_prepare(text, text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_prepare(text, text, text, text) IS
    'abandon_ddl(undo) on a node: closes the change to undo (the router''s origin, else the open one) as abandoned and records its inverse as a change (kind "... (undo of change N)", origin the router''s undo) whose ledger marks done every table that needs no undoing; returns its change_id and how many tables it will reverse (NULL without the template). A second call changes nothing.';
