-- finish_ddl(): the template and command of an unfinished apply_ddl()
-- change in this database's ledger, by its ID (22023 for an ID that is no
-- unfinished change's).
CREATE OR REPLACE FUNCTION shardid_internal._finish_ddl_change(change_id bigint, OUT template text, OUT command text)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT c.template, c.command INTO template, command
      FROM shardid.ddl_changes AS c
     WHERE c.change_id = _finish_ddl_change.change_id AND c.finished_at IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'apply_ddl() change % is no unfinished change here', change_id
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'shardid.ddl_changes lists the changes; check_cluster() names the unfinished ones.';
    END IF;
END
$$;

-- EXECUTE stays with PUBLIC: finish_ddl() is apply_ddl() (which checks the caller), by ID.

COMMENT ON FUNCTION shardid_internal._finish_ddl_change(bigint) IS
    'finish_ddl(): the template and command of an unfinished apply_ddl() change here, by its ID (22023 when it is none).';
