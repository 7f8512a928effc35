-- apply_ddl() on the router, outside a transaction block: changes the next
-- table of a node that lacks the change (claimed in the node's ledger,
-- which commits on its own over dblink; then the statement, in which
-- PostgreSQL runs the owner's code as the owner; then marked done) and
-- returns its target; NULL, with the node's change finished, when every
-- table there has it.
CREATE OR REPLACE FUNCTION shardid_internal._apply_ddl_node_step(conn text, node text, node_change bigint) RETURNS text
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j jsonb;
BEGIN
    j := shardid_internal._node(conn, format('SELECT pg_catalog.row_to_json(c) FROM shardid_internal._apply_ddl_claim(%s) AS c', node_change), node)::jsonb;
    IF j->>'target' IS NULL THEN
        IF NOT shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_close_change(%s)', node_change), node)::boolean THEN
            RAISE EXCEPTION 'node "%": change % is not finished after its last table', node, node_change
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        RETURN NULL;
    END IF;
    PERFORM shardid_internal._apply_ddl_send(conn, node,
                                    ARRAY(SELECT jsonb_array_elements_text(COALESCE(j->'cleanup', '[]'))),
                                    j->>'statement');
    PERFORM shardid_internal._apply_ddl_result(conn, node, (j->>'retry')::boolean, node_change, j->>'target');
    PERFORM shardid_internal._node(conn, format('SELECT shardid_internal._apply_ddl_mark_done(%s, %L)', node_change, j->>'target'), node);
    RETURN j->>'target';
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._apply_ddl_node_step(text, text, bigint) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._apply_ddl_node_step(text, text, bigint) IS
    'apply_ddl() on the router, outside a transaction block: changes the next table of a node that lacks the change and returns its target; NULL when the node is done.';
