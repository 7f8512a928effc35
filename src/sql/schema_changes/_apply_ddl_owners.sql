-- apply_ddl(): refuses (42501) a change of a sharded table one of whose
-- copies (shard NULL: every shard's; otherwise that shard's) belongs to a
-- role other than the template's owner. Every statement of a change runs
-- as the template's owner, in a security-restricted operation
-- (_run_as_owner); on a copy another role owns, that role's code
-- (CHECKs, defaults, index expressions, triggers) would run with the
-- template owner's rights, a superuser's if a superuser owns the template.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_owners(table_name name, owner name, shard integer DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    odd text[];
    n   bigint;
BEGIN
    WITH copy AS (
        SELECT format('%I.%I (owner %I)', s.schema_name, c.relname, pg_get_userbyid(c.relowner)) AS what,
               row_number() OVER (ORDER BY s.shard) AS rank
          FROM shardid.shard_registry AS s
          JOIN pg_namespace AS ns ON ns.nspname = s.schema_name
          JOIN pg_class AS c ON c.relnamespace = ns.oid AND c.relname = _apply_ddl_owners.table_name
         WHERE (_apply_ddl_owners.shard IS NULL OR s.shard = _apply_ddl_owners.shard)
           AND c.relowner <> to_regrole(quote_ident(owner)))
    SELECT array_agg(copy.what ORDER BY copy.rank) FILTER (WHERE copy.rank <= 5), count(*) INTO odd, n FROM copy;
    IF n > 0 THEN
        RAISE EXCEPTION 'sharded table %: % of its copies % not owned by the template''s owner %', table_name, n,
                        CASE WHEN n = 1 THEN 'is' ELSE 'are' END, quote_ident(owner)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('apply_ddl() runs every statement as the template''s owner; a copy another role owns would run that role''s code with those rights. %s%s.',
                                  array_to_string(odd, ', '), CASE WHEN n > 5 THEN ', ...' ELSE '' END),
                  HINT = format('Give each copy the template''s owner (ALTER TABLE ... OWNER TO %I), then CALL apply_ddl() again.', owner);
    END IF;
END
$$;

COMMENT ON FUNCTION shardid_internal._apply_ddl_owners(name, name, integer) IS
    'apply_ddl(): refuses (42501) a sharded table one of whose copies (every shard''s, or one shard''s) another role than the template''s owner owns, naming up to five.';
