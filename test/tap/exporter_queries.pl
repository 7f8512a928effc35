# exporter_queries.pl — the exporter query files work as shipped:
# examples/postgres_exporter/queries.yaml (every database with shardid) and
# router_queries.yaml (the router). Each query runs as a login role with
# pg_monitor and no other privilege but what router_setup.sql grants, against
# one database that is both a node (shards, generators) and a router (two
# nodes, one of them this database and one unreachable, a move in progress,
# a failed rebalance job), and returns exactly the columns the file declares
# as metrics, labels as text and gauges as numbers (empty for NULL: NaN).
# Then the sql_exporter collectors (examples/sql_exporter/*.collector.yml)
# hold the same queries, text for text, and one metric per value column named
# <query>_<column> with the query's labels. Reads the files' own layout (a
# top-level name per query, "query: |" and a block, "metrics:" with
# "- column:" and "usage:"; "- query_name:", "- metric_name:" and flow lists
# in the collectors).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

my $examples = "$FindBin::RealBin/../../examples";
my $dir = "$examples/postgres_exporter";
my @yamls = ("$dir/queries.yaml", "$dir/router_queries.yaml");
my @collectors = sort glob("$examples/sql_exporter/*.collector.yml");

# The lines of the files, one after the other.
sub lines_of
{
	return map { split /\n/, slurp_file($_) } @_;
}

# The postgres_exporter files: each query's name (in order), its SQL (the
# block under "query: |", unindented) and its metrics ([column, usage]).
my (@queries, %sql, %metrics);
{
	my ($name, $inquery, $metric) = ('', 0, '');
	for (lines_of(@yamls))
	{
		if (/^[a-z_]+:$/) { $name = substr($_, 0, -1); push @queries, $name; next; }
		if (/^  query: \|$/) { $inquery = 1; next; }
		if ($inquery && /^    /) { $sql{$name} .= substr($_, 4) . "\n"; next; }
		$inquery = 0;
		if (/^    - ([a-z_]+):$/) { $metric = $1; next; }
		if (/^        usage: \s*(\S+)/)
		{
			(my $usage = $1) =~ s/"//g;
			push @{ $metrics{$name} }, [ $metric, $usage ];
		}
	}
}
ok(@queries > 0, "queries found in @yamls");
my %seen;
is(join(' ', grep { $seen{$_}++ == 1 } @queries), '', 'queries: one of each name');

my $node = data_node('exporter', logical => 0, extension => 0);
my $connstr = $node->connstr('app');
my $host = $node->host;
$node->safe_psql('app', qq{
CREATE EXTENSION shardid;
CREATE EXTENSION dblink;
SELECT shardid.create_shards(0, 1);
CREATE TABLE photos (id bigint PRIMARY KEY, caption text);
SELECT shardid.create_table('photos');
INSERT INTO shard_0001.photos (caption) SELECT 'burst' FROM generate_series(1, 5000);
CREATE ROLE exporter LOGIN IN ROLE pg_monitor;
-- the router: node a is this database (shards 0 and 1), node b unreachable;
-- shard 1 is being moved to b (no session runs it), a rebalance job failed
SELECT shardid.add_node('a', \$\$$connstr\$\$);
SELECT shardid.add_node('b', 'host=$host port=1 dbname=app', force => true);
SELECT shardid.place_shards('a', 0, 1);
INSERT INTO shardid.shard_moves (shard, source, target, schema_name, mode, phase,
                                 tables_ready, tables_total, bytes_copied, bytes_total, lag_bytes)
    VALUES (1, 'a', 'b', 'shard_0001', 'online', 'copy', 0, 1, 8192, 65536, 0);
INSERT INTO shardid.rebalance_jobs (kind, options, state, moves_done, moves_planned, last_error, finished_at)
    VALUES ('rebalance', '{}', 'failed', 1, 3, 'failed in a test', now());
});
$node->safe_psql('app', slurp_file("$dir/router_setup.sql"));

# as_exporter(SQL) — psql's exit status, CSV output (with the header) and
# standard error of SQL run as the role exporter.
sub as_exporter
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $ret = $node->psql('app', $sql,
		connstr => "$connstr user=exporter",
		extra_params => [ '--csv', '-P', 'tuples_only=off' ],
		stdout => \$out,
		stderr => \$err);
	return ($ret, $out, $err);
}

# value(CSV, COLUMN, ROW) — one field of psql's CSV output (no quoted commas
# in what these queries return); '' when there is none.
sub value
{
	my ($csv, $col, $row) = @_;
	my @lines = split /\n/, $csv // '';
	return '' unless @lines && defined $row && defined $lines[$row];
	my @header = split /,/, $lines[0], -1;
	my ($c) = grep { $header[$_] eq $col } reverse 0 .. $#header;
	return '' unless defined $c;
	return (split /,/, $lines[$row], -1)[$c] // '';
}

# row_where(CSV, COLUMN, VALUE) — the number of the first row whose COLUMN
# is VALUE (undef for none).
sub row_where
{
	my ($csv, $col, $val) = @_;
	my @lines = split /\n/, $csv // '';
	for my $r (1 .. $#lines)
	{
		return $r if value($csv, $col, $r) eq $val;
	}
	return undef;
}

my %csv;
for my $name (@queries)
{
	my @metrics = @{ $metrics{$name} // [] };
	ok(($sql{$name} // '') ne '', "$name: a query");
	ok(@metrics > 0, "$name: metrics");
	my ($ret, $out, $err) = as_exporter($sql{$name} // '');
	is($ret, 0, "$name: the query runs as a pg_monitor role") or diag($err);
	my @lines = split /\n/, $out;
	my $rows = @lines - 1;
	cmp_ok($rows, '>=', 1, "$name: rows");
	is(join(' ', sort split /,/, $lines[0] // ''), join(' ', sort map { $_->[0] } @metrics),
		"$name: columns are the declared metrics");
	my (@unknown, @untyped);
	for (@metrics)
	{
		my ($metric, $usage) = @$_;
		next if $usage eq 'LABEL';
		if ($usage ne 'GAUGE' && $usage ne 'COUNTER')
		{
			push @unknown, "$name.$metric: unknown usage $usage";
			next;
		}
		for my $r (1 .. $rows)
		{
			my $v = value($out, $metric, $r);
			push @untyped, "$name.$metric: '$v' is not a number" unless $v =~ /^(-?[0-9]+(\.[0-9]+)?)?$/;
		}
	}
	is_deeply(\@unknown, [], "$name: every metric a LABEL, GAUGE or COUNTER");
	is_deeply(\@untyped, [], "$name: $rows rows, every metric column present and typed");
	$csv{$name} = $out;
}

# The values: shard 1's generator issued IDs, shard 0's none yet.
my $gen = $csv{shardid_generators};
my ($r0, $r1) = map { row_where($gen, 'schema', $_) } qw(shard_0000 shard_0001);
is(value($gen, 'shard', $r1), '1', 'shard_0001 label');
is(value($gen, 'ids_per_ms', $r1), '1024', 'shard_0001 ids_per_ms');
is(value($gen, 'max_drift_seconds', $r1), '2.000000', 'shard_0001 max_drift_seconds');
isnt(value($gen, 'last_time_seconds', $r1), '', 'shard_0001 last_time_seconds set');
is(value($gen, 'last_time_seconds', $r0), '', 'shard_0000 last_time_seconds (no ID yet)');
is(value($csv{shardid_layout}, 'in_use', 1), '1', 'layout in_use');
my $node_csv = $csv{shardid_node};
is(value($node_csv, 'shards', 1), '2', 'node shards');
my $bytes = value($node_csv, 'bytes', 1);
ok($bytes =~ /^[0-9]+$/ && $bytes > 0, "node bytes ($bytes)");

# The router's: the move, the shards per node, the failed job, the problems.
# fields(CSV, ROW, COLUMNS...) — those fields of the row, joined by spaces.
sub fields
{
	my ($csv, $row, @cols) = @_;
	return join ' ', map { value($csv, $_, $row) } @cols;
}
is(fields($csv{shardid_moves}, 1, qw(shard phase running error bytes_total)), '1 copy 0 0 65536',
	'moves: shard 1 in phase copy, no session, no error');
my $placement = $csv{shardid_placement};
is(fields($placement, row_where($placement, 'node', 'a'), qw(shards frozen moving_out moving_in)), '2 0 1 0',
	'placement a: shards frozen moving_out moving_in');
is(fields($placement, row_where($placement, 'node', 'b'), qw(shards frozen moving_out moving_in)), '0 0 0 1',
	'placement b: shards frozen moving_out moving_in');
my $rebalance = $csv{shardid_rebalance};
is(fields($rebalance, 1, qw(kind state failed running)) . ' '
	  . value($rebalance, 'moves_done', 1) . '/' . value($rebalance, 'moves_planned', 1),
	'rebalance failed 1 0 1/3', 'rebalance: kind state failed running moves');
# A background job that has not ended: rebalance_status() asks whether its
# driver is alive (router_setup.sql grants what it calls). This one's is
# gone (a process that is not there; no worker registered), so it reads
# interrupted, a failure, as the pg_monitor role too.
$node->safe_psql('app', q{INSERT INTO shardid.rebalance_jobs (kind, options, state, moves_done, moves_planned, worker_pid, worker_start)
                          VALUES ('drain', '{}', 'running', 0, 2, 2147483647, now())});
my ($jret, $jout, $jerr) = as_exporter($sql{shardid_rebalance} // '');
is($jret, 0, 'rebalance: the query runs as a pg_monitor role while a job has not ended') or diag($jerr);
is(fields($jout, 1, qw(kind state failed running)), 'drain interrupted 1 0',
	'rebalance: a job whose driver is gone reads interrupted');
my $cluster = $csv{shardid_cluster};
is(value($cluster, 'problems', row_where($cluster, 'kind', 'node_unreachable')), '1', 'cluster: node_unreachable');
is(value($cluster, 'problems', row_where($cluster, 'kind', 'move_stalled')), '1', 'cluster: move_stalled (the move no session runs)');
is(value($cluster, 'problems', row_where($cluster, 'kind', 'unsafe_name')), '0', 'cluster: unsafe_name, listed with none');
my ($problems, undef, @cluster_rows) = (0, split /\n/, $cluster // '');
for (@cluster_rows)
{
	my $n = (split /,/, $_, -1)[1] // '';
	$problems += $n if $n =~ /^-?[0-9]+(\.[0-9]+)?$/;
}
is($problems, 2, 'cluster: problems in all');
# Without router_setup.sql's grants the exporter is refused, as documented.
$node->safe_psql('app', 'REVOKE EXECUTE ON FUNCTION shardid_exporter.check_cluster() FROM pg_monitor');
my ($ret) = as_exporter($sql{shardid_cluster} // '');
isnt($ret, 0, "shardid_cluster needs router_setup.sql's grant");

# The sql_exporter collectors: the same queries and metrics, each metric
# "name type labels values query" as in the postgres_exporter files.
my (%sx_sql, @sx_metrics);
{
	my ($name, $inquery, $metric, $type, $labels, $values) = ('', 0, '', '', '-', '');
	for (lines_of(@collectors))
	{
		if (/^  - query_name: /) { $name = (split ' ')[2] // ''; $inquery = 0; next; }
		if (/^    query: \|$/) { $inquery = 1; next; }
		if ($inquery && /^      /) { $sx_sql{$name} .= substr($_, 6) . "\n"; next; }
		$inquery = 0;
		if (/^  - metric_name: /)
		{
			$metric = (split ' ')[2] // '';
			($type, $labels, $values) = ('', '-', '');
			next;
		}
		if (/^    type: /) { $type = (split ' ')[1] // ''; next; }
		if (/^    key_labels: \[/)
		{
			$labels = substr($_, index($_, '[') + 1);
			$labels =~ s/\]$//;
			$labels =~ s/, /,/g;
			next;
		}
		if (/^    values: \[/)
		{
			$values = substr($_, index($_, '[') + 1);
			$values =~ s/\]$//;
			next;
		}
		push @sx_metrics, join(' ', $metric, $type, $labels, $values, (split ' ')[1] // '') if /^    query_ref: /;
	}
}
my @expected;
for my $name (@queries)
{
	ok(($sx_sql{$name} // '') ne '', "sql_exporter: query $name");
	is($sx_sql{$name}, $sql{$name}, "sql_exporter: query $name is the same");
	my @metrics = @{ $metrics{$name} // [] };
	my @labels = map { $_->[0] } grep { $_->[1] eq 'LABEL' } @metrics;
	my $labels = @labels ? join(',', @labels) : '-';
	push @expected, map { join ' ', "${name}_$_->[0]", lc $_->[1], $labels, $_->[0], $name }
	  grep { $_->[1] ne 'LABEL' } @metrics;
}
is_deeply([ sort @sx_metrics ], [ sort @expected ],
	sprintf('sql_exporter: %d metrics of %d queries, as in the postgres_exporter files', scalar @sx_metrics,
		scalar @queries));

done_testing();
