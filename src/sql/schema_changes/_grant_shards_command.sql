-- grant_shards() and revoke_shards(): their arguments checked, and the
-- one GRANT or REVOKE on %s they stand for, for run_on_shards(). NULL
-- arguments 22004; privileges: the table privileges (SELECT, INSERT,
-- UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER, or ALL), any case, at
-- least one (22023); the role is a name, quoted, never pasted.
CREATE OR REPLACE FUNCTION shardid_internal._grant_shards_command(fn text, grant_it boolean, template text, role name,
                                                                  privileges text[])
    RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    privs text[];
    bad   text;
BEGIN
    IF template IS NULL OR role IS NULL OR privileges IS NULL THEN
        RAISE EXCEPTION '% arguments must not be NULL', fn USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT array_agg(DISTINCT upper(btrim(p)) ORDER BY upper(btrim(p))) INTO privs FROM unnest(privileges) AS p;
    SELECT p INTO bad FROM unnest(COALESCE(privs, '{}')) AS p
     WHERE p IS NULL OR p NOT IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER', 'ALL')
     LIMIT 1;
    IF privs IS NULL OR bad IS NOT NULL OR (cardinality(privs) > 1 AND 'ALL' = ANY (privs)) THEN
        RAISE EXCEPTION '%() takes table privileges, not %', fn, COALESCE(quote_literal(bad), quote_literal(privileges::text))
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A table privilege is SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES or TRIGGER (or ALL, alone); at least one.',
                  HINT = format('For example: shardid.%s(%L, %L, ARRAY[''SELECT'', ''INSERT''])', fn, template, role);
    END IF;
    IF grant_it THEN
        RETURN format('GRANT %s ON %%s TO %I', array_to_string(privs, ', '), role);
    END IF;
    RETURN format('REVOKE %s ON %%s FROM %I', array_to_string(privs, ', '), role);
END
$$;

COMMENT ON FUNCTION shardid_internal._grant_shards_command(text, boolean, text, name, text[]) IS
    'Internal: grant_shards() and revoke_shards(): the arguments checked (22004, 22023 for what is not a list of table privileges) and the GRANT or REVOKE on %s they stand for. Executable by PUBLIC (grant_shards() calls it as the caller).';
