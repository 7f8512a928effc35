-- An index as the catalog defines it, for another table: the CREATE INDEX
-- that makes it, under its own name, on table target; with no target, its
-- shape (the definition without its name and table: CREATE [UNIQUE] INDEX
-- ON [ONLY] USING ...), so that the same index of two tables (a template
-- and a shard's copy, or a shard on two nodes) compares equal. Read with
-- pg_get_indexdef() under the pinned search_path, so every name outside
-- pg_catalog is written with its schema as it is; the definition's head
-- (CREATE [UNIQUE] INDEX name ON [ONLY] schema.table USING) is built from
-- the catalog, checked and cut off, and the target's name is taken from
-- the catalog: no name is searched for or replaced in the text.
CREATE OR REPLACE FUNCTION shardid_internal._index_statement(index oid, target regclass DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    def   text := pg_catalog.pg_get_indexdef(index);
    uniq  text;
    head  text;
    only_ text;
    i     record;
BEGIN
    SELECT ic.relname AS name, x.indisunique, n.nspname, t.relname
      INTO i
      FROM pg_catalog.pg_index AS x
      JOIN pg_catalog.pg_class AS ic ON ic.oid OPERATOR(pg_catalog.=) x.indexrelid
      JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) x.indrelid
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) t.relnamespace
     WHERE x.indexrelid OPERATOR(pg_catalog.=) index;
    IF NOT FOUND OR def IS NULL THEN
        RETURN NULL;
    END IF;
    uniq := CASE WHEN i.indisunique THEN 'UNIQUE ' ELSE '' END;
    FOREACH only_ IN ARRAY ARRAY['', 'ONLY '] LOOP
        head := pg_catalog.format('CREATE %sINDEX %I ON %s%I.%I USING ', uniq, i.name, only_, i.nspname, i.relname);
        IF pg_catalog.starts_with(def, head) THEN
            IF target IS NULL THEN
                RETURN pg_catalog.format('CREATE %sINDEX ON %sUSING %s', uniq, only_,
                                         pg_catalog.substr(def, pg_catalog.length(head) OPERATOR(pg_catalog.+) 1));
            END IF;
            RETURN (SELECT pg_catalog.format('CREATE %sINDEX %I ON %s%I.%I USING %s', uniq, i.name, only_, n.nspname, c.relname,
                                             pg_catalog.substr(def, pg_catalog.length(head) OPERATOR(pg_catalog.+) 1))
                      FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                     WHERE c.oid OPERATOR(pg_catalog.=) target);
        END IF;
    END LOOP;
    RAISE EXCEPTION 'shardid: cannot read the definition of index %', index::regclass
        USING ERRCODE = 'internal_error',
              DETAIL = pg_catalog.format('pg_get_indexdef() gave %s', pg_catalog.to_jsonb(def)::text);
END
$$;

-- EXECUTE stays with PUBLIC, as _index_list()'s: _create_shard_table() reads it with the caller's rights.

COMMENT ON FUNCTION shardid_internal._index_statement(oid, regclass) IS
    'An index from the catalog: the CREATE INDEX that makes it under its name on table target, or without a target its shape (definition without name and table), built from parsed parts, never by replacing names in text.';
