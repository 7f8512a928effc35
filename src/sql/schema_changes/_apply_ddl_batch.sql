-- One batch of apply_ddl() on a node, for statements that run in a
-- transaction block: runs the change on the next targets that lack it, as
-- the template's owner in a security-restricted operation (_run_as_owner;
-- a copy another role owns is refused), and records each in the ledger in
-- the same transaction. Every table keeps its lock until the caller
-- commits, so the batch ends after batch_size tables or, sooner, once its
-- first statement began batch_time ago (NULL: no time bound): no table is
-- locked much longer than batch_time plus one statement and the commit.
-- after: the last shard the previous batch changed (-1 after the
-- template, NULL at first); the next shards are read from there in shard
-- order (an index range: short batches do not read every shard each), and
-- when none is left there, every target is looked at again
-- (_apply_ddl_targets: the template, a shard registered meanwhile). made is
-- how many tables it changed, NULL when none was left. application_name
-- says the progress for the batch's transaction (set_config local). A
-- statement's error is raised as the user's, naming its table
-- (_apply_ddl_raise).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_batch(change shardid.ddl_changes, batch_size integer, batch_time interval,
                                                             done integer, todo integer, INOUT after integer,
                                                             OUT made integer)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur       refcursor;
    x         record;
    rel       regclass;
    owner     name;
    owner_oid oid;
    began     timestamptz;
    st        text;
    msg       text;
    det       text;
    hnt       text;
    ctx       text;
BEGIN
    made := 0;
    PERFORM set_config('application_name', format('shardid apply_ddl %s %s/%s', change.template, done, todo), true);
    owner := shardid_internal._apply_ddl_owner(change.table_name);
    owner_oid := to_regrole(quote_ident(owner));
    LOOP
        IF after IS NULL THEN
            OPEN cur FOR SELECT t.target, t.shard, t.schema_name, t.table_name
                           FROM shardid_internal._apply_ddl_targets(change.change_id, batch_size) AS t;
        ELSE
            OPEN cur FOR SELECT s.schema_name::text AS target, s.shard, s.schema_name, change.table_name AS table_name
                           FROM shardid.shard_registry AS s
                          WHERE s.shard > after
                            AND NOT EXISTS (SELECT FROM shardid.ddl_applied AS a
                                             WHERE a.change_id = change.change_id AND a.target = s.schema_name::text)
                          ORDER BY s.shard
                          LIMIT batch_size;
        END IF;
        LOOP
            FETCH cur INTO x;
            EXIT WHEN NOT FOUND;
            began := COALESCE(began, clock_timestamp());
            rel := to_regclass(format('%I.%I', x.schema_name, x.table_name));
            -- a shard that lacks the table gets it from the changed template
            IF rel IS NOT NULL THEN
                IF x.target <> 'template' AND (SELECT k.relowner FROM pg_class AS k WHERE k.oid = rel) <> owner_oid THEN
                    PERFORM shardid_internal._apply_ddl_owners(change.table_name, owner, x.shard);
                END IF;
                PERFORM shardid_internal._run_as_owner(quote_ident(owner)::regrole,
                                                       (shardid_internal._apply_ddl_check(change.command, x.schema_name, x.table_name)).statement);
            ELSIF x.target = 'template' THEN
                RAISE EXCEPTION 'template % of sharded table % no longer exists', x.target, change.table_name
                    USING ERRCODE = 'object_not_in_prerequisite_state';
            END IF;
            INSERT INTO shardid.ddl_applied (change_id, target, shard, done)
                VALUES (change.change_id, x.target, x.shard, true);
            made := made + 1;
            after := COALESCE(x.shard, -1);
            EXIT WHEN made >= batch_size OR clock_timestamp() - began >= batch_time;
        END LOOP;
        CLOSE cur;
        -- nothing after the last shard: look at every target once more
        EXIT WHEN made > 0 OR after IS NULL;
        after := NULL;
    END LOOP;
    made := NULLIF(made, 0);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT,
                            ctx = PG_EXCEPTION_CONTEXT;
    PERFORM shardid_internal._apply_ddl_raise(change, batch_size, st, msg, det, hnt, ctx);
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_batch(shardid.ddl_changes, integer, interval, integer, integer, integer) IS
    'One batch of apply_ddl() on a node: runs the change as the template''s owner on the next targets that lack it (from the shard after, then every one), recording each in the ledger, until batch_size tables or batch_time since its first statement; how many it changed (NULL when none was left) and the last shard.';
