-- apply_ddl(template, command): one DDL statement (%s: each table's
-- qualified name) on a sharded table's template and its copy in every
-- shard (a node: _apply_ddl_here), or on every node in name order (the
-- router: _apply_ddl_router), as the template's owner; batches that commit
-- and a ledger (ddl_changes, ddl_applied) so that a re-CALL finishes what
-- is missing and abandon_ddl() closes what will not be finished;
-- CONCURRENTLY one table at a time over dblink. No SET clause (it
-- COMMITs): it only chooses the loop.
CREATE OR REPLACE PROCEDURE shardid.apply_ddl(template text, command text, batch_size integer DEFAULT 256,
                                             loopback text DEFAULT NULL)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.apply_ddl()',
                                             'after every batch',
                                             'CALL it on its own.');
    PERFORM shardid_internal._check_batch_size(batch_size);
    IF shardid_internal._apply_ddl_on_nodes() THEN
        CALL shardid_internal._apply_ddl_router(template, command, batch_size);
    ELSE
        CALL shardid_internal._apply_ddl_here(template, command, batch_size, loopback);
    END IF;
END
$$;

COMMENT ON PROCEDURE shardid.apply_ddl(text, text, integer, text) IS
    'Runs one DDL statement (%s = each table''s schema-qualified name) on a sharded table''s template and every shard''s copy (a node), or on every node in name order (a router), as the template''s owner; commits per batch, recorded in shardid.ddl_changes / ddl_applied, so a re-CALL of the same command finishes what is missing. CONCURRENTLY runs one table at a time over dblink (loopback: the node''s own connect string). Progress: NOTICEs, application_name. CALL it on its own.';
