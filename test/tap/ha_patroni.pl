# shardid under the HA tools users run (docs/high-availability.md): two
# data nodes and the router, each a Patroni cluster of two members
# (synchronous mode) on one etcd, the nodes added to the router with
# multi-host connect strings (target_session_attrs=read-write), and the
# application's writes going through the router. For each failover: how
# long writes paused, IDs repeated, acknowledged writes lost, and how long
# until the move or job ended with no one acting (noted in the log, and
# in docs/high-availability.md).
#   1. node a's leader killed under writes (the replica takes over when
#      the leader key expires: ttl): 0 repeated IDs, 0 acknowledged writes
#      lost; the old leader rejoins (pg_rewind); the new leader's log
#      names each generator moved by its schema-qualified name.
#   2. a move's source (b) killed mid-copy. 15, 16: node_timeout shorter
#      than the failover: the copy gives up, the rollback waits for the
#      node and ends by itself. 17 and later: the move's failover slot,
#      synced to the replica, lets it go on and finish. Nothing left on
#      any member, the rejoined old leader included.
#      2b. its source switched over instead: 15, 16: the move rolls back,
#      and Patroni drops the slot the old leader keeps as a replica; 17
#      and later: the move finishes, and the old leader's copy of the
#      slot, back on a replica, is dropped by its launcher (shardid
#      preloaded on every member; docs/high-availability.md).
#      2c. its source restarted (no failover): 15, 16: Patroni drops the
#      move's slot, which rolls back; 17 and later: the move finishes.
#   3. a move's target switched over mid-copy: the move ends by itself.
#   In 2 to 4 a client writes through the router (writes paused, IDs
#   repeated, acknowledged writes lost).
#   4. the router failed over (patronictl failover: pg_ctl promote) while a
#      background job moves shards: the launcher (shardid in
#      shared_preload_libraries) resumes it on the new leader and it ends
#      'finished'. Skipped where this shardid has no launcher.
# Skipped where patroni or etcd is not installed (lib/deps.sh installs
# Debian's patroni and etcd-server).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Utils;
use ShardidPatroni;
use ShardidTest qw(node_insert_post_sql post_ids_sql router_dblink_sql);
use Test::More;
use Time::HiRes qw(time usleep);

if (my $why = ShardidPatroni::missing())
{
	plan skip_all => $why;
}

my $t_all = time;
my $ha = ShardidPatroni->new;
my $template = q{
CREATE EXTENSION shardid;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
} . node_insert_post_sql() . post_ids_sql('node');
# every member preloads shardid: the router's launcher resumes jobs after
# a promotion; a node replica's drops what moves left there while it led
my $preload = { shared_preload_libraries => 'shardid' };
my $c = $ha->clusters(
	a => { logical => 1, sql => $template, parameters => $preload },
	b => { logical => 1, sql => $template, parameters => $preload },
	router => {
		parameters => { shared_preload_libraries => 'shardid' },
		sql => 'CREATE EXTENSION dblink; CREATE EXTENSION shardid;'
	});
my %node = (a => $c->{a}, b => $c->{b});
my $router = $c->{router};
$node{a}->leader->psql('app', "SELECT shardid.create_shards(0, 3); SELECT shardid.create_table('public.posts');");
$node{b}->leader->psql('app', "SELECT shardid.create_shards(4, 7); SELECT shardid.create_table('public.posts');");

# the router: each node by the connect string of both its members
my $r = $router->leader;
for my $n (qw(a b))
{
	$r->psql('app', "SELECT shardid.add_node('$n', \$\$" . $node{$n}->connstr('app') . "\$\$)");
}
$r->psql('app', "SELECT shardid.place_shards('a', 0, 3); SELECT shardid.place_shards('b', 4, 7);");
$r->psql('app', slurp_file(dirname(__FILE__) . '/../lib/move_pause.sql'));

# The application's writer on the router: public.insert_post(shard, body)
# calls the shard's node over dblink (a new connection each time, so it
# follows the node's leader), retrying in a new transaction while the node
# is unreachable or read-only, for up to 120 s. public.written keeps every
# acknowledged ID (no UNIQUE constraint: repeats are counted, not refused).
$r->psql('app', router_dblink_sql() . q{
CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint LANGUAGE sql AS $$
    SELECT t.id FROM public.dblink(public.shard_connstr(i_shard),
                                   format('SELECT public.insert_post(%s, %L)', i_shard, i_body)) AS t(id bigint)
$$;
CREATE TABLE public.written (n bigserial PRIMARY KEY, id bigint NOT NULL, key integer NOT NULL,
                             at timestamptz NOT NULL DEFAULT clock_timestamp(), retries integer NOT NULL);
CREATE TABLE public.stop_writer (stop boolean);
CREATE PROCEDURE public.writer(i_keys integer[]) LANGUAGE plpgsql AS $$
DECLARE
    k integer; new_id bigint; tries integer; i integer := 0; t0 timestamptz;
BEGIN
    WHILE NOT EXISTS (SELECT FROM public.stop_writer) LOOP
        i := i + 1;
        k := i_keys[1 + i % cardinality(i_keys)];
        tries := 0;
        t0 := clock_timestamp();
        LOOP
            BEGIN
                new_id := public.insert_post(k, 'writer ' || i);
                EXIT;
            EXCEPTION WHEN read_only_sql_transaction OR sqlclient_unable_to_establish_sqlconnection
                        OR connection_exception OR admin_shutdown OR crash_shutdown OR cannot_connect_now THEN
                tries := tries + 1;
                IF clock_timestamp() - t0 > interval '120 s' THEN RAISE; END IF;
            END;
            COMMIT;
            PERFORM pg_sleep(0.05);
        END LOOP;
        INSERT INTO public.written (id, key, retries) VALUES (new_id, k, tries);
        COMMIT;
        PERFORM pg_sleep(0.01);
    END LOOP;
END $$;
});
note(sprintf('three Patroni clusters set up in %.1f s', time - $t_all));

# spawn(MEMBER, SQL) — psql running SQL (or each of an array of
# statements, one transaction each) on the member's app in the background; reap(H) — its exit code, output and errors.
sub spawn
{
	my ($m, $sql) = @_;
	my %h = (out => '', err => '');
	$h{run} = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1',
			'-d', "host=127.0.0.1 port=$m->{port} user=postgres dbname=app",
			map { ('-c', $_) } ref $sql ? @$sql : ($sql)
		],
		'<', \undef, '>', \$h{out}, '2>', \$h{err});
	return \%h;
}

sub reap
{
	my ($h) = @_;
	my $rc = $h->{run}->finish ? 0 : ($? >> 8) || 1;
	return ($rc, $h->{out}, $h->{err});
}

# paused(MEMBER, WHAT) — until a session waits at the pause hook; bails out
# naming what failed when the move or job H ended first.
sub paused
{
	my ($m, $h, $what) = @_;
	my $t = wait_until(60, sub {
		return 1 if $h && done($h);
		$m->psql('app', q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted}) > 0 });
	BAIL_OUT("$what did not reach its copy: " . ($h ? join(' ', reap($h)) : '')) if !defined $t || ($h && done($h));
	return;
}

# done(H) — whether the background psql H has ended.
sub done
{
	my ($h) = @_;
	return 1 unless $h->{run}->pumpable;
	eval { $h->{run}->pump_nb; };
	return !$h->{run}->pumpable;
}

# ids(NODE, SHARDS) — the IDs of the shards' posts on the node's leader.
sub ids
{
	my ($c, @shards) = @_;
	return split /\n/, $c->wait_leader->psql('app', 'SELECT public.post_ids(ARRAY[' . join(',', @shards) . '])');
}

# the router's checks after each failover
sub cluster_problems
{
	return $router->wait_leader->psql('app',
		q{SELECT COALESCE(string_agg(kind || ' ' || COALESCE(shard::text, '-') || ' ' || COALESCE(node, '-') || ': ' || detail, '; '), '')
		    FROM shardid.check_cluster()});
}

# move_leftovers() — the moves' objects on every member of both nodes,
# replicas included ('' when none): publications and subscriptions on the
# leaders, replication slots named shardid_move_% or pg_%_sync_% anywhere.
sub move_leftovers
{
	my @left;
	for my $n (sort keys %node)
	{
		my $l = $node{$n}->wait_leader;
		my $o = $l->psql('app', q{SELECT concat_ws(' ', (SELECT string_agg(pubname, ' ') FROM pg_publication),
		                                              (SELECT string_agg(subname, ' ') FROM pg_subscription))});
		push @left, "$n leader: $o" if $o ne '';
		for my $m ($node{$n}->members)
		{
			next unless $m->{proc};
			my ($rc, $s) = $m->try_psql('app', q{SELECT string_agg(slot_name, ' ') FROM pg_replication_slots
			                                      WHERE slot_type = 'logical'});
			push @left, "$m->{name}: slots $s" if $rc == 0 && $s ne '';
		}
	}
	push @left, 'router: moves ' . $_
	  for grep { $_ ne '' } $router->wait_leader->psql('app', q{SELECT string_agg(shard || ' ' || phase || ' ' || COALESCE(last_error, ''), '; ') FROM shardid.shard_moves});
	return join '; ', @left;
}

# wait_until(TIMEOUT, CODE) — polls CODE every 0.2 s; the seconds it
# took, or undef after TIMEOUT s.
sub wait_until
{
	my ($timeout, $code) = @_;
	my $t0 = time;
	until ($code->())
	{
		return undef if time - $t0 > $timeout;
		usleep(200_000);
	}
	return time - $t0;
}

# The application as a client (cases 2 to 4): a shell loop that calls
# public.insert_post() on the router through the router's multi-host
# connect string, a new connection each time (so it follows the router's
# leader too), retrying a key until it is written; each acknowledged ID
# is a line "time key id" in a file. writer_stop() measures the case:
# acknowledged writes, IDs acknowledged twice, acknowledged IDs missing
# from the node that holds their shard now, and the longest pause between
# two acknowledgements.
my $writer_n = 0;
sub writer_start
{
	my (@keys) = @_;
	my %w = (file => "$ha->{dir}/writer" . ++$writer_n, keys => \@keys);
	$w{stop} = "$w{file}.stop";
	my $conn = $router->connstr('app');
	$w{run} = IPC::Run::start(
		[
			'bash', '-c', q{
			conn=$1 stop=$2; shift 2
			while [ ! -e "$stop" ]; do
				for k in "$@"; do
					until id=$(psql -XAtq -d "$conn" -c "SELECT public.insert_post($k, 'client')" 2>/dev/null) && [ -n "$id" ]; do
						[ -e "$stop" ] && exit 0
						sleep 0.05
					done
					echo "$(date +%s.%N) $k $id"
					sleep 0.05
				done
			done}, 'writer', $conn, $w{stop}, @keys
		],
		'<', \undef, '>', $w{file}, '2>', "$w{file}.err");
	wait_until(60, sub { -s $w{file} && (() = slurp_file($w{file}) =~ /\n/g) >= 10 })
	  or BAIL_OUT('the client writer wrote nothing: ' . slurp_file("$w{file}.err"));
	return \%w;
}

sub writer_stop
{
	my ($w, $case) = @_;
	open my $f, '>', $w->{stop} or die "$w->{stop}: $!";
	close $f;
	$w->{run}->finish;
	my @acks = map { [split / /] } grep { /^\d/ } split /\n/, slurp_file($w->{file});
	my (%seen, $paused);
	my $repeated = grep { $seen{ $_->[2] }++ } @acks;
	for my $i (1 .. $#acks)
	{
		my $gap = $acks[$i][0] - $acks[ $i - 1 ][0];
		$paused = $gap if !defined $paused || $gap > $paused;
	}
	my $lost = 0;
	for my $k (@{ $w->{keys} })
	{
		my $where = $router->wait_leader->psql('app', "SELECT node FROM shardid.placement WHERE shard = $k");
		my %on = map { $_ => 1 } ids($node{$where}, $k);
		$lost += grep { $_->[1] == $k && !$on{ $_->[2] } } @acks;
	}
	is($repeated, 0, "$case: no ID acknowledged twice (" . scalar(@acks) . ' acknowledged)');
	is($lost, 0, "$case: no acknowledged write lost");
	note(sprintf('%s: writes paused %.1f s at most; %d acknowledged, %d repeated, %d lost', $case, $paused // -1, scalar(@acks), $repeated, $lost));
	return;
}

# --- 1. node a's leader killed under writes ---------------------------------
{
	my $w = spawn($router->leader, 'CALL public.writer(ARRAY[0, 1, 2, 3])');
	wait_until(30, sub { $router->leader->psql('app', 'SELECT count(*) FROM public.written') >= 50 })
	  or BAIL_OUT('the writer wrote nothing');
	my $killed_at = time;
	my $old = $node{a}->kill_leader;
	my $new = $node{a}->wait_leader($old);
	my $promoted = time - $killed_at;
	# writes go on through the new leader
	my $before = $router->leader->psql('app', 'SELECT count(*) FROM public.written');
	ok(wait_until(60, sub { $router->leader->psql('app', 'SELECT count(*) FROM public.written') >= $before + 50 }),
		'1: writes go on through the new leader of a, by the same connect string');
	$router->leader->psql('app', 'INSERT INTO public.stop_writer VALUES (true)');
	my ($rc, $out, $err) = reap($w);
	is($rc, 0, '1: the writer ended without an error') or diag($err);
	$router->leader->psql('app', 'DELETE FROM public.stop_writer');

	my $r = $router->leader;
	my ($acked, $repeated, $paused) = split /\|/, $r->psql('app', q{
		SELECT count(*), count(*) - count(DISTINCT id),
		       round(extract(epoch FROM (SELECT max(d) FROM (SELECT at - lag(at) OVER (ORDER BY n) AS d FROM public.written) AS g))::numeric, 1)
		  FROM public.written});
	my %on_a = map { $_ => 1 } ids($node{a}, 0 .. 3);
	my @lost = grep { !$on_a{$_} } split /\n/, $r->psql('app', 'SELECT id FROM public.written');
	is($repeated, 0, "1: no ID acknowledged twice ($acked acknowledged)");
	is(scalar(@lost), 0, '1: no acknowledged write lost (synchronous mode)');
	note(sprintf('1: leader of a killed: %s promoted after %.1f s; writes paused %s s; %d acknowledged, %d repeated, %d lost',
			$new->{name}, $promoted, $paused, $acked, $repeated, scalar(@lost)));
	like($new->log, qr/shardid: generator "shard_000[0-3]\.id_seq" moved past the previous timeline's IDs/,
		'1: the new leader logs the generator moved by its schema-qualified name');

	# the old leader rejoins as a replica (pg_rewind) while case 2 runs on b
	$node{a}{rejoining} = [ $old, time ];
	$old->start;
}

# --- 2. a move's source killed mid-copy --------------------------------------
# The move of shard 4 from b to a is held in its copy (the pause hook of
# test/lib/move_pause.sql) while b's leader is killed.
#   15, 16: node_timeout (15 s) is shorter than the failover (ttl 20 s), so
#     the copy gives up while b has no leader and the rollback must wait
#     for it (the slot is on the killed member only).
#   17 and later: the move's slot is a failover slot, synced to b's replica
#     before the kill; node_timeout is the default (90 s), the old leader
#     comes back as soon as the new one leads (as a machine restarting:
#     synchronized_standby_slots waits for it), and the move goes on from
#     the synced slot to 'finished'.
my $failover_slots = $ha->{major} >= 17;
# Patroni 4.1 leaves a failover slot alone; 4.0 (Debian 13's 4.0.7, on
# 17) drops it as a slot it does not know, as Patroni 3 drops a move's
# slot on 15 and 16 (2b, 2c)
my $patroni_keeps = $failover_slots && $ha->{patroni} >= 4.01;
note(sprintf('Patroni %.4f on PostgreSQL %d: failover slots %s, kept by Patroni %s', $ha->{patroni}, $ha->{major},
		$failover_slots ? 'yes' : 'no', $patroni_keeps ? 'yes' : 'no'));
{
	my $w = writer_start(4, 6);
	my $hold = spawn($router->leader, q{SET application_name = 'pause_holder';
		SELECT pg_advisory_lock(hashtext('shardid_test.move_pause'), 4), pg_sleep(600)});
	wait_until(10, sub { $router->leader->psql('app', q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted}) > 0 });
	my $mv = spawn($router->leader,
		[ q{SET shardid_test.move_pause = 'copy'},
		  $failover_slots ? q{CALL shardid.move_shard(4, 'a')} : q{CALL shardid.move_shard(4, 'a', node_timeout => '15 s')} ]);
	paused($router->leader, $mv, 'the move');
	my $slot = $node{b}->leader->psql('app', q{SELECT string_agg(slot_name, ' ') FROM pg_replication_slots WHERE slot_type = 'logical'});
	if ($failover_slots)
	{
		my $replica = $node{b}->replica;
		my $synced = wait_until(60, sub {
			$replica->psql('app', q{SELECT count(*) FROM pg_replication_slots
			                         WHERE slot_name LIKE 'shardid\_move\_%' AND synced AND NOT temporary}) > 0 });
		ok(defined $synced, "2: the move's failover slot is synced to b's replica") or
		  diag($replica->psql('app', q{SELECT string_agg(slot_name || ' synced=' || synced || ' temporary=' || temporary, '; ') FROM pg_replication_slots}));
		note(sprintf("2: the move's slot synced to %s %.1f s after the copy began", $replica->{name}, $synced // -1));
	}
	my $killed_at = time;
	my $old = $node{b}->kill_leader;
	if ($failover_slots)
	{
		$node{b}->wait_leader($old);
		$old->start;
	}
	$router->leader->psql('app', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pause_holder'});
	reap($hold);
	my ($rc, $out, $err) = reap($mv);
	my $ended = time - $killed_at;
	if ($failover_slots)
	{
		is($rc, 0, '2: the move went on from the synced slot and finished') or diag($err);
		is($router->leader->psql('app', 'SELECT node FROM shardid.placement WHERE shard = 4'), 'a', '2: shard 4 is on a');
		note(sprintf('2: source killed mid-copy: the move %s by itself %.1f s after the kill',
				$rc == 0 ? 'finished' : 'rolled back', $ended));
	}
	else
	{
		isnt($rc, 0, '2: the move failed');
		like($err, qr/rolled back/, '2: and was rolled back') or diag($err);
		unlike($err, qr/rollback incomplete/, '2: the rollback is complete') or diag($err);
		my ($msg) = $err =~ /ERROR:\s+(.*?)(?=\n(?:[A-Z]+:|psql:)|\n*\z)/s;
		unlike($msg // '', qr/\n/, '2: its error is one line, libpq\'s per-host errors folded') or diag($err);
		is(scalar(() = $err =~ /rolling back the move/g), 1, '2: the rollback says once that it rolls back') or diag($err);
		note("2: the move's error: $err");
		note(sprintf('2: source killed mid-copy: the move ended by itself %.1f s after the kill (node_timeout 15 s)', $ended));
		is($router->leader->psql('app', 'SELECT node FROM shardid.placement WHERE shard = 4'), 'b', '2: shard 4 stays on b');
	}
	is($router->leader->psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '0', '2: no move left in progress');
	is($node{b}->wait_leader->psql('app', q{SELECT count(*) FROM pg_trigger AS t JOIN pg_class AS c ON c.oid = t.tgrelid
	                                          WHERE c.relnamespace = 'shard_0004'::regnamespace}), '0', '2: shard 4 is not frozen on b')
	  unless $failover_slots;
	writer_stop($w, '2');

	# The old leader rejoins with pg_rewind, which leaves pg_replslot alone:
	# it starts as a replica with the move's slots, which would hold WAL
	# there. Patroni drops them (an unknown slot on a member, unless
	# ignore_slots names it: docs/high-availability.md).
	$old->start unless $failover_slots;
	$node{b}->wait_replicas;
	note("2: the move's slots on the old leader when it was killed: $slot");
	note('2: left when the old leader streamed again: ' . (move_leftovers() || 'nothing'));
	my $left = wait_until(30, sub { move_leftovers() eq '' });
	ok(defined $left, '2: nothing of the move is left on any member, the rejoined old leader included')
	  or diag(move_leftovers());
	my @said = grep { /replication slot|pg_rewind/ } split /\n/, slurp_file("$old->{dir}/patroni.log");
	note(sprintf('2: nothing left %.1f s after the old leader streamed; its Patroni said: %s', $left // -1, join(' | ', @said) || 'nothing of slots'));
}

# --- 2b. a move's source switched over mid-copy ------------------------------
# A switchover stops the leader cleanly: it needs no pg_rewind (which
# empties pg_replslot, from PostgreSQL 11), so it rejoins as a replica
# with the move's slot in pg_replslot, where the slot would hold WAL.
#   15, 16: Patroni drops it there (a slot it does not know). The move
#     finds its slot gone from the new leader and rolls back at once.
#   17 and later: the new leader has the failover slot (synced); the
#     move's subscription, stopped by the lost connection, is enabled again
#     and the move finishes. The old leader's copy is a failover slot
#     that Patroni 4 leaves to PostgreSQL, whose slot sync drops only the
#     slots it made: it is dropped there by hand, as docs/high-availability.md
#     says.
{
	$node{b}->wait_replicas;
	my $w = writer_start(5, 7);
	my $hold = spawn($router->leader, q{SET application_name = 'pause_holder';
		SELECT pg_advisory_lock(hashtext('shardid_test.move_pause'), 5), pg_sleep(600)});
	wait_until(10, sub { $router->leader->psql('app', q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted}) > 0 });
	my $mv = spawn($router->leader, [ q{SET shardid_test.move_pause = 'copy'}, q{CALL shardid.move_shard(5, 'a')} ]);
	paused($router->leader, $mv, 'the move');
	if ($failover_slots)
	{
		my $replica = $node{b}->replica;
		ok(defined wait_until(60, sub {
			$replica->psql('app', q{SELECT count(*) FROM pg_replication_slots
			                         WHERE slot_name LIKE 'shardid\_move\_5\_%' AND synced AND NOT temporary}) > 0 }),
			"2b: the move's failover slot is synced to b's replica");
	}
	my $t0 = time;
	my $old = $node{b}->leader;
	my $new = $node{b}->switchover;
	$router->leader->psql('app', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pause_holder'});
	reap($hold);
	my ($rc, $out, $err) = reap($mv);
	note(sprintf('2b: source switched over to %s mid-copy: the move %s %.1f s after the switchover began',
			$new->{name}, $rc == 0 ? 'finished' : 'rolled back', time - $t0));
	if ($failover_slots)
	{
		is($rc, 0, '2b: the move went on from the synced slot and finished') or diag($err);
		is($router->leader->psql('app', 'SELECT node FROM shardid.placement WHERE shard = 5'), 'a', '2b: shard 5 is on a');
	}
	else
	{
		like($err, qr/rolled back/, '2b: the move rolled back by itself') or diag($err);
	}
	is($router->leader->psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '0', '2b: no move left in progress');
	writer_stop($w, '2b');
	$node{b}->wait_replicas;
	# what Patroni 4 and PostgreSQL's slot sync leave on the old leader
	# (17 and later), its launcher drops once it is a replica
	my $left = wait_until(60, sub { move_leftovers() eq '' });
	ok(defined $left, '2b: nothing of the move is left on any member, the old leader included, with no one acting')
	  or diag(move_leftovers());
	my @said = grep { /replication slot|pg_rewind/ } split /\n/, slurp_file("$old->{dir}/patroni.log");
	my @dropped = grep { /shardid launcher: dropped replication slot/ } split /\n/, slurp_file("$old->{dir}/postgresql.log");
	note(sprintf('2b: gone %.1f s after the move ended; its Patroni said: %s; its launcher: %s', $left // -1,
			join(' | ', @said) || 'nothing of slots', join(' | ', @dropped) || 'nothing'));
	ok(scalar(@dropped), "2b: the old leader's launcher dropped its copy of the move's slot") if $patroni_keeps;
}

# --- 2c. a move's source restarted mid-copy ----------------------------------
# patronictl restart of the source's leader (no failover).
#   15, 16: Patroni drops the move's slot, a logical slot it does not know,
#     when it loads the slots again after the restart: the move finds its
#     slot gone and rolls back by itself.
#   17 and later with Patroni 4.1: it leaves a failover slot alone; the
#     subscription, stopped at the lost connection, is enabled again and
#     the move finishes. Patroni 4.0 drops it, as on 15 and 16.
# The source is the node with fewer shards (a on a tie), so the rebalance
# of case 4 still has a shard to move.
{
	$node{b}->wait_replicas;
	my $r = $router->leader;
	my ($from, $to) = $r->psql('app', q{SELECT count(*) FILTER (WHERE node = 'a') <= count(*) FILTER (WHERE node = 'b') FROM shardid.placement}) eq 't'
	  ? ('a', 'b') : ('b', 'a');
	my ($shard, $other) = split /\n/, $r->psql('app', "SELECT shard FROM shardid.placement WHERE node = '$from' AND shard <> 1 ORDER BY shard LIMIT 2");
	my $w = writer_start($shard, $other // $shard);
	my $hold = spawn($r, qq{SET application_name = 'pause_holder';
		SELECT pg_advisory_lock(hashtext('shardid_test.move_pause'), $shard), pg_sleep(600)});
	wait_until(10, sub { $r->psql('app', q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted}) > 0 });
	my $mv = spawn($r, [ q{SET shardid_test.move_pause = 'copy'}, qq{CALL shardid.move_shard($shard, '$to')} ]);
	paused($r, $mv, 'the move');
	my $t0 = time;
	$node{$from}->restart_leader;
	my $restarted = time - $t0;
	$r->psql('app', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pause_holder'});
	reap($hold);
	my ($rc, $out, $err) = reap($mv);
	if ($patroni_keeps)
	{
		is($rc, 0, "2c: the move of shard $shard from $from went on through its source's restart and finished") or diag($err);
		is($r->psql('app', "SELECT node FROM shardid.placement WHERE shard = $shard"), $to, "2c: shard $shard is on $to");
	}
	else
	{
		like($err, qr/rolled back/, "2c: the move of shard $shard from $from rolled back by itself") or diag($err);
		is($r->psql('app', "SELECT node FROM shardid.placement WHERE shard = $shard"), $from, "2c: shard $shard stays on $from");
		note('2c: ' . join(' | ', grep { /Dropped unknown replication slot 'shardid_move/ }
				map { split /\n/, slurp_file("$_->{dir}/patroni.log") } $node{$from}->members));
	}
	note(sprintf('2c: source %s restarted mid-copy (%.1f s): the move %s %.1f s after the restart began',
			$from, $restarted, $rc == 0 ? 'finished' : 'failed', time - $t0));
	is($r->psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '0', '2c: no move left in progress');
	writer_stop($w, '2c');
	ok(defined wait_until(30, sub { move_leftovers() eq '' }), '2c: nothing of the move is left on any member')
	  or diag(move_leftovers());
}

# case 1's old leader of a is back
{
	my ($old, $t0) = @{ $node{a}{rejoining} };
	$node{a}->wait_replicas;
	note(sprintf('1: %s streams again as a replica (checked %.1f s after its Patroni started)', $old->{name}, time - $t0));
	is($old->psql('app', 'SELECT pg_is_in_recovery()'), 't', '1: the old leader of a rejoined as a replica');
	is(cluster_problems(), '', '1, 2: check_cluster() finds nothing');
}

# --- 3. a move's target switched over mid-copy -------------------------------
{
	my $w = writer_start(1, 7);
	my $hold = spawn($router->leader, q{SET application_name = 'pause_holder';
		SELECT pg_advisory_lock(hashtext('shardid_test.move_pause'), 1), pg_sleep(600)});
	wait_until(10, sub { $router->leader->psql('app', q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted}) > 0 });
	my $mv = spawn($router->leader, [ q{SET shardid_test.move_pause = 'copy'}, q{CALL shardid.move_shard(1, 'b')} ]);
	paused($router->leader, $mv, 'the move');
	my $t0 = time;
	my $new = $node{b}->switchover;
	$router->leader->psql('app', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pause_holder'});
	reap($hold);
	my ($rc, $out, $err) = reap($mv);
	my $ended = time - $t0;
	my $where = $router->leader->psql('app', 'SELECT node FROM shardid.placement WHERE shard = 1');
	note(sprintf('3: target switched over to %s mid-copy: the move %s %.1f s after the switchover began',
			$new->{name}, $rc == 0 ? 'finished' : 'rolled back', $ended));
	note("3: $err") if $rc;
	is($rc == 0 ? $where : 'a', $rc == 0 ? 'b' : $where, '3: the move ended by itself, the shard on one node');
	is($router->leader->psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '0', '3: no move left in progress');
	writer_stop($w, '3');
	$node{b}->wait_replicas;
	ok(defined wait_until(30, sub { move_leftovers() eq '' }), '3: nothing of the move is left on any member')
	  or diag(move_leftovers());
	is(cluster_problems(), '', '3: check_cluster() finds nothing');
}

# --- 4. the router failed over during a background job -----------------------
SKIP:
{
	my ($rc) = $router->leader->try_psql('app', 'SHOW shardid.launcher_naptime');
	skip 'this shardid has no launcher (SHOW shardid.launcher_naptime fails): a promoted router cannot resume a job', 6
	  if $rc;
	my $w = writer_start(0, 6);
	my $r = $router->leader;
	# By count, one shard goes from b (1, 4-7) to a (0, 2, 3): the job's
	# move is held in its copy (the pause hook, through the database's
	# setting, which the job's worker reads) while the router fails over;
	# the promoted member's launcher resumes the job, whose move resumes.
	my $hold = spawn($r, q{SET application_name = 'pause_holder';
		SELECT pg_advisory_lock(hashtext('shardid_test.move_pause'), s) FROM generate_series(0, 7) AS s; SELECT pg_sleep(600)});
	wait_until(10, sub { $r->psql('app', q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted}) >= 8 });
	$r->psql('app', q{ALTER DATABASE app SET shardid_test.move_pause = 'copy'});
	my $job = $r->psql('app', q{SELECT shardid.rebalance_start('by_count')});
	paused($r, undef, 'the job');
	$r->psql('app', q{ALTER DATABASE app RESET shardid_test.move_pause});
	my $t0 = time;
	my $new = $router->failover;
	my $promoted = time - $t0;
	$hold->{run}->kill_kill;
	my $finished = wait_until(180, sub {
		($new->try_psql('app', "SELECT state FROM shardid.rebalance_status($job)"))[1] eq 'finished' });
	ok(defined $finished, "4: the job ends 'finished' on the promoted router with no one acting")
	  or diag($new->psql('app', "SELECT * FROM shardid.rebalance_status($job)"));
	note(sprintf("4: router failed over to %s in %.1f s; the job finished %.1f s later", $new->{name}, $promoted, $finished // -1));
	is($new->psql('app', 'SELECT count(*) FROM shardid.shard_moves'), '0', '4: no move left in progress');
	writer_stop($w, '4');
	$router->wait_replicas;
	ok(defined wait_until(30, sub { move_leftovers() eq '' }), '4: nothing of the moves is left on any member')
	  or diag(move_leftovers());
	is(cluster_problems(), '', '4: check_cluster() finds nothing');
}

note(sprintf('ha_patroni.pl: %.1f s', time - $t_all));
done_testing();
