-- Node, align_copy(): what a shard's copy holds that its template lacks,
-- and that its owner wrote, and that align_copy() keeps (a column, an
-- index of a name the template's have not, a trigger but shardid's, a
-- rule, a policy, extended statistics; constraints and indexes of the
-- template's names are dropped or equal the template's by then), when
-- giving the copy to the template's owner would hand that code to
-- another role; NULL when the copy's owner is a superuser or a member of
-- the template's owner (nothing changes hands), or the copy holds none.
-- Each item named by pg_describe_object(), control characters shown as ?.
CREATE OR REPLACE FUNCTION shardid_internal._align_copy_owner_check(copy regclass, tmpl regclass) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN o.rolsuper OR pg_has_role(o.oid, t.relowner, 'MEMBER') THEN NULL
                ELSE (SELECT array_agg(pg_catalog.translate(x.what, E'\n\r\t', '???') ORDER BY x.what)
                        FROM (SELECT format('column %I', a.attname) AS what
                                FROM pg_attribute AS a
                               WHERE a.attrelid = copy AND a.attnum > 0 AND NOT a.attisdropped
                                 AND NOT EXISTS (SELECT FROM pg_attribute AS b WHERE b.attrelid = tmpl AND b.attname = a.attname
                                                                                AND NOT b.attisdropped)
                              UNION ALL
                              SELECT pg_describe_object('pg_class'::regclass, x.indexrelid, 0)
                                FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid
                               WHERE x.indrelid = copy
                                 AND NOT EXISTS (SELECT FROM pg_index AS y JOIN pg_class AS j ON j.oid = y.indexrelid
                                                  WHERE y.indrelid = tmpl AND j.relname = i.relname)
                              UNION ALL
                              SELECT pg_describe_object('pg_trigger'::regclass, g.oid, 0)
                                FROM pg_trigger AS g JOIN pg_proc AS p ON p.oid = g.tgfoid
                               WHERE g.tgrelid = copy AND NOT g.tgisinternal
                                 AND p.pronamespace NOT IN ('shardid'::regnamespace, 'shardid_internal'::regnamespace)
                              UNION ALL
                              SELECT pg_describe_object('pg_rewrite'::regclass, w.oid, 0) FROM pg_rewrite AS w WHERE w.ev_class = copy
                              UNION ALL
                              SELECT pg_describe_object('pg_policy'::regclass, p.oid, 0) FROM pg_policy AS p WHERE p.polrelid = copy
                              UNION ALL
                              SELECT pg_describe_object('pg_statistic_ext'::regclass, s.oid, 0) FROM pg_statistic_ext AS s WHERE s.stxrelid = copy
                             ) AS x) END
      FROM pg_class AS c
      JOIN pg_roles AS o ON o.oid = c.relowner
      CROSS JOIN (SELECT k.relowner FROM pg_class AS k WHERE k.oid = tmpl) AS t
     WHERE c.oid = copy
$$;

REVOKE ALL ON FUNCTION shardid_internal._align_copy_owner_check(regclass, regclass) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._align_copy_owner_check(regclass, regclass) IS
    'Node, align_copy(): what a copy holds that its template lacks (column, index, trigger but shardid''s, rule, policy, extended statistics) when giving it to the template''s owner would hand its owner''s code to another role; NULL when nothing would change hands.';
