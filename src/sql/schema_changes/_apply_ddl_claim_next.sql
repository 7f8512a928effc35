-- apply_ddl(), CONCURRENTLY (_apply_ddl_concurrently): the next target of
-- the change in the ledger of the node the statements run on, claimed
-- (_apply_ddl_claim: busy are the targets this session's other connections
-- change): here (node NULL), or on node over conn, the idle connection the
-- statement is then sent on (the claim commits there on its own).
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_claim_next(conn text, node text, change_id bigint, busy text[],
                                                                  OUT target text, OUT statement text, OUT owner name,
                                                                  OUT cleanup text[], OUT retry boolean)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF node IS NULL THEN
        SELECT * INTO target, statement, owner, cleanup, retry FROM shardid_internal._apply_ddl_claim(change_id, busy);
        RETURN;
    END IF;
    SELECT * INTO target, statement, owner, cleanup, retry
      FROM jsonb_to_record(shardid_internal._node(conn, format('SELECT pg_catalog.row_to_json(c) FROM shardid_internal._apply_ddl_claim(%s, %L) AS c',
                                                               change_id, busy), node)::jsonb)
           AS c(target text, statement text, owner name, cleanup text[], retry boolean);
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_claim_next(text, text, bigint, text[]) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_claim_next(text, text, bigint, text[]) IS
    'apply_ddl(), CONCURRENTLY: claims the next target of a change in the ledger here (node NULL) or on a node over a dblink connection; its statement, owner, the cleanup of an interrupted run, whether it is a retry.';
