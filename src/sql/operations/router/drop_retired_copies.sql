-- Router: drops the retired copies that moves left on their source nodes
-- (shardid.retired_copies) retired at least older_than ago (default 0:
-- all), one at a time, committing after each: only those a move recorded
-- that hold nothing but their own objects, each checked again on its node
-- under the lock attach_shard() and a move's steps there take. The
-- others (not recorded, registered again, holding or used by another's
-- objects, busy) are kept and reported (WARNING with the reason), and the
-- cleanup goes on.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the loop and its COMMITs; the functions it calls pin it.
CREATE OR REPLACE PROCEDURE shardid.drop_retired_copies(older_than interval DEFAULT '0')
    LANGUAGE plpgsql
AS $$
DECLARE
    copies record;
    counts bigint[] := '{0,0,0}';  -- copies dropped, bytes freed, copies kept
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid.drop_retired_copies()',
                                             'after every copy it drops');
    FOR copies IN SELECT c.node, c.schema_name, c.droppable, c.reason FROM shardid_internal._retired_copies_due(older_than) AS c LOOP
        counts := shardid_internal._drop_retired_copy_on(counts, copies.node, copies.schema_name, copies.droppable, copies.reason);
        COMMIT;
    END LOOP;
    RAISE NOTICE 'drop_retired_copies: % dropped (%), % kept', counts[1], pg_catalog.pg_size_pretty(counts[2]), counts[3];
END
$$;

REVOKE ALL ON PROCEDURE shardid.drop_retired_copies(interval) FROM PUBLIC;

COMMENT ON PROCEDURE shardid.drop_retired_copies(interval) IS
    'Router: drops the retired copies of moved shards (shardid.retired_copies) retired at least older_than ago (default: all), one at a time, committing after each: only those a move recorded that hold nothing but their own objects; the others are kept and reported (WARNING).';
