# ShardidTest.pm — what shardid's TAP tests share: servers from
# PostgreSQL::Test::Cluster set up as a data node or a router of a shardid
# cluster, the router's routing without PL/Proxy, a writer through the
# router that records every acknowledged ID, and the checks that a move
# left nothing behind.
#
#   use FindBin;
#   use lib $FindBin::RealBin;
#   use ShardidTest;
#
#   my %node = map { $_ => data_node($_) } qw(a b);
#   my $router = router_node('router', \%node);
#
# Loading it also points Cluster.pm at PGXS's pg_regress (init runs
# "$PG_REGRESS --config-auth DATADIR", a no-op on Unix that must still
# succeed) unless the environment names one.
package ShardidTest;

use strict;
use warnings;

use Exporter qw(import);
use Digest::MD5 qw(md5_hex);
use File::Basename qw(dirname);
use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(gettimeofday);

our @EXPORT = qw(data_node router_node have_extension router_dblink_sql
  node_insert_post_sql post_ids_sql writer_sql install_writer leftovers
  registered_where misplaced background_call);

unless (($ENV{PG_REGRESS} // '') =~ m{/pg_regress$} && -x $ENV{PG_REGRESS})
{
	chomp(my $pgxs = `pg_config --pgxs`);
	$ENV{PG_REGRESS} = dirname(dirname($pgxs)) . '/test/regress/pg_regress';
}

# A server's initdb runs once per TAP run and per set of options; after
# that Cluster.pm's init copies it (an initdb is about 1.7 s of CPU here, a
# copy 0.1 s, and a leg's TAP files make about 90 servers). A copy gets a
# system identifier of its own, made the way initdb makes one (seconds,
# microseconds, process): shardid reads it to tell a router's changes apart
# and to name a move's slots, so two servers of a test must not share one
# (PostgreSQL 17's INITDB_TEMPLATE copies it as it is). The identifier is
# written into the copy's pg_control, and pg_resetwal -f, which takes the
# file's values although its checksum no longer matches, writes the file
# again with its checksum and a new WAL under the new identifier, as
# pg_upgrade does with a new cluster. The template lives in tmp_check,
# made under a name of its own and renamed into place, so two tests
# started at once each find a whole one.
{
	no warnings 'redefine';
	my $run = \&PostgreSQL::Test::Utils::system_or_bail;
	*PostgreSQL::Test::Utils::system_or_bail = sub {
		return $_[0] eq 'initdb' ? initdb_copy($run, @_) : $run->(@_);
	};
}

sub initdb_copy
{
	my ($run, @cmd) = @_;
	my ($pgdata, @options);
	for (my $i = 1; $i < @cmd; $i++)
	{
		if ($cmd[$i] eq '-D' || $cmd[$i] eq '--pgdata') { $pgdata = $cmd[ ++$i ]; }
		else { push @options, $cmd[$i]; }
	}
	return $run->(@cmd) unless defined $pgdata;
	# the programs found by PATH, and the options, name the template
	my $template = "$PostgreSQL::Test::Utils::tmp_check/initdb-template-"
	  . md5_hex(join("\0", $ENV{PATH}, @options));
	unless (-d $template)
	{
		$run->('initdb', @options, '-D', "$template.$$");
		rename("$template.$$", $template) or rmtree("$template.$$");
	}
	$run->('cp', '-RPp', $template, $pgdata);
	my ($s, $us) = gettimeofday();
	my $sysid = ($s << 32) | ($us << 12) | ($$ & 0xFFF);
	open my $control, '+<:raw', "$pgdata/global/pg_control"
	  or die "$pgdata/global/pg_control: $!";
	print $control pack('Q<', $sysid);
	close $control or die "$pgdata/global/pg_control: $!";
	Test::More::note "initdb: a copy of $template, with system identifier $sysid";
	$run->('pg_resetwal', '-f', '-D', $pgdata);
	return;
}

# The settings of a data node: logical replication for online moves, and
# apply workers that restart fast, so consecutive moves to one node do not
# wait 5 s each (docs/moves.md).
my $logical_conf = q{
max_wal_senders = 20
max_replication_slots = 20
max_logical_replication_workers = 8
wal_retrieve_retry_interval = 200ms
wal_sender_timeout = 5s
log_statement = none
};

# data_node(NAME, %options) — a started server with database app and
# shardid in it. Options: conf (more postgresql.conf lines), logical (0 for
# a server without wal_level = logical; default 1), before (SQL run in
# database postgres first, e.g. roles), owner (of database app), extension
# (0: no CREATE EXTENSION), sql (run in app after the extension).
sub data_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	if ($opt{logical} // 1)
	{
		$node->init(allows_streaming => 'logical');
		$node->append_conf('postgresql.conf', $logical_conf);
	}
	else
	{
		$node->init;
		$node->append_conf('postgresql.conf', "log_statement = none\n");
	}
	$node->append_conf('postgresql.conf', $opt{conf}) if defined $opt{conf};
	$node->start;
	$node->safe_psql('postgres', $opt{before}) if defined $opt{before};
	$node->safe_psql('postgres', 'CREATE DATABASE app' . (defined $opt{owner} ? " OWNER $opt{owner}" : ''));
	$node->safe_psql('app', 'CREATE EXTENSION shardid') if $opt{extension} // 1;
	$node->safe_psql('app', $opt{sql}) if defined $opt{sql};
	return $node;
}

# router_node(NAME, \%nodes, %options) — a started router: database app with
# dblink and shardid, each node of %nodes added under its key (in key
# order). Options: conf, plproxy (1: CREATE EXTENSION plproxy too, when it
# is installed), add_node_args (more arguments of add_node(), e.g.
# "force => true").
sub router_node
{
	my ($name, $nodes, %opt) = @_;
	my $router = PostgreSQL::Test::Cluster->new($name);
	$router->init;
	$router->append_conf('postgresql.conf', "log_statement = none\n");
	$router->append_conf('postgresql.conf', $opt{conf}) if defined $opt{conf};
	$router->start;
	$router->safe_psql('postgres', 'CREATE DATABASE app');
	$router->safe_psql('app', 'CREATE EXTENSION dblink; CREATE EXTENSION shardid;');
	$router->safe_psql('app', 'CREATE EXTENSION plproxy') if $opt{plproxy} && have_extension('plproxy');
	my $more = defined $opt{add_node_args} ? ", $opt{add_node_args}" : '';
	for my $n (sort keys %{ $nodes // {} })
	{
		my $connstr = $nodes->{$n}->connstr('app');
		$router->safe_psql('app', "SELECT shardid.add_node('$n', \$\$$connstr\$\$$more)");
	}
	return $router;
}

# background_call(NODE, DB, SQL) — SQL started in a background psql session
# on NODE's database DB (an error does not end the session), once psql
# has sent it; returns the session and its backend's PID, for a test that
# interrupts the call (pg_cancel_backend, pg_terminate_backend).
sub background_call
{
	my ($node, $db, $sql) = @_;
	my $session = $node->background_psql($db, on_error_stop => 0);
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	$pid =~ s/\D//g;
	$session->query_until(qr/calling/, "\\echo calling\n$sql\n");
	return ($session, $pid);
}

# have_extension(NAME) — whether the extension is installed for the
# PostgreSQL whose pg_config is first in PATH.
sub have_extension
{
	my ($ext) = @_;
	chomp(my $share = `pg_config --sharedir`);
	return -e "$share/extension/$ext.control";
}

# router_dblink_sql() — SQL for a router without PL/Proxy (PostgreSQL 19:
# Debian packages none): public.shard_connstr(shard) is the connect string
# the PL/Proxy cluster would give that shard's partition (read-only while
# the shard is frozen; one that fails naming the shard when it is placed
# nowhere), so routing functions over dblink refuse and retry as PL/Proxy's
# would. public.shard_conn(shard) names the session's dblink connection to
# that connect string, made on first use and kept for the session (as
# PL/Proxy keeps one per partition): a statement that routes a row at a
# time connects once per node, not once per row.
sub router_dblink_sql
{
	return q{
CREATE FUNCTION public.shard_conn(i_shard integer) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    c text := public.shard_connstr(i_shard);
    n text := 'shard_conn_' || md5(c);
BEGIN
    IF n <> ALL (COALESCE(public.dblink_get_connections(), '{}')) THEN
        PERFORM public.dblink_connect(n, c);
    END IF;
    RETURN n;
END
$$;
CREATE FUNCTION public.shard_connstr(i_shard integer) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT COALESCE((SELECT CASE WHEN p.frozen THEN n.connstr || ' options=''-c default_transaction_read_only=on'''
                                 ELSE n.connstr END
                       FROM shardid.shard_placement AS p JOIN shardid.nodes AS n ON n.node = p.node
                      WHERE p.shard = i_shard),
                    format('service=%L', format('shardid: shard %s is not placed on any node', i_shard)))
$$;
};
}

# node_insert_post_sql() — SQL for a node: public.insert_post(shard, body)
# inserts into the shard's posts and returns the ID.
sub node_insert_post_sql
{
	return q{
CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE new_id bigint;
BEGIN
    EXECUTE format('INSERT INTO %I.posts (user_id, body) VALUES ($1, $2) RETURNING id', shardid.shard_schema(i_shard))
       INTO new_id USING i_shard, i_body;
    RETURN new_id;
END $$;
};
}

# post_ids_sql(SIDE) — SQL for public.post_ids(shards), the IDs of the
# posts of those shards: SIDE 'node' reads the shards' tables of the node;
# 'plproxy' and 'dblink' are the router's, calling each node once with its
# shards (PL/Proxy's SPLIT; over dblink, to router_dblink_sql()'s connect
# strings).
sub post_ids_sql
{
	my ($side) = @_;
	return {
		node => q{
CREATE FUNCTION public.post_ids(i_shards integer[]) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE (SELECT string_agg(format('SELECT p.id FROM %I.posts AS p', shardid.shard_schema(s)), ' UNION ALL ')
                            FROM unnest(i_shards) AS s);
END $$;
},
		plproxy => q{
CREATE FUNCTION public.post_ids(i_shards integer[]) RETURNS SETOF bigint AS $$
    CLUSTER 'shardid'; SPLIT i_shards; RUN ON i_shards;
$$ LANGUAGE plproxy;
},
		dblink => q{
CREATE FUNCTION public.post_ids(i_shards integer[]) RETURNS SETOF bigint LANGUAGE sql AS $$
    SELECT t.id FROM (SELECT public.shard_connstr(s) AS c, array_agg(s) AS ss FROM unnest(i_shards) AS s GROUP BY 1) AS g,
           LATERAL public.dblink(g.c, format('SELECT public.post_ids(%L)', g.ss)) AS t(id bigint)
$$;
},
	}->{$side} // die "post_ids_sql: no side $side";
}

# writer_sql(%options) — SQL for the router of a test that writes while
# shards move: public.written records each acknowledged ID (n: the order
# the application got them; key: what it was written for; at: when;
# retries), and
# CALL public.writer(keys, count, pause) calls public.insert_post(key,
# body), which the test defines, for keys[1], keys[2], ... in turn (NULL:
# the shards 0 .. n-1 of shardid.placement when it starts), retrying in a
# new transaction what a move refuses (a frozen shard is read-only, a shard
# between nodes is not there, a node not reachable yet: option retry, the
# conditions of the EXCEPTION clause, narrows that), until it has written
# count rows (NULL: until a row is put in public.stop_writer). A write is
# retried max_tries times (option; default 5000), retry_sleep seconds apart
# (option; default 0.001), or, with option retry_for, for that many
# seconds of the clock whatever the tries; then its last error ends the
# writer. Run it in a background_psql session, or a psql of its own.
sub writer_sql
{
	my (%opt) = @_;
	my $retry = $opt{retry}
	  // 'read_only_sql_transaction OR undefined_object OR undefined_table'
	  . ' OR sqlclient_unable_to_establish_sqlconnection OR connection_exception';
	my $max_tries = $opt{max_tries} // 5000;
	my $retry_sleep = $opt{retry_sleep} // 0.001;
	die "writer_sql: max_tries and retry_sleep must be numbers" unless "$max_tries $retry_sleep" =~ /^\d+ [\d.]+$/;
	my $give_up = "tries > $max_tries";
	if (defined $opt{retry_for})
	{
		die "writer_sql: retry_for must be a number" unless $opt{retry_for} =~ /^[\d.]+$/;
		$give_up = "clock_timestamp() > first_try + make_interval(secs => $opt{retry_for})";
	}
	return q{
CREATE TABLE public.written (n bigserial PRIMARY KEY, id bigint NOT NULL UNIQUE, key bigint NOT NULL,
                             at timestamptz NOT NULL DEFAULT clock_timestamp(), retries integer NOT NULL DEFAULT 0);
CREATE TABLE public.stop_writer (stop boolean);
CREATE PROCEDURE public.writer(i_keys integer[] DEFAULT NULL, i_count integer DEFAULT NULL,
                               i_pause float8 DEFAULT 0.005) LANGUAGE plpgsql AS $$
DECLARE
    keys integer[] := COALESCE(i_keys, ARRAY(SELECT g FROM generate_series(0, (SELECT count(*) FROM shardid.placement)::integer - 1) AS g));
    k integer; new_id bigint; tries integer; i integer := 0; first_try timestamptz;
BEGIN
    WHILE i < COALESCE(i_count, i + 1) AND NOT EXISTS (SELECT FROM public.stop_writer) LOOP
        i := i + 1;
        k := keys[1 + i % cardinality(keys)];
        tries := 0;
        first_try := clock_timestamp();
        LOOP
            BEGIN
                new_id := public.insert_post(k, 'writer ' || i);
                EXIT;
            EXCEPTION WHEN } . $retry . q{ THEN
                tries := tries + 1;
                IF } . $give_up . q{ THEN RAISE; END IF;
            END;
            COMMIT;
            PERFORM pg_sleep(} . $retry_sleep . q{);
        END LOOP;
        INSERT INTO public.written (id, key, retries) VALUES (new_id, k, tries);
        COMMIT;
        PERFORM pg_sleep(i_pause);
    END LOOP;
END $$;
};
}

# install_writer(ROUTER, NODES, %writer_sql options) — on every node of
# the array NODES, public.insert_post(shard, body) inserts into the shard's
# posts and returns the ID; on ROUTER, the same function calls the node the
# placement names (over dblink), and writer_sql()'s table and writer (with
# the options given): CALL public.writer() inserts into every placed shard
# in turn until a row is put in public.stop_writer.
sub install_writer
{
	my ($router, $nodes, %opt) = @_;
	$_->safe_psql('app', node_insert_post_sql()) for @$nodes;
	$router->safe_psql('app', router_dblink_sql() . q{
CREATE FUNCTION public.insert_post(i_shard integer, i_body text) RETURNS bigint LANGUAGE sql AS $$
    SELECT t.id FROM public.dblink(public.shard_connstr(i_shard),
                                   format('SELECT public.insert_post(%s, %L)', i_shard, i_body)) AS t(id bigint)
$$;
} . writer_sql(%opt));
	return;
}

# leftovers(NODES, ROUTER) — what moves leave behind when they go wrong:
# "nodes=" and per node of the array NODES the count of its publications,
# subscriptions and replication slots, then " moves=" and the router's
# rows of shardid.shard_moves. "nodes=00 moves=0" for two clean nodes.
sub leftovers
{
	my ($nodes, $router) = @_;
	my $out = join '', map {
		$_->safe_psql('app', q{SELECT (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_subscription)
                                    + (SELECT count(*) FROM pg_replication_slots)})
	} @$nodes;
	return "nodes=$out moves=" . $router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves');
}

# registered_where(SHARD, \%nodes) — the names of the nodes that register
# the shard, sorted and joined by spaces ('' for none).
sub registered_where
{
	my ($shard, $nodes) = @_;
	return join ' ', grep {
		$nodes->{$_}->safe_psql('app', "SELECT count(*) FROM shardid.shard_registry WHERE shard = $shard") ne '0'
	} sort keys %$nodes;
}

# misplaced(ROUTER, \%nodes, SHARDS...) — '' when each shard is registered
# on exactly the node the router places it on; otherwise "shard S on N: C"
# for each node N whose count C of that shard's registrations is wrong.
sub misplaced
{
	my ($router, $nodes, @shards) = @_;
	my @mismatch;
	for my $s (@shards)
	{
		my $placed = $router->safe_psql('app', "SELECT node FROM shardid.placement WHERE shard = $s");
		for my $n (sort keys %$nodes)
		{
			my $has = $nodes->{$n}->safe_psql('app', "SELECT count(*) FROM shardid.shard_registry WHERE shard = $s");
			push @mismatch, "shard $s on $n: $has" if $has ne ($n eq $placed ? '1' : '0');
		}
	}
	return join ', ', @mismatch;
}

1;
