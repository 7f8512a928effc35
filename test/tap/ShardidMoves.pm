# ShardidMoves.pm — the setting of the shard-move tests (move_online.pl,
# move_review.pl), on ShardidTest.pm: a router with dblink (and PL/Proxy
# where it is installed: writes are routed through it, else over dblink,
# by ShardidTest::router_dblink_sql) and two data nodes with
# wal_level = logical, 16 shards (0-7 on a, 6 in a schema named with a
# quote, a semicolon and capitals; 8-15 on b), a writer procedure on the
# router, and helpers:
#   leftovers, clean, where, placed, writable, refused, other — state checks
#   hold_pause, release_pause, start_paused, stop_paused, finish_paused — a
#     CALL stopped in a phase by the test hook shardid_test.move_pause
#     (test/lib/move_pause.sql, loaded on the router)
#   move, move_fails — a CALL that must succeed or fail (one test each)
#   cli, cli_split, spawn, reap, alive — the command-line tools, background
#     processes
#   new_node — one more data node
#
#   use FindBin;
#   use lib $FindBin::RealBin;
#   use ShardidMoves;
#
#   my $m = ShardidMoves->new;
#   my ($a, $b, $router) = ($m->{node}{a}, $m->{node}{b}, $m->{router});
#
# A user's posts go to shard user % 16: insert_post(19, ...) writes shard 3.
package ShardidMoves;

use strict;
use warnings;

use File::Basename qw(dirname);
use IPC::Run;
use POSIX qw(WNOHANG);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest qw(data_node router_node have_extension router_dblink_sql registered_where post_ids_sql
  writer_sql);
use Test::More;
use Time::HiRes qw(usleep);

# the schema name of shard 6
our $ODD = "Odd'; DROP TABLE x;--Shard";

# the key of the hook's advisory lock (its second half is the shard)
our $PAUSE_KEY = "hashtext('shardid_test.move_pause')";

my $bin = dirname(__FILE__) . '/../../bin';

# The template and the functions of a node: insert_post(user, body) writes
# the user's shard, post_ids(shards) lists the IDs of the shards' posts.
# Role app gets privileges on a shard, which travel with it.
sub node_sql
{
	return q{
CREATE ROLE app;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL);
CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 16)::integer';
CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE new_id bigint;
BEGIN
    EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES ($1, $2) RETURNING id',
                   shardid.shard_schema(public.user_shard(i_user))) INTO new_id USING i_user, i_body;
    RETURN new_id;
END $$;
} . post_ids_sql('node');
}

# The router's routing: through PL/Proxy where it is installed, else (19)
# over dblink, to the connect string PL/Proxy would use.
my $plproxy_routing = q{
CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint AS $$
    CLUSTER 'shardid'; RUN ON public.user_shard(i_user);
$$ LANGUAGE plproxy;
} . post_ids_sql('plproxy');
my $dblink_routing = q{
CREATE FUNCTION public.insert_post(i_user bigint, i_body text) RETURNS bigint LANGUAGE sql AS $$
    SELECT t.id FROM public.dblink(public.shard_connstr(public.user_shard(i_user)),
                                   format('SELECT public.insert_post(%s, %L)', i_user, i_body)) AS t(id bigint)
$$;
} . post_ids_sql('dblink');

# The writer of the router (ShardidTest::writer_sql): CALL
# public.writer(users, NULL, pause) writes to the users given in turn (so
# one writer can be held to the moving shard and another kept off it),
# through the router's own routing (PL/Proxy where installed), until
# stop_writer has a row. It retries only a write refused with 25006
# (frozen for the cut-over, or the retired copy), 42704 (a call begun
# before the repoint reached the old node after its copy was renamed:
# insert_post's shard_schema() no longer finds it) or 42P01 (the same call,
# when shard_schema() read the registry just before the retirement
# committed and the INSERT looked the table up just after: seen once on
# 19): any other error fails the writer, and the test. public.written
# keeps when and after how many retries, for the pauses and the check that
# other shards are never refused.
my $writer_sql = writer_sql(retry => 'read_only_sql_transaction OR undefined_object OR undefined_table');

# lit(TEXT) — TEXT as an SQL string literal.
sub lit
{
	my ($s) = @_;
	$s =~ s/'/''/g;
	return "'$s'";
}

# new() — the started servers, set up: {node}{a}, {node}{b}, {router},
# {plproxy} (whether the router routes through PL/Proxy), {major}.
sub new
{
	my ($class) = @_;
	my $self = bless { bg => {}, holder => {} }, $class;
	my %node = map {
		$_ => data_node($_, conf => "wal_receiver_status_interval = 1s\n", sql => node_sql())
	} qw(a b);
	$self->{node} = \%node;
	$node{a}->safe_psql('app', q{
SELECT shardid.create_shards(0, 5);
SELECT shardid.create_shard(7);
SELECT shardid.create_table('public.posts');
CREATE SCHEMA :"odd";
CREATE SEQUENCE :"odd".id_seq;
SELECT shardid.attach_shard(6, :'odd');
-- privileges travel with the shard
GRANT USAGE ON SCHEMA shard_0005 TO app;
GRANT SELECT, INSERT ON shard_0005.posts TO app;
GRANT USAGE ON SEQUENCE shard_0005.id_seq TO app;
}, extra_params => [ '-v', "odd=$ODD" ]);
	$node{b}->safe_psql('app', "SELECT shardid.create_shards(8, 15); SELECT shardid.create_table('public.posts');");

	my $router = router_node('router', \%node, plproxy => 1);
	$self->{router} = $router;
	$self->{plproxy} = have_extension('plproxy');
	note($self->{plproxy} ? 'router: PL/Proxy' : 'router: no PL/Proxy for this PostgreSQL, routing over dblink');
	$router->safe_psql('app', q{
SELECT shardid.place_shards('a', 0, 7);
SELECT shardid.place_shards('b', 8, 15);
CREATE FUNCTION public.user_shard(i_user bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT (i_user % 16)::integer';
} . ($self->{plproxy} ? $plproxy_routing : router_dblink_sql() . $dblink_routing) . $writer_sql);
	# the pause point of hold_pause/start_paused (not part of the extension)
	$router->safe_psql('app', slurp_file(dirname(__FILE__) . '/../lib/move_pause.sql'));
	$self->{major} = $node{a}->safe_psql('app', "SELECT current_setting('server_version_num')::int / 10000");
	note("PostgreSQL $self->{major}");
	return $self;
}

# new_node(NAME, %data_node options) — one more server, node NAME, with
# the template and functions (not added to the router); leftovers(),
# clean() and where() count it from then on.
sub new_node
{
	my ($self, $name, %opt) = @_;
	return $self->{node}{$name} = data_node($name, sql => node_sql(), %opt);
}

# --- state -------------------------------------------------------------------

# leftovers() — what a move may leave behind: ShardidTest::leftovers
# (publications, subscriptions and slots of each node, the router's move
# rows) and, per node, its roles of a move and its frozen triggers.
sub leftovers
{
	my ($self) = @_;
	my @nodes = map { $self->{node}{$_} } sort keys %{ $self->{node} };
	return ShardidTest::leftovers(\@nodes, $self->{router}) . ' roles,frozen=' . join(' ', map {
		$_->safe_psql('app', q{SELECT (SELECT count(*) FROM pg_roles WHERE rolname LIKE 'shardid\_move%') || ','
                                  || (SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_move_frozen')})
	} @nodes);
}

# clean() — leftovers() when nothing is left.
sub clean
{
	my ($self) = @_;
	my $n = keys %{ $self->{node} };
	return 'nodes=' . ('0' x $n) . ' moves=0 roles,frozen=' . join(' ', ('0,0') x $n);
}

# placed(SHARD) — the node the router places the shard on.
sub placed
{
	my ($self, $shard) = @_;
	return $self->{router}->safe_psql('app', "SELECT node FROM shardid.shard_placement WHERE shard = $shard");
}

# where(SHARD) — the node of the placement, then the nodes that register
# the shard ("a a": on a, registered on a only).
sub where
{
	my ($self, $shard) = @_;
	return $self->placed($shard) . ' ' . registered_where($shard, $self->{node});
}

# other(NODE) — of a and b, the one that is not NODE.
sub other
{
	my ($self, $n) = @_;
	return $n eq 'a' ? 'b' : 'a';
}

# writable(USER) — the shard a write through the router lands on.
sub writable
{
	my ($self, $user) = @_;
	return $self->{router}->safe_psql('app', "SELECT shardid.id_shard(public.insert_post($user, 'check'))");
}

# refused(USER) — the SQLSTATE of a write through the router ('' if it worked).
sub refused
{
	my ($self, $user) = @_;
	my ($ret, $out, $err) = $self->{router}->psql('app', "SELECT public.insert_post($user, 'refused?')",
		extra_params => [ '-v', 'VERBOSITY=sqlstate' ]);
	return '' if $ret == 0;
	return $err =~ /ERROR:\s+(\S+)/ ? $1 : $err;
}

# --- CALLs -------------------------------------------------------------------

# move(SHARD, TO, [MORE CALL ARGUMENTS]) — a CALL that must succeed (a
# test); returns its messages.
sub move
{
	my ($self, $shard, $to, $more) = @_;
	my $call = "CALL shardid.move_shard($shard, " . lit($to) . ($more // '') . ')';
	my ($ret, $out, $err) = $self->{router}->psql('app', $call);
	is($ret, 0, "$call succeeds") or diag($err);
	$err =~ s/^psql:<stdin>:\d+: //mg;
	return $err;
}

# move_fails(SHARD, TO, [MORE CALL ARGUMENTS]) — a CALL that must fail (a
# test); returns its messages, verbose (with SQLSTATEs).
sub move_fails
{
	my ($self, $shard, $to, $more) = @_;
	my $call = "CALL shardid.move_shard($shard, " . lit($to) . ($more // '') . ')';
	my ($ret, $out, $err) = $self->{router}->psql('app', $call, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	isnt($ret, 0, "$call fails");
	$err =~ s/^psql:<stdin>:\d+: //mg;
	return $err;
}

# cli(TOOL, ARGS...) — runs bin/TOOL; returns its exit status and its
# output (stderr after stdout). cli_split: (status, stdout, stderr).
sub cli
{
	my ($self, $tool, @args) = @_;
	my ($status, $out, $err) = $self->cli_split($tool, @args);
	return ($status, join("\n", grep { $_ ne '' } $out, $err));
}

sub cli_split
{
	my ($self, $tool, @args) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ "$bin/$tool", @args ], '<', \undef, '>', \$out, '2>', \$err);
	my $status = $? >> 8;
	s/\n+\z// for $out, $err;
	return ($status, $out, $err);
}

# --- background processes --------------------------------------------------------

# spawn(COMMAND, LOG, %env) — COMMAND (an array) started in the background
# in a process group of its own, with SIGINT and SIGTERM at their defaults,
# its output (stdout and stderr) into the file LOG; returns its PID.
sub spawn
{
	my ($self, $cmd, $log, %env) = @_;
	my $pid = fork // die "fork: $!";
	if ($pid == 0)
	{
		POSIX::setsid();
		$ENV{$_} = $env{$_} for keys %env;
		$SIG{$_} = 'DEFAULT' for qw(INT TERM);
		open STDIN, '<', '/dev/null';
		open STDOUT, '>', $log or POSIX::_exit(127);
		open STDERR, '>&', \*STDOUT or POSIX::_exit(127);
		exec @$cmd or POSIX::_exit(127);
	}
	$self->{kids}{$pid} = undef;
	return $pid;
}

# alive(PID) — whether a process spawn() started is still running.
sub alive
{
	my ($self, $pid) = @_;
	return 0 if defined $self->{kids}{$pid};
	my $r = waitpid($pid, WNOHANG);
	return 1 if $r == 0;
	$self->{kids}{$pid} = $?;
	return 0;
}

# reap(PID) — waits for a process spawn() started; its exit status (128 +
# the signal if a signal ended it).
sub reap
{
	my ($self, $pid) = @_;
	if (!defined $self->{kids}{$pid})
	{
		waitpid($pid, 0);
		$self->{kids}{$pid} = $?;
	}
	my $st = $self->{kids}{$pid};
	return $st & 127 ? 128 + ($st & 127) : $st >> 8;
}

# --- pausing a CALL in a phase ----------------------------------------------------
# A session holds the advisory lock the hook waits for; the CALL runs with
# shardid_test.move_pause = PHASE and waits there.

# hold_pause(SHARD) — a router session takes the hook's lock of SHARD.
sub hold_pause
{
	my ($self, $shard) = @_;
	my $h = $self->{router}->background_psql('app');
	$h->set_query_timer_restart;
	$h->query_safe("SELECT pg_advisory_lock($PAUSE_KEY, $shard)");
	$self->{holder}{$shard} = $h;
	return;
}

# release_pause(SHARD) — lets the lock go: the paused CALL goes on.
sub release_pause
{
	my ($self, $shard) = @_;
	my $h = delete $self->{holder}{$shard} or return;
	$h->query_safe("SELECT pg_advisory_unlock($PAUSE_KEY, $shard)");
	$h->quit;
	return;
}

# waiting_backend(SHARD) — the router backend waiting in the hook for
# SHARD ('' for none).
sub waiting_backend
{
	my ($self, $shard) = @_;
	return $self->{router}->safe_psql('app',
		"SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = ($PAUSE_KEY)::oid AND objid = $shard");
}

# wait_paused(SHARD, PID, LOG, WHAT) — waits for a backend to wait in the
# hook for SHARD while the process PID (its output in LOG) runs, as long as
# poll_query_until would; returns the backend. A test: WHAT reached the
# pause.
sub wait_paused
{
	my ($self, $shard, $pid, $log, $what) = @_;
	for (1 .. 20 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my $mpid = $self->waiting_backend($shard);
		if ($mpid ne '')
		{
			pass("$what: paused");
			return $mpid;
		}
		last unless $self->alive($pid);
		usleep(50_000);
	}
	fail("$what: paused");
	diag(slurp_file($log));
	die "$what did not reach its pause";
}

# start_paused(SHARD, TO, PHASE, [MORE CALL ARGUMENTS]) — CALL
# move_shard(SHARD, TO, drop_old => true ...) in the background, stopped in
# PHASE (a test); $m->{mpid} is its backend.
sub start_paused
{
	my ($self, $shard, $to, $phase, $more) = @_;
	$self->hold_pause($shard);
	my $log = $self->{router}->basedir . '/bg.log';
	my $call = "CALL shardid.move_shard($shard, " . lit($to) . ', drop_old => true' . ($more // '') . ')';
	my $pid = $self->spawn(
		[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', '-d', $self->{router}->connstr('app'),
		  '-c', 'SET shardid_test.move_pause = ' . lit($phase), '-c', $call ],
		$log);
	$self->{bg} = { pid => $pid, log => $log, shard => $shard, phase => $phase };
	$self->{mpid} = $self->wait_paused($shard, $pid, $log, "$call in phase $phase");
	return $self->{mpid};
}

# finish_paused() — waits for the background CALL; (exit status of its
# psql, its output).
sub finish_paused
{
	my ($self) = @_;
	my $rc = $self->reap($self->{bg}{pid});
	return ($rc, slurp_file($self->{bg}{log}));
}

# stop_paused(cancel|terminate, SHARD) — signals the paused CALL's backend,
# lets it end (a test: it fails), lets the lock go; returns its output.
sub stop_paused
{
	my ($self, $how, $shard) = @_;
	$self->{router}->safe_psql('app', "SELECT pg_${how}_backend($self->{mpid})");
	my ($rc, $out) = $self->finish_paused;
	isnt($rc, 0, "pg_${how}_backend() in phase $self->{bg}{phase}: the CALL fails");
	$self->release_pause($shard);
	return $out;
}

1;
