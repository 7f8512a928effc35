-- Node, target of an offline move, last statement of the transaction that
-- copies the rows: moves the rows of each staging table into its table as
-- the table's owner (_run_as_owner, in a security-restricted operation,
-- session_replication_role = replica as logical replication applies them:
-- the owner's ordinary and foreign-key triggers do not fire, ENABLE ALWAYS
-- and ENABLE REPLICA ones, CHECKs, domains, index expressions and policies
-- run as the owner, never as a superuser). Each column is read from its
-- text with its type's input function, as COPY does. Returns the number
-- of rows.
CREATE OR REPLACE FUNCTION shardid_internal._move_offline_store(schema_name name) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t    record;
    cols text;
    vals text;
    rows bigint := 0;
BEGIN
    FOR t IN SELECT c.oid, c.relname, c.relowner, row_number() OVER (ORDER BY c.relname) AS i
               FROM pg_class AS c JOIN pg_namespace AS s ON s.oid = c.relnamespace
              WHERE s.nspname = _move_offline_store.schema_name AND c.relkind = 'r'
              ORDER BY c.relname LOOP
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
               string_agg(format('%I::%s', a.attname, format_type(a.atttypid, NULL)), ', ' ORDER BY a.attnum)
          INTO cols, vals
          FROM pg_attribute AS a
         WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
        CONTINUE WHEN cols IS NULL;
        rows := rows + shardid_internal._run_as_owner(t.relowner::regrole,
            format('WITH w AS (INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM pg_temp.shardid_load_%s RETURNING 1) SELECT count(*) FROM w',
                   schema_name, t.relname, cols, vals, t.i), true)::bigint;
    END LOOP;
    RETURN rows;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_offline_store(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_offline_store(name) IS
    'Node, offline moves on the target: moves the staged rows into the copy''s tables as each table''s owner (security-restricted, session_replication_role = replica); returns the number of rows.';
