#!/usr/bin/env bash
# test/e2e/shards_8192.sh — Instagram's 8192 logical shards and three
# sharded tables in each, on a server with default settings
# (max_locks_per_transaction = 64 up to PostgreSQL 18, 128 from 19;
# max_connections = 100: only what test/lib/server.sh's pg_start sets).
#
# One transaction cannot hold the locks: create_table() over 8192 shards
# fails with 53200 and a HINT naming the procedure to CALL, having created
# nothing, and so does create_shards(0, 8191) up to PostgreSQL 18 (19's
# default lock table holds it: checked, then rolled back). The procedures commit in
# batches of 256 and are interrupted once each, three ways: a cancel
# (create_shards_proc), a terminated backend (create_table_proc of the second
# table) and a crash of the server (the third table). Each interruption
# loses only its batch in flight; a re-run creates what is missing. At the
# end there are exactly 8192 shard schemas and 8192 x 3 tables, each id
# column defaulting to next_id() of its own shard and generator, and rows
# inserted through those defaults decode to their shard.
#
# A batch too big for the lock table (8192 tables) stops with 53200 and a
# HINT naming a smaller batch_size. The running procedure is found from
# another session by its application_name ("shardid create_shards_proc
# 2048/8192"), as a DBA would. Prints the wall time of each step.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh
PATH=$(pg_config --bindir):$PATH
export PATH

started=$SECONDS
step_start=$SECONDS
# step NAME — report the time since the previous step.
step() { echo "# $1: $((SECONDS - step_start)) s"; step_start=$SECONDS; }

WORK=$(mktemp -d /tmp/shardid-8192.XXXXXX)
pg_start s8192
trap 'pg_stop_all; rm -rf "$WORK"' EXIT
createdb app
export PGDATABASE=app
# sql — run stdin or -c, unaligned; notices to stderr are kept out of values.
sql() { q "$@" 2>>"$WORK/notices.log"; }

expect "max_locks_per_transaction, max_connections: the server's defaults" \
	"$(sql -c "SELECT string_agg(name || '=' || setting || CASE WHEN setting = boot_val THEN '' ELSE ' (default ' || boot_val || ')' END, ' ' ORDER BY name)
	             FROM pg_settings WHERE name IN ('max_locks_per_transaction', 'max_connections')")" \
	"max_connections=100 max_locks_per_transaction=$(sql -c "SELECT boot_val FROM pg_settings WHERE name = 'max_locks_per_transaction'")"

sql <<'SQL'
CREATE EXTENSION shardid;
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text,
                            taken timestamptz NOT NULL DEFAULT now());
CREATE TABLE public.comments (id bigint PRIMARY KEY, photo_id bigint NOT NULL, body text NOT NULL);
CREATE INDEX ON public.comments (photo_id);
CREATE TABLE public.likes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                           photo_id bigint NOT NULL, user_id bigint NOT NULL, UNIQUE (photo_id, user_id));
SQL

# count_shards, count_tables NAME — what is committed.
count_shards() { sql -c "SELECT count(*) FROM shardid.shard_registry"; }
count_tables() {
	sql -c "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	         JOIN shardid.shard_registry r ON r.schema_name = n.nspname WHERE c.relname = '$1' AND c.relkind = 'r'"
}

# run_bg LOG SQL — run SQL (a CALL) in the background; sets BG.
run_bg() { q -c "$2" >"$1" 2>&1 & BG=$!; }

# wait_progress PROC DONE — wait until PROC's application_name reports at
# least DONE committed; prints its backend's pid.
wait_progress() {
	local i row
	for ((i = 0; i < 3000; i++)); do
		row=$(sql -c "SELECT pid, split_part(split_part(application_name, ' ', -1), '/', 1)
		                FROM pg_stat_activity WHERE application_name LIKE 'shardid $1 %'")
		if [ -n "$row" ] && [ "${row#*|}" -ge "$2" ]; then
			echo "${row%|*}"
			return 0
		fi
		kill -0 "$BG" 2>/dev/null || fail "$1 ended before $2 were done: $(cat "$WORK"/*.log)"
		sleep 0.1
	done
	fail "$1 did not reach $2 within 300 s"
}

# expect_stopped LOG SQLSTATE-TEXT — the background CALL failed with that error.
expect_stopped() {
	local rc=0
	wait "$BG" || rc=$?
	[ $rc != 0 ] || fail "the interrupted CALL succeeded: $(cat "$1")"
	grep -q "$2" "$1" || fail "the interrupted CALL did not fail with '$2': $(cat "$1")"
	ok "interrupted: $(grep -m1 -E 'ERROR|FATAL|server closed' "$1" | sed 's/^psql:[^ ]* //')"
}

# show ERROR-OUTPUT — the ERROR, DETAIL and HINT lines, as comments.
show() { grep -E '^(ERROR|DETAIL|HINT):' <<<"$1" | sed 's/^/#   /'; }

# expect_batches WHAT COUNT — an interrupted run kept whole batches of 256 only.
expect_batches() {
	[ "$2" -gt 0 ] && [ "$2" -lt 8192 ] && [ $(($2 % 256)) = 0 ] ||
		fail "$1 after the interruption: $2, not a multiple of 256 between 0 and 8192"
	ok "$1 after the interruption: $2 (whole batches)"
}
step setup

# --- one transaction is not enough --------------------------------------------
# 8192 shards without tables hold about 3 locks each: more than the lock
# table of max_locks_per_transaction = 64 (up to PostgreSQL 18) has room
# for, less than that of 19's 128. Tables (about 10 locks each) overflow both.
locks=$(sql -c "SHOW max_locks_per_transaction")
if [ "$locks" -ge 128 ]; then
	q -c "BEGIN" -c "SELECT shardid.create_shards(0, 8191)" -c "ROLLBACK" >/dev/null 2>&1 ||
		fail "create_shards(0, 8191) failed with max_locks_per_transaction = $locks"
	ok "create_shards(0, 8191) fits one transaction with max_locks_per_transaction = $locks (rolled back)"
else
	err=$(q -c "SELECT shardid.create_shards(0, 8191)" 2>&1) && fail "create_shards(0, 8191) succeeded"
	grep -q 'ERROR:  create_shards(0, 8191) needs more locks than one transaction can hold' <<<"$err" ||
		fail "create_shards(0, 8191): $err"
	grep -q 'HINT:  CALL shardid.create_shards_proc(0, 8191); creates the shards in batches that commit.' <<<"$err" ||
		fail "create_shards(0, 8191) does not name create_shards_proc: $err"
	ok "create_shards(0, 8191) fails and names create_shards_proc"
	show "$err"
fi
expect "shards after create_shards failed or rolled back" "$(count_shards)/$(sql -c "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\_%'")" 0/0
step "create_shards(0, 8191) in one transaction"

# --- create_shards_proc, cancelled once ------------------------------------------
run_bg "$WORK/shards1.log" "CALL shardid.create_shards_proc(0, 8191)"
pid=$(wait_progress create_shards_proc 2048)
expect "pg_cancel_backend" "$(sql -c "SELECT pg_cancel_backend($pid)")" t
expect_stopped "$WORK/shards1.log" "canceling statement due to user request"
n=$(count_shards)
expect_batches "shards" "$n"
expect "shard schemas = registered shards" "$(sql -c "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\_%'")" "$n"
step "create_shards_proc until cancelled"
out=$(q -c "CALL shardid.create_shards_proc(0, 8191)" 2>&1)
grep -q "NOTICE:  create_shards_proc: $((8192 - n)) shards of 0 .. 8191 to create, in batches of 256" <<<"$out" ||
	fail "the re-run does not start where the first run stopped: $out"
grep -q "NOTICE:  create_shards_proc: shards 0 .. 8191: $((8192 - n)) created, $n existed already" <<<"$out" ||
	fail "the re-run's summary: $out"
expect "shards after the re-run" "$(count_shards)" 8192
step "create_shards_proc re-run"

# --- create_table() over 8192 shards: refused, names create_table_proc ---------
err=$(q -c "SELECT shardid.create_table('public.photos')" 2>&1) && fail "create_table() over 8192 shards succeeded"
grep -q 'ERROR:  create_table() over 8192 shards needs more locks than one transaction can hold' <<<"$err" ||
	fail "create_table(): $err"
grep -q "HINT:  CALL shardid.create_table_proc('public.photos', 'id'); creates the tables in batches that commit." <<<"$err" ||
	fail "create_table() does not name create_table_proc: $err"
ok "create_table() over 8192 shards fails and names create_table_proc"
show "$err"
expect "after the failed create_table: registered, created" \
	"$(sql -c "SELECT count(*) FROM shardid.sharded_tables")/$(count_tables photos)" 0/0
step "create_table() refused"

# --- the first table in one CALL ------------------------------------------------
q -c "CALL shardid.create_table_proc('public.photos')" >"$WORK/photos.log" 2>&1 || fail "$(cat "$WORK/photos.log")"
expect "photos tables" "$(count_tables photos)" 8192
expect "batches of photos" "$(grep -c 'create_table_proc: batch [0-9]* committed' "$WORK/photos.log")" 32
step "create_table_proc photos"

# --- a batch too big for the lock table: stopped, names a smaller one ------------
err=$(q -c "CALL shardid.create_table_proc('public.comments', batch_size => 8192)" 2>&1) &&
	fail "a batch of 8192 tables succeeded"
grep -q "ERROR:  a batch of 8192 shard tables needs more locks than the server's lock table has free" <<<"$err" ||
	fail "create_table_proc with batches of 8192: $err"
grep -q "HINT:  Go on with smaller batches: CALL shardid.create_table_proc('public.comments', 'id', 2048);" <<<"$err" ||
	fail "create_table_proc with batches of 8192 does not name a smaller batch: $err"
ok "create_table_proc with batches of 8192 fails and names batches of 2048"
show "$err"
expect "after the failed batch: comments registered, created" \
	"$(sql -c "SELECT count(*) FROM shardid.sharded_tables WHERE table_name = 'comments'")/$(count_tables comments)" 0/0
step "create_table_proc batch of 8192 refused"

# --- the second, its backend terminated once --------------------------------------
run_bg "$WORK/comments1.log" "CALL shardid.create_table_proc('public.comments')"
pid=$(wait_progress "create_table_proc comments" 2048)
expect "pg_terminate_backend" "$(sql -c "SELECT pg_terminate_backend($pid)")" t
expect_stopped "$WORK/comments1.log" "terminating connection due to administrator command"
n=$(count_tables comments)
expect_batches "comments tables" "$n"
step "create_table_proc comments until terminated"
out=$(q -c "CALL shardid.create_table_proc('public.comments')" 2>&1)
grep -q "NOTICE:  create_table_proc: $((8192 - n)) of 8192 shards to get table comments" <<<"$out" ||
	fail "the re-run does not start where the first run stopped: $out"
expect "comments tables after the re-run" "$(count_tables comments)" 8192
step "create_table_proc comments re-run"

# --- the third, the server crashing under it --------------------------------------
sql -c "CHECKPOINT"   # keeps crash recovery short
run_bg "$WORK/likes1.log" "CALL shardid.create_table_proc('public.likes')"
wait_progress "create_table_proc likes" 2048 >/dev/null
as_postgres "$(pg_bindir)/pg_ctl" -D "$s8192_DIR/data" -m immediate -w stop >/dev/null
expect_stopped "$WORK/likes1.log" "server closed the connection unexpectedly"
as_postgres "$(pg_bindir)/pg_ctl" -D "$s8192_DIR/data" -l "$s8192_DIR/server.log" -w -t 120 start >/dev/null
n=$(count_tables likes)
expect_batches "likes tables after the crash" "$n"
step "create_table_proc likes until the crash, restart"
out=$(q -c "CALL shardid.create_table_proc('public.likes')" 2>&1)
grep -q "NOTICE:  create_table_proc: $((8192 - n)) of 8192 shards to get table likes" <<<"$out" ||
	fail "the re-run does not start where the first run stopped: $out"
step "create_table_proc likes re-run"

# --- exactly 8192 x 3, each with its own generator --------------------------------
expect "shard schemas, registered shards, sharded tables" \
	"$(sql -c "SELECT (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\_%') || ' ' ||
	                  (SELECT count(*) FROM shardid.shard_registry) || ' ' ||
	                  (SELECT string_agg(table_name, ',' ORDER BY position) FROM shardid.sharded_tables)")" \
	"8192 8192 photos,comments,likes"
step "check: counts"
expect "tables in shard schemas; with the id DEFAULT of their own shard and generator; with an identity left" \
	"$(sql <<'SQL'
SET search_path = pg_catalog;
SELECT count(*) || ' ' ||
       count(*) FILTER (WHERE pg_get_expr(d.adbin, d.adrelid)
                              = format('shardid.next_id(%s, %L::regclass)', r.shard,
                                       format('%I.%I', r.sequence_schema, r.sequence_name))) || ' ' ||
       count(*) FILTER (WHERE a.attidentity <> '')
  FROM shardid.shard_registry r
  JOIN pg_namespace n ON n.nspname = r.schema_name
  JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind = 'r'
  LEFT JOIN shardid.sharded_tables t ON t.table_name = c.relname
  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = t.id_column
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum;
SQL
)" "24576 24576 0"
step "check: defaults"
# Rows through the defaults, in every 97th shard and the last: their IDs
# carry their shard, and the last one is the state of that shard's generator.
expect "rows inserted through the defaults: IDs of their shard, from its generator" "$(sql <<'SQL'
CREATE TEMP TABLE ids (shard int, tbl text, id bigint);
DO $$
DECLARE s int; t text; new_id bigint;
BEGIN
    FOR s IN SELECT g FROM generate_series(0, 8191, 97) g UNION SELECT 8191 LOOP
        FOREACH t IN ARRAY ARRAY['photos (user_id) VALUES (1)', 'comments (photo_id, body) VALUES (1, ''c'')',
                                 'likes (photo_id, user_id) VALUES (1, 1)'] LOOP
            EXECUTE format('INSERT INTO %I.%s RETURNING id', shardid.shard_schema(s), t) INTO new_id;
            INSERT INTO ids VALUES (s, split_part(t, ' ', 1), new_id);
        END LOOP;
    END LOOP;
END $$;
-- the shards view reads each generator: once, for the sampled shards only
WITH last AS MATERIALIZED (SELECT shard, last_id FROM shardid.shards WHERE shard IN (SELECT shard FROM ids)),
     newest AS (SELECT shard, max(id) AS id FROM ids GROUP BY shard)
SELECT (SELECT count(*) FROM ids) || ' ' ||
       (SELECT count(*) FROM ids WHERE shardid.id_shard(id) = shard) || ' ' ||
       (SELECT count(*) FROM newest JOIN last USING (shard) WHERE last.last_id = newest.id) || ' ' ||
       (SELECT count(*) FROM newest);
SQL
)" "258 258 86 86"
step "check: rows"
# The shards view finds each generator by (schema, name): one pg_class row
# per shard, whatever the statistics say (a plan from pg_class by name
# alone read all 8192 id_seq rows for each shard: minutes).
plan=$(sql -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY OFF) SELECT count(last_id) FROM shardid.shards")
expect "pg_class rows per lookup in the shards view (at most)" \
	"$(sed -n 's/.* on pg_class .*actual rows=\([0-9.]*\) .*/\1/p' <<<"$plan" | awk '{ if ($1 > m) m = $1 } END { print m + 0 }')" 1
expect "the shards view, every generator read" "$(sql -c "SELECT count(last_id) FROM shardid.shards")" 86
step "check: shards view"

# --- reading every shard (docs/shards.md, "Reading every shard") ------------------
# One statement over all 8192 shards fails (a UNION ALL nests too deep for the
# default max_stack_depth), and so does one transaction reading each shard
# in turn (here the 3 tables: more locks than 19's larger lock table holds
# too). The batched forms of the docs, printed there as they are here, read
# every shard: a statement per group of 64 shards through \gexec, and a DO
# block that commits every 64 shards.
union=$(sql -c "SELECT 'SELECT sum(count) FROM (' || string_agg(format('SELECT count(*) FROM %I.photos', schema_name), ' UNION ALL ' ORDER BY shard) || ') AS s'
                  FROM shardid.shard_registry")
# (up to 18 it fails at once with "stack depth limit exceeded"; 19 plans it
# and then runs for minutes at full CPU: cut at 30 s, it has not answered)
err=$(q <<<"SET statement_timeout = '30s'; $union" 2>&1) && fail "a UNION ALL over 8192 shards ran"
grep -qE 'ERROR:  (stack depth limit exceeded|canceling statement due to statement timeout|out of shared memory)' <<<"$err" ||
	fail "a UNION ALL over 8192 shards: $err"
ok "a UNION ALL over 8192 shards: $(sed -n 's/^ERROR:  //p' <<<"$err" | head -n 1)"
err=$(q 2>&1 <<'SQL'
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT schema_name FROM shardid.shard_registry ORDER BY shard LOOP
        EXECUTE format('SELECT (SELECT count(*) FROM %1$I.photos) + (SELECT count(*) FROM %1$I.comments) + (SELECT count(*) FROM %1$I.likes)',
                       r.schema_name);
    END LOOP;
END
$$;
SQL
) && fail "one transaction read every shard's tables"
grep -q 'ERROR:  out of shared memory' <<<"$err" || fail "one transaction reading every shard: $err"
ok "one transaction reading every shard's tables: out of shared memory"
step "reading every shard: one statement, one transaction"
gexec=$(cat <<'SQL'
SELECT string_agg(format('SELECT %s AS shard, count(*) FROM %I.photos', shard, schema_name),
                  ' UNION ALL ' ORDER BY shard)
  FROM shardid.shard_registry
 GROUP BY shard / 64
 ORDER BY shard / 64 \gexec
SQL
)
gexec_table=$(cat <<'SQL'
CREATE TABLE photo_counts (shard integer PRIMARY KEY, photos bigint NOT NULL);
SELECT 'INSERT INTO photo_counts ' ||
       string_agg(format('SELECT %s, count(*) FROM %I.photos', shard, schema_name),
                  ' UNION ALL ' ORDER BY shard)
  FROM shardid.shard_registry
 GROUP BY shard / 64
 ORDER BY shard / 64 \gexec
SELECT count(*) AS shards, sum(photos) AS photos FROM photo_counts;
SQL
)
do_loop=$(cat <<'SQL'
DO $$
DECLARE
    r record;
    done integer := 0;
BEGIN
    FOR r IN SELECT shard, schema_name FROM shardid.shard_registry ORDER BY shard LOOP
        EXECUTE format('INSERT INTO photo_counts SELECT %s, count(*) FROM %I.photos', r.shard, r.schema_name);
        done := done + 1;
        IF done % 64 = 0 THEN
            COMMIT;   -- ends the transaction and its locks: at most 64 shards' at a time
        END IF;
    END LOOP;
END
$$;
SQL
)
docs=$(<docs/shards.md)
for snippet in "$gexec" "$gexec_table" "$do_loop"; do
	[[ "$docs" == *$'```sql\n'"$snippet"$'\n```'* ]] || fail "docs/shards.md does not show this as it is tested: $snippet"
done
ok "docs/shards.md shows the three batched forms as tested"
# (the rows of "check: rows": a photo in each of 86 shards)
out=$(q -F ' ' <<<"$gexec" 2>&1) || fail "the \\gexec of docs/shards.md: $out"
expect "\\gexec, a statement per 64 shards: rows (shards), photos" \
	"$(awk '{ n++; s += $2 } END { print n "/" s }' <<<"$out")" "8192/86"
expect "\\gexec into a table: shards, photos" "$(q -F ' ' <<<"$gexec_table" 2>&1 | tail -n 1)" "8192 86"
sql -c "TRUNCATE photo_counts"
q <<<"$do_loop" || fail "the DO loop of docs/shards.md"
expect "a DO block committing every 64 shards: shards, photos" \
	"$(sql -c "SELECT count(*) || ' ' || sum(photos) FROM photo_counts")" "8192 86"
step "reading every shard: in batches"
echo "# total: $((SECONDS - started)) s"
