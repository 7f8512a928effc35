-- Node: drops one recorded retired copy (shardid.retired_schemas), found
-- by its schema's name now, if it holds nothing but its own objects
-- (_retired_copy_check); returns {"status": "dropped", "bytes": ...},
-- {"status": "skipped", "reason": ...} or {"status": "gone"} (no schema
-- of that name: dropped meanwhile, by hand or by another cleanup; its
-- record, if any, is forgotten). Refuses (55000) a schema that is not a
-- recorded retired copy, however it looks. Under the registry's lock
-- (SHARE ROW EXCLUSIVE on shard_registry and sharded_tables), which
-- attach_shard(), retire_shard(), a move's copy on its target and a second
-- cleanup take too, so none of them runs between the check and the drop.
-- The copy's relations are locked (for 2 s at most: else skipped as
-- busy) and checked again, then dropped RESTRICT, then the schema
-- RESTRICT: what the check could have missed or what appeared meanwhile
-- fails the drop (skipped, nothing dropped), never goes with it. Runs no
-- tenant code: DROP fires no trigger a tenant may create.
CREATE OR REPLACE FUNCTION shardid_internal._drop_retired_copy(schema_name name) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rec    shardid.retired_schemas;
    nsp    oid;
    why    text;
    freed  bigint;
    tabs   text;
    seqs   text;
    r      record;
BEGIN
    IF schema_name IS NULL THEN
        RAISE EXCEPTION 'schema_name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    LOCK TABLE shardid.shard_registry, shardid.sharded_tables IN SHARE ROW EXCLUSIVE MODE;
    SELECT n.oid INTO nsp FROM pg_namespace AS n WHERE n.nspname = _drop_retired_copy.schema_name;
    IF NOT FOUND THEN
        DELETE FROM shardid.retired_schemas AS x
         WHERE x.schema_name = _drop_retired_copy.schema_name
           AND NOT EXISTS (SELECT FROM pg_namespace AS n WHERE n.oid = x.schema_oid);
        RETURN jsonb_build_object('status', 'gone');
    END IF;
    SELECT * INTO rec FROM shardid.retired_schemas AS x WHERE x.schema_oid = nsp;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema % is not a retired copy recorded by a move', quote_ident(schema_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'drop_retired_copies() drops only a schema that retire_shard() recorded in shardid.retired_schemas, however another looks.',
                  HINT = 'If it is a copy retired before 0.3 (or on a node restored since), check what it holds and drop it by hand.';
    END IF;
    why := shardid_internal._retired_copy_check(nsp, rec.relations);
    IF why IS NULL THEN
        BEGIN
            PERFORM set_config('lock_timeout', '2s', true);
            FOR r IN SELECT c.oid FROM pg_class AS c
                      WHERE c.oid = ANY (rec.relations) AND c.relnamespace = nsp AND c.relkind IN ('r', 'p')
                      ORDER BY c.oid LOOP
                EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', r.oid::regclass);
            END LOOP;
        EXCEPTION WHEN lock_not_available THEN
            why := 'busy: its tables are in use (locked for more than 2 s); try again later';
        END;
    END IF;
    why := COALESCE(why, shardid_internal._retired_copy_check(nsp, rec.relations));
    IF why IS NOT NULL THEN
        RETURN jsonb_build_object('status', 'skipped', 'reason', why);
    END IF;
    SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::bigint INTO freed
      FROM pg_class AS c WHERE c.relnamespace = nsp AND c.relkind IN ('r', 'm', 'p');
    SELECT string_agg(c.oid::regclass::text, ', ' ORDER BY c.oid) INTO tabs
      FROM pg_class AS c WHERE c.oid = ANY (rec.relations) AND c.relnamespace = nsp AND c.relkind IN ('r', 'p');
    BEGIN
        IF tabs IS NOT NULL THEN
            EXECUTE 'DROP TABLE ' || tabs || ' RESTRICT';
        END IF;
        -- what the tables owned went with them
        SELECT string_agg(c.oid::regclass::text, ', ' ORDER BY c.oid) INTO seqs
          FROM pg_class AS c WHERE c.oid = ANY (rec.relations) AND c.relnamespace = nsp AND c.relkind = 'S';
        IF seqs IS NOT NULL THEN
            EXECUTE 'DROP SEQUENCE ' || seqs || ' RESTRICT';
        END IF;
        EXECUTE format('DROP SCHEMA %I RESTRICT', schema_name);
    EXCEPTION WHEN dependent_objects_still_exist THEN
        RETURN jsonb_build_object('status', 'skipped',
                                  'reason', regexp_replace('it holds or is used by objects it did not record: ' || SQLERRM, '[[:cntrl:]]', '?', 'g'));
    END;
    DELETE FROM shardid.retired_schemas AS x WHERE x.schema_oid = nsp;
    RETURN jsonb_build_object('status', 'dropped', 'bytes', freed);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._drop_retired_copy(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._drop_retired_copy(name) IS
    'Node: drops a recorded retired copy (shardid.retired_schemas) if it holds only its own objects, under the registry''s lock; returns its status (dropped with bytes, skipped with the reason, gone); refuses (55000) a schema that is not recorded.';
