-- apply_ddl() on a node, a statement that runs in a transaction block:
-- the next batch (_apply_ddl_batch), with application_name saying the
-- progress for the batch's transaction (set_config local). Returns how
-- many tables it changed, NULL when none was left; the caller commits. A
-- statement's error is raised as the user's, naming its table
-- (_apply_ddl_raise).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_next_batch(change shardid.ddl_changes, batch_size integer, done integer,
                                                                  todo integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    made integer;
    st   text;
    msg  text;
    det  text;
    hnt  text;
    ctx  text;
BEGIN
    PERFORM set_config('application_name', format('shardid apply_ddl %s %s/%s', change.template, done, todo), true);
    made := shardid_internal._apply_ddl_batch(change.change_id, batch_size);
    RETURN NULLIF(made, 0);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT,
                            ctx = PG_EXCEPTION_CONTEXT;
    PERFORM shardid_internal._apply_ddl_raise(change, batch_size, st, msg, det, hnt, ctx);
    RETURN NULL;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_next_batch(shardid.ddl_changes, integer, integer, integer) IS
    'apply_ddl() on a node: the next batch of a change, application_name showing the progress; how many tables it changed, NULL when none was left.';
