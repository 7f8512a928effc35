# move_review.pl — the defects an adversarial review found in the shell
# tool's moves (issue 20), each reproduced against CALL move_shard(), in
# the setting of ShardidMoves.pm:
#   1. a shard administrator's code run by the move with a superuser's
#      rights: an ENABLE ALWAYS trigger on its shard (refused, diverged), on
#      the target's copy during the copy, and a CHECK constraint of its
#      template (both fire, never as a superuser); offline: the rows are
#      written as the owner, so both run as the owner (issue 27);
#   2. a cancel racing the repoint: either outcome is whole (the router
#      points at a node that holds every row), never a repointed move undone;
#   3. a node down in the cut-over: the target (the source writable again
#      while the target is down, the rest finished by abort_move() later)
#      and the source (its freeze lapses: writable when it is back, with
#      nobody re-running);
#   4. the source crashing mid-copy with a table-sync slot: dropped later,
#      by name, none left;
#   5. the target unreachable mid-copy: reported as such, not as DDL; the
#      source's slots dropped at once;
#   6. a replication error during the copy: the move fails (it would
#      otherwise wait for the copy to catch up) and rolls back.
# The times the bash suite bounded (the source writable again after a
# cancel, the failure after a replication error) are printed, not
# asserted. Runs on every major; 15 applies the copy as a role of the
# move, 16+ as the tables' owners.
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

my $m = ShardidMoves->new;
my %node = %{ $m->{node} };
my $router = $m->{router};
my $clean = $m->clean;

sub ms { return int(time() * 1000); }

# sql(NODE, SQL) — SQL in database app of node a or b
sub sql { my ($n, $q) = @_; return $node{$n}->safe_psql('app', $q); }

# --- 1. a shard administrator ---------------------------------------------------
# Databases adm on both servers are nodes a2 and b2; in them a role with only
# the README's shard-administrator grants owns a template, shards 20 and 21,
# and functions that record who runs them and make their owner superuser
# when they can.
for my $n (qw(a b))
{
	$node{$n}->safe_psql('postgres', 'CREATE ROLE shard_admin LOGIN; CREATE DATABASE adm');
	$node{$n}->safe_psql('adm', q{
CREATE EXTENSION shardid;
GRANT CREATE ON DATABASE adm TO shard_admin;
GRANT INSERT, UPDATE, DELETE ON shardid.shard_registry, shardid.sharded_tables TO shard_admin;
CREATE SCHEMA adm AUTHORIZATION shard_admin;
SET ROLE shard_admin;
CREATE TABLE adm.log (what text, by_role name, superuser boolean, at timestamptz DEFAULT clock_timestamp());
GRANT USAGE ON SCHEMA adm TO PUBLIC;
GRANT INSERT ON adm.log TO PUBLIC;
CREATE FUNCTION adm.seize(what text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO adm.log (what, by_role, superuser) VALUES (what, current_user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user));
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER ROLE shard_admin SUPERUSER;
    END IF;
    RETURN true;
END $$;
CREATE FUNCTION adm.on_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM adm.seize('trigger'); RETURN NEW; END $$;
CREATE TABLE adm.notes (id bigint PRIMARY KEY, body text NOT NULL, CONSTRAINT notes_seize CHECK (adm.seize('check')));
});
}
my %adm = (a2 => $node{a}, b2 => $node{b});
# adm(NODE, SQL) — SQL in database adm of node a2 or b2
sub adm { my ($n, $q) = @_; return $adm{$n}->safe_psql('adm', $q); }
adm('a2', q{
SET ROLE shard_admin;
SELECT shardid.create_shard(20);
SELECT shardid.create_shard(21);
SELECT shardid.create_table('adm.notes');
INSERT INTO shard_0020.notes (body) SELECT 'n' || g FROM generate_series(1, 200) g;
INSERT INTO shard_0021.notes (body) SELECT 'n' || g FROM generate_series(1, 200) g;
});
adm('b2', "SET ROLE shard_admin; SELECT shardid.create_table('adm.notes')");
$router->safe_psql('app', join ';',
	map { "SELECT shardid.add_node('$_', " . ShardidMoves::lit($adm{$_}->connstr('adm')) . ')' } qw(a2 b2));
$router->safe_psql('app', "SELECT shardid.place_shards('a2', 20, 21)");
adm('a2', 'TRUNCATE adm.log');

# whether shard_admin is a superuser on node a, on node b
sub admin_super
{
	return join ' ', map { sql($_, "SELECT rolsuper FROM pg_roles WHERE rolname = 'shard_admin'") } @_;
}
# log_of(NODE, WHAT) — "runs superuser-runs" of WHAT in NODE's adm.log
sub log_of
{
	my ($n, $what) = @_;
	return adm($n, "SELECT count(*) || ' ' || count(*) FILTER (WHERE superuser) FROM adm.log WHERE what = " . ShardidMoves::lit($what));
}
# who_ran(NODE, [WHAT]) — the roles that ran WHAT (anything) in NODE's adm.log
sub who_ran
{
	my ($n, $what) = @_;
	return adm($n, 'SELECT string_agg(DISTINCT by_role, \', \') FROM adm.log' . (defined $what ? ' WHERE what = ' . ShardidMoves::lit($what) : ''));
}
# adm_leftovers() — leftovers() and what a move may leave in the adm databases
sub adm_leftovers
{
	return $m->leftovers . ' adm=' . join(' ', map {
		adm($_, q{SELECT (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_subscription)
                       + (SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen')})
	} qw(a2 b2));
}
my $adm_clean = "$clean adm=0 0";
my $seize_trigger = 'CREATE TRIGGER seize BEFORE INSERT OR UPDATE ON shard_0020.notes FOR EACH ROW EXECUTE FUNCTION adm.on_write()';

# (a) the review's case: an ENABLE ALWAYS trigger on the shard's table. The
# target's copy comes from the templates, so the trigger is a difference.
adm('a2', "SET ROLE shard_admin; $seize_trigger; ALTER TABLE shard_0020.notes ENABLE ALWAYS TRIGGER seize");
my $out = $m->move_fails(20, 'b2');
like($out, qr/\Qtable notes: trigger seize: $seize_trigger (enabled always) on node "a2" only\E/,
	'an ENABLE ALWAYS trigger on the shard: refused, named');
is(admin_super('a') . ' ' . adm_leftovers(), "f $adm_clean", 'an ENABLE ALWAYS trigger on the shard: shard_admin no superuser; nothing left');
adm('a2', 'DROP TRIGGER seize ON shard_0020.notes');

# (b) the trigger put on the target's copy while it copies (its owner may):
# the writes it is fired by are applied as a non-superuser.
$m->start_paused(20, 'b2', 'copy');
$adm{b2}->poll_query_until('adm', 'SELECT count(*) = 200 FROM shard_0020.notes') or die 'the copy of shard 20 did not arrive';
adm('b2', "SET ROLE shard_admin; $seize_trigger; ALTER TABLE shard_0020.notes ENABLE ALWAYS TRIGGER seize");
adm('a2', "SET ROLE shard_admin; INSERT INTO shard_0020.notes (body) SELECT 'late ' || g FROM generate_series(1, 10) g");
$adm{b2}->poll_query_until('adm', 'SELECT count(*) = 210 FROM shard_0020.notes') or die 'the late rows did not arrive';
my $fired = log_of('b2', 'trigger');
$m->release_pause(20);
my ($rc, $bg) = $m->finish_paused;
isnt($rc, 0, 'a move with a trigger added to the target fails');
like($bg, qr/table notes: trigger seize: .* on node "b2" only/, 'the trigger on the target is named') or diag($bg);
is($fired, '10 0', 'a trigger on the target\'s copy: fired by the apply (10 rows), never as a superuser');
note('the trigger ran as: ' . who_ran('b2', 'trigger'));
is(admin_super('a', 'b') . ' ' . adm_leftovers(), "f f $adm_clean",
	'a trigger on the target\'s copy: the move rolled back; shard_admin no superuser; nothing left');

# (c) a CHECK constraint of the template calls the administrator's function:
# the copy and the apply run it, as the owner (16+) or the move's role (15).
adm('b2', 'TRUNCATE adm.log');
$m->start_paused(21, 'b2', 'copy');
adm('a2', "SET ROLE shard_admin; UPDATE shard_0021.notes SET body = body || '.' WHERE id IN (SELECT id FROM shard_0021.notes ORDER BY id LIMIT 5)");
$m->release_pause(21);
($rc, $bg) = $m->finish_paused;
is($rc, 0, 'the move of shard 21 succeeds') or diag($bg);
is($m->placed(21) . ' ' . adm('b2', 'SELECT count(*) FROM shard_0021.notes'), 'b2 200',
	'a template\'s CHECK with the administrator\'s code: shard 21 moved, its rows on b2');
my ($checks, $su) = split / /, log_of('b2', 'check');
cmp_ok($checks, '>=', 200, 'the CHECK ran for every row copied');
is($su, '0', 'the CHECK never ran as a superuser');
note('the CHECK ran as: ' . who_ran('b2', 'check') . " ($checks runs)");
is(admin_super('a', 'b') . ' ' . adm_leftovers(), "f f $adm_clean", 'shard_admin no superuser on either node; nothing left');

# (d) offline: the rows are written as the tables' owner, in a
# security-restricted operation with session_replication_role = replica
# (issue 27): the template's CHECK of the administrator's runs as the
# owner, never as a superuser; a trigger put on the target's copy fires only
# if ENABLE ALWAYS, as the owner, and the move refuses it and rolls back.
adm('a2', 'TRUNCATE adm.log');
my ($ret, $o, $err) = $router->psql('app', "CALL shardid.move_shard(21, 'a2', offline => true)");
is($ret, 0, 'an offline move of 21 starts') or diag($err);
is($router->safe_psql('app', "SELECT phase || ' ' || mode FROM shardid.shard_moves WHERE shard = 21"), 'frozen offline',
	'offline: frozen, waiting for its rows');
adm('a2', q{SET ROLE shard_admin;
CREATE TRIGGER seize BEFORE INSERT ON shard_0021.notes FOR EACH ROW EXECUTE FUNCTION adm.on_write();
ALTER TABLE shard_0021.notes ENABLE ALWAYS TRIGGER seize});
my $R = $router->connstr('app');
($rc, $out) = $m->cli('shardid-move-shard', '--router', $R, '--shard', 21, '--to', 'a2', '--offline');
isnt($rc, 0, 'the offline move with a trigger added to the target fails');
like($out, qr/trigger seize.*on node "a2" only/s, 'offline: the trigger on the target is named') or diag($out);
($checks, my $checks_su) = split / /, log_of('a2', 'check');
(my $fires, my $fires_su) = split / /, log_of('a2', 'trigger');
cmp_ok($checks, '>=', 200, 'offline: the CHECK ran for the rows');
cmp_ok($fires, '>=', 200, 'offline: the ENABLE ALWAYS trigger on the target\'s copy ran for the rows');
is("$checks_su $fires_su " . admin_super('a') . ' ' . $m->placed(21) . ' ' . adm_leftovers(), "0 0 f b2 $adm_clean",
	'offline, the CHECK and the trigger never ran as a superuser; the move refused the trigger and rolled back; shard_admin no superuser; nothing left');
note('offline, the CHECK and the trigger ran as: ' . who_ran('a2'));
($rc, $out) = $m->cli('shardid-move-shard', '--router', $R, '--shard', 21, '--to', 'a2', '--offline');
is($rc, 0, 'a clean offline move of 21 succeeds') or diag($out);
is($m->placed(21) . ' ' . adm('a2', 'SELECT count(*) FROM shard_0021.notes') . ' '
	  . adm('a2', 'SELECT count(*) FILTER (WHERE superuser) FROM adm.log') . ' ' . admin_super('a') . ' ' . adm_leftovers(),
	"a2 200 0 f $adm_clean",
	'offline, with the administrator\'s CHECK: moved (its rows on a2), the CHECK never run as a superuser; nothing left');

# --- 2. a cancel racing the repoint ------------------------------------------------
# The repoint waits for the router's placement lock; the lock is let go and
# the CALL cancelled at the same moment. Whichever wins, the shard is whole
# where the router points; a repointed move is never undone.
sql('a', "INSERT INTO shard_0005.posts (user_id, body) SELECT 5, 'r ' || g FROM generate_series(1, 500) g");
sub n5 { return $router->safe_psql('app', 'SELECT count(*) FROM public.post_ids(ARRAY[5])'); }
my $rows5 = n5();
my @outcomes;
for my $i (1 .. 6)
{
	my $to = $m->other($m->placed(5));
	my $mpid = $m->start_paused(5, $to, 'caught_up');
	my $locker = $router->background_psql('app', on_error_stop => 0);
	$locker->set_query_timer_restart;
	$locker->query_until(qr/locked/, "BEGIN;\nLOCK shardid.shard_placement IN EXCLUSIVE MODE;\n\\echo locked\nSELECT pg_sleep(900);\n");
	$m->release_pause(5);
	# the CALL reaches the repoint and waits for the lock (when it does not
	# get there, the race goes on anyway, as in the bash suite)
	for (1 .. 100)
	{
		last if $router->safe_psql('app',
			"SELECT count(*) FROM pg_locks WHERE relation = 'shardid.shard_placement'::regclass AND pid = $mpid AND NOT granted") ne '0';
		usleep(50_000);
	}
	$router->safe_psql('app', q{SELECT pg_cancel_backend(pid) FROM pg_locks
                                  WHERE relation = 'shardid.shard_placement'::regclass AND mode = 'ExclusiveLock' AND granted});
	usleep(1000 * $i) if $i % 2 == 0;
	$router->safe_psql('app', "SELECT pg_cancel_backend($mpid)");
	$locker->quit;
	$m->finish_paused;
	my $phase = $router->safe_psql('app', 'SELECT phase FROM shardid.shard_moves WHERE shard = 5');
	# a repointed move is finished by the next CALL (one test either way)
	my $resumed = '';
	if ($phase eq 'repointed')
	{
		($ret, $o, $err) = $router->psql('app', 'CALL shardid.move_shard(5, ' . ShardidMoves::lit($to) . ', drop_old => true)');
		$resumed = " resumed:$ret";
		diag($err) if $ret;
	}
	push @outcomes, $phase eq '' ? 'rolled_back' : $phase;
	my $here = $m->placed(5);
	is(registered_where(5, \%node) . ' ' . n5() . ' ' . $m->writable(5) . ' ' . $m->leftovers . $resumed,
		"$here $rows5 5 $clean" . ($phase eq 'repointed' ? ' resumed:0' : ''),
		"race $i ($outcomes[-1]): the shard is whole where the router points ($here), writable, nothing left"
		  . ($phase eq 'repointed' ? ' (the next CALL finished the move)' : ''));
	$rows5++;
}
note("race outcomes: @outcomes");

# --- 3. a node down in the cut-over ---------------------------------------------------
# (a) the target: the source is writable again first, at once.
my $from = $m->placed(5);
my $to = $m->other($from);
my $mpid = $m->start_paused(5, $to, 'frozen');
is($m->refused(5), '25006', 'frozen: a write refused');
$node{$to}->stop('immediate');
my $t0 = ms();
$router->safe_psql('app', "SELECT pg_cancel_backend($mpid)");
my $refused = '25006';
while (($refused = $m->refused(5)) ne '' && ms() - $t0 < 180_000) { usleep(10_000); }
my $t1 = ms();
is($refused, '', 'target down in the cut-over, the CALL cancelled: the source takes writes again while the target is down');
($rc, $bg) = $m->finish_paused;
isnt($rc, 0, 'a move with its target down fails');
$m->release_pause(5);
$rows5++;
note('target down in the cut-over: the source took writes again ' . ($t1 - $t0) . ' ms after the cancel');
is($router->safe_psql('app', qq{SELECT phase || ' ' || (last_error LIKE '%subscription shardid\\_move\\_5\\_% on node "$to"%')::text
                                  FROM shardid.shard_moves WHERE shard = 5}),
	'aborting true', 'target down: the rollback left the target\'s part, named');
is(sql($from, q{SELECT (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_replication_slots)
                     + (SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen')}),
	'0', 'target down: on the source, nothing of the move (publication, slots, freeze)');
$node{$to}->start;
($ret, $o, $err) = $router->psql('app', 'CALL shardid.abort_move(5)');
is($ret, 0, 'abort_move() after the target came back succeeds') or diag($err);
is($m->placed(5) . ' ' . n5() . ' ' . $m->leftovers, "$from $rows5 $clean", "target back, abort_move(): on $from, all rows, nothing left");

# (b) the source crashes: when it is back, its freeze has lapsed.
$from = $m->placed(5);
$to = $m->other($from);
$m->start_paused(5, $to, 'frozen');
$node{$from}->stop('immediate');
$node{$from}->start;
is($m->writable(5), '5', 'source crashed in the cut-over and back: writable with nobody re-running');
$rows5++;
$m->stop_paused('cancel', 5);
is($m->placed(5) . ' ' . n5() . ' ' . $m->leftovers, "$from $rows5 $clean",
	'source crashed, the CALL cancelled: rolled back, all rows, nothing left');

# --- 4. the source crashes mid-copy with a table-sync slot --------------------------
# Shard 7 is large enough that its table-sync worker copies for seconds,
# holding its slot on the source meanwhile; the source crashes then.
sql('a', 'INSERT INTO shard_0007.posts (user_id, body) SELECT 7, repeat(md5(g::text), 30) FROM generate_series(1, 100000) g');
$m->start_paused(7, 'b', 'subscribe', ", node_timeout => '2 s'");
$m->release_pause(7);
my $sync_slot = '';
for (1 .. 20 * $PostgreSQL::Test::Utils::timeout_default)
{
	$sync_slot = sql('a', q{SELECT slot_name FROM pg_replication_slots WHERE slot_name ~ '^pg_[0-9]+_sync_'});
	last if $sync_slot ne '';
	usleep(50_000);
}
isnt($sync_slot, '', "a table-sync slot appeared on the source ($sync_slot)");
$node{a}->stop('immediate');
($rc, $bg) = $m->finish_paused;
isnt($rc, 0, 'a move across a source crash fails');
like($bg, qr/node "a" \(the source of the move\) has been unreachable for/, 'the source crash is reported as such') or diag($bg);
$node{a}->start;
is(sql('a', 'SELECT count(*) FROM pg_replication_slots WHERE slot_name = ' . ShardidMoves::lit($sync_slot)), '1',
	'after the crash the table-sync slot is still on the source');
($ret, $o, $err) = $router->psql('app', 'CALL shardid.abort_move(7)');
is($ret, 0, 'abort_move() after the source came back succeeds') or diag($err);
is(sql('a', 'SELECT count(*) FROM pg_replication_slots') . ' ' . $m->where(7) . ' ' . $m->leftovers, "0 a a $clean",
	'source back, abort_move(): the table-sync slot dropped with the rest, nothing left');

# --- 5. the target unreachable mid-copy ------------------------------------------------
$from = $m->placed(5);
$to = $m->other($from);
$m->start_paused(5, $to, 'copy', ", node_timeout => '3 s'");
$node{$to}->stop('immediate');
$t0 = ms();
$m->release_pause(5);
($rc, $bg) = $m->finish_paused;
$t1 = ms();
isnt($rc, 0, 'a move with its target down mid-copy fails');
like($bg, qr/node "\Q$to\E" \(the target of the move\) has been unreachable for (\d\d):(\d\d):(\d\d) during the copy/,
	'target down mid-copy: reported as unreachable') or diag($bg);
my ($h, $mi, $s) = $bg =~ /has been unreachable for (\d\d):(\d\d):(\d\d)/;
cmp_ok(($h // 0) * 3600 + ($mi // 0) * 60 + ($s // 0), '>=', 3, 'target down mid-copy: reported once unreachable for node_timeout (3 s)');
unlike($bg, qr/changed on/, 'target down mid-copy: not reported as a change of definitions');
note('target down mid-copy: reported as unreachable after ' . ($t1 - $t0) . ' ms');
is(sql($from, 'SELECT count(*) FROM pg_replication_slots') . ' ' . $m->writable(5), '0 5',
	'target down mid-copy: the source keeps no slot (no WAL held for it), is writable');
$rows5++;
$node{$to}->start;
($ret, $o, $err) = $router->psql('app', 'CALL shardid.abort_move(5)');
is($ret, 0, 'abort_move() after the target came back succeeds') or diag($err);
is($m->placed(5) . ' ' . n5() . ' ' . $m->leftovers, "$from $rows5 $clean", 'target back, abort_move(): nothing left');

# --- 6. a replication error during the copy ----------------------------------------------
$from = $m->placed(5);
$to = $m->other($from);
$m->start_paused(5, $to, 'copy');
$node{$to}->poll_query_until('app', "SELECT count(*) = $rows5 FROM shard_0005.posts") or die 'the copy of shard 5 did not arrive';
my $id = sql($from, 'SELECT shardid.make_id(now(), 5, 999)');
sql($to, "INSERT INTO shard_0005.posts VALUES ($id, 5, 'only on the target')");
sql($from, "INSERT INTO shard_0005.posts VALUES ($id, 5, 'conflicts on the target')");
# the subscription stops at the error (disable_on_error); the move notices
$node{$to}->poll_query_until('app', 'SELECT count(*) = 1 FROM pg_subscription WHERE NOT subenabled');
is(sql($to, 'SELECT count(*) FROM pg_subscription WHERE NOT subenabled'), '1',
	'the apply failed on the conflicting row, the subscription stopped');
$t0 = ms();
$m->release_pause(5);
($rc, $bg) = $m->finish_paused;
$t1 = ms();
isnt($rc, 0, 'a move across a replication error fails');
like($bg, qr/replicating shard 5 to node "\Q$to\E" failed: its subscription shardid_move_5_[0-9]* stopped at an error/,
	'the replication error is reported') or diag($bg);
note('a replication error failed the move ' . ($t1 - $t0) . ' ms into its copy phase');
is($m->placed(5) . ' ' . $m->leftovers, "$from $clean", 'replication error: rolled back, nothing left');

done_testing();
