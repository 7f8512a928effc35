-- drift_cap: a generator already beyond shardid.max_drift (here set 3 s
-- ahead, as a clock stepped back leaves it) no longer runs further ahead
-- under a burst faster than 1024 IDs per millisecond: callers wait, and
-- its lead over the clock stays where it was (issue 10: 3 s became 7.4 s).
CREATE SEQUENCE public.drift_ahead AS bigint;
SELECT setval('public.drift_ahead',
              ((extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1314220021721 + 3000) << 10) > 0
       AS set_ahead;
SELECT extract(epoch FROM shardid.id_time(shardid.next_id(1, 'public.drift_ahead'::regclass))
                         - clock_timestamp()) AS lead_before,
       clock_timestamp() AS burst_start
\gset
SELECT :lead_before BETWEEN 2.5 AND 3.1 AS beyond_the_cap;
-- 2M IDs: 1953 ms of IDs, more than the clock gives while they are made
SELECT count(shardid.next_id(1, 'public.drift_ahead'::regclass)) AS burst
  FROM generate_series(1, 2000000);
SELECT extract(epoch FROM shardid.id_time(shardid.next_id(1, 'public.drift_ahead'::regclass))
                         - clock_timestamp()) AS lead_after,
       extract(epoch FROM clock_timestamp() - :'burst_start'::timestamptz) AS burst_seconds
\gset
SELECT :lead_after <= :lead_before + 0.005 AS lead_did_not_grow,
       :burst_seconds >= 1.9 AS callers_waited_for_the_clock,
       :burst_seconds < 60 AS no_stall;
DROP SEQUENCE public.drift_ahead;
