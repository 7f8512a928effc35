-- apply_ddl() on a node, for a statement that cannot run in a transaction
-- block: the next target that lacks the change, marked running in the
-- ledger (the caller commits that before the statement is sent). A target
-- found running was interrupted: retry is true, and cleanup drops the
-- invalid indexes an interrupted CREATE INDEX CONCURRENTLY leaves on it.
-- A shard without the table is recorded as done (it will be made from the
-- changed template). busy: the targets this session is changing now on
-- its other connections (running in the ledger, not interrupted), never
-- claimed again. Another session's claim of the same new target fails on
-- the ledger's primary key: two sessions never change one table. target
-- is NULL when every target has the change or is busy.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_claim(change_id bigint, busy text[] DEFAULT '{}',
                                                    OUT target text, OUT statement text, OUT owner name,
                                                    OUT cleanup text[], OUT retry boolean)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c    shardid.ddl_changes;
    x    record;
    rel  regclass;
BEGIN
    busy := COALESCE(busy, '{}');
    SELECT * INTO STRICT c FROM shardid.ddl_changes AS d WHERE d.change_id = _apply_ddl_claim.change_id;
    LOOP
        SELECT * INTO x FROM shardid_internal._apply_ddl_targets(change_id, 1 + cardinality(busy)) AS t
         WHERE t.target <> ALL (array_remove(busy, NULL))
         LIMIT 1;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        rel := to_regclass(format('%I.%I', x.schema_name, x.table_name));
        IF rel IS NULL THEN
            INSERT INTO shardid.ddl_applied AS a (change_id, target, shard, done)
                VALUES (c.change_id, x.target, x.shard, true)
                ON CONFLICT ON CONSTRAINT ddl_applied_pkey DO UPDATE SET done = true, applied_at = clock_timestamp();
            CONTINUE;
        END IF;
        target := x.target;
        retry := x.running;
        statement := (shardid_internal._apply_ddl_check(c.command, x.schema_name, x.table_name)).statement;
        owner := shardid_internal._apply_ddl_owner(c.table_name);
        IF x.target <> 'template' AND (SELECT k.relowner FROM pg_class AS k WHERE k.oid = rel) <> to_regrole(quote_ident(owner)) THEN
            PERFORM shardid_internal._apply_ddl_owners(c.table_name, owner, x.shard);
        END IF;
        cleanup := ARRAY(SELECT format('DROP INDEX CONCURRENTLY %I.%I', x.schema_name, i.relname)
                           FROM pg_index AS ix JOIN pg_class AS i ON i.oid = ix.indexrelid
                          WHERE retry AND ix.indrelid = rel AND NOT ix.indisvalid
                          ORDER BY i.relname);
        IF NOT retry THEN
            INSERT INTO shardid.ddl_applied (change_id, target, shard, done) VALUES (c.change_id, x.target, x.shard, false);
        END IF;
        RETURN;
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_claim(bigint, text[]) IS
    'apply_ddl() on a node, outside a transaction block: marks the next target that lacks the change (and is not one of busy, this session''s) as running and returns its statement, owner, and (for an interrupted one) the invalid indexes to drop first; NULL target when none is left.';
