-- bench/setup.sql — the contenders shardid is measured against, loaded once
-- into the benchmark database by bench/run.

CREATE EXTENSION shardid;

-- Instagram's published PL/pgSQL generator ("Sharding & IDs at Instagram",
-- 2011; see the seeds), as published: epoch 1314220021721, shard 5, and
-- nextval % 1024 as the sequence part. bench/run recreates
-- insta5.table_id_seq before every repetition.
CREATE SCHEMA insta5;
CREATE SEQUENCE insta5.table_id_seq;

CREATE FUNCTION insta5.next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta5.table_id_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE plpgsql;

-- UUIDv7 (RFC 9562) in plain SQL, since PostgreSQL 15 has no uuidv7() and
-- Debian packages none: a random v4 UUID whose first 48 bits are replaced
-- by the Unix time in milliseconds, and whose version nibble becomes 7
-- (v4's 0100 with bits 0x20 and 0x10 of byte 6 set is 0111; the variant
-- bits 10 are already those of v4).
CREATE SCHEMA bench;

CREATE FUNCTION bench.uuidv7() RETURNS uuid
    LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT encode(
               set_bit(set_bit(
                   overlay(uuid_send(gen_random_uuid())
                           PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                           FROM 1 FOR 6),
                   52, 1), 53, 1),
               'hex')::uuid
$$;
