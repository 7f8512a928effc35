-- Refuses to go on if a sharded table's template has gone, before a shard
-- gets any table (_require_template() of each, in order).
CREATE OR REPLACE FUNCTION shardid_internal._require_templates() RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t shardid.sharded_tables;
BEGIN
    FOR t IN SELECT * FROM shardid.sharded_tables ORDER BY position LOOP
        PERFORM shardid_internal._require_template(t);
    END LOOP;
END
$$;

COMMENT ON FUNCTION shardid_internal._require_templates() IS
    'Raises 55000 if the template of a sharded table has been dropped.';
