CREATE OR REPLACE FUNCTION shardid.layout() RETURNS shardid.layout_report
    LANGUAGE c STABLE STRICT AS 'MODULE_PATHNAME', 'shardid_layout';

COMMENT ON FUNCTION shardid.layout() IS
    'The ID layout of this database: epoch, bit widths, max shard, IDs per ms and per second per generator, last representable time, whether IDs have been issued.';
