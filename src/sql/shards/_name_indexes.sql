-- Node: gives a table's indexes the names of the same indexes (equal
-- shape, _index_list()) of another table's list: CREATE TABLE ... LIKE
-- lets PostgreSQL name the copies, but apply_ddl() names an index in every
-- shard, and a move keeps the source's names. Indexes pair in creation
-- order within one shape; a name taken by anything else is left alone (a
-- comparison reports it); two passes, so names may be swapped. Returns how
-- many were renamed. The caller owns the table or is a superuser.
CREATE OR REPLACE FUNCTION shardid_internal._name_indexes(rel regclass, wanted jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp   name := (SELECT n.nspname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE c.oid = rel);
    have  name[];
    want  name[];
    keep  boolean[];
    i     integer;
    n     integer := 0;
BEGIN
    SELECT array_agg(h.name ORDER BY h.name), array_agg(w.name ORDER BY h.name) INTO have, want
      FROM (SELECT e->>'name' AS name, e->>'shape' AS shape,
                   row_number() OVER (PARTITION BY e->>'shape' ORDER BY o) AS k
              FROM jsonb_array_elements(shardid_internal._index_list(rel)) WITH ORDINALITY AS a(e, o)) AS h
      JOIN (SELECT e->>'name' AS name, e->>'shape' AS shape,
                   row_number() OVER (PARTITION BY e->>'shape' ORDER BY o) AS k
              FROM jsonb_array_elements(wanted) WITH ORDINALITY AS a(e, o)) AS w
        ON w.shape = h.shape AND w.k = h.k
     WHERE w.name <> h.name;
    IF have IS NULL THEN
        RETURN 0;
    END IF;
    -- a wanted name taken by a relation that is not renamed here stays taken
    keep := array_fill(true, ARRAY[cardinality(have)]);
    LOOP
        n := 0;
        FOR i IN 1 .. cardinality(have) LOOP
            IF keep[i] AND to_regclass(format('%I.%I', nsp, want[i])) IS NOT NULL
               AND NOT EXISTS (SELECT FROM generate_subscripts(have, 1) AS j WHERE keep[j] AND have[j] = want[i]) THEN
                keep[i] := false;
                n := n + 1;
            END IF;
        END LOOP;
        EXIT WHEN n = 0;
    END LOOP;
    n := 0;
    FOR i IN 1 .. cardinality(have) LOOP
        CONTINUE WHEN NOT keep[i];
        EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', nsp, have[i], 'shardid_renaming_' || i);
    END LOOP;
    FOR i IN 1 .. cardinality(have) LOOP
        CONTINUE WHEN NOT keep[i];
        EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', nsp, 'shardid_renaming_' || i, want[i]);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

-- EXECUTE stays with PUBLIC: _create_shard_table() calls it; ALTER INDEX checks ownership.

COMMENT ON FUNCTION shardid_internal._name_indexes(regclass, jsonb) IS
    'Node: renames a table''s indexes to the names of the same indexes (equal shape) in a list from _index_list(); returns how many.';
