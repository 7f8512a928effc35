-- abandon_ddl(template, undo => true): the command (%s: each table's
-- name) that reverses change, an unfinished apply_ddl() change of the
-- template schema.name, or the refusal of one that has no safe inverse
-- (0A000: ADD or DROP COLUMN, a type change, ...), whose HINT is the
-- apply_ddl() call that completes it on the tables that lack it. A CREATE
-- INDEX is undone by dropping the index it names (the parser's name,
-- checked against the catalog where the tables are), CONCURRENTLY when it
-- was built so; a named ADD CONSTRAINT by dropping that constraint; SET
-- DEFAULT, DROP DEFAULT and SET STATISTICS by the column's previous
-- value, read from the tables that lack the change (previous: the
-- distinct values found there, JSON null for no default); 55000 when
-- none or several are found.
CREATE OR REPLACE FUNCTION shardid_internal._undo_ddl_inverse(change shardid.ddl_changes, previous jsonb) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts  text[] := parse_ident(change.template);
    chk    record;
    inv    record;
    suffix text;
    prev   jsonb;
    finish text := format('Complete it on the tables that lack it instead: CALL shardid.apply_ddl(%L, %L);', change.template, change.command);
BEGIN
    chk := shardid_internal._apply_ddl_check(change.command, parts[2], parts[2]);
    inv := shardid_internal._ddl_inverse(chk.statement);
    IF inv.inverse IS NULL THEN
        RAISE EXCEPTION 'abandon_ddl() cannot undo % of %: it has no safe inverse', inv.what, change.template
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = format('Change %s (%s) is undone only by completing it or by a change of your own; undoing it could lose data or cannot be derived from the statement.',
                                  change.change_id, change.command),
                  HINT = finish;
    END IF;
    IF inv.inverse = 'DROP INDEX' THEN
        -- DROP INDEX %s_suffix names the index after each table
        suffix := substr(inv.object_name, length(parts[2]) + 1);
        IF left(inv.object_name, length(parts[2])) <> parts[2] OR suffix !~ '^[a-z_][a-z0-9_$]*$' THEN
            RAISE EXCEPTION 'abandon_ddl() cannot undo % of %: index % is not named after the table', inv.what, change.template,
                            quote_ident(inv.object_name)
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = format('apply_ddl() drops an index of every copy as DROP INDEX %%s_suffix, so the index name must be %s followed by lower-case letters, digits or underscores.',
                                      quote_ident(parts[2])),
                      HINT = finish;
        END IF;
        RETURN format('DROP INDEX%s IF EXISTS %%s%s', CASE WHEN chk.concurrent THEN ' CONCURRENTLY' ELSE '' END, suffix);
    END IF;
    IF inv.inverse = 'DROP CONSTRAINT' THEN
        RETURN format('ALTER TABLE %%s DROP CONSTRAINT IF EXISTS %I', inv.object_name);
    END IF;
    -- SET DEFAULT, SET STATISTICS: the one previous value
    IF jsonb_array_length(COALESCE(previous, '[]')) <> 1 THEN
        RAISE EXCEPTION 'abandon_ddl() cannot undo % of %: the previous value of column % is not known', inv.what, change.template,
                        quote_ident(inv.object_name)
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = CASE WHEN jsonb_array_length(COALESCE(previous, '[]')) = 0
                                THEN 'No table that lacks the change has the column, to show the value the change replaced.'
                                ELSE format('The tables that lack the change do not agree on it: %s.', previous) END,
                  HINT = finish;
    END IF;
    prev := previous->0;
    IF inv.inverse = 'SET STATISTICS' THEN
        RETURN format('ALTER TABLE %%s ALTER COLUMN %I SET STATISTICS %s', inv.object_name, (prev #>> '{}')::integer);
    END IF;
    RETURN format('ALTER TABLE %%s ALTER COLUMN %I %s', inv.object_name,
                  CASE WHEN jsonb_typeof(prev) = 'null' THEN 'DROP DEFAULT' ELSE 'SET DEFAULT ' || (prev #>> '{}') END);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._undo_ddl_inverse(shardid.ddl_changes, jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._undo_ddl_inverse(shardid.ddl_changes, jsonb) IS
    'abandon_ddl(undo): the command that reverses an unfinished change (DROP INDEX [CONCURRENTLY] of the index it made, DROP CONSTRAINT of the constraint it added, the previous default or statistics target), or 0A000 with the completing apply_ddl() call in the HINT for a change with no safe inverse (55000 when the previous value is not known).';
