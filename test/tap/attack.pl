# attack.pl — the attack test finds its targets itself (issue 44).
#
# A router (dblink and shardid) and two nodes (dblink too, for
# build_copy_index()), each database owned by a role that is no superuser
# (dbowner), with a tenant who owns shard
# copies and their schemas, and a template owner (towner). Payloads, each
# recording who runs it (audit.hit(): current_user and whether it is a
# superuser, into audit.payload_log and the server log) and trying to
# make the tenant a superuser:
#   - the database owner's: function and operator shadows in every schema
#     of the default search_path ("$user" = a schema named postgres, and
#     public), on the router and the nodes, the database's search_path
#     set to put them first (public, "$user", pg_catalog);
#   - the tenant's, in the copies it owns: CHECKs, a trigger, functions in
#     its shard's schema named like the template's (public.valid() becomes
#     shard_0002.valid() under a rewrite of schema names), a constraint
#     and a schema whose names hold quotes and a newline;
#   - the template owner's: a volatile DEFAULT, a CHECK and an index
#     expression in its template, whose copies are made to differ.
# Then, as a superuser: every check_cluster() kind the cluster can be
# made to show (shardid.check_cluster_kinds, read from the catalog), and
# each kind's fix run where check_cluster() says (each must be a call of
# a shardid function or procedure); then every function and procedure of
# the schemas shardid and shardid_internal (read from the catalog) called
# on the router and on node a, with the arguments of test/lib/attack_args.sql
# (a routine that needs arguments and has no row there fails the test).
# At the end no payload ran as a superuser and no role became one. The
# review's findings have their own checks: N1 (the copy_differs fix as a
# superuser), N1b (a name rewrite), N1c (a copy's CHECK calling another
# schema, reported), N1d (a literal rewrite), S1 (rebalance() under the
# database owner's search_path), N2 (a run_on_shards() read that writes),
# N7 (_run_as_owner() with transaction control and role 0), G5 (negative
# timeouts). The closing line counts what was attacked.
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

my $started = time;
my $pin = 'SET search_path = pg_catalog; ';    # the harness's own queries

# --- payloads -----------------------------------------------------------------
my $audit = q{
CREATE SCHEMA audit;
CREATE TABLE audit.payload_log (what text, who name, su boolean, entry text);
GRANT USAGE ON SCHEMA audit TO PUBLIC;
GRANT INSERT ON audit.payload_log TO PUBLIC;
CREATE TABLE audit.attack_args (routine text PRIMARY KEY, args text);
-- runs as its caller: tries RESET ROLE (refused in a security-restricted
-- operation) and to make tenant a superuser, then records who it runs as:
-- in the server log always, in the table when the transaction may write
CREATE FUNCTION audit.hit(what text) RETURNS boolean LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog AS $$
DECLARE
    su boolean := (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r WHERE r.rolname OPERATOR(pg_catalog.=) current_user);
BEGIN
    BEGIN
        EXECUTE 'RESET ROLE';
    EXCEPTION WHEN OTHERS THEN
        NULL;
    END;
    BEGIN
        EXECUTE 'ALTER ROLE tenant SUPERUSER';
    EXCEPTION WHEN OTHERS THEN
        NULL;
    END;
    RAISE LOG 'attack payload % ran as % superuser=% in %', what, current_user, su,
        COALESCE(pg_catalog.current_setting('attack.entry', true), '?');
    BEGIN
        INSERT INTO audit.payload_log VALUES (what, current_user, su, pg_catalog.current_setting('attack.entry', true));
    EXCEPTION WHEN OTHERS THEN
        NULL;
    END;
    RETURN true;
END $$;
GRANT EXECUTE ON FUNCTION audit.hit(text) TO PUBLIC;
};

# the database owner's shadows: [signature, returns, what it returns]
my @functions = (
	[ 'now()',                                                'timestamptz', 'pg_catalog.now()' ],
	[ 'clock_timestamp()',                                    'timestamptz', 'pg_catalog.clock_timestamp()' ],
	[ 'format(a text, b text)',                               'text',        'pg_catalog.format(a, b)' ],
	[ 'quote_ident(a text)',                                  'text',        'pg_catalog.quote_ident(a)' ],
	[ 'lower(a text)',                                        'text',        'pg_catalog.lower(a)' ],
	[ 'length(a text)',                                       'integer',     'pg_catalog.length(a)' ],
	[ 'jsonb_build_object(a text, b text)',                   'jsonb',       'pg_catalog.jsonb_build_object(a, b)' ],
	[ 'jsonb_build_object(a text, b text, c text, d boolean)', 'jsonb',      'pg_catalog.jsonb_build_object(a, b, c, d)' ],
	[ 'current_setting(a text)',                              'text',        'pg_catalog.current_setting(a)' ],
	[ 'set_config(a text, b text, c boolean)',                'text',        'pg_catalog.set_config(a, b, c)' ],
	[ 'to_regclass(a text)',                                  'regclass',    'pg_catalog.to_regclass(a)' ],
	[ 'starts_with(a text, b text)',                          'boolean',     'pg_catalog.starts_with(a, b)' ],
	[ 'pg_get_userbyid(a oid)',                               'name',        'pg_catalog.pg_get_userbyid(a)' ],
	[ 'array_to_string(a anyarray, b text)',                  'text',        'pg_catalog.array_to_string(a, b)' ],
	[ 'string_to_array(a text, b text)',                      'text[]',      'pg_catalog.string_to_array(a, b)' ],
	[ 'pg_has_role(a name, b name, c text)',                  'boolean',     'pg_catalog.pg_has_role(a, b, c)' ],
	[ 'pg_backend_pid()',                                     'integer',     'pg_catalog.pg_backend_pid()' ]);
# [operator, left, right, returns]
my @operators = (
	[ '=',   'text',     'text',     'boolean' ], [ '=',  'integer', 'integer', 'boolean' ],
	[ '=',   'bigint',   'bigint',   'boolean' ], [ '=',  'name',    'name',    'boolean' ],
	[ '=',   'oid',      'oid',      'boolean' ], [ '<>', 'text',    'text',    'boolean' ],
	[ '<>',  'integer',  'integer',  'boolean' ], [ '||', 'text',    'text',    'text' ],
	[ '||',  'jsonb',    'jsonb',    'jsonb' ],   [ '->>', 'jsonb',  'text',    'text' ],
	[ '->',  'jsonb',    'text',     'jsonb' ],   [ '+',  'integer', 'integer', 'integer' ],
	[ '<',   'integer',  'integer',  'boolean' ], [ '>',  'integer', 'integer', 'boolean' ],
	[ '<',   'interval', 'interval', 'boolean' ], [ '@>', 'jsonb',   'jsonb',   'boolean' ],
	[ '?',   'jsonb',    'text',     'boolean' ]);

sub shadows
{
	my $sql = "SET ROLE dbowner;\nCREATE SCHEMA postgres;\n";
	my $n = 0;
	for my $s (qw(public postgres))
	{
		for my $f (@functions)
		{
			my ($sig, $ret, $expr) = @$f;
			$sql .= "CREATE FUNCTION $s.$sig RETURNS $ret LANGUAGE plpgsql SET search_path = pg_catalog AS \$f\$"
			  . "BEGIN PERFORM audit.hit('$s.$sig'); RETURN $expr; END \$f\$;\n";
			$n++;
		}
		my $i = 0;
		for my $o (@operators)
		{
			my ($op, $l, $r, $ret) = @$o;
			$i++;
			$sql .= "CREATE FUNCTION $s.attack_op_$i(a $l, b $r) RETURNS $ret LANGUAGE plpgsql SET search_path = pg_catalog AS \$f\$"
			  . "BEGIN PERFORM audit.hit('$s.$op($l, $r)'); RETURN a OPERATOR(pg_catalog.$op) b; END \$f\$;\n"
			  . "CREATE OPERATOR $s.$op (LEFTARG = $l, RIGHTARG = $r, FUNCTION = $s.attack_op_$i);\n";
			$n++;
		}
	}
	$sql .= qq{RESET ROLE;\nALTER DATABASE app SET search_path = public, "\$user", pg_catalog;\n};
	return ($sql, $n);
}
my ($shadow_sql, $shadow_count) = shadows();

# the tenant's and the template owner's code, and the templates
my $node_sql = $audit . q{
-- build_copy_index() builds on a connection of its own (issue 46)
CREATE EXTENSION dblink;
GRANT CREATE ON DATABASE app TO tenant, towner;
GRANT CREATE ON SCHEMA public TO towner;
-- a superuser's function, which the template's CHECK calls (N1b)
CREATE FUNCTION public.valid(b text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT b IS NOT NULL $$;
SET ROLE tenant;
CREATE SCHEMA tenant_code;
GRANT USAGE ON SCHEMA tenant_code TO PUBLIC;
CREATE FUNCTION tenant_code.check_body(b text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN audit.hit('tenant CHECK'); END $$;
CREATE FUNCTION tenant_code.idx(b text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN PERFORM audit.hit('tenant index expression'); RETURN b; END $$;
CREATE FUNCTION tenant_code.trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM audit.hit('tenant trigger ' || TG_OP); RETURN NULL; END $$;
CREATE SCHEMA "ten""ant
code";
GRANT USAGE ON SCHEMA "ten""ant
code" TO PUBLIC;
CREATE FUNCTION "ten""ant
code".chk(b text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN audit.hit('tenant CHECK in a schema named with a quote and a newline'); END $$;
RESET ROLE;
SET ROLE towner;
CREATE SCHEMA towner_code;
GRANT USAGE ON SCHEMA towner_code TO PUBLIC;
CREATE FUNCTION towner_code.dflt() RETURNS text LANGUAGE plpgsql VOLATILE AS $$ BEGIN PERFORM audit.hit('template owner DEFAULT'); RETURN 'n'; END $$;
CREATE FUNCTION towner_code.chk(b text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN audit.hit('template owner CHECK'); END $$;
CREATE FUNCTION towner_code.idx(b text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN PERFORM audit.hit('template owner index expression'); RETURN b; END $$;
CREATE TABLE public.notes (id bigint PRIMARY KEY, "it's ""odd""" text DEFAULT towner_code.dflt() CHECK (towner_code.chk("it's ""odd""")));
CREATE INDEX notes_idx ON public.notes (towner_code.idx("it's ""odd"""));
RESET ROLE;
CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, body text NOT NULL DEFAULT '',
                           CONSTRAINT posts_valid CHECK (public.valid(body)),
                           CONSTRAINT posts_docs CHECK (body IS DISTINCT FROM 'see public.docs'));
CREATE INDEX posts_user_idx ON public.posts (user_id);
};

my $roles = 'CREATE ROLE dbowner LOGIN; CREATE ROLE tenant LOGIN; CREATE ROLE towner LOGIN;';
my %node = map { $_ => data_node($_, before => $roles, owner => 'dbowner', sql => $node_sql) } qw(a b);
$node{a}->safe_psql('app', 'SELECT shardid.create_shards(1, 3)');
$node{b}->safe_psql('app', 'SELECT shardid.create_shards(4, 5)');
for my $n (qw(a b))
{
	$node{$n}->safe_psql('app', q{
SELECT shardid.create_table('public.posts'), shardid.create_table('public.notes');
DO $$
DECLARE s record;
BEGIN
    FOR s IN SELECT r.schema_name, r.sequence_name FROM shardid.shard_registry AS r LOOP
        EXECUTE pg_catalog.format('ALTER SCHEMA %I OWNER TO tenant', s.schema_name);
        EXECUTE pg_catalog.format('ALTER TABLE %I.posts OWNER TO tenant', s.schema_name);
        EXECUTE pg_catalog.format('ALTER TABLE %I.notes OWNER TO towner', s.schema_name);
        EXECUTE pg_catalog.format('ALTER SEQUENCE %I.%I OWNER TO tenant', s.schema_name, s.sequence_name);
        EXECUTE pg_catalog.format('GRANT USAGE, CREATE ON SCHEMA %I TO towner', s.schema_name);
        EXECUTE pg_catalog.format('GRANT USAGE, UPDATE ON SEQUENCE %I.%I TO towner', s.schema_name, s.sequence_name);
    END LOOP;
END $$;
});
}
# rows, written by their owners in sessions of their own
my @as_tenant = (extra_params => [ '-U', 'tenant' ]);
my @as_towner = (extra_params => [ '-U', 'towner' ]);
for my $n (qw(a b))
{
	my @shards = $n eq 'a' ? (1 .. 3) : (4, 5);
	for my $s (@shards)
	{
		my $schema = sprintf('shard_%04d', $s);
		$node{$n}->safe_psql('app', "INSERT INTO $schema.posts (user_id, body) SELECT g, 'b' FROM generate_series(1, 20) AS g", @as_tenant);
		$node{$n}->safe_psql('app', qq{INSERT INTO $schema.notes ("it's ""odd""") SELECT 'n' FROM generate_series(1, 5)}, @as_towner);
	}
}

my $router = router_node('router', \%node);
$router->safe_psql('postgres', 'CREATE ROLE dbowner LOGIN; CREATE ROLE tenant LOGIN; CREATE ROLE towner LOGIN; ALTER DATABASE app OWNER TO dbowner');
$router->safe_psql('app', $audit);
$router->safe_psql('app', "SELECT shardid.place_shards('a', 1, 3) + shardid.place_shards('b', 4, 5)");
my $lib = dirname(__FILE__) . '/../lib';
$router->safe_psql('app', PostgreSQL::Test::Utils::slurp_file("$lib/attack_args.sql"));

# --- what check_cluster() can be made to show (before the shadows: made by hand) ---
# node a, shard 2 (the tenant's copy of a superuser's template): the
# tenant drops the template's CHECKs (one calling public.valid(), one
# with the literal 'see public.docs'), defines shard_0002.valid(), adds
# a CHECK of its own and changes a column's type, so that the fix
# rewrites the copy (N1, N1b, N1d)
$node{a}->safe_psql('app', q{
CREATE FUNCTION shard_0002.valid(b text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN audit.hit('N1b: shard_0002.valid'); END $$;
ALTER TABLE shard_0002.posts DROP CONSTRAINT posts_valid, DROP CONSTRAINT posts_docs,
    ALTER COLUMN user_id TYPE numeric, ADD CONSTRAINT tenant_check CHECK (tenant_code.check_body(body));
}, @as_tenant);
# shard 1: its CHECK calls the tenant's function in another schema (N1c),
# and a trigger of the tenant's fires always
$node{a}->safe_psql('app', q{
CREATE FUNCTION shard_0001.valid(b text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN audit.hit('N1c: shard_0001.valid'); END $$;
ALTER TABLE shard_0001.posts DROP CONSTRAINT posts_valid, ADD CONSTRAINT posts_valid CHECK (shard_0001.valid(body));
CREATE TRIGGER tenant_trg AFTER INSERT OR UPDATE OR DELETE ON shard_0001.posts FOR EACH ROW EXECUTE FUNCTION tenant_code.trg();
ALTER TABLE shard_0001.posts ENABLE ALWAYS TRIGGER tenant_trg;
}, @as_tenant);
# shard 3: a constraint named with a quote and a newline, calling a
# function in a schema so named
$node{a}->safe_psql('app', qq{ALTER TABLE shard_0003.posts ADD CONSTRAINT "own\ncheck""" CHECK ("ten""ant\ncode".chk(body))}, @as_tenant);
# the template owner's copies: shard 1's lacks a column (its DEFAULT,
# CHECK and index go with it); shard 2's and 3's were given to a superuser
# (apply_ddl()'s old HINT), and 3's lost the template owner's CHECK
$node{a}->safe_psql('app', q{ALTER TABLE shard_0001.notes DROP COLUMN "it's ""odd"""}, @as_towner);
$node{a}->safe_psql('app', q{
ALTER TABLE shard_0002.notes OWNER TO postgres;
ALTER TABLE shard_0003.notes OWNER TO postgres;
ALTER TABLE shard_0003.notes DROP CONSTRAINT "notes_it's ""odd""_check";
});
# privileges the template gives and its copies lack (privileges_differ):
# the fix grants them as each copy's owner, the schemas' USAGE as the tenant
$node{a}->safe_psql('app', 'GRANT SELECT ON public.notes TO dbowner', @as_towner);
# leftovers of moves: the tenant's publication named like a move's, one
# with a newline, a superuser's role
$node{a}->safe_psql('app', qq{CREATE PUBLICATION shardid_move_8_1; CREATE PUBLICATION "shardid_move_8_2\nALTER ROLE tenant SUPERUSER; --"}, @as_tenant);
$node{a}->safe_psql('app', 'CREATE ROLE shardid_move_9_1');
# node b: a template that differs (the template owner's column on b only)
$node{b}->safe_psql('app', 'ALTER TABLE public.notes ADD COLUMN extra integer', @as_towner);
# an apply_ddl() change left unfinished on node b: shard 5's copy has the
# column already
$node{b}->safe_psql('app', 'ALTER TABLE shard_0005.notes ADD COLUMN late text', @as_towner);
my ($ret, $out, $err) = $node{b}->psql('app', q{CALL shardid.apply_ddl('public.notes', 'ALTER TABLE %s ADD COLUMN late text DEFAULT towner_code.dflt()', 1)});
note("the apply_ddl() left unfinished: $err");
# shards against the placement: 6 on b placed nowhere, 7 placed on a held
# nowhere, 5 (on b) placed on a, 4 on b and on a
$node{b}->safe_psql('app', 'SELECT shardid.create_shards(6, 6)');
$node{a}->safe_psql('app', 'SELECT shardid.create_shard(4)');
$router->safe_psql('app', q{INSERT INTO shardid.shard_placement (shard, node) VALUES (7, 'a'); UPDATE shardid.shard_placement SET node = 'a' WHERE shard = 5});
# a move nothing drives, being rolled back
$router->safe_psql('app', q{INSERT INTO shardid.shard_placement (shard, node) VALUES (98, 'a');
                            INSERT INTO shardid.shard_moves (shard, move_id, source, target, schema_name, mode, phase)
                            VALUES (98, 1, 'a', 'b', 'shard_0098', 'online', 'aborting')});
# a background job the database owner started whose driver is gone (as
# after a restart of the router): its fix resumes it as the database owner
$router->safe_psql('app', q{INSERT INTO shardid.rebalance_jobs (kind, options, state, started_by)
                            VALUES ('rebalance', '{"strategy": "by_count", "max_moves": 0}', 'running', 'dbowner')});
# nodes that cannot be read, without the extension, at 0.3, with another layout
$node{b}->safe_psql('postgres', q{
CREATE DATABASE bare OWNER dbowner; CREATE DATABASE old OWNER dbowner; CREATE DATABASE odd OWNER dbowner;});
$node{b}->safe_psql('old', q{CREATE EXTENSION shardid VERSION '0.3'});
$node{b}->safe_psql('odd', q{CREATE EXTENSION shardid; SELECT shardid.configure('2020-01-01 00:00+00')});
for my $db (qw(bare old odd))
{
	my $connstr = $node{b}->connstr($db);
	$router->safe_psql('app', "SELECT shardid.add_node('$db', \$\$$connstr\$\$, force => true)");
}
$router->safe_psql('app', q{SELECT shardid.add_node('gone', 'host=/nonexistent port=1 dbname=app', force => true)});

# the shadows go in last: everything after runs under them
$_->safe_psql('app', $shadow_sql) for ($router, $node{a}, $node{b});
$_->safe_psql('app', $pin . 'TRUNCATE audit.payload_log') for ($router, $node{a}, $node{b});

# --- check_cluster(), and every fix, as a superuser ---------------------------------
my %not_produced = (
	node_unreadable   => 'a node that answers but cannot be read needs a role without privileges in its connect string',
	proxy_out_of_step => 'PL/Proxy is not installed on this router');
my $kinds = $router->safe_psql('app', $pin . 'SELECT string_agg(kind, \' \' ORDER BY step, kind) FROM shardid.check_cluster_kinds');
my $rows = $router->safe_psql('app', $pin . q{
SELECT kind || E'\t' || COALESCE(shard::text, '') || E'\t' || COALESCE(run_on, '') || E'\t' || COALESCE(fix, '') || E'\t'
       || to_jsonb(detail)::text
  FROM shardid.check_cluster()});
my (%seen, @fixes);
for my $line (split /\n/, $rows)
{
	my ($kind, $shard, $run_on, $fix, $detail) = split /\t/, $line, 5;
	$seen{$kind}++;
	push @fixes, [ $kind, $shard, $run_on, $fix, $detail ];
}
for my $k (split / /, $kinds)
{
	ok($seen{$k} || $not_produced{$k}, "kind $k is shown (or not produced here: " . ($not_produced{$k} // 'no reason') . ')');
}
my @bad = grep {
	$_->[3] ne ''
	  && $_->[3] !~ /^--/
	  && $_->[3] !~ /^(?:(?:SELECT (?:\* FROM )?|CALL )shardid\.\w+\([^;]*\); ?)+$/
	  && $_->[3] !~ /^(?:CREATE EXTENSION shardid|ALTER EXTENSION shardid UPDATE TO '[0-9.]+');$/
} @fixes;
is(join("\n", map { "$_->[0]: $_->[3]" } @bad), '', 'every fix is a call of a shardid function or procedure (or advice)');
# N1c: shard 1's CHECK calling shard_0001.valid() is reported
ok((grep { $_->[0] eq 'copy_differs' && $_->[1] eq '1' && $_->[4] =~ /posts_valid is CHECK \(shard_0001\.valid\(body\)\)/ } @fixes),
	'N1c: a copy\'s CHECK that calls a function of another schema is reported');
# every fix, where check_cluster() says
my %db_of = (gone => undef, bare => [ $node{b}, 'bare' ], old => [ $node{b}, 'old' ], odd => [ $node{b}, 'odd' ],
	a => [ $node{a}, 'app' ], b => [ $node{b}, 'app' ]);
my $fixes_run = 0;
for my $f (@fixes)
{
	my ($kind, $shard, $run_on, $fix) = @$f;
	next if $fix eq '' || $fix =~ /^--/;
	my ($where, $db) = $run_on eq '' ? ($router, 'app') : @{ $db_of{$run_on} // next };
	$fixes_run++;
	my ($r, $o, $e) = $where->psql($db, "SET attack.entry = 'fix of $kind'; $fix");
	note("fix of $kind on " . ($run_on || 'the router') . ": $fix: " . ($r == 0 ? 'done' : "failed: $e"));
}
# N1, N1b, N1d: shard 2's copy of posts is aligned, by the catalog's definitions
is($node{a}->safe_psql('app', $pin . q{SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), '; ' ORDER BY conname)
                                          FROM pg_constraint WHERE conrelid = 'shard_0002.posts'::regclass AND contype = 'c'}),
	q{posts_docs CHECK ((body IS DISTINCT FROM 'see public.docs'::text)); posts_valid CHECK (public.valid(body))},
	'N1b, N1d: the fix gave shard 2 the template\'s CHECKs as they are: public.valid(), the literal unchanged; the tenant\'s CHECK is gone');
is($node{a}->safe_psql('app', $pin . q{SELECT format_type(atttypid, atttypmod) || ' ' || pg_get_userbyid(c.relowner)
                                          FROM pg_attribute JOIN pg_class AS c ON c.oid = attrelid WHERE attrelid = 'shard_0002.posts'::regclass AND attname = 'user_id'}),
	'bigint postgres', 'N1: the column\'s type is the template\'s again, the copy the template\'s owner\'s');
is($node{a}->safe_psql('app', $pin . q{SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'shard_0001.posts'::regclass}),
	'tenant', 'the copy with the tenant\'s trigger is not given to the superuser who owns the template');

# --- every routine of the shardid schemas, on the router and on node a ---------------
my $routines = $router->safe_psql('app', $pin . q{
SELECT p.oid::regprocedure::text || E'\t' || p.prokind::text || E'\t' || (p.pronargs - p.pronargdefaults)::text || E'\t'
       || COALESCE(a.args, E'\\N')
  FROM pg_proc AS p LEFT JOIN audit.attack_args AS a ON a.routine = p.oid::regprocedure::text
 WHERE p.pronamespace IN ('shardid'::regnamespace, 'shardid_internal'::regnamespace)
 ORDER BY 1});
# rebalance() and drain_node() (the review's S1: they had called bare
# operators under the caller's search_path) are also attacked once more at
# the end, on their own, with the database owner's shadows in place
my %deferred = ();
my (@calls, @missing, @deferred);
for my $line (split /\n/, $routines)
{
	my ($sig, $kind, $required, $args) = split /\t/, $line, 4;
	my ($name) = $sig =~ /^([^(]+)/;
	if ($args eq '\N')
	{
		push @missing, $sig if $required > 0;
		$args = '';
	}
	push @{ $deferred{$sig} ? \@deferred : \@calls }, [ $sig, ($kind eq 'p' ? 'CALL' : 'SELECT') . " $name($args)" ];
}
is(join(', ', @missing), '', 'every routine that needs arguments has its row in test/lib/attack_args.sql');
is($router->safe_psql('app', $pin . q{SELECT string_agg(routine, ', ') FROM audit.attack_args
                                       WHERE to_regprocedure(routine) IS NULL}),
	'', 'every row of test/lib/attack_args.sql names a routine that exists');
# one session per server, under the database owner's search_path (reset
# before each call: a routine may have changed it), each call on its own
sub call_script
{
	my $script = "SET statement_timeout = '20s';\nSET lock_timeout = '3s';\nSET client_min_messages = error;\n";
	for my $c (@_)
	{
		(my $entry = $c->[0]) =~ s/'/''/g;
		$script .= "RESET search_path;\nSET attack.entry = '$entry';\n$c->[1];\n";
	}
	return $script;
}
my $script = call_script(@calls);
for my $n ([ 'router', $router ], [ 'a', $node{a} ])
{
	my $t = time;
	my ($r, $o, $e) = $n->[1]->psql('app', $script, on_error_stop => 0);
	note(sprintf('%d routines called on %s in %.0f s; %d errors', scalar @calls, $n->[0], time - $t, scalar(() = $e =~ /ERROR:/g)));
}

# --- the review's lower findings --------------------------------------------------
# N2: a run_on_shards() read that writes through a function is refused
($ret, $out, $err) = $router->psql('app', $pin . q{SELECT string_agg(substring(result from 'SQLSTATE .....'), ',') FILTER (WHERE shard = 1)
    FROM shardid.run_on_shards('public.posts', 'SELECT pg_catalog.setval(''shard_0001.id_seq'', 1) FROM %s LIMIT 1')});
is($out, 'SQLSTATE 25006', 'N2: a run_on_shards() read that calls setval() runs read-only and is refused') or diag($err);
# N7: _run_as_owner() refuses transaction control and role 0 with their SQLSTATEs
my @n7;
for my $stmt ('COMMIT', 'ROLLBACK', 'SAVEPOINT s', 'BEGIN', 'SELECT 1; COMMIT', 'RELEASE SAVEPOINT s', 'PREPARE TRANSACTION \'x\'')
{
	(my $q = $stmt) =~ s/'/''/g;
	($ret, $out, $err) = $node{a}->psql('app', "\\set VERBOSITY verbose\nSELECT shardid_internal._run_as_owner('tenant', '$q')");
	push @n7, "$stmt: " . ($err =~ /ERROR:\s+(\w{5})/ ? $1 : 'none');
}
($ret, $out, $err) = $node{a}->psql('app', "\\set VERBOSITY verbose\nSELECT shardid_internal._run_as_owner(0::oid::regrole, 'SELECT 1')");
push @n7, 'role 0: ' . ($err =~ /ERROR:\s+(\w{5})/ ? $1 : 'none');
is(join('; ', @n7), 'COMMIT: 2D000; ROLLBACK: 2D000; SAVEPOINT s: 2D000; BEGIN: 2D000; SELECT 1; COMMIT: 2D000; '
	  . 'RELEASE SAVEPOINT s: 2D000; PREPARE TRANSACTION \'x\': 2D000; role 0: 42704',
	'N7: _run_as_owner() refuses transaction control (2D000) and role 0 (42704), never XX000');
# G5: negative timeouts are refused
my @g5;
for my $opt (qw(lock_timeout cutover_timeout catchup_timeout node_timeout))
{
	($ret, $out, $err) = $router->psql('app', "\\set VERBOSITY verbose\nCALL shardid.move_shard(2, 'b', $opt => '-1 s')");
	push @g5, "$opt: " . ($err =~ /ERROR:\s+(\w{5})/ ? $1 : 'none');
}
is(join(', ', @g5), 'lock_timeout: 22023, cutover_timeout: 22023, catchup_timeout: 22023, node_timeout: 22023',
	'G5: negative lock, cut-over, catch-up and node timeouts are refused (22023)');
# --- who ran what --------------------------------------------------------------------
my ($tried, $as_su) = (0, 0);
for my $n ([ 'router', $router ], [ 'a', $node{a} ], [ 'b', $node{b} ])
{
	my ($name, $server) = @$n;
	my $su = $server->safe_psql('app', $pin . q{SELECT COALESCE(string_agg(DISTINCT what || ' as ' || who || ' in ' || COALESCE(entry, '?'), '; '), '')
	                                            FROM audit.payload_log WHERE su});
	my $log = PostgreSQL::Test::Utils::slurp_file($server->logfile);
	my @log_su = ($log =~ /(attack payload .* superuser=t in .*)/g);
	$as_su += scalar(@log_su) + ($su eq '' ? 0 : scalar(split /; /, $su));
	$tried += scalar(() = $log =~ /attack payload /g);
	is($su, '', "$name: no payload ran as a superuser");
	is(join("\n", @log_su), '', "$name: the server log shows no payload run as a superuser");
	note("$name: payloads ran as: " . $server->safe_psql('app', $pin . q{SELECT string_agg(DISTINCT what || ' as ' || who, '; ') FROM audit.payload_log}));
	for my $role (qw(tenant towner dbowner))
	{
		is($server->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = '$role'"), 'f', "$name: $role is still no superuser");
	}
}
# --- S1: rebalance() and drain_node() under the database owner's search_path ---
# (last: a hit there runs as a superuser and makes the tenant one)
$_->safe_psql('app', $pin . 'TRUNCATE audit.payload_log') for ($router, $node{a});
my $s1_script = "SET attack.entry = 'S1';\nCALL shardid.rebalance(strategy => 'by_count', max_moves => 0);\n"
  . "CALL shardid.drain_node('nowhere');\n";
$router->psql('app', $s1_script, on_error_stop => 0);
is(join(' ', map { $_->safe_psql('app', $pin . q{SELECT COALESCE(string_agg(DISTINCT what || ' as ' || who || ' in ' || entry, '; '), 'none') FROM audit.payload_log WHERE su}) } ($router, $node{a})),
	'none none', 'S1: rebalance() and drain_node() call none of the database owner\'s shadows');

my $s1_su = 0;
$s1_su += scalar(() = PostgreSQL::Test::Utils::slurp_file($_->logfile) =~ /attack payload .* superuser=t in /g) for ($router, $node{a}, $node{b});
$s1_su -= $as_su;
my $objects = 0;
$objects += $_->safe_psql('app', $pin . q{SELECT count(*) FROM pg_proc WHERE prosrc LIKE '%audit.hit(%'}) for ($router, $node{a}, $node{b});
diag(sprintf('attack: %d entry points (%d routines of shardid and shardid_internal, on the router and on node a, '
	  . 'and S1 again at the end), %d of %d check_cluster() kinds shown and %d fixes run as a superuser, %d payload functions '
	  . '(%d function and operator shadows), %d payload runs, %d as a superuser (in S1: %d); %.0f s',
	  2 * (@calls + @deferred), @calls + @deferred, scalar(keys %seen), scalar(split / /, $kinds), $fixes_run,
	  $objects, $shadow_count * 3, $tried, $as_su, $s1_su, time - $started));

done_testing();
