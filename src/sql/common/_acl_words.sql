-- Privileges as one comparable string: sorted words grantee:PRIVILEGE[*]/grantor
-- ("*" for WITH GRANT OPTION, PUBLIC for grantee 0). A NULL ACL is the
-- default of its object kind (kind 'r', 's', 'n'; NULL for column ACLs,
-- whose default is none). ignore_role leaves out the grants to one role
-- (the 15 subscription role of a move, see _move_subscribe).
-- search_path is pinned: every name below resolves in pg_catalog.
CREATE OR REPLACE FUNCTION shardid_internal._acl_words(acl aclitem[], kind "char", owner oid, ignore_role name DEFAULT NULL)
    RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(string_agg(x.w, ' ' ORDER BY x.w COLLATE "C"), '')
      FROM (SELECT format('%s:%s%s/%s',
                          CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                          a.privilege_type,
                          CASE WHEN a.is_grantable THEN '*' ELSE '' END,
                          quote_ident(pg_get_userbyid(a.grantor))) AS w
              FROM aclexplode(CASE WHEN acl IS NULL AND kind IS NOT NULL THEN acldefault(kind, owner) ELSE acl END) AS a
             WHERE ignore_role IS NULL OR a.grantee = 0 OR pg_get_userbyid(a.grantee) <> ignore_role) AS x
$$;

REVOKE ALL ON FUNCTION shardid_internal._acl_words(aclitem[], "char", oid, name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._acl_words(aclitem[], "char", oid, name) IS
    'Internal: an ACL (NULL: the kind''s default) as sorted words grantee:PRIVILEGE[*]/grantor, leaving out one role if given.';
