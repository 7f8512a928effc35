-- Node, source of a move: the publication of the shard's schema and the
-- logical replication slot its subscription reads, each made unless it
-- exists. The slot is made here rather than by CREATE SUBSCRIPTION so the
-- router can wait for it (a new slot waits for running transactions) and
-- cancel the wait. Returns what it made.
CREATE OR REPLACE FUNCTION shardid_internal._move_publish(name name, schema_name name) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    made text := '';
BEGIN
    IF NOT EXISTS (SELECT FROM pg_publication AS p WHERE p.pubname = _move_publish.name) THEN
        EXECUTE format('CREATE PUBLICATION %I FOR TABLES IN SCHEMA %I', name, schema_name);
        made := 'publication';
    END IF;
    RETURN made;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_publish(name, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_publish(name, name) IS
    'Node, move on the source: creates the publication FOR TABLES IN SCHEMA unless it exists.';
