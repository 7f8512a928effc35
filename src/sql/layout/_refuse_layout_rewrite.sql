-- Writes to shardid.layout_config other than configure()'s (a superuser's
-- INSERT, a data-only restore, a publisher's copy of the table) meet the
-- same freeze: a write that changes the layout is refused once IDs have
-- been issued (_refuse_issued_layout()). A write that keeps the layout
-- passes, and an INSERT of the row already there is skipped rather than
-- refused as a duplicate, so a subscriber configured like its publisher can
-- receive the publisher's copy of the table. A full restore writes the
-- layout before any sequence state (pg_dump restores table data before
-- sequence values), so it is not refused. ENABLE ALWAYS: also under
-- session_replication_role = replica and in logical replication's workers.
CREATE OR REPLACE FUNCTION shardid_internal._refuse_layout_rewrite() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    default_layout CONSTANT bigint[] := ARRAY[1314220021721, 13, 10];
    old_layout bigint[];
    new_layout bigint[];
    stored     boolean;
BEGIN
    SELECT ARRAY[c.epoch_ms, c.shard_bits, c.seq_bits] INTO old_layout FROM shardid.layout_config AS c;
    stored := FOUND;
    old_layout := coalesce(old_layout, default_layout);
    IF TG_OP = 'INSERT' THEN
        new_layout := ARRAY[NEW.epoch_ms, NEW.shard_bits, NEW.seq_bits];
    ELSIF TG_OP = 'UPDATE' THEN
        old_layout := ARRAY[OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits];
        new_layout := ARRAY[NEW.epoch_ms, NEW.shard_bits, NEW.seq_bits];
    ELSIF TG_OP = 'DELETE' THEN
        old_layout := ARRAY[OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits];
        new_layout := default_layout;
    ELSE
        new_layout := default_layout;
    END IF;
    IF new_layout IS DISTINCT FROM old_layout THEN
        PERFORM shardid_internal._refuse_issued_layout();
    ELSIF TG_OP = 'INSERT' AND stored THEN
        RETURN NULL;
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD WHEN 'TRUNCATE' THEN NULL ELSE NEW END;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._refuse_layout_rewrite() FROM PUBLIC;

CREATE OR REPLACE TRIGGER layout_freeze
    BEFORE INSERT OR UPDATE OR DELETE ON shardid.layout_config
    FOR EACH ROW EXECUTE FUNCTION shardid_internal._refuse_layout_rewrite();

CREATE OR REPLACE TRIGGER layout_freeze_truncate
    BEFORE TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._refuse_layout_rewrite();

ALTER TABLE shardid.layout_config ENABLE ALWAYS TRIGGER layout_freeze;
ALTER TABLE shardid.layout_config ENABLE ALWAYS TRIGGER layout_freeze_truncate;

COMMENT ON FUNCTION shardid_internal._refuse_layout_rewrite() IS
    'Trigger on shardid.layout_config: refuses a write that changes the layout once IDs have been issued (the rule of configure()); skips an INSERT of the row already there.';
