-- apply_ddl(template, command): one DDL statement (%s: each table's
-- qualified name) on a sharded table's template and its copy in every
-- shard (a node: _apply_ddl_here), or on every node in name order (the
-- router: _apply_ddl_router), as the template's owner; batches that commit
-- after batch_size tables or batch_time, whichever comes first (every
-- table keeps its lock until its batch commits), and a ledger
-- (ddl_changes, ddl_applied) so that a re-CALL finishes what is missing
-- and abandon_ddl() closes what will not be finished; CONCURRENTLY on up
-- to connections tables at once over dblink, on every node from a router
-- too. The options are one record (shardid.ddl_options), built and checked
-- here once and passed whole. No SET clause (it COMMITs): it only chooses
-- the loop.
CREATE OR REPLACE PROCEDURE shardid.apply_ddl(template text, command text, batch_size integer DEFAULT 256,
                                             loopback text DEFAULT NULL, batch_time interval DEFAULT '100 ms',
                                             connections integer DEFAULT 4)
    LANGUAGE plpgsql
AS $$
DECLARE
    o shardid.ddl_options;
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.apply_ddl()',
                                             'after every batch',
                                             'CALL it on its own.');
    o := shardid_internal._ddl_options(pg_catalog.jsonb_build_object('batch_size', batch_size, 'batch_time', batch_time,
                                                                     'loopback', loopback, 'connections', connections));
    IF shardid_internal._apply_ddl_on_nodes() THEN
        CALL shardid_internal._apply_ddl_router(template, command, o);
    ELSE
        CALL shardid_internal._apply_ddl_here(template, command, o);
    END IF;
END
$$;

COMMENT ON PROCEDURE shardid.apply_ddl(text, text, integer, text, interval, integer) IS
    'Runs one DDL statement (%s = each table''s schema-qualified name) on a sharded table''s template and every shard''s copy (a node), or on every node in name order (a router), as the template''s owner; commits per batch of up to batch_size tables, sooner once a batch has held its first table''s lock for batch_time (NULL: no time bound), recorded in shardid.ddl_changes / ddl_applied, so a re-CALL of the same command finishes what is missing. CONCURRENTLY runs on up to connections tables of a node at once, each over a dblink connection of its own (loopback: the node''s own connect string; refused on a router, whose connections go to each node). The options are one record, shardid.ddl_options, checked once and passed whole, from a router to every node too. Progress: NOTICEs, application_name. CALL it on its own.';
