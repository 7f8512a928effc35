-- The registered shards and the state of their generators. A state
-- outside the layout (negative, or past its last state: the sequence was
-- set there by hand or restored from another layout) is not decoded.
CREATE OR REPLACE VIEW shardid.shards AS
SELECT r.shard,
       r.schema_name AS schema,
       g.seq AS sequence,
       ((st.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog.<<) (l.shard_bits OPERATOR(pg_catalog.+) l.seq_bits))
       OPERATOR(pg_catalog.|) (r.shard::bigint OPERATOR(pg_catalog.<<) l.seq_bits)
       OPERATOR(pg_catalog.|) (st.state OPERATOR(pg_catalog.&) ((1::bigint OPERATOR(pg_catalog.<<) l.seq_bits) OPERATOR(pg_catalog.-) 1))
           AS last_id,
       st.time AS last_time,
       CASE WHEN st.time IS NOT NULL THEN
           GREATEST(st.time OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp(), '0'::interval)
       END AS drift
  FROM shardid.shard_registry AS r
 CROSS JOIN shardid.layout() AS l
 -- from the catalog, not to_regclass(): a reader without USAGE on a shard
 -- schema still sees the registry. The schema first, then pg_class by
 -- (relname, relnamespace): a join could be planned from pg_class by name
 -- alone, which visits every shard's id_seq for each shard (minutes with
 -- 8192 shards).
 CROSS JOIN LATERAL (SELECT (SELECT c.oid FROM pg_catalog.pg_class AS c
                              WHERE c.relname OPERATOR(pg_catalog.=) r.sequence_name
                                AND c.relnamespace OPERATOR(pg_catalog.=)
                                    (SELECT n.oid FROM pg_catalog.pg_namespace AS n
                                      WHERE n.nspname OPERATOR(pg_catalog.=) r.sequence_schema))::regclass AS seq) AS g
 CROSS JOIN LATERAL (SELECT CASE WHEN g.seq IS NOT NULL AND pg_catalog.has_sequence_privilege(g.seq, 'SELECT, USAGE')
                                 THEN pg_catalog.pg_sequence_last_value(g.seq) END AS raw_state) AS raw
 CROSS JOIN LATERAL (SELECT v.state,
                            l.epoch OPERATOR(pg_catalog.+) pg_catalog.make_interval(secs => (v.state OPERATOR(pg_catalog.>>) l.seq_bits) OPERATOR(pg_catalog./) 1000.0) AS time
                       FROM (SELECT CASE WHEN raw.raw_state OPERATOR(pg_catalog.>=) 0
                                          AND raw.raw_state OPERATOR(pg_catalog.<=) (9223372036854775807 OPERATOR(pg_catalog.>>) l.shard_bits)
                                         THEN raw.raw_state END AS state) AS v) AS st;

GRANT SELECT ON shardid.shards TO PUBLIC;

COMMENT ON VIEW shardid.shards IS
    'Registered shards with their generator state: last issued ID and time, and how far the generator runs ahead of the clock (drift). NULL state: no ID yet, no SELECT/USAGE on the sequence, or a state outside the layout (negative, or past its end).';
