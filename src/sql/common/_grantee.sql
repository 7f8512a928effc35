-- A grantee of an ACL entry as GRANT and REVOKE name it: PUBLIC for 0, a
-- role's name quoted (names are data, never pasted into SQL).
CREATE OR REPLACE FUNCTION shardid_internal._grantee(role oid) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE role WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(role)) END
$$;

COMMENT ON FUNCTION shardid_internal._grantee(oid) IS
    'Internal: an ACL entry''s grantee as GRANT names it: PUBLIC for 0, else the role''s quoted name. Executable by PUBLIC (the shard functions call it with the caller''s rights).';
