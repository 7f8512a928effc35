-- apply_ddl(): closes a change as finished (finished_at) when every target
-- has it (on a node: the template and every registered shard; on the
-- router: every node); returns whether it is.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_close_change(change_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c     shardid.ddl_changes;
    left_ integer;
BEGIN
    SELECT * INTO STRICT c FROM shardid.ddl_changes AS d WHERE d.change_id = _apply_ddl_close_change.change_id;
    IF c.on_nodes THEN
        SELECT count(*) INTO left_ FROM shardid.nodes AS n
         WHERE NOT EXISTS (SELECT FROM shardid.ddl_applied AS a
                            WHERE a.change_id = c.change_id AND a.target = n.node AND a.done);
    ELSE
        SELECT count(*) INTO left_ FROM shardid_internal._apply_ddl_targets(c.change_id, NULL);
    END IF;
    IF left_ = 0 THEN
        UPDATE shardid.ddl_changes AS d SET finished_at = now()
         WHERE d.change_id = c.change_id AND d.finished_at IS NULL;
    END IF;
    RETURN left_ = 0;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_close_change(bigint) IS
    'apply_ddl(): closes a change as finished (finished_at) once every target (node: template and shards; router: nodes) has it; returns whether it did.';
