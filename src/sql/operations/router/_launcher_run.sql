-- The launcher's visit of a database (src/pg/launcher.cpp: with shardid
-- in shared_preload_libraries, a worker per database at start, after a
-- promotion and every shardid.launcher_naptime, as the bootstrap
-- superuser with search_path pg_catalog, pg_temp): on a router, resumes
-- the background job whose driver is gone (_launcher_resume()), then
-- drops the retired copies older than retention seconds
-- (shardid.retired_copy_retention; -1: none) by drop_retired_copies()'s
-- rules (only what a move recorded, each checked again on its node). A
-- data node's database has no nodes: nothing to do.
-- No SET search_path (PostgreSQL refuses COMMIT in a procedure that has
-- one): this holds the calls and their COMMITs; the functions it calls
-- pin it.
CREATE OR REPLACE PROCEDURE shardid_internal._launcher_run(retention integer)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM shardid_internal._require_commit(shardid_internal._commit_allowed(), 'shardid_internal._launcher_run()',
                                             'after it resumes a job, and after every copy it drops');
    IF NOT EXISTS (SELECT FROM shardid.nodes) THEN
        RETURN;
    END IF;
    PERFORM shardid_internal._launcher_resume();
    COMMIT;
    IF retention OPERATOR(pg_catalog.>=) 0 THEN
        CALL shardid.drop_retired_copies(older_than => pg_catalog.make_interval(secs => retention));
    END IF;
END
$$;

REVOKE ALL ON PROCEDURE shardid_internal._launcher_run(integer) FROM PUBLIC;

COMMENT ON PROCEDURE shardid_internal._launcher_run(integer) IS
    'The launcher''s visit of a router database: resumes the background rebalance job whose driver is gone, then drops retired copies older than the retention (seconds; -1: none).';
