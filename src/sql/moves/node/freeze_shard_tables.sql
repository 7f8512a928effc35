-- Node, move cut-over: every table of the shard's schema gets the trigger
-- shardid_move_frozen, which refuses writes (25006, at once). Waits for
-- writes in flight (the caller sets lock_timeout). Returns the number of
-- tables. A trigger of that name that is not shardid's (its function is
-- not _refuse_frozen_write) is refused, 42710, rather than replaced: it is
-- a difference of the shard's, and the move rolls back naming it.
--
-- lease: the freeze holds only while this session holds a session-level
-- advisory lock on a key drawn at random for this freeze (gen_random_uuid)
-- and named in the trigger's arguments, so no other role can take it
-- first or hold it to block the move: if the session that froze the shard
-- ends (the mover was killed, the router or this node restarted) writes
-- go through again, since nothing is routed elsewhere before the freeze is
-- made permanent. Writes that went through a lapsed lease hold the table
-- locks that re-making the trigger waits for. Without lease (or called
-- again without it) the freeze is permanent until unfreeze_shard_tables():
-- what a move sets just before it repoints the router, and what an offline
-- move and a manual freeze use.
CREATE OR REPLACE FUNCTION shardid.freeze_shard_tables(schema_name name, shard integer, target text, lease boolean DEFAULT false)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clash text;
    key   bigint;
BEGIN
    SELECT string_agg(format('%I.%I', n.nspname, c.relname), ', ' ORDER BY c.relname) INTO clash
      FROM pg_trigger AS g JOIN pg_class AS c ON c.oid = g.tgrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace
     WHERE n.nspname = freeze_shard_tables.schema_name AND g.tgname = 'shardid_move_frozen'
       AND g.tgfoid <> 'shardid_internal._refuse_frozen_write()'::regprocedure;
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'cannot freeze shard %: tables have a trigger named shardid_move_frozen that is not shardid''s: %', shard, clash
            USING ERRCODE = 'duplicate_object',
                  HINT = 'A trigger of the shard''s own is a difference from its templates: drop or rename it.';
    END IF;
    IF lease THEN
        -- a new key for every freeze; an earlier lease of this session goes
        PERFORM shardid_internal._release_lease(schema_name);
        LOOP
            key := ('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16))::bit(64)::bigint;
            EXIT WHEN pg_try_advisory_lock(key);
        END LOOP;
    END IF;
    RETURN shardid_internal._for_tables(schema_name, '{r,p}',
        'CREATE OR REPLACE TRIGGER shardid_move_frozen BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I
         FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_frozen_write(%L, %L, %L, %L)',
        ARRAY[shard::text, target, CASE WHEN lease THEN 'lease' ELSE 'permanent' END, COALESCE(key::text, '')]);
END
$$;

REVOKE ALL ON FUNCTION shardid.freeze_shard_tables(name, integer, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION shardid.freeze_shard_tables(name, integer, text, boolean) IS
    'Node, move cut-over: puts trigger shardid_move_frozen on every table of the schema (writes fail with 25006), held by this session''s advisory lock on a random key if lease, else permanent; refuses a trigger of that name that is not shardid''s; returns the number of tables.';
