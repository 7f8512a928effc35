-- apply_ddl() on the router: records the change (_apply_ddl_router_start),
-- applies it on every node in name order, one router transaction per node
-- (_apply_ddl_on_node, with the options record o whole: every node
-- honours each option; a loopback, which names no node, was refused by
-- _ddl_options() with 22023), committing after each, then finishes it. A node's
-- error is raised once the router has recorded what it means
-- (_apply_ddl_router_failed: a change no node kept is not kept here
-- either) and committed. A
-- procedure of its own because it commits; executable by PUBLIC as
-- apply_ddl() is (only administrators get past _apply_ddl_router_start()).
-- No SET clause: it holds the loop and its COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._apply_ddl_router(template text, command text, o shardid.ddl_options)
    LANGUAGE plpgsql
AS $$
DECLARE
    change shardid.ddl_changes;
    node   text;
    err    jsonb;
    conn   text := 'shardid_apply_ddl';
    app    text := pg_catalog.current_setting('application_name');
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._apply_ddl_router()',
                                             'after every node',
                                             'It is called by shardid.apply_ddl(): CALL that on its own.');
    change := shardid_internal._apply_ddl_router_start(template, command);
    COMMIT;
    RAISE NOTICE 'apply_ddl: change % of %: % on every node', change.change_id, change.template, change.kind;
    LOOP
        node := shardid_internal._apply_ddl_next_node(change.change_id);
        EXIT WHEN node IS NULL;
        err := shardid_internal._apply_ddl_on_node(conn, change, node, o);
        IF err IS NOT NULL THEN
            err := shardid_internal._apply_ddl_router_failed(change, node, err);
            COMMIT;
            PERFORM shardid_internal._raise(err OPERATOR(pg_catalog.->>) 'sqlstate', err OPERATOR(pg_catalog.->>) 'message',
                                            err OPERATOR(pg_catalog.->>) 'detail', err OPERATOR(pg_catalog.->>) 'hint');
        END IF;
        COMMIT;
        RAISE NOTICE 'apply_ddl: node % done', node;
    END LOOP;
    PERFORM shardid_internal._apply_ddl_close_change(change.change_id);
    PERFORM pg_catalog.set_config('application_name', app, false);
    COMMIT;
    RAISE NOTICE 'apply_ddl: change % of % finished on every node', change.change_id, change.template;
END
$$;

COMMENT ON PROCEDURE shardid_internal._apply_ddl_router(text, text, shardid.ddl_options) IS
    'apply_ddl() on the router: records the change and applies it on every node in name order with the same options, committing after each node. Executable by PUBLIC (apply_ddl() calls it; its functions check the caller).';
