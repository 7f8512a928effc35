-- shardid.layout_freeze only grows: rows come from next_id() or from a
-- publisher's copy of the table. ENABLE ALWAYS, so a session with
-- session_replication_role = replica and logical replication's workers are
-- refused too.
CREATE OR REPLACE FUNCTION shardid_internal._refuse_freeze_reset() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'shardid.layout_freeze cannot be changed: % refused', TG_OP
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = 'Its rows record that this database has issued IDs, which freezes the layout.',
              HINT = 'Only DROP EXTENSION shardid removes them.';
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refuse_freeze_reset() FROM PUBLIC;

CREATE OR REPLACE TRIGGER layout_freeze_append_only
    BEFORE UPDATE OR DELETE ON shardid.layout_freeze
    FOR EACH ROW EXECUTE FUNCTION shardid_internal._refuse_freeze_reset();

CREATE OR REPLACE TRIGGER layout_freeze_no_truncate
    BEFORE TRUNCATE ON shardid.layout_freeze
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_freeze_reset();

ALTER TABLE shardid.layout_freeze ENABLE ALWAYS TRIGGER layout_freeze_append_only;
ALTER TABLE shardid.layout_freeze ENABLE ALWAYS TRIGGER layout_freeze_no_truncate;

COMMENT ON FUNCTION shardid_internal._refuse_freeze_reset() IS
    'Trigger: refuses UPDATE, DELETE and TRUNCATE of shardid.layout_freeze (append-only).';
