CREATE OR REPLACE FUNCTION shardid.next_id(shard integer, seq regclass) RETURNS bigint
    LANGUAGE c VOLATILE STRICT PARALLEL UNSAFE AS 'MODULE_PATHNAME', 'shardid_next_id';

COMMENT ON FUNCTION shardid.next_id(integer, regclass) IS
    'The next ID of the generator kept in sequence seq, for logical shard shard: unique and strictly increasing per sequence, clock- and crash-safe. Use it as a column DEFAULT.';
