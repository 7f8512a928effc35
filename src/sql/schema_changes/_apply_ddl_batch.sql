-- One batch of apply_ddl() on a node, for statements that run in a
-- transaction block: runs the change on the next targets that lack it, as
-- the template's owner in a security-restricted operation (_run_as_owner;
-- a copy another role owns is refused), and records each in the ledger in
-- the same transaction. Every table keeps its lock until the caller
-- commits, so the batch ends after batch_size tables or, sooner, once its
-- first statement began batch_time ago (NULL: no time bound): no table is
-- locked much longer than batch_time plus one statement and the commit.
-- application_name says the progress for the batch's transaction
-- (set_config local). Returns how many tables it changed, NULL when none
-- was left. A statement's error is raised as the user's, naming its table
-- (_apply_ddl_raise).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_batch(change shardid.ddl_changes, batch_size integer, batch_time interval,
                                                             done integer, todo integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x         record;
    rel       regclass;
    made      integer := 0;
    owner     name;
    owner_oid oid;
    began     timestamptz;
    st        text;
    msg       text;
    det       text;
    hnt       text;
    ctx       text;
BEGIN
    PERFORM set_config('application_name', format('shardid apply_ddl %s %s/%s', change.template, done, todo), true);
    owner := shardid_internal._apply_ddl_owner(change.table_name);
    owner_oid := to_regrole(quote_ident(owner));
    FOR x IN SELECT * FROM shardid_internal._apply_ddl_targets(change.change_id, batch_size) LOOP
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
        EXIT WHEN clock_timestamp() - began >= batch_time;
    END LOOP;
    RETURN NULLIF(made, 0);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT,
                            ctx = PG_EXCEPTION_CONTEXT;
    PERFORM shardid_internal._apply_ddl_raise(change, batch_size, st, msg, det, hnt, ctx);
    RETURN NULL;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_batch(shardid.ddl_changes, integer, interval, integer, integer) IS
    'One batch of apply_ddl() on a node: runs the change as the template''s owner on the next targets that lack it, recording each in the ledger, until batch_size tables or batch_time since its first statement; how many it changed, NULL when none was left.';
