-- A registered template cannot be dropped (_refuse_template_drop). An
-- event trigger is not re-created by CREATE OR REPLACE: the install script
-- and the update part that brings it include this file once each.
CREATE EVENT TRIGGER shardid_template_drop ON sql_drop
    EXECUTE FUNCTION shardid_internal._refuse_template_drop();

COMMENT ON EVENT TRIGGER shardid_template_drop IS
    'Refuses dropping the template of a sharded table: SELECT shardid.drop_table(template) first.';
