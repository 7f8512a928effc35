# ShardidPatroni.pm — shardid under the HA tools users run, for TAP tests:
# one etcd (Debian's etcd-server) and Patroni clusters (Debian's patroni)
# on 127.0.0.1, free ports, private directories, all stopped when the test
# ends. Patroni starts its own postgres from the bin_dir it is given: the
# one of the pg_config first in PATH, the PostgreSQL under test. Cluster.pm
# cannot drive a server Patroni owns, so members are reached by psql on
# their port.
#
#   use FindBin;
#   use lib $FindBin::RealBin;
#   use ShardidPatroni;
#
#   plan skip_all => $why if my $why = ShardidPatroni::missing();
#   my $ha = ShardidPatroni->new;                   # etcd
#   my $a = $ha->cluster('a', logical => 1);        # two members, a leader
#   $a->leader->psql('app', 'SELECT 1');
#   $a->connstr('app');     # host=127.0.0.1,127.0.0.1 port=P1,P2 ... target_session_attrs=read-write
#   $a->kill_leader;        # SIGKILL to its Patroni and postmaster; ttl decides
#   $a->switchover;         # patronictl switchover --force
#
# Timing (docs/high-availability.md): ttl 20, loop_wait 2, retry_timeout 5
# by default, so that a killed leader's key expires after 20 s; the
# production default is ttl 30, loop_wait 10.
package ShardidPatroni;

use strict;
use warnings;

use File::Path qw(make_path);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my @all;    # every ShardidPatroni, stopped at exit

# missing() — why the Patroni tests cannot run here ('' when they can).
sub missing
{
	for my $p (qw(patroni patronictl etcd))
	{
		return "$p is not installed (Debian packages patroni and etcd-server, lib/deps.sh)"
		  unless grep { -x "$_/$p" } split /:/, $ENV{PATH};
	}
	# Patroni's etcd3 client needs python-etcd, which Debian's patroni 4
	# only recommends
	system('python3', '-c', 'import etcd') == 0
	  or return "Patroni cannot reach etcd: python3-etcd is not installed (lib/deps.sh)";
	return '';
}

# new(%options) — a started etcd. Options: ttl, loop_wait, retry_timeout
# (Patroni's, for every cluster made by cluster()).
sub new
{
	my ($class, %opt) = @_;
	my $self = bless {
		dir => PostgreSQL::Test::Utils::tempdir_short(),
		ttl => $opt{ttl} // 20,
		loop_wait => $opt{loop_wait} // 2,
		retry_timeout => $opt{retry_timeout} // 5,
		clusters => [],
	}, $class;
	chomp($self->{bindir} = `pg_config --bindir`);
	($self->{major}) = `pg_config --version` =~ /PostgreSQL (\d+)/;
	# Patroni's version, as a number (4.0.7 is 4.0007): what it does with
	# a logical slot it does not know changed between releases
	my ($maj, $min, $patch) = `patroni --version` =~ /(\d+)\.(\d+)(?:\.(\d+))?/
	  or die 'patroni --version did not print a version';
	$self->{patroni} = $maj + $min / 100 + ($patch // 0) / 10000;
	$self->{etcd_port} = PostgreSQL::Test::Cluster::get_free_port();
	my $peer = PostgreSQL::Test::Cluster::get_free_port();
	my $client = "http://127.0.0.1:$self->{etcd_port}";
	$self->{etcd} = IPC::Run::start(
		[
			'etcd', '--name', 'shardid', '--data-dir', "$self->{dir}/etcd",
			'--listen-client-urls', $client, '--advertise-client-urls', $client,
			'--listen-peer-urls', "http://127.0.0.1:$peer",
			'--initial-advertise-peer-urls', "http://127.0.0.1:$peer",
			'--initial-cluster', "shardid=http://127.0.0.1:$peer",
			'--log-outputs', 'stderr', '--logger', 'zap'
		],
		'<', \undef, '>>', "$self->{dir}/etcd.log", '2>>', "$self->{dir}/etcd.log");
	push @all, $self;
	my $t0 = time;
	until (http_ok("127.0.0.1:$self->{etcd_port}", '/health'))
	{
		die "etcd did not start in 30 s (log: $self->{dir}/etcd.log)" if time - $t0 > 30;
		usleep(100_000);
	}
	note(sprintf('etcd on port %d (%.1f s)', $self->{etcd_port}, time - $t0));
	return $self;
}

# http_ok(HOSTPORT, PATH) — whether a GET answers 200 (etcd's health,
# Patroni's REST API: /leader, /replica, /sync).
sub http_ok
{
	my ($hostport, $path) = @_;
	my ($host, $port) = split /:/, $hostport;
	require IO::Socket::INET;
	my $s = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Timeout => 2) or return 0;
	print $s "GET $path HTTP/1.0\r\nHost: $host\r\n\r\n";
	my $line = <$s> // '';
	close $s;
	return $line =~ m{^HTTP/1\.[01] 200};
}

# cluster(SCOPE, %options) — a Patroni cluster of two members
# (SCOPE1, SCOPE2) started from the PostgreSQL under test, with a leader,
# its replica streaming (the synchronous standby in synchronous mode), and
# database app. Options: logical (1: wal_level = logical and the settings
# of a data node), synchronous (0: asynchronous; default 1), parameters
# (more postgresql.conf settings, a hash), sql (run in app on the leader
# once it is made: CREATE EXTENSION ...), later (1: not started yet:
# start_clusters()).
sub cluster
{
	my ($self, $scope, %opt) = @_;
	my $c = bless { ha => $self, scope => $scope, members => [] }, 'ShardidPatroni::Cluster';
	my %param = (
		max_connections => 40,
		max_wal_senders => 20,
		max_replication_slots => 20,
		wal_log_hints => 'on',    # pg_rewind of an old leader
		hot_standby => 'on',
		logging_collector => 'on',
		log_filename => 'postgresql.log',
		log_line_prefix => '%m [%p] ',
		log_min_messages => 'info',
		shared_buffers => '16MB',
		fsync => 'off',
		($opt{logical}
			? (
				wal_level => 'logical',
				max_logical_replication_workers => 8,
				wal_retrieve_retry_interval => '200ms',
				wal_sender_timeout => '5s',
				wal_receiver_status_interval => '1s',
				# 17 and later: the replica keeps a copy of each failover
				# slot (a move's), so the copy goes on after a promotion:
				# the slot sync worker (which connects to the dbname
				# Patroni puts in primary_conninfo, through the physical
				# slot Patroni names primary_slot_name) and the feedback
				# that keeps the primary's catalog rows for it
				($self->{major} >= 17 ? (sync_replication_slots => 'on', hot_standby_feedback => 'on') : ()))
			: ()),
		%{ $opt{parameters} // {} });
	my $params = join '', map { "        $_: '$param{$_}'\n" } sort keys %param;
	for my $i (1, 2)
	{
		# 17 and later: a failover slot sends no change the other member
		# (its physical slot, named by Patroni after the member) has not
		# flushed, so a promoted replica is never behind the move's target.
		# Patroni 4.1 does not set it: each member names the other.
		my $local = $opt{logical} && $self->{major} >= 17
		  ? "    synchronized_standby_slots: '$scope" . (3 - $i) . "'\n" : '';
		my $m = bless {
			name => "$scope$i",
			cluster => $c,
			dir => "$self->{dir}/$scope$i",
			port => PostgreSQL::Test::Cluster::get_free_port(),
			rest => PostgreSQL::Test::Cluster::get_free_port(),
		}, 'ShardidPatroni::Member';
		make_path("$m->{dir}/socket");
		$m->{conf} = "$m->{dir}/patroni.yml";
		open my $f, '>', $m->{conf} or die "$m->{conf}: $!";
		print $f <<"YML";
scope: $scope
name: $m->{name}
log:
  level: INFO
  dir: $m->{dir}
restapi:
  listen: 127.0.0.1:$m->{rest}
  connect_address: 127.0.0.1:$m->{rest}
etcd3:
  host: 127.0.0.1:$self->{etcd_port}
bootstrap:
  dcs:
    ttl: $self->{ttl}
    loop_wait: $self->{loop_wait}
    retry_timeout: $self->{retry_timeout}
    maximum_lag_on_failover: 1048576
    synchronous_mode: @{[ ($opt{synchronous} // 1) ? 'true' : 'false' ]}
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
$params
  initdb:
  - encoding: UTF8
  - locale: C
  - auth: trust
postgresql:
  listen: 127.0.0.1:$m->{port}
  connect_address: 127.0.0.1:$m->{port}
  data_dir: $m->{dir}/data
  bin_dir: $self->{bindir}
  pgpass: $m->{dir}/pgpass
  use_unix_socket: false
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: '$m->{dir}/socket'
    log_directory: '$m->{dir}'
$local  pg_hba:
  - local all all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
YML
		close $f;
		push @{ $c->{members} }, $m;
	}
	push @{ $self->{clusters} }, $c;
	$c->{sql} = $opt{sql};
	$self->start_clusters($c) unless $opt{later};
	return $c;
}

# clusters(SCOPE => {options}, ...) — cluster() for each, started side by
# side (the bootstraps overlap); a hash of them by scope.
sub clusters
{
	my ($self, %spec) = @_;
	my %c = map { $_ => $self->cluster($_, %{ $spec{$_} }, later => 1) } sort keys %spec;
	$self->start_clusters(map { $c{$_} } sort keys %c);
	return \%c;
}

# start_clusters(CLUSTERS) — the first member of each bootstraps (initdb),
# then the second copies it; database app and the cluster's sql.
sub start_clusters
{
	my ($self, @c) = @_;
	my $t0 = time;
	$_->{members}[0]->start for @c;
	$_->wait_leader for @c;
	$_->{members}[1]->start for @c;
	for my $c (@c)
	{
		$c->wait_replicas;
		$c->leader->psql('postgres', 'CREATE DATABASE app');
		$c->leader->psql('app', $c->{sql}) if defined $c->{sql};
	}
	note(sprintf('Patroni clusters %s up in %.1f s', join(', ', map { $_->{scope} } @c), time - $t0));
	return;
}

# stop() — every Patroni (which stops its postgres) and etcd.
sub stop
{
	my ($self) = @_;
	for my $c (@{ $self->{clusters} })
	{
		$_->stop for @{ $c->{members} };
	}
	$self->{clusters} = [];
	if ($self->{etcd})
	{
		$self->{etcd}->signal('TERM');
		eval { $self->{etcd}->finish; };
		delete $self->{etcd};
	}
	return;
}

END
{
	my $rc = $?;
	$_->stop for @all;
	$? = $rc;
}

package ShardidPatroni::Cluster;

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

# members() — the two members.
sub members { return @{ $_[0]{members} }; }

# leader() — the member that is the leader now (Patroni's REST API: GET
# /leader answers 200 on the leader only, once its postgres is primary);
# undef when none is.
sub leader
{
	my ($self) = @_;
	for my $m (@{ $self->{members} })
	{
		return $m if $m->{proc} && ShardidPatroni::http_ok("127.0.0.1:$m->{rest}", '/leader')
		  && $m->is_primary;
	}
	return;
}

# replica() — a member that is not the leader.
sub replica
{
	my ($self) = @_;
	my $l = $self->leader;
	return (grep { !$l || $_ != $l } @{ $self->{members} })[0];
}

# wait_leader(NOT, TIMEOUT) — the leader, once there is one (other than
# the member NOT); dies after TIMEOUT s (90).
sub wait_leader
{
	my ($self, $not, $timeout) = @_;
	my $t0 = time;
	for (;;)
	{
		my $l = $self->leader;
		return $l if $l && (!$not || $l != $not);
		$self->check_running;
		die "Patroni cluster $self->{scope}: no leader after ${\ int(time - $t0)} s" if time - $t0 > ($timeout // 90);
		usleep(100_000);
	}
}

# check_running() — dies, with the end of its log, when a member's Patroni
# started by this test has exited (a configuration it refuses, a missing
# module).
sub check_running
{
	my ($self) = @_;
	for my $m (@{ $self->{members} })
	{
		next unless $m->{proc} && !$m->{proc}->pumpable;
		my @log = split /\n/, slurp_file("$m->{dir}/patroni.out");
		die "Patroni of $m->{name} exited: " . join("\n", @log[ ($#log > 15 ? $#log - 15 : 0) .. $#log ]);
	}
	return;
}

# wait_replicas(TIMEOUT) — until every running member other than the
# leader streams from it (in synchronous mode: is its synchronous standby).
sub wait_replicas
{
	my ($self, $timeout) = @_;
	my $t0 = time;
	for (;;)
	{
		my $l = $self->wait_leader(undef, $timeout);
		my $want = grep { $_->{proc} && $_ != $l } @{ $self->{members} };
		my $have = $l->psql('postgres', q{SELECT count(*) FROM pg_stat_replication
		                                  WHERE state = 'streaming'
		                                    AND (current_setting('synchronous_standby_names') = '' OR sync_state = 'sync')});
		# and Patroni knows it: GET /replica on each (/sync in synchronous
		# mode, where only the synchronous standby may take over)
		my $path = $l->psql('postgres', "SELECT current_setting('synchronous_standby_names') <> ''") eq 't' ? '/sync' : '/replica';
		return if $have >= $want
		  && !grep { $_->{proc} && $_ != $l && !ShardidPatroni::http_ok("127.0.0.1:$_->{rest}", $path) } @{ $self->{members} };
		die "Patroni cluster $self->{scope}: replicas not streaming after ${\ int(time - $t0)} s"
		  if time - $t0 > ($timeout // 120);
		usleep(200_000);
	}
}

# connstr(DB) — the connect string of every member, for add_node(): libpq
# tries the hosts in turn and keeps the one that accepts writes.
sub connstr
{
	my ($self, $db) = @_;
	return sprintf('host=%s port=%s dbname=%s user=postgres target_session_attrs=read-write connect_timeout=2',
		join(',', map { '127.0.0.1' } @{ $self->{members} }),
		join(',', map { $_->{port} } @{ $self->{members} }), $db);
}

# kill_leader() — SIGKILL to the leader's Patroni and postmaster, as a
# crashed machine: the replica takes over when the leader key expires
# (ttl). Returns the killed member (restart it with start()).
sub kill_leader
{
	my ($self) = @_;
	my $l = $self->leader or die "Patroni cluster $self->{scope}: no leader to kill";
	$l->kill9;
	return $l;
}

# switchover() — patronictl switchover to the replica (a planned change:
# the leader is stopped cleanly first). Returns the new leader.
sub switchover
{
	my ($self) = @_;
	my $l = $self->leader or die "Patroni cluster $self->{scope}: no leader";
	my $r = $self->replica;
	$self->patronictl('switchover', '--leader', $l->{name}, '--candidate', $r->{name}, '--force');
	return $self->wait_leader($l);
}

# restart_leader() — patronictl restart of the leader alone (its
# postgres stopped and started again, no failover). Returns the leader.
sub restart_leader
{
	my ($self) = @_;
	my $l = $self->leader or die "Patroni cluster $self->{scope}: no leader";
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'patronictl', '-c', $self->{members}[0]{conf}, 'restart', $self->{scope}, $l->{name}, '--force' ],
		'<', \undef, '>', \$out, '2>', \$err)
	  or die "patronictl restart failed: $out$err";
	$self->wait_leader;
	return $l;
}

# failover(CANDIDATE) — patronictl failover to the member given (the
# replica by default): Patroni promotes it (pg_ctl promote). Returns it.
sub failover
{
	my ($self, $to) = @_;
	$to //= $self->replica;
	$self->patronictl('failover', '--candidate', $to->{name}, '--force');
	my $t0 = time;
	until (($self->leader // 0) == $to)
	{
		die "Patroni cluster $self->{scope}: $to->{name} not the leader after 90 s" if time - $t0 > 90;
		usleep(100_000);
	}
	return $to;
}

# patronictl(ARGS) — runs patronictl with this cluster's configuration;
# dies when it fails.
sub patronictl
{
	my ($self, @args) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'patronictl', '-c', $self->{members}[0]{conf}, @args, $self->{scope} ],
		'<', \undef, '>', \$out, '2>', \$err)
	  or die "patronictl @args failed: $out$err";
	# it exits 0 when Patroni refused ("Switchover failed, details: 412 ...");
	# a failover that worked says "Successfully failed over"
	die "patronictl @args: $out$err" if "$out$err" =~ /(?:Switchover|Failover) failed/i;
	return $out;
}

package ShardidPatroni::Member;

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# start() — starts this member's Patroni (which starts, or rewinds and
# starts, its postgres).
sub start
{
	my ($self) = @_;
	my $log = "$self->{dir}/patroni.out";
	$self->{proc} = IPC::Run::start([ 'patroni', $self->{conf} ], '<', \undef, '>>', $log, '2>>', $log);
	return $self;
}

# stop() — stops Patroni (SIGTERM: it stops its postgres, fast) and waits.
sub stop
{
	my ($self) = @_;
	return unless $self->{proc};
	$self->{proc}->signal('TERM');
	eval { $self->{proc}->finish; };
	delete $self->{proc};
	$self->postmaster_kill('TERM');
	return;
}

# kill9() — SIGKILL to this member's Patroni and postmaster.
sub kill9
{
	my ($self) = @_;
	$self->{proc}->signal('KILL') if $self->{proc};
	eval { $self->{proc}->finish; };
	delete $self->{proc};
	$self->postmaster_kill('KILL');
	return;
}

# postmaster_kill(SIGNAL) — signals the postmaster of postmaster.pid, if
# it runs, and waits until it is gone.
sub postmaster_kill
{
	my ($self, $sig) = @_;
	open my $f, '<', "$self->{dir}/data/postmaster.pid" or return;
	my $pid = <$f>;
	close $f;
	chomp $pid;
	return unless $pid && kill 0, $pid;
	kill $sig, $pid;
	for (1 .. 300)
	{
		last unless kill 0, $pid;
		usleep(100_000);
	}
	return;
}

# is_primary() — whether its postgres answers and is not in recovery.
sub is_primary
{
	my ($self) = @_;
	my ($rc, $out) = $self->try_psql('postgres', 'SELECT NOT pg_is_in_recovery()');
	return $rc == 0 && $out eq 't';
}

# try_psql(DB, SQL) — (exit code, output, errors) of psql.
sub try_psql
{
	my ($self, $db, $sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1',
			'-d', "host=127.0.0.1 port=$self->{port} user=postgres dbname=$db connect_timeout=3",
			'-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err);
	chomp $out;
	return ($? >> 8, $out, $err);
}

# psql(DB, SQL) — its output; dies with psql's errors when it fails.
sub psql
{
	my ($self, $db, $sql) = @_;
	my ($rc, $out, $err) = $self->try_psql($db, $sql);
	die "psql on $self->{name} failed ($rc): $err\nSQL: $sql" if $rc;
	return $out;
}

# log() — its postgres log, as it is now.
sub log
{
	my ($self) = @_;
	return -e "$self->{dir}/postgresql.log" ? slurp_file("$self->{dir}/postgresql.log") : '';
}

1;
