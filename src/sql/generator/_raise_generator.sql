-- Raises a generator to at least a state, never lower, as sync_generators()
-- needs it: under the sequence's buffer lock, holding only the lock writers
-- hold themselves (see src/pg/sequence_state.cpp).
CREATE OR REPLACE FUNCTION shardid_internal._raise_generator(seq regclass, state bigint) RETURNS boolean
    LANGUAGE c VOLATILE STRICT PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_raise_generator';

COMMENT ON FUNCTION shardid_internal._raise_generator(regclass, bigint) IS
    'Internal: sets generator seq to at least state (never lowers it; WAL-logged like setval); true if it changed. Needs UPDATE on the sequence to raise it, as setval() does. Called by sync_generators().';
