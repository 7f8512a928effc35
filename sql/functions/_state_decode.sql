-- A generator's state is time << seq_bits | counter (src/core/generator.hpp).
-- Views that report generators decode it here rather than re-derive the
-- formula in SQL. Executable by PUBLIC: plain arithmetic on a value the
-- caller already holds, which the readers of those views need.
CREATE OR REPLACE FUNCTION shardid._state_decode(state bigint, OUT ts timestamptz, OUT seq integer)
    LANGUAGE c STABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'shardid_state_decode';

COMMENT ON FUNCTION shardid._state_decode(bigint) IS
    'Internal: the time and counter (seq) of a generator state under this database''s layout: the time and seq of the last ID it issued. NULL for a state outside the layout (negative, or past its end).';
