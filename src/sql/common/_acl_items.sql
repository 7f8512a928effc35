-- An ACL (NULL: the kind's default; kind NULL for column ACLs) as a JSON
-- array of {grantee, privilege, grantable, grantor}, grantee null for
-- PUBLIC, for _apply_acl() on another node: role names, never OIDs.
CREATE OR REPLACE FUNCTION shardid_internal._acl_items(acl aclitem[], kind "char", owner oid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'grantee', CASE a.grantee WHEN 0 THEN NULL ELSE pg_get_userbyid(a.grantee) END,
               'privilege', a.privilege_type,
               'grantable', a.is_grantable,
               'grantor', pg_get_userbyid(a.grantor))
             ORDER BY pg_get_userbyid(a.grantee), a.privilege_type), '[]')
      FROM aclexplode(CASE WHEN acl IS NULL AND kind IS NOT NULL THEN acldefault(kind, owner) ELSE acl END) AS a
$$;

REVOKE ALL ON FUNCTION shardid_internal._acl_items(aclitem[], "char", oid) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._acl_items(aclitem[], "char", oid) IS
    'Internal: an ACL as a JSON array of {grantee, privilege, grantable, grantor} (role names), for _apply_acl() on another node.';
