# shards_8192.pl — Instagram's 8192 logical shards and three sharded tables
# in each, on a server with default settings (max_locks_per_transaction = 64
# up to PostgreSQL 18, 128 from 19; max_connections = 100): only what the
# old bash harness set (fsync = off, max_prepared_transactions = 10), with
# the settings Cluster.pm's init adds that size the lock table or the log
# (wal_level, max_wal_senders, log_statement) taken back to the defaults.
#
# One transaction cannot hold the locks: create_table() over 8192 shards
# fails with 53200 and a HINT naming the procedure to CALL, having created
# nothing, and so does create_shards(0, 8191) up to PostgreSQL 18 (19's
# default lock table holds it: checked, then rolled back). The procedures
# commit in batches of 256 and are interrupted once each, three ways: a
# cancel (create_shards_proc), a terminated backend (create_table_proc of
# the second table) and a crash of the server (the third table). Each
# interruption loses only its batch in flight; a re-run creates what is
# missing. At the end there are exactly 8192 shard schemas and 8192 x 3
# tables, each id column defaulting to next_id() of its own shard and
# generator, and rows inserted through those defaults decode to their shard.
#
# A batch too big for the lock table (8192 tables) stops with 53200 and a
# HINT naming a smaller batch_size. The running procedure is found from
# another session by its application_name ("shardid create_shards_proc
# 2048/8192"), as a DBA would. Reading every shard: one statement and one
# transaction fail, the batched forms of docs/shards.md (checked to be
# printed there as tested) succeed. A copy altered by hand among the
# 24576 is found by check_cluster()'s comparison of every copy with its
# template. Notes the wall time of each step.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time usleep);

my $started = time;
my $step_start = $started;

# step(NAME) — note the time since the previous step.
sub step
{
	my ($name) = @_;
	note(sprintf('%s: %.1f s', $name, time - $step_start));
	$step_start = time;
	return;
}

# The server: Cluster.pm's, with what it sets beyond the old harness's
# (wal_level = minimal and max_wal_senders = 0 change the lock table's size;
# log_statement = all) removed again.
my $node = PostgreSQL::Test::Cluster->new('s8192');
$node->init;
$node->adjust_conf('postgresql.conf', $_, undef) for qw(wal_level max_wal_senders log_statement);
$node->append_conf('postgresql.conf', 'max_prepared_transactions = 10');
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');

# sql(SQL) — the output of SQL in database app; an error is fatal.
sub sql
{
	return $node->safe_psql('app', $_[0]);
}

# run(SQL, PSQL-ARGS...) — psql's exit code, output and messages (stderr).
sub run
{
	my ($query, @args) = @_;
	my ($rc, $out, $err) = $node->psql('app', $query, extra_params => [@args]);
	return ($rc, $out, $err);
}

# run_ok(SQL, PSQL-ARGS...) — output and messages of SQL, which must succeed.
sub run_ok
{
	my ($query, @args) = @_;
	my ($rc, $out, $err) = run($query, @args);
	die "failed ($rc): $query\n$err\n" if $rc != 0;
	return ($out, $err);
}

# show(MESSAGES) — note the ERROR, DETAIL and HINT lines.
sub show
{
	note("  $_") for grep { /^(ERROR|DETAIL|HINT):/ } map { s/^psql:[^ ]* //r } split /\n/, $_[0];
	return;
}

# count_shards(), count_tables(NAME) — what is committed.
sub count_shards
{
	return sql('SELECT count(*) FROM shardid.shard_registry');
}

sub count_schemas
{
	return sql(q{SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\_%'});
}

sub count_tables
{
	my ($table) = @_;
	return sql(qq{SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	               JOIN shardid.shard_registry r ON r.schema_name = n.nspname
	              WHERE c.relname = '$table' AND c.relkind = 'r'});
}

# run_bg(SQL) — run SQL (a CALL) in a psql of its own, in the background.
sub run_bg
{
	my ($query) = @_;
	my $bg = { out => '', err => '', query => $query };
	$bg->{h} = IPC::Run::start([ 'psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('app'), '-c', $query ],
		'<', \undef, '>', \$bg->{out}, '2>', \$bg->{err});
	return $bg;
}

# wait_progress(BG, PROC, DONE) — wait until PROC's application_name reports
# at least DONE committed; return its backend's pid.
sub wait_progress
{
	my ($bg, $proc, $done) = @_;
	for (1 .. 3000)
	{
		my $row = sql(qq{SELECT pid || ' ' || split_part(split_part(application_name, ' ', -1), '/', 1)
		                   FROM pg_stat_activity WHERE application_name LIKE 'shardid $proc %'});
		if ($row =~ /^(\d+) (\d+)$/ && $2 >= $done)
		{
			note("$proc: $2 done when seen from another session (pid $1)");
			return $1;
		}
		$bg->{h}->pump_nb;
		die "$proc ended before $done were done: $bg->{err}" unless $bg->{h}->pumpable;
		usleep(100_000);
	}
	die "$proc did not reach $done within 300 s";
}

# expect_stopped(BG, WHAT, PATTERN) — the background CALL failed with that error.
sub expect_stopped
{
	my ($bg, $what, $pattern) = @_;
	$bg->{h}->finish;
	my $rc = $bg->{h}->result;
	isnt($rc, 0, "$what: the interrupted CALL failed");
	like($bg->{err}, $pattern, "$what: the interrupted CALL reports it");
	my ($line) = grep { /ERROR|FATAL|server closed/ } split /\n/, $bg->{err};
	note("interrupted: " . (($line // '') =~ s/^psql:[^ ]* //r));
	return;
}

# expect_batches(WHAT, COUNT) — an interrupted run kept whole batches of 256 only.
sub expect_batches
{
	my ($what, $n) = @_;
	ok($n > 0 && $n < 8192 && $n % 256 == 0, "$what after the interruption: $n (whole batches of 256, between 0 and 8192)");
	return;
}

is(sql(q{SELECT string_agg(name || '=' || setting || CASE WHEN setting = boot_val THEN '' ELSE ' (default ' || boot_val || ')' END, ' ' ORDER BY name)
           FROM pg_settings WHERE name IN ('max_locks_per_transaction', 'max_connections')}),
	'max_connections=100 max_locks_per_transaction=' . sql(q{SELECT boot_val FROM pg_settings WHERE name = 'max_locks_per_transaction'}),
	"max_locks_per_transaction, max_connections: the server's defaults");
note('lock table sizing: ' . sql(q{SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings
  WHERE name IN ('max_locks_per_transaction', 'max_connections', 'max_prepared_transactions', 'max_wal_senders',
                 'max_worker_processes', 'autovacuum_max_workers', 'wal_level')}));

sql(q{
CREATE EXTENSION shardid;
CREATE TABLE public.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text,
                            taken timestamptz NOT NULL DEFAULT now());
CREATE TABLE public.comments (id bigint PRIMARY KEY, photo_id bigint NOT NULL, body text NOT NULL);
CREATE INDEX ON public.comments (photo_id);
CREATE TABLE public.likes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                           photo_id bigint NOT NULL, user_id bigint NOT NULL, UNIQUE (photo_id, user_id));
});
step('setup');

# --- one transaction is not enough ---------------------------------------------
# 8192 shards without tables hold about 3 locks each: more than the lock
# table of max_locks_per_transaction = 64 (up to PostgreSQL 18) has room
# for, less than that of 19's 128. Tables (about 10 locks each) overflow both.
my $locks = sql('SHOW max_locks_per_transaction');
my ($rc, $out, $err);
if ($locks >= 128)
{
	($rc, $out, $err) = run("BEGIN;\nSELECT shardid.create_shards(0, 8191);\nROLLBACK;");
	is($rc, 0, "create_shards(0, 8191) fits one transaction with max_locks_per_transaction = $locks (rolled back)")
	  or diag($err);
}
else
{
	($rc, $out, $err) = run('SELECT shardid.create_shards(0, 8191)');
	isnt($rc, 0, "create_shards(0, 8191) fails with max_locks_per_transaction = $locks");
	like($err, qr/ERROR:  create_shards\(0, 8191\) needs more locks than one transaction can hold/,
		'create_shards(0, 8191): needs more locks than one transaction can hold');
	like($err, qr/HINT:  CALL shardid\.create_shards_proc\(0, 8191\); creates the shards in batches that commit\./,
		'create_shards(0, 8191) names create_shards_proc');
	show($err);
}
is(count_shards() . '/' . count_schemas(), '0/0', 'shards after create_shards failed or rolled back');
step('create_shards(0, 8191) in one transaction');

# --- create_shards_proc, cancelled once ----------------------------------------
my $bg = run_bg('CALL shardid.create_shards_proc(0, 8191)');
my $pid = wait_progress($bg, 'create_shards_proc', 2048);
is(sql("SELECT pg_cancel_backend($pid)"), 't', 'pg_cancel_backend');
expect_stopped($bg, 'cancelled create_shards_proc', qr/canceling statement due to user request/);
my $n = count_shards();
expect_batches('shards', $n);
is(count_schemas(), $n, 'shard schemas = registered shards');
step('create_shards_proc until cancelled');
(undef, $err) = run_ok('CALL shardid.create_shards_proc(0, 8191)');
like($err, qr/NOTICE:  create_shards_proc: ${\(8192 - $n)} shards of 0 \.\. 8191 to create, in batches of 256/,
	'the re-run starts where the first run stopped');
like($err, qr/NOTICE:  create_shards_proc: shards 0 \.\. 8191: ${\(8192 - $n)} created, $n existed already/,
	"the re-run's summary");
is(count_shards(), '8192', 'shards after the re-run');
step('create_shards_proc re-run');

# --- create_table() over 8192 shards: refused, names create_table_proc ---------
($rc, $out, $err) = run(q{SELECT shardid.create_table('public.photos')});
isnt($rc, 0, 'create_table() over 8192 shards fails');
like($err, qr/ERROR:  create_table\(\) over 8192 shards needs more locks than one transaction can hold/,
	'create_table() over 8192 shards: needs more locks than one transaction can hold');
like($err, qr/HINT:  CALL shardid\.create_table_proc\('public\.photos', 'id'\); creates the tables in batches that commit\./,
	'create_table() names create_table_proc');
show($err);
is(sql('SELECT count(*) FROM shardid.sharded_tables') . '/' . count_tables('photos'), '0/0',
	'after the failed create_table: registered, created');
step('create_table() refused');

# --- the first table in one CALL ------------------------------------------------
(undef, $err) = run_ok(q{CALL shardid.create_table_proc('public.photos')});
is(count_tables('photos'), '8192', 'photos tables');
is(scalar(() = $err =~ /create_table_proc: batch \d+ committed/g), 32, 'batches of photos');
step('create_table_proc photos');

# --- a batch too big for the lock table: stopped, names a smaller one ----------
($rc, $out, $err) = run(q{CALL shardid.create_table_proc('public.comments', batch_size => 8192)});
isnt($rc, 0, 'a batch of 8192 tables fails');
like($err, qr/ERROR:  a batch of 8192 shard tables needs more locks than the server's lock table has free/,
	"a batch of 8192 tables: needs more locks than the server's lock table has free");
like($err, qr/HINT:  Go on with smaller batches: CALL shardid\.create_table_proc\('public\.comments', 'id', 2048\);/,
	'a batch of 8192 tables names batches of 2048');
show($err);
is(sql(q{SELECT count(*) FROM shardid.sharded_tables WHERE table_name = 'comments'}) . '/' . count_tables('comments'),
	'0/0', 'after the failed batch: comments registered, created');
step('create_table_proc batch of 8192 refused');

# --- the second, its backend terminated once ------------------------------------
$bg = run_bg(q{CALL shardid.create_table_proc('public.comments')});
$pid = wait_progress($bg, 'create_table_proc comments', 2048);
is(sql("SELECT pg_terminate_backend($pid)"), 't', 'pg_terminate_backend');
expect_stopped($bg, 'terminated create_table_proc', qr/terminating connection due to administrator command/);
$n = count_tables('comments');
expect_batches('comments tables', $n);
step('create_table_proc comments until terminated');
(undef, $err) = run_ok(q{CALL shardid.create_table_proc('public.comments')});
like($err, qr/NOTICE:  create_table_proc: ${\(8192 - $n)} of 8192 shards to get table comments/,
	'the comments re-run starts where the first run stopped');
is(count_tables('comments'), '8192', 'comments tables after the re-run');
step('create_table_proc comments re-run');

# --- the third, the server crashing under it ------------------------------------
sql('CHECKPOINT');    # keeps crash recovery short
$bg = run_bg(q{CALL shardid.create_table_proc('public.likes')});
wait_progress($bg, 'create_table_proc likes', 2048);
$node->stop('immediate');
expect_stopped($bg, 'create_table_proc under a crash', qr/server closed the connection unexpectedly/);
$node->start;
$n = count_tables('likes');
expect_batches('likes tables (a crash)', $n);
step('create_table_proc likes until the crash, restart');
(undef, $err) = run_ok(q{CALL shardid.create_table_proc('public.likes')});
like($err, qr/NOTICE:  create_table_proc: ${\(8192 - $n)} of 8192 shards to get table likes/,
	'the likes re-run starts where the first run stopped');
step('create_table_proc likes re-run');

# --- exactly 8192 x 3, each with its own generator ------------------------------
is(sql(q{SELECT (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shard\_%') || ' ' ||
                (SELECT count(*) FROM shardid.shard_registry) || ' ' ||
                (SELECT string_agg(table_name, ',' ORDER BY position) FROM shardid.sharded_tables)}),
	'8192 8192 photos,comments,likes', 'shard schemas, registered shards, sharded tables');
step('check: counts');
is(sql(q{
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
}), '24576 24576 0',
	'tables in shard schemas; with the id DEFAULT of their own shard and generator; with an identity left');
step('check: defaults');
# Rows through the defaults, in every 97th shard and the last: their IDs
# carry their shard, and the last one is the state of that shard's generator.
is(sql(q{
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
}), '258 258 86 86', 'rows inserted through the defaults: IDs of their shard, from its generator');
step('check: rows');
# The shards view finds each generator by (schema, name): one pg_class row
# per shard, whatever the statistics say (a plan from pg_class by name
# alone read all 8192 id_seq rows for each shard: minutes).
my $plan = sql('EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY OFF) SELECT count(last_id) FROM shardid.shards');
my $max_rows = 0;
for (split /\n/, $plan)
{
	$max_rows = $1 if / on pg_class .*actual rows=([0-9.]+) / && $1 > $max_rows;
}
is($max_rows + 0, 1, 'pg_class rows per lookup in the shards view (at most)');
is(sql('SELECT count(last_id) FROM shardid.shards'), '86', 'the shards view, every generator read');
step('check: shards view');

# --- reading every shard (docs/shards.md, "Reading every shard") ----------------
# One statement over all 8192 shards fails (a UNION ALL nests too deep for
# the default max_stack_depth), and so does one transaction reading each
# shard in turn (here the 3 tables: more locks than 19's larger lock table
# holds too). The batched forms of the docs, printed there as they are here,
# read every shard: a statement per group of 64 shards through \gexec, and a
# DO block that commits every 64 shards.
my $union = sql(q{SELECT 'SELECT sum(count) FROM (' || string_agg(format('SELECT count(*) FROM %I.photos', schema_name), ' UNION ALL ' ORDER BY shard) || ') AS s'
                    FROM shardid.shard_registry});
# (up to 18 it fails at once with "stack depth limit exceeded"; 19 plans it
# and then runs for minutes at full CPU: cut at 30 s, it has not answered)
($rc, $out, $err) = run("SET statement_timeout = '30s';\n$union");
isnt($rc, 0, 'a UNION ALL over 8192 shards fails');
like($err, qr/ERROR:  (stack depth limit exceeded|canceling statement due to statement timeout|out of shared memory)/,
	'a UNION ALL over 8192 shards: too deep, too long or too many locks');
note('a UNION ALL over 8192 shards: ' . (($err =~ /ERROR:  (.*)/)[0] // ''));
($rc, $out, $err) = run(q{
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT schema_name FROM shardid.shard_registry ORDER BY shard LOOP
        EXECUTE format('SELECT (SELECT count(*) FROM %1$I.photos) + (SELECT count(*) FROM %1$I.comments) + (SELECT count(*) FROM %1$I.likes)',
                       r.schema_name);
    END LOOP;
END
$$;
});
isnt($rc, 0, "one transaction reading every shard's tables fails");
like($err, qr/ERROR:  out of shared memory/, "one transaction reading every shard's tables: out of shared memory");
step('reading every shard: one statement, one transaction');

my $gexec = <<'SQL';
SELECT string_agg(format('SELECT %s AS shard, count(*) FROM %I.photos', shard, schema_name),
                  ' UNION ALL ' ORDER BY shard)
  FROM shardid.shard_registry
 GROUP BY shard / 64
 ORDER BY shard / 64 \gexec
SQL
my $gexec_table = <<'SQL';
CREATE TABLE photo_counts (shard integer PRIMARY KEY, photos bigint NOT NULL);
SELECT 'INSERT INTO photo_counts ' ||
       string_agg(format('SELECT %s, count(*) FROM %I.photos', shard, schema_name),
                  ' UNION ALL ' ORDER BY shard)
  FROM shardid.shard_registry
 GROUP BY shard / 64
 ORDER BY shard / 64 \gexec
SELECT count(*) AS shards, sum(photos) AS photos FROM photo_counts;
SQL
my $do_loop = <<'SQL';
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
# The docs are read from the source tree this file is in (a copy of the tree
# for the tests must hold docs/).
my $docs_file = "$FindBin::RealBin/../../docs/shards.md";
my $docs = -e $docs_file ? slurp_file($docs_file) : '';
my @missing = grep { index($docs, "```sql\n$_```") < 0 } $gexec, $gexec_table, $do_loop;
is(scalar(@missing), 0, 'docs/shards.md shows the three batched forms as tested')
  or diag(-e $docs_file ? "not in docs/shards.md as tested:\n" . join("\n", @missing) : "$docs_file is missing");
# (the rows of "check: rows": a photo in each of 86 shards)
($out) = run_ok($gexec, '-F', ' ');
my ($rows, $photos) = (0, 0);
for (split /\n/, $out)
{
	my (undef, $count) = split / /;
	$rows++;
	$photos += $count;
}
is("$rows/$photos", '8192/86', '\gexec, a statement per 64 shards: rows (shards), photos');
($out) = run_ok($gexec_table, '-F', ' ');
is((split /\n/, $out)[-1], '8192 86', '\gexec into a table: shards, photos');
sql('TRUNCATE photo_counts');
run_ok($do_loop);
is(sql(q{SELECT count(*) || ' ' || sum(photos) FROM photo_counts}), '8192 86',
	'a DO block committing every 64 shards: shards, photos');
step('reading every shard: in batches');

# A copy altered by hand among 8192 x 3 (issue 36): the node's side of
# check_cluster() (_copy_drift(), one pass over the catalogs) finds it.
is(sql('SELECT shardid_internal._copy_drift()'), '[]', 'every copy is as its template');
step('comparing 24576 copies with their templates');
sql('ALTER TABLE shard_4711.photos ADD COLUMN rogue integer');
is(sql(q{SELECT string_agg((d->>'shard') || ' ' || (d->>'table') || ' ' || (d->'differences')::text, '; ') FROM jsonb_array_elements(shardid_internal._copy_drift()) AS d}),
	q{4711 shard_4711.photos ["column rogue is not the template's"]}, 'the one copy altered by hand is found, with what differs');
step('comparing them again, one altered');
note(sprintf('total: %.1f s', time - $started));

done_testing();
