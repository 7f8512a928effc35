-- apply_ddl() on a node, a statement that runs in a transaction block: the
-- change recorded (_apply_ddl_record) and its first batch run in one
-- transaction, so a change whose first batch fails is not kept: nothing is
-- left to finish or abandon. A new change whose first batch fails because
-- its object is there already (42701, 42P07, 42710 duplicate; 42703,
-- 42704 undefined, for a DROP or RENAME) while the ledger has the same
-- command finished for this template is a re-run (a migration run twice):
-- a NOTICE says so, nothing is kept, and made is -1. Otherwise made is how
-- many tables the batch changed (_apply_ddl_batch: up to batch_size, and
-- for no longer than batch_time) and after the last shard it changed; the
-- caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_first_batch(INOUT change shardid.ddl_changes, todo integer, total integer,
                                                                   batch_size integer, batch_time interval, OUT made integer,
                                                                   OUT after integer)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    fresh boolean := change.change_id IS NULL;
    prior shardid.ddl_changes;
    st    text;
    msg   text;
    det   text;
    hnt   text;
BEGIN
    BEGIN
        change := shardid_internal._apply_ddl_record(change, todo, total,
                                                     format('committing every %s tables%s', batch_size,
                                                            ' or ' || (round(extract(epoch FROM batch_time) * 1000, 1)::float8 || ' ms')));
        SELECT b.made, b.after INTO made, after FROM shardid_internal._apply_ddl_batch(change, batch_size, batch_time, 0, todo, NULL) AS b;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
        SELECT c.* INTO prior FROM shardid.ddl_changes AS c
         WHERE fresh AND st IN ('42701', '42P07', '42710', '42703', '42704')
           AND c.template = change.template AND c.command = change.command
           AND c.finished_at IS NOT NULL AND NOT c.abandoned
         ORDER BY c.change_id DESC LIMIT 1;
        IF prior.change_id IS NULL THEN
            IF fresh THEN
                RAISE NOTICE 'apply_ddl: change % failed in its first batch: not kept', change.change_id;
            END IF;
            -- (a statement's error names its table already: _apply_ddl_batch)
            PERFORM shardid_internal._raise(st, msg, det, hnt);
        END IF;
        RAISE NOTICE 'apply_ddl: change % not kept: % had it already (%; change % ran the same command): nothing changed',
            change.change_id, change.template, msg, prior.change_id;
        made := -1;
    END;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_first_batch(shardid.ddl_changes, integer, integer, integer, interval) IS
    'apply_ddl() on a node: records the change and runs its first batch in one transaction (a failed first batch keeps nothing); a re-run of a finished command (its object there already) is said in a NOTICE, nothing kept, made -1.';
