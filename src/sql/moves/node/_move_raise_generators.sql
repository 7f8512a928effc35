-- Node, target of a move: raises the generators of the schema to at least
-- the states the frozen source reported ({sequence name: last_value});
-- logical replication never carries them. Never lowers one. Returns how
-- many it raised. Nothing calls them meanwhile: the router does not route
-- the shard here yet.
CREATE OR REPLACE FUNCTION shardid_internal._move_raise_generators(schema_name name, states jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x record;
    n integer := 0;
BEGIN
    FOR x IN SELECT c.oid, j.value::bigint AS want
               FROM jsonb_each_text(states) AS j
               JOIN pg_class AS c ON c.relname = j.key AND c.relkind = 'S'
               JOIN pg_namespace AS s ON s.oid = c.relnamespace AND s.nspname = schema_name
              ORDER BY c.relname LOOP
        IF pg_sequence_last_value(x.oid) IS NULL OR pg_sequence_last_value(x.oid) < x.want THEN
            PERFORM setval(x.oid, x.want, true);
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_raise_generators(name, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_raise_generators(name, jsonb) IS
    'Node, move cut-over on the target: raises the schema''s generators to at least the source''s states; returns how many.';
