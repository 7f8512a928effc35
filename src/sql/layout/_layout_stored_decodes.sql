-- Triggers on layout_config. configure() has already refused if anything
-- stores decodes and the layout changes, so they act on other writers. A row
-- inserted is taken for a restore (pg_dump's COPY of the layout after the
-- tables whose generated columns and CHECK constraints were computed with
-- the default layout): after the statement, once layout_changed has made the
-- decoders read the new layout, those are recomputed and rechecked. Indexes
-- and materialized views made before it, and any other change that would
-- leave a stored decode stale, are refused.
CREATE OR REPLACE FUNCTION shardid_internal._layout_stored_decodes() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
    col name;
BEGIN
    IF NOT EXISTS (SELECT FROM shardid.stored_decodes) THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'TRUNCATE'
       OR TG_OP = 'UPDATE' AND (NEW.epoch_ms, NEW.shard_bits, NEW.seq_bits) IS DISTINCT FROM
                               (OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits)
       OR TG_OP = 'DELETE' AND (OLD.epoch_ms, OLD.shard_bits, OLD.seq_bits) IS DISTINCT FROM
                               (1314220021721::bigint, 13, 10) THEN
        PERFORM shardid_internal._refuse_stored_decodes();
    END IF;
    IF TG_OP <> 'INSERT' THEN
        RETURN NULL;
    END IF;
    -- inserted_layout exists only in the INSERT trigger: query it only here
    IF NOT EXISTS (SELECT FROM inserted_layout AS c
                    WHERE (c.epoch_ms, c.shard_bits, c.seq_bits) IS DISTINCT FROM
                          (1314220021721::bigint, 13, 10)) THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT FROM shardid.stored_decodes AS s WHERE s.kind IN ('index', 'materialized view')) THEN
        PERFORM shardid_internal._refuse_stored_decodes();
    END IF;
    FOR rel IN
        SELECT DISTINCT s.relation FROM shardid.stored_decodes AS s
          JOIN pg_class AS c ON c.oid = s.relation
         WHERE s.kind IN ('generated column', 'constraint') AND c.relkind = 'r'
    LOOP
        SELECT a.attname INTO col FROM pg_attribute AS a
         WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
         ORDER BY a.attnum LIMIT 1;
        EXECUTE format('UPDATE ONLY %s SET %I = %I', rel, col, col);
    END LOOP;
    RETURN NULL;
END
$$;

-- after layout_changed (triggers fire in name order)
CREATE OR REPLACE TRIGGER layout_stored_decodes_insert
    AFTER INSERT ON shardid.layout_config REFERENCING NEW TABLE AS inserted_layout
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._layout_stored_decodes();

CREATE OR REPLACE TRIGGER layout_stored_decodes_change
    AFTER UPDATE OR DELETE ON shardid.layout_config
    FOR EACH ROW EXECUTE FUNCTION shardid_internal._layout_stored_decodes();

CREATE OR REPLACE TRIGGER layout_stored_decodes_truncate
    AFTER TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._layout_stored_decodes();

REVOKE ALL ON FUNCTION shardid_internal._layout_stored_decodes() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._layout_stored_decodes() IS
    'Trigger: a layout row restored after the tables recomputes their generated columns; other changes under stored decodes are refused.';
