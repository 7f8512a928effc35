-- apply_ddl() on a node: the change started or resumed (_apply_ddl_start),
-- then recorded with its first batch in one transaction (a statement that
-- runs in a transaction block: _apply_ddl_first_batch; a first batch that
-- fails keeps nothing) and the rest batch by batch, committing after
-- each (a batch ends after batch_size tables or once it has held its
-- first table's lock for batch_time: _apply_ddl_batch); CONCURRENTLY on
-- up to connections tables at once (_apply_ddl_concurrently). Progress
-- NOTICEs every batch_size tables. o: the options, one record (from the
-- router too, read back by _ddl_options). origin is the router's change when the
-- router sent it: a change the node finished already, or a template the
-- node does not have, is not run (_apply_ddl_skip). shardid.apply_ddl()
-- calls it on a node, the router on each node. A procedure because it
-- commits; executable by PUBLIC as apply_ddl() is (its functions check the
-- caller). No SET clause: it holds the loop and its COMMITs.
CREATE OR REPLACE PROCEDURE shardid_internal._apply_ddl_here(template text, command text, o shardid.ddl_options, origin text DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
DECLARE
    s      record;
    f      record;
    change shardid.ddl_changes;
    b      record;
    done   integer[] := '{0,0}';  -- tables, batches
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.apply_ddl()',
                                             'after every batch',
                                             'CALL it on its own.');
    SELECT * INTO s FROM shardid_internal._apply_ddl_start(template, command, true, origin) AS x;
    IF shardid_internal._apply_ddl_skip(template, command, s.state) THEN
        RETURN;
    END IF;
    change := s.change;
    IF change.concurrent THEN
        IF shardid_internal._apply_ddl_rerun(change) THEN
            RETURN;
        END IF;
        change := shardid_internal._apply_ddl_record(change, s.todo, s.total,
                                                     pg_catalog.format('up to %s at a time outside a transaction block', o.connections));
        COMMIT;
        CALL shardid_internal._apply_ddl_concurrently(change, s.todo, s.total, o, NULL, done);
    ELSE
        SELECT * INTO f FROM shardid_internal._apply_ddl_first_batch(change, s.todo, s.total, o.batch_size, o.batch_time) AS x;
        change := f.change;
        b := f;
        COMMIT;
        IF b.made OPERATOR(pg_catalog.<) 0 THEN
            RETURN;
        END IF;
        WHILE b.made IS NOT NULL LOOP
            done := shardid_internal._batch_progress('apply_ddl', 'tables', done, b.made, s.todo, o.batch_size);
            SELECT * INTO b FROM shardid_internal._apply_ddl_batch(change, o.batch_size, o.batch_time, done[1], s.todo, b.after) AS x;
            COMMIT;
        END LOOP;
    END IF;
    PERFORM shardid_internal._apply_ddl_close_change(change.change_id);
    COMMIT;
    PERFORM shardid_internal._apply_ddl_notice_end(change, done[1], s.todo, s.total);
END
$$;

COMMENT ON PROCEDURE shardid_internal._apply_ddl_here(text, text, shardid.ddl_options, text) IS
    'apply_ddl() on a node: starts or resumes a change and runs it batch by batch (the first batch with the change''s record: a failed first batch keeps nothing; a re-run of a finished command changes nothing; a batch commits after batch_size tables or batch_time), or CONCURRENTLY on up to connections tables at once; origin: the router''s change. Executable by PUBLIC (its functions check the caller).';
