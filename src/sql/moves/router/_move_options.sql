-- Router: the options record of a move (shardid.move_options) from the
-- named parameters of the entry points that make moves (move_shard(),
-- rebalance(), drain_node(), rebalance_start(), drain_node_start()), as a
-- jsonb object, or from a rebalance job's options (other keys ignored).
-- NULL or left out gets its default, in one place: drop_old false, offline
-- false, lock_timeout 10 s, cutover_timeout 30 s, catchup_timeout 1 day,
-- node_timeout 90 s (longer than an HA manager's failover, Patroni's ttl
-- 30 s + loop_wait 10 s by default, so that a move waits for a node's new
-- primary: docs/high-availability.md); a negative timeout is refused
-- (22023).
CREATE OR REPLACE FUNCTION shardid_internal._move_options(given jsonb) RETURNS shardid.move_options
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o shardid.move_options := jsonb_populate_record(ROW(false, false, interval '10 s', interval '30 s', interval '1 day',
                                                        interval '90 s')::shardid.move_options,
                                                    jsonb_strip_nulls(COALESCE(given, '{}')));
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('lock_timeout', o.lock_timeout), ('cutover_timeout', o.cutover_timeout),
                                   ('catchup_timeout', o.catchup_timeout), ('node_timeout', o.node_timeout)) AS v(name, value)
              WHERE v.value < interval '0' LOOP
        RAISE EXCEPTION '% must not be negative: %', t.name, t.value
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a positive interval, or NULL for the default.';
    END LOOP;
    RETURN o;
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_options(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_options(jsonb) IS
    'Router: the options record of a move from the entry points'' named parameters or a job''s options (a jsonb object), with its defaults in one place (drop_old false, offline false, lock_timeout 10 s, cutover_timeout 30 s, catchup_timeout 1 day, node_timeout 90 s): NULL or left out gets its default; a negative timeout is refused (22023).';
