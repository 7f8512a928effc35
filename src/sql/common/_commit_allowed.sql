-- Whether the procedure that calls it may COMMIT (see src/pg/module.cpp).
-- Called directly from a procedure's body: from inside another function it
-- would always answer false, since functions cannot commit.
CREATE OR REPLACE FUNCTION shardid_internal._commit_allowed() RETURNS boolean
    LANGUAGE c VOLATILE PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_commit_allowed';

COMMENT ON FUNCTION shardid_internal._commit_allowed() IS
    'True when called from a procedure CALLed on its own, which may COMMIT; false inside a transaction block, a function or a subtransaction.';
