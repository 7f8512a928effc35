-- shortcode: to_shortcode / from_shortcode over Instagram's alphabet
-- A-Z a-z 0-9 - _, most significant digit first, and every refusal.

-- Each digit value, in order.
SELECT string_agg(shardid.to_shortcode(d), '' ORDER BY d) AS alphabet
FROM generate_series(0, 63) AS d;
SELECT bool_and(shardid.from_shortcode(shardid.to_shortcode(d)) = d) AS digits_round_trip
FROM generate_series(0, 63) AS d;

-- Edges: 0, the first two-digit code, the largest ID.
SELECT v, shardid.to_shortcode(v) AS code, shardid.from_shortcode(shardid.to_shortcode(v)) = v AS round_trip
FROM (VALUES (0::bigint), (1), (63), (64), (4095), (4096), (262143), (262144),
             (1152921504606846975), (1152921504606846976), (9223372036854775807)) AS t(v)
ORDER BY v;

-- An Instagram media ID and the code of its public URL.
SELECT shardid.to_shortcode(908540701891980503) AS code, shardid.from_shortcode('ybyPRoQWzX') AS id;

-- IDs of the seeds' examples.
SELECT shardid.to_shortcode(11637205501278089) AS instagram_blog, shardid.to_shortcode(2217813737473025833) AS vietnamese;

-- Codes are case-sensitive.
SELECT shardid.from_shortcode('b') AS lower_b, shardid.from_shortcode('B') AS upper_b,
       shardid.from_shortcode('-') AS dash, shardid.from_shortcode('_') AS underscore;

-- Every power of two and its neighbours round-trip.
SELECT count(*) AS values_checked,
       bool_and(shardid.from_shortcode(shardid.to_shortcode(v)) = v) AS all_round_trip,
       bool_and(length(shardid.to_shortcode(v)) <= 11) AS at_most_11_digits,
       bool_and(v = 0 OR left(shardid.to_shortcode(v), 1) <> 'A') AS no_leading_zero
FROM (SELECT (2::numeric ^ b)::bigint + d AS v
      FROM generate_series(0, 62) AS b, generate_series(-1, 1) AS d
      WHERE (2::numeric ^ b) + d <= 9223372036854775807) AS t;

-- NULL in, NULL out.
SELECT shardid.to_shortcode(NULL) IS NULL AS to_null, shardid.from_shortcode(NULL) IS NULL AS from_null;

-- Errors.
\set VERBOSITY default
SELECT shardid.to_shortcode(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.to_shortcode(-9223372036854775808);
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('ab+c');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('abc/');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('ab=');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode(' B');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('Bé');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('AA');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('AH__________');
\echo :LAST_ERROR_SQLSTATE
-- a bad character is reported before a leading zero
SELECT shardid.from_shortcode('A*');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('IAAAAAAAAAA');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('___________');
\echo :LAST_ERROR_SQLSTATE
SELECT shardid.from_shortcode('BAAAAAAAAAAA');
\echo :LAST_ERROR_SQLSTATE
