-- CREATE EXTENSION creates schema shardid (owned by the installing
-- superuser) unless it exists. A pre-existing one could belong to a role
-- that may add its own functions beside shardid's, e.g. an overload
-- next_id(integer, text) that a DEFAULT spelled with an untyped literal
-- would call: refuse it unless only superusers own it and may create in it.
DO $check_schema$
DECLARE
    owner_name name;
    creators   text;
BEGIN
    SELECT r.rolname INTO owner_name
      FROM pg_catalog.pg_namespace AS n
      JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
     WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid' AND NOT r.rolsuper;
    IF FOUND THEN
        RAISE EXCEPTION 'schema "shardid" already exists and is owned by role %, not by a superuser',
                pg_catalog.quote_ident(owner_name)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Its owner could add functions that shardid''s callers would run.',
                  HINT = 'Check what the schema holds, drop it (or have a superuser own it and everything in it), then run CREATE EXTENSION shardid (or ALTER EXTENSION shardid UPDATE) again.';
    END IF;
    SELECT pg_catalog.string_agg(CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                      ELSE pg_catalog.quote_ident(r.rolname) END, ', ')
      INTO creators
      FROM pg_catalog.pg_namespace AS n,
           LATERAL pg_catalog.aclexplode(n.nspacl) AS a
      LEFT JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) a.grantee
     WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid'
       AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
       AND NOT COALESCE(r.rolsuper, false);
    IF creators IS NOT NULL THEN
        RAISE EXCEPTION 'schema "shardid" already exists and roles other than superusers may create objects in it: %',
                creators
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'They could add functions that shardid''s callers would run.',
                  HINT = 'Check what the schema holds, REVOKE CREATE ON SCHEMA shardid from them (or drop the schema), then run CREATE EXTENSION shardid (or ALTER EXTENSION shardid UPDATE) again.';
    END IF;
END
$check_schema$;
