-- A generator's state is time << seq_bits | counter (src/core/generator.hpp).
-- Views that report generators decode it here rather than re-derive the
-- formula in SQL. Plain arithmetic on a value the caller already holds;
-- executable by pg_monitor, who reads shardid.generators (a view's
-- functions run with its reader's privileges), not by PUBLIC (issue 19:
-- internal functions only for the roles that need them).
CREATE OR REPLACE FUNCTION shardid_internal._state_decode(state bigint, OUT ts timestamptz, OUT seq integer)
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_state_decode';

REVOKE ALL ON FUNCTION shardid_internal._state_decode(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid_internal._state_decode(bigint) TO pg_monitor;

COMMENT ON FUNCTION shardid_internal._state_decode(bigint) IS
    'Internal: the time and counter (seq) of a generator state under this database''s layout: the time and seq of the last ID it issued. NULL for a state outside the layout (negative, or past its end).';
