-- apply_ddl(template, command): one DDL statement (%s: each table's
-- qualified name) on a sharded table's template and its copy in every
-- shard (a node), or on every node in name order (the router), as the
-- template's owner; batches that commit and a ledger (ddl_changes,
-- ddl_applied) so that a re-CALL finishes what is missing; CONCURRENTLY
-- one table at a time over dblink. No SET clause (it COMMITs): this holds
-- the batch loop and its COMMITs; the router's loop is _apply_ddl_router,
-- CONCURRENTLY's _apply_ddl_concurrently; the work and the NOTICEs are
-- functions that pin search_path.
CREATE OR REPLACE PROCEDURE shardid.apply_ddl(template text, command text, batch_size integer DEFAULT 256,
                                             loopback text DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
DECLARE
    s      record;
    change shardid.ddl_changes;
    made   integer;
    done   integer[] := '{0,0}';  -- tables, batches
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.apply_ddl()',
                                             'after every batch',
                                             'CALL it on its own.');
    PERFORM shardid_internal._check_batch_size(batch_size);
    IF shardid_internal._apply_ddl_on_nodes() THEN
        CALL shardid_internal._apply_ddl_router(template, command, batch_size);
        RETURN;
    END IF;
    SELECT * INTO s FROM shardid_internal._apply_ddl_start(template, command, true) AS x;
    change := s.change;
    COMMIT;
    PERFORM shardid_internal._apply_ddl_announce(change, s.todo, s.total, batch_size);
    IF change.concurrent THEN
        CALL shardid_internal._apply_ddl_concurrently(change, s.todo, batch_size, loopback, done);
    ELSE
        LOOP
            made := shardid_internal._apply_ddl_next_batch(change, batch_size, done[1], s.todo);
            EXIT WHEN made IS NULL;
            COMMIT;
            done := shardid_internal._batch_progress('apply_ddl', 'tables', done, made, s.todo);
        END LOOP;
    END IF;
    PERFORM shardid_internal._apply_ddl_finish(change.change_id);
    COMMIT;
    PERFORM shardid_internal._apply_ddl_finished(change, done[1], s.todo, s.total);
END
$$;

COMMENT ON PROCEDURE shardid.apply_ddl(text, text, integer, text) IS
    'Runs one DDL statement (%s = each table''s schema-qualified name) on a sharded table''s template and every shard''s copy (a node), or on every node in name order (a router), as the template''s owner; commits per batch, recorded in shardid.ddl_changes / ddl_applied, so a re-CALL of the same command finishes what is missing. CONCURRENTLY runs one table at a time over dblink (loopback: the node''s own connect string). Progress: NOTICEs, application_name. CALL it on its own.';
