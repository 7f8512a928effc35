# launcher.pl — the opt-in launcher (shardid in shared_preload_libraries on
# the router, src/pg/launcher.cpp): a background job resumes by itself
# after a restart of the router and after a promotion of the router's
# standby, with no one calling anything; retired copies past
# shardid.retired_copy_retention are dropped by it; on a standby it drops
# the slots of moves the server made while it was a primary; and what is
# not the launcher's business stays so: a database without shardid, one
# whose shardid_internal schema a tenant made, a job that has ended, a
# slot that is not a move's.
#
# A router (with a streaming standby) and two nodes: a holds shards 0-3,
# b none. Each job's first move is held in caught_up by the test hook
# (test/lib/move_pause.sql) while a session holds its lock; the restart or
# the promotion ends that session, the move goes on.
use strict;
use warnings;

use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

$PostgreSQL::Test::Utils::timeout_default = 120;

my %node = map { $_ => data_node($_, sql => 'CREATE TABLE public.posts (id bigint PRIMARY KEY, body text NOT NULL)') } qw(a b);
$node{a}->safe_psql('app', 'SELECT shardid.create_shards(0, 3)');
$node{$_}->safe_psql('app', "SELECT shardid.create_table('public.posts')") for qw(a b);
$node{a}->safe_psql('app', q{
DO $$ BEGIN
    FOR s IN 0 .. 3 LOOP
        EXECUTE format('INSERT INTO %I.posts (body) SELECT repeat(''x'', 100) FROM generate_series(1, 2000)', shardid.shard_schema(s));
    END LOOP;
END $$;});

my $router = PostgreSQL::Test::Cluster->new('router');
$router->init(allows_streaming => 1);
$router->append_conf('postgresql.conf', q{
log_statement = none
shared_preload_libraries = 'shardid'
shardid.launcher_naptime = 1s
shardid.retired_copy_retention = -1
});
$router->start;
$router->safe_psql('postgres', 'CREATE DATABASE app');
$router->safe_psql('app', 'CREATE EXTENSION dblink; CREATE EXTENSION shardid;');
$router->safe_psql('app', "SELECT shardid.add_node('$_', \$\$" . $node{$_}->connstr('app') . "\$\$)") for qw(a b);
$router->safe_psql('app', "SELECT shardid.place_shards('a', 0, 3)");
$router->safe_psql('app', slurp_file(dirname(__FILE__) . '/../lib/move_pause.sql'));
like(slurp_file($router->logfile), qr/shardid launcher started/, 'the preloaded module started the launcher');
is($router->safe_psql('app', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'shardid launcher' AND datid IS NULL}), '1',
	'one launcher runs, connected to no database between its visits');

# A tenant's schema named shardid_internal, in a database without shardid:
# the launcher never calls into it (it would run as the bootstrap superuser).
$router->safe_psql('postgres', q{
CREATE ROLE tenant LOGIN;
CREATE DATABASE tenantdb OWNER tenant;
});
$router->safe_psql('tenantdb', q{
SET ROLE tenant;
CREATE SCHEMA shardid_internal;
CREATE TABLE shardid_internal.ran (who name, super boolean);
CREATE PROCEDURE shardid_internal._launcher_run(retention integer) LANGUAGE sql
    AS $$ INSERT INTO shardid_internal.ran SELECT current_user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) $$;
});

my $pause_key = "hashtext('shardid_test.move_pause')";
# held(START_SQL) — a job whose move waits in caught_up while the returned
# session holds the hook's locks; returns that session and the job.
sub held
{
	my ($start) = @_;
	$router->safe_psql('app', "ALTER DATABASE app SET shardid_test.move_pause = 'caught_up'");
	my $h = $router->background_psql('app');
	$h->query_safe("SELECT pg_advisory_lock($pause_key, s) FROM generate_series(0, 3) AS s");
	my $job = $router->safe_psql('app', $start);
	$router->poll_query_until('app', qq{
SELECT EXISTS (SELECT FROM pg_locks AS l JOIN shardid.rebalance_job_moves AS x ON x.worker_pid = l.pid
                WHERE x.job_id = $job AND l.locktype = 'advisory' AND l.classid = (${pause_key})::oid AND NOT l.granted)})
	  or die 'the move did not wait in caught_up';
	$router->safe_psql('app', 'ALTER DATABASE app RESET shardid_test.move_pause');
	return ($h, $job);
}

# --- a restart of the router --------------------------------------------------------
my ($h, $job) = held("SELECT shardid.rebalance_start('by_count', max_moves => 1)");
my $shard = $router->safe_psql('app', "SELECT shard FROM shardid.rebalance_job_moves WHERE job_id = $job");
$router->stop('immediate');
eval { $h->quit; };
my $t0 = time;
$router->start;
$router->poll_query_until('app', "SELECT state = 'finished' FROM shardid.rebalance_status($job)")
  or die 'the job was not resumed: ' . $router->safe_psql('app', "SELECT state || ' ' || coalesce(last_error, '') FROM shardid.rebalance_status($job)");
my $resumed = time - $t0;
pass(sprintf('after a restart the launcher resumed the job, which finished by itself (%.1f s after the start)', $resumed));
is($router->safe_psql('app', "SELECT node FROM shardid.placement WHERE shard = $shard")
	  . ' ' . $router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'),
	'b 0', "shard $shard is placed on b, no move left in progress");
like(slurp_file($router->logfile), qr/shardid rebalance job $job: its driver is gone; resumed as role/, 'the log says the job was resumed');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster(): nothing wrong');
is($router->safe_psql('app', 'SELECT shardid.rebalance_resume()'), '', 'rebalance_resume() of a finished job: nothing to do');

# --- the housekeeping: retired copies past their retention ----------------------
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.retired_copies'), '1', 'the move left its retired copy on a');
$router->safe_psql('app', "ALTER SYSTEM SET shardid.retired_copy_retention = 0; SELECT pg_reload_conf();");
$router->poll_query_until('app', 'SELECT count(*) = 0 FROM shardid.retired_copies')
  or die 'the launcher did not drop the retired copy';
pass('with the retention at 0 the launcher dropped it');
is($node{a}->safe_psql('app', q{SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\_%\_moved\_%'}), '0',
	'a holds no retired copy');
$router->safe_psql('app', "ALTER SYSTEM RESET shardid.retired_copy_retention; SELECT pg_reload_conf();");
is($router->safe_psql('tenantdb', 'SELECT count(*) FROM shardid_internal.ran'), '0',
	"the launcher never called the tenant's shardid_internal._launcher_run()");

# --- a promotion of the router's standby -------------------------------------------
$router->backup('b1');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($router, 'b1', has_streaming => 1);
$standby->start;
($h, $job) = held("SELECT shardid.rebalance_start('by_count', max_moves => 1)");
$shard = $router->safe_psql('app', "SELECT shard FROM shardid.rebalance_job_moves WHERE job_id = $job");
$router->wait_for_catchup($standby);
is($standby->safe_psql('app', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'shardid launcher' AND datid IS NULL}), '1',
	'the standby runs its launcher too (it starts once the server accepts connections)');
is($standby->safe_psql('app', "SELECT state FROM shardid.rebalance_jobs WHERE job_id = $job"), 'running',
	'the standby resumes no job (its launcher waits for the promotion)');
$router->stop('immediate');
eval { $h->quit; };
$t0 = time;
$standby->promote;
$standby->poll_query_until('app', "SELECT state = 'finished' FROM shardid.rebalance_status($job)")
  or die 'the job was not resumed on the promoted standby: '
  . $standby->safe_psql('app', "SELECT state || ' ' || coalesce(last_error, '') FROM shardid.rebalance_status($job)");
pass(sprintf('after the promotion the launcher resumed the job, which finished by itself (%.1f s after pg_ctl promote)', time - $t0));
is($standby->safe_psql('app', "SELECT node FROM shardid.placement WHERE shard = $shard")
	  . ' ' . $standby->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'),
	'b 0', "shard $shard is placed on b, no move left in progress");
is($standby->safe_psql('app', 'SELECT count(*) FROM shardid.check_cluster()'), '0', 'check_cluster() on the new router: nothing wrong');
is(misplaced($standby, \%node, 0 .. 3), '', 'every shard is registered on exactly the node it is placed on');

# --- a demoted leader's move slots -------------------------------------------
# A server that made a move's slot while it was a primary and is now a
# standby (a leader demoted by a switchover; here a copy of the stopped
# primary, pg_replslot included, started as its standby) keeps the slot,
# which serves nothing there: its launcher drops it. A slot that is not a
# move's, and one in a database without shardid, stay.
my $lead = PostgreSQL::Test::Cluster->new('lead');
$lead->init(allows_streaming => 'logical');
$lead->append_conf('postgresql.conf', "shared_preload_libraries = 'shardid'\nshardid.launcher_naptime = 1s\n");
$lead->start;
$lead->safe_psql('postgres', 'CREATE DATABASE app');
$lead->safe_psql('app', 'CREATE EXTENSION shardid');
$lead->safe_psql('app', q{SELECT pg_create_logical_replication_slot('shardid_move_9_41', 'pgoutput'), pg_create_logical_replication_slot('keep_me', 'pgoutput')});
$lead->safe_psql('postgres', q{SELECT pg_create_logical_replication_slot('shardid_move_9_42', 'pgoutput')});
is($lead->safe_psql('app', 'SELECT shardid_internal._launcher_standby()'), '0', 'on a primary _launcher_standby() drops nothing');
$lead->stop;
$lead->backup_fs_cold('cold');
$lead->start;
my $demoted = PostgreSQL::Test::Cluster->new('demoted');
$demoted->init_from_backup($lead, 'cold', has_streaming => 1);
$demoted->start;
ok($demoted->poll_query_until('app', q{SELECT NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = 'shardid_move_9_41')}),
	"the standby's launcher dropped the move's slot it kept from when it was the primary");
is($demoted->safe_psql('app', q{SELECT pg_is_in_recovery() || ' ' || string_agg(slot_name, ' ' ORDER BY slot_name) FROM pg_replication_slots}),
	'true keep_me shardid_move_9_42', 'a slot that is not a move\'s, and one in a database without shardid, are kept');
like(slurp_file($demoted->logfile), qr/shardid launcher: dropped replication slot "shardid_move_9_41" on this standby/,
	'the standby logged the slot it dropped');

done_testing();
