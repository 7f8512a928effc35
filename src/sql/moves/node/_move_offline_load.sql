-- Node, target of an offline move, first statement of the transaction that
-- copies the rows (bin/shardid-move-shard --offline): locks the copy's
-- tables against any change until the copy commits, empties each as its
-- owner (_run_as_owner, session_replication_role = replica: a TRUNCATE
-- trigger of the owner's fires as the owner, ENABLE ALWAYS, or not at
-- all), and makes this session's staging tables: for the n-th table
-- (relkind r, name order) pg_temp.shardid_load_<n>, one text column per
-- column of the table that is not generated, readable by the table's
-- owner, dropped at commit. The rows go there as text (no one's code runs)
-- and reach the tables through _move_offline_store(). A repeated attempt
-- replaces what an earlier one left. Returns the number of tables.
CREATE OR REPLACE FUNCTION shardid_internal._move_offline_load(schema_name name) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET client_min_messages = warning
AS $$
DECLARE
    n integer := shardid_internal._for_tables(schema_name, '{r,p}', 'LOCK TABLE %I.%I IN ACCESS EXCLUSIVE MODE');
    t record;
BEGIN
    FOR t IN SELECT c.oid, c.relname, c.relowner, row_number() OVER (ORDER BY c.relname) AS i
               FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = _move_offline_load.schema_name AND c.relkind = 'r'
              ORDER BY c.relname LOOP
        PERFORM shardid_internal._run_as_owner(t.relowner::regrole, format('TRUNCATE ONLY %I.%I', schema_name, t.relname), true);
        EXECUTE format('DROP TABLE IF EXISTS pg_temp.shardid_load_%s', t.i);
        EXECUTE format('CREATE TEMPORARY TABLE shardid_load_%s (%s) ON COMMIT DROP', t.i,
                       (SELECT COALESCE(string_agg(format('%I text', a.attname), ', ' ORDER BY a.attnum), '')
                          FROM pg_attribute AS a
                         WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''));
        EXECUTE format('GRANT SELECT ON pg_temp.shardid_load_%s TO %I', t.i, pg_get_userbyid(t.relowner));
    END LOOP;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_offline_load(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_offline_load(name) IS
    'Node, offline moves on the target: locks the copy''s tables, empties each as its owner, and makes this session''s text staging tables for the rows; returns the number of tables.';
