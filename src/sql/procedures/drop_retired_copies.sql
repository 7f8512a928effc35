-- Router: drops the retired copies that moves left on their source nodes
-- (shardid.retired_copies) retired at least older_than ago, one at a time,
-- committing after each. A copy whose name tells no time is dropped only
-- with older_than = 0 (the default: every retired copy).
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the loop and its COMMITs; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid.drop_retired_copies(older_than interval DEFAULT '0')
    LANGUAGE plpgsql
AS $$
DECLARE
    copies record;
    counts bigint[] := '{0,0}';  -- copies dropped, bytes freed
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.drop_retired_copies()',
                                             'after every copy it drops');
    FOR copies IN SELECT c.node, c.schema_name FROM shardid_internal._retired_copies_due(older_than) AS c LOOP
        counts := shardid_internal._drop_retired_copy_counted(counts, copies.node, copies.schema_name);
        COMMIT;
    END LOOP;
    RAISE NOTICE 'drop_retired_copies: % dropped (%)', counts[1], pg_catalog.pg_size_pretty(counts[2]);
END
$$;

REVOKE ALL ON PROCEDURE shardid.drop_retired_copies(interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.drop_retired_copies(interval) IS
    'Router: drops the retired copies of moved shards (shardid.retired_copies) retired at least older_than ago (default: all), one at a time, committing after each.';
