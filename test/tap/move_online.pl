# move_online.pl — online shard moves, CALL shardid.move_shard() in the
# setting of ShardidMoves.pm (a router with dblink, PL/Proxy where
# installed, and two data nodes with wal_level = logical):
#   1. a shard of SHARDID_MOVE_MB megabytes (default 300; 20 for a quick
#      run) moves while a writer inserts through the router: every
#      acknowledged row is on the target exactly once, writes to the shard
#      go on after the move, writes to other shards are never refused; the
#      refused window and the longest pauses between writes are printed;
#   2. interruptions in every phase (the test hook shardid_test.move_pause
#      stops the CALL there): pg_cancel_backend of the calling backend rolls
#      back (once repointed: the next CALL finishes), pg_terminate_backend
#      keeps the phase, then the next CALL finishes or abort_move() rolls
#      back; a lease freeze lapses with the terminated session; the target
#      restarted during the copy; DDL during the copy (a column, UNIQUE,
#      CHECK, a default, an index, a grant, a sequence) named and rolled
#      back; after each, the shard is writable where it is placed and no
#      publication, subscription, slot (table-sync ones too), role, frozen
#      trigger, half copy or move row is left;
#   3. schema names: a quote, a semicolon and capitals; the review's
#      injection payload; 63 bytes of two-byte characters, moved twice;
#   4. refusals: wal_level (and the offline path of the CLI), a table
#      without replica identity, resuming to another node, abort without a
#      move; the CLI: bad arguments, an unreachable router, SIGINT, SIGTERM,
#      SIGKILL of its process group, --shard 05;
#   5. shardid-rebalance (through the CLI): a dry run that changes nothing,
#      then the planned moves onto an empty node.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidMoves;
use ShardidTest qw(registered_where);
use Test::More;
use Time::HiRes qw(time usleep);

my $MB = $ENV{SHARDID_MOVE_MB} // 300;

my $m = ShardidMoves->new;
my %node = %{ $m->{node} };
my $router = $m->{router};
my $R = $router->connstr('app');
my $clean = $m->clean;
my $ODD = $ShardidMoves::ODD;

sub lit { return ShardidMoves::lit(@_); }

# sql(NODE, SQL) — SQL in database app of a node; r(SQL) — on the router
sub sql { my ($n, $q, @p) = @_; return $node{$n}->safe_psql('app', $q, @p); }
sub r { my ($q) = @_; return $router->safe_psql('app', $q); }

# --- refusals -----------------------------------------------------------------
my ($rc, $out) = $m->cli('shardid-move-shard', '--router');
isnt($rc, 0, 'CLI: --router without a value fails');
like($out, qr/--router needs a value/, 'CLI: --router without a value: usage');
($rc, $out) = $m->cli('shardid-move-shard', '--router', 'host=' . $router->host . ' port=1 dbname=app', '--shard', 1, '--to', 'b');
isnt($rc, 0, 'CLI: an unreachable router fails');
like($out, qr/cannot connect to the router/, 'CLI: unreachable router reported as such');
sql('a', 'CREATE TABLE shard_0001.nokey (x int)');
$out = $m->move_fails(1, 'b');
like($out, qr/55000.*\Qshard 1 on node "a" has diverged from its templates: table nokey: permanent on node "a" only\E/s,
	'a table that no template makes refused up front, named');
sql('a', 'DROP TABLE shard_0001.nokey');
sql('a', 'ALTER TABLE shard_0001.posts REPLICA IDENTITY NOTHING');
$out = $m->move_fails(1, 'b');
like($out, qr/tables of shard 1 have no replica identity.*shard_0001\.posts/s, 'table without a replica identity refused up front');
sql('a', 'ALTER TABLE shard_0001.posts REPLICA IDENTITY DEFAULT');
is($m->leftovers, $clean, 'nothing left by the refusals');

# --- 1. a large shard moves under a writer ----------------------------------------
my $rows = $MB * 1000;
my $t0 = time;
sql('a', "INSERT INTO shard_0003.posts (user_id, body) SELECT 3, repeat(md5(g::text), 30) FROM generate_series(1, $rows) g");
my $size = sql('a', "SELECT pg_size_pretty(pg_total_relation_size('shard_0003.posts'))");
note(sprintf('shard 3: %d rows, %s on node a (loaded in %.0f s)', $rows, $size, time - $t0));
# Two writers, each its own router backend: shard 3 (users 3, 19), and
# other shards (1 on a; 10 and 12 on b), which must never wait for shard 3.
my @writers;
for my $users ('ARRAY[3, 19]', 'ARRAY[1, 10, 12]')
{
	my $w = $router->background_psql('app', on_error_stop => 0);
	$w->set_query_timer_restart;
	$w->query_until(qr/writing/, "\\echo writing\nCALL public.writer(${users}, NULL, 0.002);\n");
	push @writers, $w;
}
$router->poll_query_until('app', 'SELECT count(*) >= 50 FROM public.written') or die 'the writers did not start';
my $before = r('SELECT count(*) FROM public.written');
sleep 1;
my $move_start = r('SELECT clock_timestamp()');
$t0 = time;
# progress is visible from another session while it copies
my $progress_log = $router->basedir . '/progress.log';
my $progress_sql = $router->basedir . '/progress.sql';
open my $fh, '>', $progress_sql or die "cannot write $progress_sql: $!";
print $fh q{SELECT to_char(clock_timestamp(), 'SSSSS.MS') || ' ' || phase || ' ' || coalesce(tables_ready::text, '-') || '/'
       || coalesce(tables_total::text, '-') || ' ' || coalesce(bytes_copied::text, '-') || ' ' || coalesce(bytes_total::text, '-')
       || ' ' || coalesce(lag_bytes::text, '-') || ' ' || (moved_by IS NOT NULL)
  FROM shardid.move_progress WHERE shard = 3 \watch 0.05
};
close $fh;
my $watcher = $m->spawn([ 'psql', '-X', '-A', '-t', '-q', '-d', $R, '-f', $progress_sql ], $progress_log);
$out = $m->move(3, 'b');
my $t1 = time;
my $move_end = r('SELECT clock_timestamp()');
kill 'INT', $watcher;
$m->reap($watcher);
note($_) for split /\n/, $out;
# the writers go on after the move: rows of the moved shard written after it
# returned, and 50 rows more than before it, waited for (not a second's sleep)
$router->poll_query_until('app', 'SELECT count(*) FILTER (WHERE shardid.id_shard(id) = 3 AND at > ' . lit($move_end)
	  . ") >= 10 AND count(*) > $before + 50 FROM public.written")
  or diag('the writers wrote too little after the move');
r('INSERT INTO public.stop_writer VALUES (true)');
for my $i (0, 1)
{
	# (its CALL ends first; PL/Proxy's notices aside, nothing on stderr)
	$writers[$i]->query("SELECT 'stopped'");
	unlike($writers[$i]->{stderr}, qr/ERROR/, ('the writer of shard 3', 'the writer of other shards')[$i] . ' ran without an error');
	$writers[$i]->quit;
}
my $after = r('SELECT count(*) FROM public.written');
ok($before >= 50 && $after > $before + 50, "the writer ran across the move ($before rows before, $after at the end)");
# (a small shard may be copied between two looks: then its figures at least)
my $progress = slurp_file($progress_log);
my $seen = $MB >= 100 ? 'copy 0\/1' : '[a-z_]* [01]\/1';
like($progress, qr/^[0-9.]* $seen [0-9]+ [0-9]+ [0-9-]+ true$/m, 'move_progress showed the copy in progress') or diag($progress);
my @copy = grep { / copy / } split /\n/, $progress;
note('move_progress showed: ' . ((split / /, $copy[-1], 2)[1] // 'no copy line')) if @copy;
# when each phase was first seen, and the table first ready, in s from the start
{
	my (%first, @seen, $ready, $start);
	for (split /\n/, $progress)
	{
		my ($at, $phase, $tables) = split / /;
		next unless defined $tables && $at =~ /^[0-9.]+$/;
		$start //= $at;
		push @seen, sprintf('%s %.1f s', $phase, $at - $start) unless $first{$phase}++;
		$ready //= $at if $phase eq 'copy' && $tables eq '1/1';
	}
	push @seen, sprintf('table ready %.1f s', $ready - $start) if defined $ready;
	note('phases seen: ' . join(', ', @seen));
}
is($m->where(3), 'b b', 'shard 3: placed on b, registered on b only');
is(r(qq{WITH t AS (SELECT * FROM public.post_ids(ARRAY[3])), w AS (SELECT id FROM public.written WHERE shardid.id_shard(id) = 3)
  SELECT (SELECT count(*) FROM w WHERE id NOT IN (SELECT * FROM t)) || ' ' || (SELECT count(*) - count(DISTINCT t) FROM t) || ' ' ||
         (SELECT count(*) FROM t) - (SELECT count(*) FROM w) - $rows}),
	'0 0 0', 'every acknowledged shard-3 row on the target exactly once (missing, duplicated, extra)');
is(sql('b', 'SELECT count(*) FROM shard_0003.posts'), $rows + r('SELECT count(*) FROM public.written WHERE shardid.id_shard(id) = 3'),
	'rows of shard 3 on node b: loaded + written');
my ($refused_ms) = $out =~ /writes refused for (\d+) ms/;
my $pause = r(q{SELECT round(extract(epoch FROM max(gap)) * 1000)
  FROM (SELECT at - lag(at) OVER (ORDER BY n) AS gap FROM public.written WHERE shardid.id_shard(id) = 3) t});
my $other = r(q{SELECT round(extract(epoch FROM max(gap)) * 1000)
  FROM (SELECT at, at - lag(at) OVER (ORDER BY n) AS gap FROM public.written WHERE shardid.id_shard(id) <> 3) t WHERE at > }
	  . lit($move_start));
my $other_before = r(q{SELECT round(extract(epoch FROM max(gap)) * 1000)
  FROM (SELECT at, at - lag(at) OVER (ORDER BY n) AS gap FROM public.written WHERE shardid.id_shard(id) <> 3) t WHERE at <= }
	  . lit($move_start));
note(sprintf('shard of %s moved in %.0f ms; writes refused for %s ms (freeze to repoint); longest pause between writes: '
	  . 'shard 3 %s ms, other shards %s ms (%s ms in the second before the move); retries %s',
	$size, 1000 * ($t1 - $t0), $refused_ms // '?', $pause, $other, $other_before, r('SELECT sum(retries) FROM public.written')));
ok(defined $refused_ms, 'the move reports its refused window') or diag($out);
cmp_ok(r('SELECT count(*) FROM public.written WHERE shardid.id_shard(id) = 3 AND at > ' . lit($move_end)), '>', 0,
	'writes to the moved shard went on after the move');
is(r('SELECT count(*) FROM public.written WHERE shardid.id_shard(id) <> 3 AND retries > 0'), '0', 'writes to other shards never refused');
is(r('SELECT count(*) FILTER (WHERE id <= prev) FROM (SELECT id, lag(id) OVER (ORDER BY n) prev FROM public.written WHERE shardid.id_shard(id) = 3) t'),
	'0', 'shard-3 IDs increase in write order across the move');
is(sql('a', "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0003'") . ' '
	  . sql('a', q{SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname LIKE 'shard\_0003\_moved\_%' AND g.tgname = 'shardid_retired'}),
	'0 1', 'node a: old copy retired, refuses writes');
is($m->leftovers, $clean, 'nothing left behind');
is($m->writable(19), '3', 'shard 3 takes writes on b');

# --- 2. interruptions ---------------------------------------------------------------
sql('a', "INSERT INTO shard_0005.posts (user_id, body) SELECT 5, 'row ' || g FROM generate_series(1, 2000) g");
sub n5 { return r('SELECT count(*) FROM public.post_ids(ARRAY[5])'); }
my $rows5 = n5();
# the privileges given on a travel with the shard
sub acl5
{
	return sql($m->placed(5), q{SELECT has_table_privilege('app', 'shard_0005.posts', 'INSERT') || ' ' || has_table_privilege('app', 'shard_0005.posts', 'DELETE')
                                    || ' ' || has_sequence_privilege('app', 'shard_0005.id_seq', 'USAGE')});
}
is(acl5(), 'true false true', 'privileges of app on shard 5 (INSERT, DELETE, sequence USAGE)');
for my $ph (qw(schema subscribe copy frozen caught_up))
{
	$m->start_paused(5, 'b', $ph);
	if ($ph eq 'frozen' || $ph eq 'caught_up')
	{
		is($m->refused(5), '25006', "paused in $ph: a write to shard 5 refused at once");
	}
	my $bg = $m->stop_paused('cancel', 5);
	like($bg, qr/rolled back/, "cancel in phase $ph: the CALL says it rolled back") or diag($bg);
	is($m->where(5) . ' ' . sql('b', "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'"), 'a a 0',
		"cancel in phase $ph: rolled back, shard 5 on a");
	is($m->leftovers, $clean, "cancel in phase $ph: nothing left behind");
	is($m->writable(5), '5', "cancel in phase $ph: shard 5 writable");
	$rows5++;
}
# Cancelled once repointed: the target serves the shard; the next CALL finishes.
$m->start_paused(5, 'b', 'repointed');
my $bg = $m->stop_paused('cancel', 5);
like($bg, qr/again to finish/, 'cancel in phase repointed: the CALL says to CALL again') or diag($bg);
is($m->placed(5) . ' ' . r('SELECT phase FROM shardid.shard_moves WHERE shard = 5'), 'b repointed',
	'cancel in phase repointed: served by b, the move row kept');
my ($ret, $o, $err) = $router->psql('app', 'CALL shardid.abort_move(5)');
isnt($ret, 0, 'abort_move() of a repointed move fails');
like($err, qr/already served by node "b": the move cannot be aborted/, 'abort_move() of a repointed move refused, said why');
$m->move(5, 'b', ', drop_old => true');
is($m->where(5) . ' ' . n5(), "b b $rows5", 'cancel in phase repointed, CALL again: shard 5 on b only, all rows');
is($m->leftovers, $clean, 'cancel in phase repointed, CALL again: nothing left behind');
is($m->writable(5) . ' ' . acl5(), '5 true false true', 'cancel in phase repointed, CALL again: writable, privileges kept');
$rows5++;
# Terminated: the row keeps the phase; the next CALL resumes.
for my $ph (qw(schema subscribe copy frozen caught_up repointed))
{
	my $from = $m->placed(5);
	my $to = $m->other($from);
	$m->start_paused(5, $to, $ph);
	$m->stop_paused('terminate', 5);
	(my $phase = $ph) =~ s/subscribe/copy/;
	is(r('SELECT phase FROM shardid.shard_moves WHERE shard = 5'), $phase, "terminate in phase $ph: the phase is kept");
	if ($ph eq 'frozen')
	{
		# the lease froze it: it lapsed with the session, nothing is routed elsewhere
		is($m->writable(5), '5', "terminate in phase frozen: shard 5 writable on $from at once");
		$rows5++;
	}
	elsif ($ph eq 'caught_up')
	{
		# sealed for the repoint: frozen until the next CALL
		is($m->refused(5), '25006', 'terminate in phase caught_up: writes still refused');
	}
	$out = $m->move(5, $to, ', drop_old => true');
	like($out, qr/resuming the online move of shard 5.*\(phase \Q$phase\E\)/s, "terminate in phase $ph: the next CALL resumes it");
	is($m->placed(5) . ' ' . n5(), "$to $rows5", "terminate in phase $ph, CALL again: shard 5 on $to, all rows there");
	is($m->leftovers, $clean, "terminate in phase $ph, CALL again: nothing left behind");
	is($m->writable(5) . ' ' . acl5(), '5 true false true', "terminate in phase $ph, CALL again: writable, privileges kept");
	$rows5++;
}
# Terminated, then abort_move()
for my $ph (qw(copy frozen caught_up))
{
	my $from = $m->placed(5);
	my $to = $m->other($from);
	$m->start_paused(5, $to, $ph);
	$m->stop_paused('terminate', 5);
	$out = $m->move_fails(5, $from);
	like($out, qr/is being moved to node "\Q$to\E" \(phase \Q$ph\E\)/, "terminate in phase $ph: resuming to another node refused");
	($ret, $o, $err) = $router->psql('app', 'CALL shardid.abort_move(5)');
	is($ret, 0, "terminate in phase $ph: abort_move() succeeds") or diag($err);
	is($m->placed(5) . ' ' . sql($to, "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'"), "$from 0",
		"terminate in phase $ph, abort_move(): shard 5 stays on $from, no copy on $to");
	is($m->leftovers, $clean, "terminate in phase $ph, abort_move(): nothing left behind");
	is($m->writable(5), '5', "terminate in phase $ph, abort_move(): writable");
	$rows5++;
}
($ret, $o, $err) = $router->psql('app', 'CALL shardid.abort_move(5)');
isnt($ret, 0, 'abort_move() without a move in progress fails');
like($err, qr/no move of shard 5 is in progress/, 'abort_move() without a move in progress refused, said so');
# A session runs the move: abort_move() from another is refused, not mixed in.
my $mpid = $m->start_paused(5, $m->other($m->placed(5)), 'copy');
($ret, $o, $err) = $router->psql('app', 'CALL shardid.abort_move(5)', extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($ret, 0, 'abort_move() beside a running move fails');
like($err, qr/55006.*is being moved by another session \(backend $mpid\)/, 'abort_move() while another session runs the move: 55006, naming its backend');
$m->stop_paused('cancel', 5);
is($m->leftovers, $clean, 'cancelled after the refused abort: nothing left behind');

# DDL on the source during the copy: named, the move rolls back.
sub ddl_case
{
	my ($name, $ddl, $undo, $text) = @_;
	my $from = $m->placed(5);
	my $to = $m->other($from);
	$m->start_paused(5, $to, 'copy');
	sql($from, $ddl);
	$m->release_pause(5);
	my ($rc, $bg) = $m->finish_paused;
	isnt($rc, 0, "a move across DDL ($name) fails");
	like($bg, qr/\Q$text\E/, "DDL during the copy ($name): named") or diag($bg);
	like($bg, qr/the tables of shard 5 changed on node "\Q$from\E" during the/, "DDL during the copy ($name): reported as a change");
	is($m->placed(5), $from, "DDL during the copy ($name): rolled back, shard 5 stays on $from");
	is($m->leftovers, $clean, "DDL during the copy ($name): nothing left behind");
	sql($from, $undo);
	return;
}
ddl_case('column', 'ALTER TABLE shard_0005.posts ADD COLUMN mood text', 'ALTER TABLE shard_0005.posts DROP COLUMN mood',
	'table posts: column mood: text on node');
ddl_case('unique', 'ALTER TABLE shard_0005.posts ADD CONSTRAINT posts_body_key UNIQUE (id, body)',
	'ALTER TABLE shard_0005.posts DROP CONSTRAINT posts_body_key',
	'table posts: constraint posts_body_key: UNIQUE (id, body) on node');
ddl_case('check', q{ALTER TABLE shard_0005.posts ADD CONSTRAINT posts_body_check CHECK (body <> '')},
	'ALTER TABLE shard_0005.posts DROP CONSTRAINT posts_body_check',
	q{table posts: constraint posts_body_check: CHECK ((body <> ''::text)) on node});
ddl_case('default', q{ALTER TABLE shard_0005.posts ALTER COLUMN body SET DEFAULT 'none'}, 'ALTER TABLE shard_0005.posts ALTER COLUMN body DROP DEFAULT',
	q{table posts: column body: text NOT NULL DEFAULT 'none'::text on node});
ddl_case('index', 'CREATE INDEX posts_user_idx ON shard_0005.posts (user_id)', 'DROP INDEX shard_0005.posts_user_idx',
	'table posts: index posts_user_idx: CREATE INDEX posts_user_idx ON shard_0005.posts USING btree (user_id) on node');
ddl_case('grant', 'GRANT DELETE ON shard_0005.posts TO app', 'REVOKE DELETE ON shard_0005.posts FROM app', 'table posts: privileges: ');
ddl_case('sequence', 'CREATE SEQUENCE shard_0005.other_seq', 'DROP SEQUENCE shard_0005.other_seq', 'sequence other_seq: permanent on node');
# The target restarts during the copy: the subscription reconnects, the move completes.
{
	my $from = $m->placed(5);
	my $to = $m->other($from);
	$m->start_paused(5, $to, 'copy', ", node_timeout => '60 s'");
	$node{$to}->restart;
	$m->release_pause(5);
	my ($rc, $bg) = $m->finish_paused;
	is($rc, 0, 'the move across a target restart succeeds') or diag($bg);
	is($m->placed(5) . ' ' . n5(), "$to $rows5", "target restarted during the copy: shard 5 on $to, all rows");
	is($m->leftovers, $clean, 'target restarted: nothing left behind');
}

# --- 3. schema names --------------------------------------------------------------
r(q{SELECT public.insert_post(u, 'odd ' || u) FROM generate_series(6, 6 + 16 * 99, 16) u});
($rc, $out) = $m->cli('shardid-move-shard', '--router', $R, '--shard', 6, '--to', 'b');
is($rc, 0, 'moving the oddly named shard (CLI) succeeds') or diag($out);
is($m->where(6) . ' ' . sql('b', 'SELECT count(*) FROM :"odd".posts', extra_params => [ '-v', "odd=$ODD" ]), 'b b 100',
	'odd schema moved (CLI): placement, rows on b under its name');
is(sql('a', q{SELECT count(*) FROM pg_namespace WHERE starts_with(nspname, :'odd' || '_moved_')}, extra_params => [ '-v', "odd=$ODD" ]),
	'1', 'odd schema: the retired copy on a keeps the name\'s prefix');
is($m->writable(22), '6', 'odd schema: writable through the router');
is($m->leftovers, $clean, 'odd schema: nothing left behind');

# The payload of the review: a shard administrator names a shard's schema so
# that pasting it into SQL would make them superuser. Nothing is pasted.
my $EVIL = "x';COMMIT;ALTER ROLE shard_admin SUPERUSER;SELECT '";
sql($_, 'CREATE ROLE shard_admin NOSUPERUSER') for qw(a b);
sql('a', q{
SELECT shardid.detach_shard(4);
ALTER SCHEMA shard_0004 RENAME TO :"evil";
SELECT shardid.attach_shard(4, :'evil');
}, extra_params => [ '-v', "evil=$EVIL" ]);
$m->move(4, 'b');
is($m->where(4) . ' ' . join(' ', map { sql($_, "SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'") } qw(a b)), 'b b f f',
	'payload schema moved; shard_admin is no superuser on either node');
is($m->writable(20) . ' ' . $m->leftovers, "4 $clean", 'payload schema: writable through the router, nothing left behind');

# 63 bytes of two-byte characters: the retired names are cut at a character
# boundary, keep their suffix, and differ from move to move.
my $LONG = ("\xc3\xa9" x 31) . 'x';
note('database encoding: ' . sql('a', 'SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()'));
sql('a', q{
SELECT shardid.detach_shard(2);
ALTER SCHEMA shard_0002 RENAME TO :"long";
SELECT shardid.attach_shard(2, :'long');
}, extra_params => [ '-v', "long=$LONG" ]);
is(sql('a', 'SELECT octet_length(schema_name) FROM shardid.shard_registry WHERE shard = 2'), '63', 'the long schema name is 63 bytes');
$m->move(2, 'b');
$m->move(2, 'a');
$m->move(2, 'b');
is($m->where(2), 'b b', 'long name: moved there and back and there');
is(join(' ', map {
	sql($_, q{SELECT count(*) || ' ' || count(DISTINCT nspname) || ' ' || bool_and(octet_length(nspname) <= 63 AND nspname ~ ('^' || :'e' || '+_moved_[0-9]+$'))
                FROM pg_namespace WHERE starts_with(nspname, :'e' || :'e') AND nspname LIKE '%\_moved\_%'}, extra_params => [ '-v', "e=\xc3\xa9" ])
} qw(a b)), '2 2 true 1 1 true',
	'long name: retired copies on a and b: distinct, whole characters, 63 bytes at most, suffix kept');
is($m->writable(18) . ' ' . $m->leftovers, "2 $clean", 'long name: writable, nothing left behind');

# --- 4. the CLI: SIGINT, SIGTERM, SIGKILL, --shard 05 ------------------------------------
# cli_paused(SHARD-ARG, TO, PHASE) — the CLI in the background, paused in
# PHASE; returns its PID (its process group) and its log
my $cli_log = $router->basedir . '/cli.log';
sub cli_paused
{
	my ($shard_arg, $to, $phase) = @_;
	my $shard = $shard_arg + 0;
	$m->hold_pause($shard);
	my $pid = $m->spawn([ "$FindBin::RealBin/../../bin/shardid-move-shard", '--router', $R, '--shard', $shard_arg, '--to', $to, '--drop-old' ],
		$cli_log, PGOPTIONS => "-c shardid_test.move_pause=$phase");
	$m->{mpid} = $m->wait_paused($shard, $pid, $cli_log, "the CLI (--shard $shard_arg) in phase $phase");
	return $pid;
}
for my $sig (qw(INT TERM))
{
	my $from = $m->placed(5);
	my $to = $m->other($from);
	my $cli = cli_paused(5, $to, 'copy');
	kill $sig, $cli;
	isnt($m->reap($cli), 0, "CLI after SIG$sig exits non-zero");
	$m->release_pause(5);
	my $log = slurp_file($cli_log);
	like($log, qr/rolled back/, "CLI SIG$sig: says it rolled back") or diag($log);
	is($m->placed(5) . ' ' . $m->leftovers, "$from $clean", "CLI SIG$sig in phase copy: the CALL was cancelled, rolled back");
}
{
	my $from = $m->placed(5);
	my $to = $m->other($from);
	my $cli = cli_paused('05', $to, 'copy');
	my $mpid = $m->{mpid};
	# the move's own slot; a table-sync slot (pg_<sub>_sync_<rel>_<sys>) may
	# still be there while the copy runs, so only shardid's names are read
	like(sql($from, q{SELECT string_agg(slot_name, ' ') FROM pg_replication_slots WHERE slot_name NOT LIKE 'pg\_%'}), qr/^shardid_move_5_[0-9]+$/,
		'CLI --shard 05: the move\'s objects are named for shard 5');
	kill 'KILL', -$cli;
	$m->reap($cli);
	for (1 .. 100)
	{
		last if r("SELECT count(*) FROM pg_stat_activity WHERE pid = $mpid") eq '0';
		usleep(100_000);
	}
	$m->release_pause(5);
	ok($router->poll_query_until('app', "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $mpid"),
		'CLI killed (SIGKILL of its process group): its session ended');
	is(r('SELECT phase FROM shardid.shard_moves WHERE shard = 5'), 'copy', 'CLI killed: the phase is kept');
	($rc, $out) = $m->cli('shardid-move-shard', '--router', $R, '--shard', 5, '--abort');
	is($rc, 0, 'CLI --abort --shard 5 succeeds') or diag($out);
	is($m->placed(5) . ' ' . $m->leftovers, "$from $clean", 'CLI --abort --shard 5 after --shard 05: rolled back, nothing left behind');
}
($rc, $out) = $m->cli('shardid-move-shard', '--router', $R, '--shard', 5, '--abort');
is($rc, 1, 'CLI --abort without a move: exit 1');
like($out, qr/no move of shard 5 is in progress/, 'CLI --abort without a move: said so');

# --- 5. wal_level ------------------------------------------------------------------
my $c = $m->new_node('c', logical => 0, conf => "wal_level = replica\n");
$node{c} = $c;
$clean = $m->clean;
sql('c', q{
SELECT shardid.create_shard(9);
SELECT shardid.create_table('public.posts');
INSERT INTO shard_0009.posts (user_id, body) SELECT 9, 'c ' || g FROM generate_series(1, 50) g;
});
r('SELECT shardid.add_node(\'c\', ' . lit($c->connstr('app')) . ')');
r("DELETE FROM shardid.shard_placement WHERE shard = 9; SELECT shardid.place_shards('c', 9, 9)");
sql('b', 'SET client_min_messages = warning; DROP SCHEMA shard_0009 CASCADE; SELECT shardid.detach_shard(9)');
$out = $m->move_fails(9, 'a');
like($out, qr/node "c" has wal_level = replica: an online move needs wal_level = logical there/,
	'online move from a node without wal_level=logical refused');
($rc, $out) = $m->cli('shardid-move-shard', '--router', $R, '--shard', 9, '--to', 'a', '--offline');
is($rc, 0, 'offline move from c (CLI) succeeds') or diag($out);
is($m->where(9) . ' ' . sql('a', 'SELECT count(*) FROM shard_0009.posts') . ' ' . $m->writable(25), 'a a 50 9',
	'offline move from c (CLI): shard 9 on a with its rows, writable');
is($m->leftovers, $clean, 'offline move: nothing left behind');

# --- 6. rebalance: node c is empty ------------------------------------------------
sub counts
{
	return r(q{SELECT string_agg(n.node || '=' || (SELECT count(*) FROM shardid.shard_placement p WHERE p.node = n.node), ' ' ORDER BY n.node)
                 FROM shardid.nodes n});
}
my $before_counts = counts();
(undef, my $plan) = $m->cli_split('shardid-rebalance', '--router', $R, '--strategy', 'by_count', '--dry-run');
note("placement $before_counts; plan:");
note("  $_") for split /\n/, $plan;
is(counts(), $before_counts, 'dry run: nothing moved');
my @plan = split /\n/, $plan;
ok(@plan && !grep({ !/^move shard [0-9]+ from [ab] to c$/ } @plan), 'dry run plans moves from a and b to c only (' . scalar(@plan) . ' moves)');
($rc, my $made, $err) = $m->cli_split('shardid-rebalance', '--router', $R, '--strategy', 'by_count', '--offline', '--drop-old');
is($rc, 0, 'rebalance succeeds') or diag($err);
is($made, $plan, 'rebalance made the planned moves');
is(r(q{SELECT max(c) - min(c) <= 1 FROM (SELECT count(p.shard) c FROM shardid.nodes n LEFT JOIN shardid.shard_placement p USING (node)
         GROUP BY n.node) t}), 't', 'rebalanced: shards per node at most one apart');
is(join(' ', map { registered_where($_, \%node) } 0 .. 15), join(' ', map { $m->placed($_) } 0 .. 15),
	'rebalanced: every shard registered on exactly its node');
($rc, $out) = $m->cli('shardid-rebalance', '--router', $R, '--strategy', 'by_count', '--dry-run');
is($out, 'shardid-rebalance: balanced: nothing to move', 'rebalanced: balanced now, nothing more to move');
is($m->leftovers, $clean, 'rebalance: nothing left behind');

done_testing();
