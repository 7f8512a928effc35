CREATE OR REPLACE FUNCTION shardid._layout_changed() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', 'shardid_layout_changed';

CREATE OR REPLACE TRIGGER layout_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid._layout_changed();

COMMENT ON FUNCTION shardid._layout_changed() IS
    'Trigger: tells every backend to reread shardid.layout_config.';
