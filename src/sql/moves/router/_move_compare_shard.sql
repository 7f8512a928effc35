-- Router, moves: _move_compare() of a shard on its source (ds) with its
-- copy from the target's templates (dt). When they differ and apply_ddl()
-- has an unfinished change on the router, the source or the target, the
-- error says so and its hint names the re-CALLs that finish it (a shard
-- and the templates differ until then); when the target has no template
-- of a table, the hint says so; otherwise the hint given.
CREATE OR REPLACE FUNCTION shardid_internal._move_compare_shard(shard integer, source text, target text, ds jsonb, dt jsonb,
                                                       target_label text, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    calls   text[];
    missing text;
BEGIN
    IF shardid_internal._definition_diff(ds, dt, '', '') <> '{}' THEN
        SELECT array_agg(x.c || ' on ' || x.w ORDER BY x.o) INTO calls
          FROM (SELECT c, 'the router' AS w, o FROM jsonb_array_elements_text(shardid_internal._apply_ddl_unfinished()) WITH ORDINALITY AS a(c, o)
                UNION ALL
                SELECT c, format('node "%s"', source), 1000 + o
                  FROM jsonb_array_elements_text(shardid_internal._node('shardid_move_source', 'SELECT shardid_internal._apply_ddl_unfinished()', source)::jsonb)
                       WITH ORDINALITY AS a(c, o)
                UNION ALL
                SELECT c, format('node "%s"', target), 2000 + o
                  FROM jsonb_array_elements_text(shardid_internal._node('shardid_move_target', 'SELECT shardid_internal._apply_ddl_unfinished()', target)::jsonb)
                       WITH ORDINALITY AS a(c, o)) AS x;
    END IF;
    IF calls IS NULL THEN
        -- whole tables the target's templates do not make: no template there
        SELECT string_agg(substr(k, 7), ', ' ORDER BY k) INTO missing
          FROM jsonb_object_keys(ds) AS k
         WHERE k LIKE 'table %' AND position(':' IN k) = 0 AND NOT dt ? k;
        PERFORM shardid_internal._move_compare(ds, dt, format('node "%s"', source), target_label,
                                      format('shard %s on node "%s" has diverged from its templates', shard, source),
                                      CASE WHEN missing IS NULL THEN hint
                                           ELSE format('Node "%s" has no template of %s: create it there as on node "%s" and register it (SELECT shardid.create_table(...)), then move again.',
                                                       target, missing, source) END);
    ELSE
        PERFORM shardid_internal._move_compare(ds, dt, format('node "%s"', source), target_label,
                                      format('shard %s on node "%s" differs from the templates on node "%s" while apply_ddl() has not finished a change', shard, source, target),
                                      'Finish it, then move the shard again: ' || array_to_string(calls, ' '));
    END IF;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_compare_shard(integer, text, text, jsonb, jsonb, text, text) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_compare_shard(integer, text, text, jsonb, jsonb, text, text) IS
    'Router, moves: compares a shard with its copy from the target''s templates; when they differ during an unfinished apply_ddl() (router, source or target), the error names the re-CALLs that finish it.';
