-- One batch of apply_ddl() on a node, for statements that run in a
-- transaction block: runs the change on the next batch_size targets that
-- lack it, as the template's owner in a security-restricted operation
-- (_run_as_owner; a copy another role owns is refused), and records each
-- in the ledger in the same transaction; returns how many (0: done). The
-- caller commits.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_batch(change_id bigint, batch_size integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c     shardid.ddl_changes;
    x     record;
    rel   regclass;
    made  integer := 0;
    owner name;
    owner_oid oid;
BEGIN
    SELECT * INTO STRICT c FROM shardid.ddl_changes AS d WHERE d.change_id = _apply_ddl_batch.change_id;
    owner := shardid_internal._apply_ddl_owner(c.table_name);
    owner_oid := to_regrole(quote_ident(owner));
    FOR x IN SELECT * FROM shardid_internal._apply_ddl_targets(change_id, batch_size) LOOP
        rel := to_regclass(format('%I.%I', x.schema_name, x.table_name));
        -- a shard that lacks the table gets it from the changed template
        IF rel IS NOT NULL THEN
            IF x.target <> 'template' AND (SELECT k.relowner FROM pg_class AS k WHERE k.oid = rel) <> owner_oid THEN
                PERFORM shardid_internal._apply_ddl_owners(c.table_name, owner, x.shard);
            END IF;
            PERFORM shardid_internal._run_as_owner(quote_ident(owner)::regrole,
                                                   (shardid_internal._apply_ddl_check(c.command, x.schema_name, x.table_name)).statement);
        ELSIF x.target = 'template' THEN
            RAISE EXCEPTION 'template % of sharded table % no longer exists', x.target, c.table_name
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        INSERT INTO shardid.ddl_applied (change_id, target, shard, done)
            VALUES (c.change_id, x.target, x.shard, true);
        made := made + 1;
    END LOOP;
    RETURN made;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_batch(bigint, integer) IS
    'One batch of apply_ddl() on a node: runs the change on up to batch_size targets that lack it, as the template''s owner, recording each in the ledger; returns how many.';
