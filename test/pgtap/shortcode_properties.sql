-- shortcode_properties: to_shortcode / from_shortcode round trips and the
-- shape of every code, over powers of two and thousands of random IDs.
BEGIN;
SELECT plan(12);

SELECT setseed(0.63);

CREATE TEMP TABLE code_values AS
SELECT DISTINCT v FROM (
    -- every power of two below 2^63 and its neighbours
    SELECT (2::numeric ^ b)::bigint + d AS v
    FROM generate_series(0, 62) AS b, generate_series(-1, 1) AS d
    WHERE (2::numeric ^ b) + d <= 9223372036854775807
    UNION ALL
    -- every power of 64 (a new digit) and its neighbours
    SELECT (64::numeric ^ b)::bigint + d
    FROM generate_series(0, 10) AS b, generate_series(-1, 1) AS d
    UNION ALL
    -- random IDs of every width
    SELECT ((floor(random() * 2147483648)::bigint << 32) | floor(random() * 4294967296)::bigint)
           >> floor(random() * 63)::integer
    FROM generate_series(1, 20000)
    UNION ALL
    SELECT v FROM (VALUES (0::bigint), (9223372036854775807), (9223372036854775806)) AS e(v)
) AS t;
CREATE TEMP TABLE codes AS SELECT v, shardid.to_shortcode(v) AS code FROM code_values;

SELECT cmp_ok((SELECT count(*) FROM codes), '>', 15000::bigint, 'more than 15000 distinct values');
SELECT is_empty($$SELECT v, code FROM codes WHERE shardid.from_shortcode(code) <> v$$,
                'from_shortcode(to_shortcode(v)) = v');
SELECT is((SELECT count(DISTINCT code) FROM codes), (SELECT count(*) FROM codes),
          'distinct IDs have distinct codes');
SELECT is_empty($$SELECT v, code FROM codes WHERE code !~ '^[A-Za-z0-9_-]+$'$$,
                'codes use only A-Z a-z 0-9 - _');
SELECT is_empty($$SELECT v, code FROM codes WHERE v <> 0 AND code LIKE 'A%'$$,
                'no code but that of 0 starts with the zero digit A');
SELECT is_empty(
    $$SELECT v, code FROM codes
      WHERE length(code) <> greatest(1, (length(ltrim(v::bit(64)::text, '0')) + 5) / 6)$$,
    'a code has one digit per 6 bits');
SELECT is_empty($$SELECT v, code FROM codes WHERE length(code) > 11$$, 'codes have at most 11 digits');
SELECT is((SELECT code FROM codes WHERE v = 9223372036854775807), 'H__________', '2^63 - 1 is H__________');
SELECT is((SELECT code FROM codes WHERE v = 0), 'A', '0 is A');

-- Codes of equal length sort like their IDs under the alphabet's order.
SELECT is_empty(
    $$SELECT a.v, b.v FROM codes AS a JOIN codes AS b
        ON length(a.code) = length(b.code) AND a.v < b.v
      WHERE a.v % 97 = 0 AND b.v % 89 = 0
        AND translate(a.code, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
                      '0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmno') COLLATE "C"
         >= translate(b.code, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
                      '0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmno') COLLATE "C"$$,
    'codes of equal length sort like their IDs');

-- Changing any digit of a code to a character outside the alphabet is refused.
CREATE FUNCTION pg_temp.bad_codes_refused() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    refused bigint := 0;
    bad text;
BEGIN
    FOR bad IN
        SELECT overlay(code PLACING substr('+/=.~ !*%', 1 + (v % 9)::integer, 1)
                       FROM 1 + (v % length(code))::integer FOR 1)
        FROM codes WHERE v % 7 = 0
    LOOP
        BEGIN
            PERFORM shardid.from_shortcode(bad);
        EXCEPTION WHEN invalid_text_representation THEN
            refused := refused + 1;
        END;
    END LOOP;
    RETURN refused;
END
$$;
SELECT is(pg_temp.bad_codes_refused(), (SELECT count(*) FROM codes WHERE v % 7 = 0),
          'a character outside the alphabet anywhere is refused (22P02)');

-- One more digit on a code of 2^57 or more overflows 63 bits.
CREATE FUNCTION pg_temp.long_codes_refused() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    refused bigint := 0;
    long_code text;
BEGIN
    FOR long_code IN SELECT code || 'A' FROM codes WHERE v >= 144115188075855872 LOOP
        BEGIN
            PERFORM shardid.from_shortcode(long_code);
        EXCEPTION WHEN numeric_value_out_of_range THEN
            refused := refused + 1;
        END;
    END LOOP;
    RETURN refused;
END
$$;
SELECT is(pg_temp.long_codes_refused(), (SELECT count(*) FROM codes WHERE v >= 144115188075855872),
          'codes over 63 bits are refused (22003)');

SELECT * FROM finish();
ROLLBACK;
