-- Advanced by the first ID each backend issues (from C, bypassing
-- privileges): once it has a value, IDs exist and the layout is frozen.
-- Readable by everyone (layout() reports it), advanced by no ordinary role.
-- Dumped so a restore stays frozen.
CREATE SEQUENCE shardid.ids_issued AS bigint;

SELECT pg_catalog.pg_extension_config_dump('shardid.ids_issued', '');

GRANT SELECT ON SEQUENCE shardid.ids_issued TO PUBLIC;

COMMENT ON SEQUENCE shardid.ids_issued IS
    'Marker: advanced by next_id() once an ID has been issued; from then on the layout is frozen. Readable by PUBLIC, advanced by no ordinary role.';
