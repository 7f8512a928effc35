CREATE OR REPLACE FUNCTION shardid_internal._layout_changed() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', 'shardid_layout_changed';

CREATE OR REPLACE TRIGGER layout_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON shardid.layout_config
    FOR EACH STATEMENT EXECUTE FUNCTION shardid_internal._layout_changed();

-- Not for PUBLIC: attached to a table of one's own it would reset every
-- backend's cached layout and plans on each statement. A trigger function
-- needs EXECUTE only to be attached (CREATE TRIGGER checks it), not to fire.
REVOKE ALL ON FUNCTION shardid_internal._layout_changed() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._layout_changed() IS
    'Trigger: tells every backend to reread shardid.layout_config.';
