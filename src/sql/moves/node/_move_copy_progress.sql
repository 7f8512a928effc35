-- Node, target of a move: the progress of the move's subscription alone:
-- its tables and how many are ready, the bytes of those tables here (what
-- has been copied so far, in the copy's own transaction too), whether it
-- is enabled (disable_on_error stops it at its first error) and its error
-- counts, summed over the columns each major has.
CREATE OR REPLACE FUNCTION shardid_internal._move_copy_progress(name name) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
               'exists', s.oid IS NOT NULL,
               'enabled', s.subenabled,
               'tables_total', (SELECT count(*) FROM pg_subscription_rel AS r WHERE r.srsubid = s.oid),
               'tables_ready', (SELECT count(*) FROM pg_subscription_rel AS r WHERE r.srsubid = s.oid AND r.srsubstate = 'r'),
               -- main forks of the tables and their TOAST tables: what COPY writes
               'bytes', (SELECT COALESCE(sum(pg_relation_size(c.oid)
                                             + CASE WHEN c.reltoastrelid <> 0 THEN pg_relation_size(c.reltoastrelid) ELSE 0 END), 0)
                           FROM pg_subscription_rel AS r JOIN pg_class AS c ON c.oid = r.srrelid WHERE r.srsubid = s.oid),
               -- every *_error_count column: apply and sync on 15-18; 19
               -- splits sync into sync_table_error_count and sync_seq_error_count
               'errors', (SELECT sum(v.value::bigint)
                            FROM pg_stat_subscription_stats AS x, jsonb_each_text(to_jsonb(x)) AS v
                           WHERE x.subid = s.oid AND v.key LIKE '%\_error\_count'))
      FROM (SELECT 1) AS one
      LEFT JOIN pg_subscription AS s ON s.subname = _move_copy_progress.name
                                     AND s.subdbid = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_copy_progress(name) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_copy_progress(name) IS
    'Node, move on the target: tables ready and total, bytes copied, enabled and error count of the move''s subscription.';
