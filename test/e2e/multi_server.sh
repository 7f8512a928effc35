#!/usr/bin/env bash
# test/e2e/multi_server.sh — shardid on three servers: a router (PL/Proxy
# where it is installed, else its functions call the nodes over dblink) and
# two data nodes holding 64 logical shards. Inserts and reads through the
# router, a fan-out of the newest rows in ID order, a frozen shard, an
# unplaced shard, then moves a shard with bin/shardid-move-shard --offline while a
# writer keeps inserting, and checks that no row was lost or duplicated and
# that the moved shard's IDs continue above its old ones. Also: the move
# tool's refusals, and a shard that no longer matches its templates.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
source test/lib/e2e.sh
PATH=$(pg_config --bindir):$PATH
export PATH

pg_start node_a
pg_start node_b
pg_start router
A=$(connstr "$node_a_DIR")
B=$(connstr "$node_b_DIR")
R=$(connstr "$router_DIR")
createdb_app "$node_a_DIR" "$node_b_DIR" "$router_DIR"

# --- data nodes: same template, functions; shards 0-31 on a, 32-63 on b ---
node_setup() {
	sql "$1" <<-EOF
	CREATE EXTENSION shardid;
	CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
	SELECT shardid.create_shards($2, $3);
	SELECT shardid.create_table('public.posts');
	CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer
	    LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 64)::integer';
	CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint LANGUAGE plpgsql AS \$\$
	DECLARE new_id bigint;
	BEGIN
	    EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES (\$1, \$2) RETURNING id',
	                   shardid.shard_schema(public.user_shard(i_user)))
	        INTO new_id USING i_user, i_body;
	    RETURN new_id;
	END \$\$;
	CREATE FUNCTION public.get_post(i_id bigint, OUT id bigint, OUT user_id bigint, OUT body text)
	    RETURNS SETOF record LANGUAGE plpgsql AS \$\$
	BEGIN
	    RETURN QUERY EXECUTE format('SELECT p.id, p.user_id, p.body FROM %I.posts AS p WHERE p.id = \$1',
	                                shardid.shard_schema(shardid.id_shard(i_id))) USING i_id;
	END \$\$;
	-- The newest i_limit posts of the given shards (all on this node).
	CREATE FUNCTION public.newest_posts(i_shards integer[], i_limit integer, OUT id bigint, OUT user_id bigint, OUT body text)
	    RETURNS SETOF record LANGUAGE plpgsql AS \$\$
	BEGIN
	    RETURN QUERY EXECUTE (
	        SELECT string_agg(format('(SELECT p.id, p.user_id, p.body FROM %I.posts AS p ORDER BY p.id DESC LIMIT %s)',
	                                 shardid.shard_schema(s), i_limit), ' UNION ALL ')
	               || format(' ORDER BY 1 DESC LIMIT %s', i_limit)
	          FROM unnest(i_shards) AS s);
	END \$\$;
	CREATE FUNCTION public.all_post_ids(i_shards integer[]) RETURNS SETOF bigint LANGUAGE plpgsql AS \$\$
	BEGIN
	    RETURN QUERY EXECUTE (SELECT string_agg(format('SELECT p.id FROM %I.posts AS p', shardid.shard_schema(s)), ' UNION ALL ')
	                            FROM unnest(i_shards) AS s);
	END \$\$;
	EOF
}
node_setup "$A" 0 31 >/dev/null
node_setup "$B" 32 63 >/dev/null

# --- router: nodes, placement, routing functions -----------------------------
# Through PL/Proxy where it is installed; else (19) over dblink, to the
# connect string PL/Proxy would use (test/lib/e2e.sh: router_dblink_sql).
if have_extension plproxy; then
	echo "# router: PL/Proxy"
	sql "$R" >/dev/null <<<"CREATE EXTENSION plproxy"
	routing=$(cat <<-'SQL'
	CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint AS $$
	    CLUSTER 'shardid'; RUN ON public.user_shard(i_user);
	$$ LANGUAGE plproxy;
	CREATE FUNCTION public.get_post(i_id bigint, OUT id bigint, OUT user_id bigint, OUT body text) RETURNS SETOF record AS $$
	    CLUSTER 'shardid'; RUN ON shardid.id_shard(i_id);
	$$ LANGUAGE plproxy;
	CREATE FUNCTION public.newest_posts(i_shards integer[], i_limit integer, OUT id bigint, OUT user_id bigint, OUT body text)
	    RETURNS SETOF record AS $$
	    CLUSTER 'shardid'; SPLIT i_shards; RUN ON i_shards;
	$$ LANGUAGE plproxy;
	CREATE FUNCTION public.all_post_ids(i_shards integer[]) RETURNS SETOF bigint AS $$
	    CLUSTER 'shardid'; SPLIT i_shards; RUN ON i_shards;
	$$ LANGUAGE plproxy;
	SQL
	)
else
	echo "# router: no PL/Proxy for PostgreSQL $(pg_config --version | awk '{print $2}'), routing over dblink"
	routing="$(router_dblink_sql)
	$(cat <<-'SQL'
	CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint LANGUAGE sql AS $$
	    SELECT t.id FROM public.dblink(public.shard_connstr(public.user_shard(i_user)),
	                                   format('SELECT public.insert_post(%s, %L)', i_user, i_body)) AS t(id bigint)
	$$;
	CREATE FUNCTION public.get_post(i_id bigint, OUT id bigint, OUT user_id bigint, OUT body text) RETURNS SETOF record
	    LANGUAGE sql AS $$
	    SELECT t.* FROM public.dblink(public.shard_connstr(shardid.id_shard(i_id)),
	                                  format('SELECT * FROM public.get_post(%s)', i_id)) AS t(id bigint, user_id bigint, body text)
	$$;
	CREATE FUNCTION public.newest_posts(i_shards integer[], i_limit integer, OUT id bigint, OUT user_id bigint, OUT body text)
	    RETURNS SETOF record LANGUAGE sql AS $$
	    SELECT t.* FROM (SELECT public.shard_connstr(s) AS c, array_agg(s) AS ss FROM unnest(i_shards) AS s GROUP BY 1) AS g,
	           LATERAL public.dblink(g.c, format('SELECT * FROM public.newest_posts(%L, %s)', g.ss, i_limit))
	                AS t(id bigint, user_id bigint, body text)
	$$;
	CREATE FUNCTION public.all_post_ids(i_shards integer[]) RETURNS SETOF bigint LANGUAGE sql AS $$
	    SELECT t.id FROM (SELECT public.shard_connstr(s) AS c, array_agg(s) AS ss FROM unnest(i_shards) AS s GROUP BY 1) AS g,
	           LATERAL public.dblink(g.c, format('SELECT public.all_post_ids(%L)', g.ss)) AS t(id bigint)
	$$;
	SQL
	)"
fi
sql "$R" >/dev/null <<EOF
CREATE EXTENSION dblink;
CREATE EXTENSION shardid;
SELECT shardid.add_node('a', '$A');
SELECT shardid.add_node('b', '$B');
SELECT shardid.place_shards('a', 0, 31);
SELECT shardid.place_shards('b', 32, 63);
CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 64)::integer';
$routing
-- What the application was told: every ID it got back, in write order.
CREATE TABLE public.written (n bigserial PRIMARY KEY, id bigint NOT NULL UNIQUE, user_id bigint NOT NULL, retries integer NOT NULL DEFAULT 0);
-- A writer that retries in a new transaction when a shard is frozen (25006)
-- or its old copy was retired under it (42P01 for a table, 42704 from
-- shard_schema() in insert_post): the router sees the new placement at the
-- start of each transaction.
CREATE PROCEDURE public.writer(i_users bigint[], i_count integer, i_pause float8) LANGUAGE plpgsql AS \$\$
DECLARE
    u bigint; new_id bigint; tries integer;
BEGIN
    FOR i IN 1 .. i_count LOOP
        u := i_users[1 + i % array_length(i_users, 1)];
        tries := 0;
        LOOP
            BEGIN
                new_id := public.insert_post(u, 'writer ' || i);
                EXIT;
            EXCEPTION WHEN read_only_sql_transaction OR undefined_table OR undefined_object THEN
                tries := tries + 1;
                IF tries > 3000 THEN RAISE; END IF;
            END;
            COMMIT;
            PERFORM pg_sleep(0.002);
        END LOOP;
        INSERT INTO public.written (id, user_id, retries) VALUES (new_id, u, tries);
        COMMIT;
        PERFORM pg_sleep(i_pause);
    END LOOP;
END \$\$;
EOF
expect "placed shards" "$(sql "$R" <<<"SELECT count(*) || ' ' || count(*) FILTER (WHERE node = 'a') FROM shardid.placement")" "64 32"
if have_extension plproxy; then
	expect "partitions of cluster shardid" \
		"$(sql "$R" <<<"SELECT count(*) FROM pg_foreign_server s, pg_options_to_table(s.srvoptions) o WHERE s.srvname = 'shardid' AND o.option_name ~ '^p[0-9]+\$'")" 8192
else
	expect "no PL/Proxy: no cluster, no foreign server" "$(sql "$R" <<<"SELECT count(*) FROM pg_foreign_server")" 0
fi

# --- insert through the router for 640 users, 3 posts each ------------------
sql "$R" >/dev/null <<'EOF'
INSERT INTO public.written (id, user_id)
SELECT public.insert_post(u, 'post ' || k || ' of ' || u), u
  FROM generate_series(1, 3) AS k, generate_series(1000, 1639) AS u
 ORDER BY k, u;
EOF
expect "rows written through the router" "$(sql "$R" <<<"SELECT count(*) FROM written")" 1920
expect "rows on node a, node b" \
	"$(sql "$A" <<<"SELECT sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', schema), false, true, '')))[1]::text::int) FROM shardid.shards")/$(sql "$B" <<<"SELECT sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.posts', schema), false, true, '')))[1]::text::int) FROM shardid.shards")" 960/960
expect "every ID decodes to its user's shard" \
	"$(sql "$R" <<<"SELECT count(*) FROM written WHERE shardid.id_shard(id) = user_shard(user_id)")" 1920
expect "every row read back through the router by ID" \
	"$(sql "$R" <<<"SELECT count(*) FROM written w, LATERAL get_post(w.id) g WHERE g.id = w.id AND g.user_id = w.user_id")" 1920

# --- fan-out: newest rows of all shards, merged in ID (time) order -----------
newest=$(sql "$R" <<<"SELECT string_agg(id::text, ',' ORDER BY id DESC) FROM (SELECT id FROM newest_posts(shardid.placed_shards(), 25) ORDER BY id DESC LIMIT 25) t")
expect "fan-out newest 25 = newest 25 written" "$newest" \
	"$(sql "$R" <<<"SELECT string_agg(id::text, ',' ORDER BY id DESC) FROM (SELECT id FROM written ORDER BY id DESC LIMIT 25) t")"
expect "fan-out newest 25 come from both nodes, times non-increasing" \
	"$(sql "$R" <<<"SELECT count(DISTINCT shardid.id_shard(id) < 32) || ' ' || bool_and(t >= coalesce(nt, t)) FROM (SELECT id, shardid.id_time(id) t, lead(shardid.id_time(id)) OVER (ORDER BY id DESC) nt FROM newest_posts(shardid.placed_shards(), 25) ORDER BY id DESC LIMIT 25) x")" "2 true"

# --- unplaced shard: a clear error, not a wrong node -------------------------
err=$(sql "$R" <<<"SELECT * FROM get_post(shardid.make_id(now(), 100, 0))" 2>&1) && fail "unplaced shard answered: $err"
[[ $err == *'shard 100 is not placed on any node'* ]] || fail "unplaced shard error: $err"
ok "unplaced shard 100: $err"

# --- a frozen shard: writes fail with 25006, reads go on ----------------------
sql "$R" <<<"SELECT shardid.freeze_shard(7)" >/dev/null
err=$(psql -X -At -d "$R" -v VERBOSITY=verbose -c "SELECT insert_post(7, 'frozen')" 2>&1) && fail "frozen shard took a write"
[[ $err == *25006* ]] || fail "frozen shard write error: $err"
ok "write to frozen shard 7 refused with 25006"
expect "frozen shard still readable" "$(sql "$R" <<<"SELECT count(*) FROM written w, LATERAL get_post(w.id) g WHERE shardid.id_shard(w.id) = 7")" 30
sql "$R" <<<"SELECT shardid.unfreeze_shard(7)" >/dev/null
expect "unfrozen shard takes writes" "$(sql "$R" <<<"WITH x AS (INSERT INTO written (id, user_id) SELECT insert_post(7, 'thawed'), 7 RETURNING id) SELECT shardid.id_shard(id) FROM x")" 7

# --- move tool refusals ------------------------------------------------------
# These nodes run with wal_level = replica: the dump-based --offline move
# (test/e2e/move_online.sh covers the online one).
move=("$top/bin/shardid-move-shard" --router "$R" --offline)
out=$("${move[@]}" --shard 5 --to a 2>&1) && fail "move to the node holding the shard succeeded"
[[ $out == *'already on node "a"'* ]] || fail "same-node refusal: $out"
ok "move to the node that holds the shard refused"
out=$("${move[@]}" --shard 5 --to nowhere 2>&1) && fail "move to an unknown node succeeded"
[[ $out == *'node "nowhere" does not exist'* ]] || fail "unknown-node refusal: $out"
ok "move to an unknown node refused"
out=$("${move[@]}" --shard 100 --to b 2>&1) && fail "move of an unplaced shard succeeded"
[[ $out == *'shard 100 is not placed'* ]] || fail "unplaced refusal: $out"
ok "move of an unplaced shard refused"

# --- a shard that no longer matches its templates: refused, nothing changes ----
# Shard 6 gets a column whose type node b lacks: b's templates make no such column.
sql "$A" >/dev/null <<<"CREATE TYPE public.mood AS ENUM ('ok'); ALTER TABLE shard_0006.posts ADD COLUMN mood public.mood"
out=$("${move[@]}" --shard 6 --to b 2>&1) && fail "move of a diverged shard succeeded"
[[ $out == *'shard 6 on node "a" has diverged from its templates: table posts: column mood: public.mood on node "a" only'* ]] || fail "diverged-shard report: $out"
ok "a shard that diverged from its templates is refused, the difference named"
expect "after the refused move: placement, frozen, schema on b, registry on a, moves" \
	"$(sql "$R" <<<"SELECT node || ' ' || frozen FROM shardid.placement WHERE shard = 6") $(sql "$B" <<<"SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0006'") $(sql "$A" <<<"SELECT schema FROM shardid.shards WHERE shard = 6") $(sql "$R" <<<"SELECT count(*) FROM shardid.shard_moves")" \
	"a false 0 shard_0006 0"
expect "shard 6 takes writes after the refused move" "$(sql "$R" <<<"WITH x AS (INSERT INTO written (id, user_id) SELECT insert_post(6, 'after failed move'), 6 RETURNING id) SELECT shardid.id_shard(id) FROM x")" 6
sql "$A" >/dev/null <<<"ALTER TABLE shard_0006.posts DROP COLUMN mood; DROP TYPE public.mood"

# --- move shard 5 from a to b while a writer keeps inserting -------------------
old_max5=$(sql "$R" <<<"SELECT max(id) FROM written WHERE shardid.id_shard(id) = 5")
before=$(sql "$R" <<<"SELECT count(*) FROM written")
# Every other write goes to shard 5 (users 5, 69, 133), the rest elsewhere.
psql -X -q -v ON_ERROR_STOP=1 -d "$R" -c "CALL writer(ARRAY[5, 1001, 69, 1040, 133, 1063]::bigint[], 3000, 0.003)" \
	>"$router_DIR/writer.log" 2>&1 &
writer=$!
for _ in $(seq 200); do
	[ "$(sql "$R" <<<"SELECT count(*) FROM written")" -ge $((before + 60)) ] && break
	sleep 0.05
done
at_start=$(sql "$R" <<<"SELECT count(*) - $before FROM written")
"${move[@]}" --shard 5 --to b 2>&1 | tee "$router_DIR/move.log"
[ "${PIPESTATUS[0]}" = 0 ] || fail "move of shard 5 failed"
at_end=$(sql "$R" <<<"SELECT count(*) - $before FROM written")
[ "$at_start" -ge 60 ] && [ "$at_end" -lt 3000 ] ||
	fail "the writer did not run across the move: $at_start rows before it, $at_end after"
ok "the writer ran across the move ($at_start of 3000 rows written when it started, $at_end when it ended)"
wait "$writer" || { cat "$router_DIR/writer.log"; fail "writer failed"; }
total=$(sql "$R" <<<"SELECT count(*) FROM written")
expect "writer finished all its inserts" "$((total - before))" 3000
echo "# writer retries during the move: $(sql "$R" <<<"SELECT sum(retries) FROM written")"
expect "writes to shard 5 during the run, before/after the move" \
	"$(sql "$R" <<<"SELECT count(*) > 0 FROM written WHERE shardid.id_shard(id) = 5 AND n > $before")" t

expect "shard 5 placed on b, not frozen" "$(sql "$R" <<<"SELECT node || ' ' || frozen FROM shardid.placement WHERE shard = 5")" "b false"
expect "node b registers shard 5" "$(sql "$B" <<<"SELECT schema FROM shardid.shards WHERE shard = 5")" shard_0005
expect "node a: shard 5 unregistered, old copy retired" \
	"$(sql "$A" <<<"SELECT count(*) FROM shardid.shards WHERE shard = 5") $(sql "$A" <<<"SELECT count(*) FILTER (WHERE nspname = 'shard_0005') || ' ' || count(*) FILTER (WHERE nspname LIKE 'shard_0005_moved_%') FROM pg_namespace")" \
	"0 0 1"
err=$(sql "$A" <<<"DO \$\$ BEGIN EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES (5, ''x'')', (SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shard_0005_moved_%')); END \$\$" 2>&1) &&
	fail "the retired copy took a write"
[[ $err == *'shard 5 moved to node b'* ]] || fail "retired copy error: $err"
ok "the retired copy refuses writes"

# Nothing lost, nothing duplicated, nothing extra: the rows on the nodes are
# exactly the IDs the application got back.
expect "rows on the nodes = IDs written (count, distinct)" \
	"$(sql "$R" <<<"SELECT count(*) || ' ' || count(DISTINCT i) FROM all_post_ids(shardid.placed_shards()) AS i")" "$total $total"
expect "IDs on the nodes missing from / extra to the written ones" \
	"$(sql "$R" <<<"SELECT (SELECT count(*) FROM (SELECT id FROM written EXCEPT SELECT * FROM all_post_ids(shardid.placed_shards())) x) || ' ' || (SELECT count(*) FROM (SELECT * FROM all_post_ids(shardid.placed_shards()) EXCEPT SELECT id FROM written) y)")" "0 0"
expect "every ID still resolves through the router" \
	"$(sql "$R" <<<"SELECT count(*) FROM written w, LATERAL get_post(w.id) g WHERE g.id = w.id AND g.user_id = w.user_id")" "$total"
# The moved shard's generator continued: in write order, every shard-5 ID
# is above the one before, across the move.
expect "shard 5 IDs increase in write order across the move" \
	"$(sql "$R" <<<"SELECT count(*) FILTER (WHERE id <= prev) || ' ' || bool_and(id > $old_max5) FILTER (WHERE n > $before) FROM (SELECT n, id, lag(id) OVER (ORDER BY n) prev FROM written WHERE shardid.id_shard(id) = 5) t")" "0 true"
post=$(sql "$R" <<<"SELECT insert_post(5, 'after the move')")
expect "a new shard-5 ID after the move is above all of them, made on b" \
	"$(sql "$R" <<<"SELECT $post > (SELECT max(id) FROM written WHERE shardid.id_shard(id) = 5)") $(sql "$B" <<<"SELECT count(*) FROM shard_0005.posts WHERE id = $post")" "t 1"
newest=$(sql "$R" <<<"SELECT string_agg(id::text, ',' ORDER BY id DESC) FROM (SELECT id FROM newest_posts(shardid.placed_shards(), 10) ORDER BY id DESC LIMIT 10) t")
expect "fan-out after the move starts with the newest post" "${newest%%,*}" "$post"

echo "multi_server: all checks passed"
