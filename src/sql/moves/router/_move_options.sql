-- Router: the options of a move and their defaults, in one place. Every
-- entry point that makes moves (move_shard(), rebalance(), drain_node(),
-- rebalance_start(), drain_node_start()) takes them with DEFAULT NULL and
-- passes them here: a NULL option gets its default (drop_old false,
-- lock_timeout 10 s, cutover_timeout 30 s, catchup_timeout 1 day,
-- node_timeout 90 s: longer than an HA manager's failover, Patroni's
-- ttl 30 s + loop_wait 10 s by default, so that a move waits for a node's
-- new primary: docs/high-availability.md); a negative timeout is refused
-- (22023). A jsonb object with the five, as a job keeps them.
CREATE OR REPLACE FUNCTION shardid_internal._move_options(drop_old boolean, lock_timeout interval, cutover_timeout interval,
                                                          catchup_timeout interval, node_timeout interval) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o record;
BEGIN
    FOR o IN SELECT * FROM (VALUES ('lock_timeout', lock_timeout), ('cutover_timeout', cutover_timeout),
                                   ('catchup_timeout', catchup_timeout), ('node_timeout', node_timeout)) AS v(name, value)
              WHERE v.value < interval '0' LOOP
        RAISE EXCEPTION '% must not be negative: %', o.name, o.value
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a positive interval, or NULL for the default.';
    END LOOP;
    RETURN pg_catalog.jsonb_build_object('drop_old', COALESCE(drop_old, false),
                                         'lock_timeout', COALESCE(lock_timeout, interval '10 s'),
                                         'cutover_timeout', COALESCE(cutover_timeout, interval '30 s'),
                                         'catchup_timeout', COALESCE(catchup_timeout, interval '1 day'),
                                         'node_timeout', COALESCE(node_timeout, interval '90 s'));
END
$$;

REVOKE ALL ON FUNCTION shardid_internal._move_options(boolean, interval, interval, interval, interval) FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal._move_options(boolean, interval, interval, interval, interval) IS
    'Router: the options of a move with their defaults, in one place (drop_old false, lock_timeout 10 s, cutover_timeout 30 s, catchup_timeout 1 day, node_timeout 90 s): a NULL option gets its default; a negative timeout is refused (22023); as jsonb.';
