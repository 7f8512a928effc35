-- Router: the kinds of problem check_cluster() reports, a closed list
-- written here only. check_cluster() runs shardid_internal._check_<kind>()
-- for each, step by step; the exporters under examples/ read this view,
-- and test/lint/run (kinds) checks docs/reference.md and docs/monitoring.md
-- against it. Kinds of one step are reported together: step 1 reads each
-- node (its rows in node order), step 3 compares the shards with the
-- placement (by shard, then node); every other step has one kind. Readable
-- by everyone (what check_cluster() may say is no secret).
CREATE OR REPLACE VIEW shardid.check_cluster_kinds AS
SELECT k.step, k.kind, k.summary
  FROM (VALUES
    (1, 'node_unreachable', 'the node cannot be reached (its other checks are skipped)'),
    (1, 'node_unreadable', 'the node answered, but reading it failed (the detail ends with the SQLSTATE)'),
    (1, 'extension_missing', 'the node does not have the shardid extension'),
    (1, 'extension_version', 'the node runs another version of shardid than the router'),
    (1, 'unsafe_name', 'a name read on a node, or an unfinished apply_ddl() change''s text, holds a control character'),
    (2, 'layout_differs', 'the node''s layout is not the router''s'),
    (3, 'shard_live_twice', 'a shard registered (live, not retired) on two nodes'),
    (3, 'shard_live_nowhere', 'a placed shard that no node holds'),
    (3, 'placement_wrong_node', 'a placed shard that another node holds'),
    (3, 'shard_not_placed', 'a shard a node holds that is placed nowhere'),
    (4, 'template_differs', 'a sharded table''s template that differs from the one most nodes have, or is missing'),
    (5, 'move_leftover', 'a publication, subscription, slot, role or freeze trigger of a move no longer in progress'),
    (6, 'move_stalled', 'a move in progress that no session and no background job drives'),
    (6, 'job_stalled', 'a background rebalance or drain job that has not ended and whose driver is gone'),
    (7, 'proxy_out_of_step', 'the PL/Proxy cluster shardid differs from the placement'),
    (8, 'ddl_unfinished', 'an apply_ddl() change not finished, on the router or a node'),
    (9, 'copy_differs', 'a shard''s copy of a sharded table that differs from its node''s template'),
    (10, 'privileges_differ', 'a shard whose copies, schema or generator lack the privileges its node''s templates record, or whose copy has grants its template does not give')
  ) AS k(step, kind, summary);

GRANT SELECT ON shardid.check_cluster_kinds TO PUBLIC;

COMMENT ON VIEW shardid.check_cluster_kinds IS
    'Router: the kinds of problem check_cluster() reports, each with the step that reports it (in order) and a summary; the one list, read by the exporters and checked against the docs.';
COMMENT ON COLUMN shardid.check_cluster_kinds.step IS 'The step of check_cluster() that reports it; check_cluster() returns the rows of one step together.';
COMMENT ON COLUMN shardid.check_cluster_kinds.kind IS 'The kind, as check_cluster() returns it.';
COMMENT ON COLUMN shardid.check_cluster_kinds.summary IS 'What it means, in one line (docs/monitoring.md says more, with the fix).';
