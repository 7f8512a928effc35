-- Node, target of an offline move: what bin/shardid-move-shard --offline
-- copies, one row per table of the copy (relkind r, in name order, as
-- _move_offline_load() stages them): the COPY that reads the table's rows
-- on the source, as text, its columns named (not the generated ones), and
-- the COPY that writes them into the staging table of this session
-- (pg_temp.shardid_load_<n>). COPY of a table, not of a query: it reads
-- only a plain table (a view the owner put in its place is refused, as are
-- child tables), which runs no one's code; the rows reach the copy's
-- tables as their owners (_move_offline_store).
CREATE OR REPLACE FUNCTION shardid_internal._move_offline_copies(schema_name name)
    RETURNS TABLE (source_copy text, target_copy text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('COPY %I.%I%s TO STDOUT', _move_offline_copies.schema_name, t.relname,
                  (SELECT COALESCE(' (' || string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) || ')', '')
                     FROM pg_attribute AS a
                    WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '')),
           format('COPY pg_temp.shardid_load_%s FROM STDIN', t.n)
      FROM (SELECT c.oid, c.relname, row_number() OVER (ORDER BY c.relname) AS n
              FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
             WHERE s.nspname = _move_offline_copies.schema_name AND c.relkind = 'r') AS t
     ORDER BY t.n
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_offline_copies(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_offline_copies(name) IS
    'Node, offline moves on the target: per table of the copy, the COPY reading its rows on the source (as text, generated columns left out) and the COPY writing them into this session''s staging table.';
