# move_payloads.pl — no move runs anyone's code as a superuser (issue 27).
#
# A router (dblink and shardid only, no PL/Proxy) and two nodes with
# wal_level = logical. On each node the database is owned by a role that
# is not a superuser, and holds payloads in every schema of the default
# search_path ("$user" = a schema named postgres, and public): overloads
# that an unqualified statement of a superuser's session would call
# (jsonb_build_object(text, text, text, boolean), || (text, integer),
# quote_ident(name), format(text, name)). The shard owner's code is in the
# shard's tables: a CHECK, a DEFAULT and an index expression (from the
# template), and, on the target's copy of an offline move, triggers of
# every timing and level (TRUNCATE too, ordinary and ENABLE ALWAYS), a
# rule and a forced row-security policy. Every payload records
# current_user, session_user and whether current_user is a superuser, and
# tries ALTER ROLE tenant SUPERUSER.
#
# Then: an online move, an offline move the owner's triggers make fail (it
# rolls back), a clean offline move, an abort, a rebalance, a move refused
# for a difference on the source, apply_ddl() from the router of every
# kind (a rewrite, VALIDATE, volatile and domain DEFAULTs, index
# expressions and predicates, CONCURRENTLY too), drain_node(), a
# background rebalance and drop_retired_copies(). Each payload first tries
# RESET ROLE. At the end no payload row is a superuser's, the tenant is no
# superuser, and the payloads did run (as the owner, or 15's move role).
use strict;
use warnings;

use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

my $move_cli = dirname(__FILE__) . '/../../bin/shardid-move-shard';

# Each node: a database owner and a tenant, and their payloads.
my $payloads = q{
GRANT CREATE ON DATABASE app TO tenant;
CREATE SCHEMA audit;
CREATE TABLE audit.payload_log (what text, who name, sess name, su boolean);
GRANT USAGE ON SCHEMA audit TO PUBLIC;
GRANT INSERT ON audit.payload_log TO PUBLIC;
-- runs as its caller: tries to become the session's user (RESET ROLE,
-- which a security-restricted operation refuses) and make tenant a
-- superuser, then records who it runs as
CREATE FUNCTION audit.hit(what text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
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
    INSERT INTO audit.payload_log (what, who, sess, su)
        VALUES (what, current_user, session_user, (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user));
    RETURN true;
END $$;

-- the database owner's payloads, in every schema of the default search_path
SET ROLE dbowner;
CREATE SCHEMA postgres;
CREATE FUNCTION public.jsonb_build_object(a text, b text, c text, d boolean) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN PERFORM audit.hit('public.jsonb_build_object'); RETURN pg_catalog.jsonb_build_object(a, b, c, d); END $$;
CREATE FUNCTION postgres.jsonb_build_object(a text, b text, c text, d boolean) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN PERFORM audit.hit('postgres.jsonb_build_object'); RETURN pg_catalog.jsonb_build_object(a, b, c, d); END $$;
CREATE FUNCTION public.cat(a text, b integer) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM audit.hit('public.||'); RETURN a OPERATOR(pg_catalog.||) b::text; END $$;
CREATE OPERATOR public.|| (LEFTARG = text, RIGHTARG = integer, FUNCTION = public.cat);
CREATE FUNCTION postgres.quote_ident(a name) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM audit.hit('postgres.quote_ident'); RETURN pg_catalog.quote_ident(a::text); END $$;
CREATE FUNCTION public.format(f text, a name) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM audit.hit('public.format'); RETURN pg_catalog.format(f, a::text); END $$;
RESET ROLE;

-- the shard owner's code, reached from its tables
SET ROLE tenant;
CREATE SCHEMA tenant_code;
GRANT USAGE ON SCHEMA tenant_code TO PUBLIC;
CREATE FUNCTION tenant_code.check_body(b text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RETURN audit.hit('check'); END $$;
CREATE FUNCTION tenant_code.idx(b text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN PERFORM audit.hit('index expression'); RETURN b; END $$;
CREATE FUNCTION tenant_code.dflt() RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM audit.hit('default'); RETURN 'default'; END $$;
CREATE DOMAIN tenant_code.checked AS text CHECK (tenant_code.check_body(VALUE));
GRANT USAGE ON DOMAIN tenant_code.checked TO PUBLIC;
CREATE FUNCTION tenant_code.pol(b text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RETURN audit.hit('policy'); END $$;
CREATE FUNCTION tenant_code.trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM audit.hit(pg_catalog.concat_ws(' ', 'trigger', TG_NAME, TG_WHEN, TG_LEVEL, TG_OP));
    IF TG_LEVEL = 'ROW' AND TG_WHEN = 'BEFORE' THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    RETURN NULL;
END $$;
RESET ROLE;

CREATE TABLE public.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL,
                           body text NOT NULL DEFAULT tenant_code.dflt() CHECK (tenant_code.check_body(body)));
CREATE INDEX posts_idx ON public.posts (tenant_code.idx(body));
};

my %node = map {
	$_ => data_node($_, before => 'CREATE ROLE dbowner LOGIN; CREATE ROLE tenant LOGIN;', owner => 'dbowner', sql => $payloads)
} qw(a b);
$node{a}->safe_psql('app', 'SELECT shardid.create_shards(1, 3)');
$node{b}->safe_psql('app', 'SELECT shardid.create_shards(4, 4)');
for my $n (qw(a b))
{
	$node{$n}->safe_psql('app', q{
SELECT shardid.create_table('public.posts');
DO $$
DECLARE s record;
BEGIN
    FOR s IN SELECT r.schema_name, r.sequence_name FROM shardid.shard_registry AS r LOOP
        EXECUTE pg_catalog.format('ALTER SCHEMA %I OWNER TO tenant', s.schema_name);
        EXECUTE pg_catalog.format('ALTER TABLE %I.posts OWNER TO tenant', s.schema_name);
        EXECUTE pg_catalog.format('ALTER SEQUENCE %I.%I OWNER TO tenant', s.schema_name, s.sequence_name);
    END LOOP;
END $$;
});
}
# rows, written by the tenant in sessions of its own (the payloads run as
# the tenant: not counted). Never SET ROLE tenant in a superuser's
# session: the payloads' RESET ROLE would make the tenant a superuser.
my @as_tenant = (extra_params => [ '-U', 'tenant' ]);
$node{a}->safe_psql('app', q{
INSERT INTO shard_0001.posts (user_id, body) SELECT g, 'one ' || g::text FROM generate_series(1, 200) AS g;
INSERT INTO shard_0002.posts (user_id, body) SELECT g, 'two ' || g::text FROM generate_series(1, 20) AS g;
INSERT INTO shard_0003.posts (user_id, body) SELECT g, 'three ' || g::text FROM generate_series(1, 20) AS g;
}, @as_tenant);
$node{b}->safe_psql('app', q{INSERT INTO shard_0004.posts (user_id) SELECT g FROM generate_series(1, 20) AS g;}, @as_tenant);
$node{$_}->safe_psql('app', 'TRUNCATE audit.payload_log') for qw(a b);

my $router = router_node('router', \%node);
$router->safe_psql('app', "SELECT shardid.place_shards('a', 1, 3) + shardid.place_shards('b', 4, 4)");
my $router_connstr = $router->connstr('app');

sub placed_on
{
	my ($shard) = @_;
	return $router->safe_psql('app', "SELECT node FROM shardid.placement WHERE shard = $shard");
}

# --- an online move --------------------------------------------------------
$router->safe_psql('app', "CALL shardid.move_shard(1, 'b')");
is(placed_on(1), 'b', 'online move: shard 1 is on b');
is($node{b}->safe_psql('app', 'SELECT count(*) FROM shard_0001.posts'), '200', 'online move: its 200 rows are on b');

# --- an offline move the owner's code makes fail ------------------------------
my ($ret, $out, $err) = $router->psql('app', "CALL shardid.move_shard(1, 'a', offline => true)");
like($err, qr/frozen on "b" for an offline move/, 'offline move: the target copy is made, the source frozen');
# before the rows load, the owner dresses the target's copy
$node{a}->safe_psql('app', q{
DO $$
DECLARE
    w text; l text; e text; n integer := 0;
BEGIN
    FOREACH w IN ARRAY ARRAY['BEFORE', 'AFTER'] LOOP
        FOREACH l IN ARRAY ARRAY['ROW', 'STATEMENT'] LOOP
            FOREACH e IN ARRAY ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'] LOOP
                CONTINUE WHEN e = 'TRUNCATE' AND l = 'ROW';
                n := n + 1;
                EXECUTE pg_catalog.format('CREATE TRIGGER %I %s %s ON shard_0001.posts FOR EACH %s EXECUTE FUNCTION tenant_code.trg()',
                                          pg_catalog.lower(pg_catalog.concat_ws('_', 'o', w, l, e)), w, e, l);
                EXECUTE pg_catalog.format('CREATE TRIGGER %I %s %s ON shard_0001.posts FOR EACH %s EXECUTE FUNCTION tenant_code.trg()',
                                          pg_catalog.lower(pg_catalog.concat_ws('_', 'a', w, l, e)), w, e, l);
                EXECUTE pg_catalog.format('ALTER TABLE shard_0001.posts ENABLE ALWAYS TRIGGER %I',
                                          pg_catalog.lower(pg_catalog.concat_ws('_', 'a', w, l, e)));
            END LOOP;
        END LOOP;
    END LOOP;
END $$;
CREATE TRIGGER shardid_move_frozen BEFORE TRUNCATE ON shard_0001.posts FOR EACH STATEMENT EXECUTE FUNCTION tenant_code.trg();
CREATE TRIGGER shardid_retired BEFORE INSERT ON shard_0001.posts FOR EACH ROW EXECUTE FUNCTION tenant_code.trg();
ALTER TABLE shard_0001.posts ENABLE ALWAYS TRIGGER shardid_retired;
CREATE RULE audit_rule AS ON UPDATE TO shard_0001.posts DO ALSO SELECT audit.hit('rule');
ALTER TABLE shard_0001.posts ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_policy ON shard_0001.posts USING (tenant_code.pol(body)) WITH CHECK (tenant_code.pol(body));
}, @as_tenant);
my $cli_out = `$move_cli --router '$router_connstr' --shard 1 --to a --offline 2>&1`;
my $cli_rc = $? >> 8;
note("offline move with the owner's code: $cli_out");
is($cli_rc, 1, 'offline move with triggers, a rule and a policy added to the copy: refused');
like($cli_out, qr/trigger shardid_move_frozen: CREATE TRIGGER shardid_move_frozen .* only/,
	"a trigger named like shardid's is compared like any other");
is(placed_on(1) . ' ' . $router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves'),
	'b 0', 'rolled back: shard 1 stays on b, no move left');
is($node{a}->safe_psql('app', "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0001'"),
	'0', 'the copy on a is dropped');
is($node{b}->safe_psql('app', q{SELECT count(*) FROM pg_trigger WHERE tgfoid = 'shardid_internal._refuse_frozen_write()'::regprocedure}),
	'0', 'b is writable again');
ok($node{a}->safe_psql('app', q{SELECT count(*) FROM audit.payload_log WHERE what LIKE 'trigger a\_%'}) > 0,
	"the owner's ENABLE ALWAYS triggers did fire during the copy (as the owner)");
is($node{a}->safe_psql('app', q{SELECT count(*) FROM audit.payload_log WHERE what LIKE 'trigger o\_%'}),
	'0', "the owner's ordinary triggers did not fire");

# --- a clean offline move ------------------------------------------------------
$cli_out = `$move_cli --router '$router_connstr' --shard 1 --to a --offline 2>&1`;
$cli_rc = $? >> 8;
is($cli_rc, 0, 'clean offline move: done') or diag($cli_out);
is(placed_on(1) . ' ' . $node{a}->safe_psql('app', 'SELECT count(*) FROM shard_0001.posts'),
	'a 200', 'offline move: shard 1 is on a with its 200 rows');

# --- an abort ------------------------------------------------------------------
($ret, $out, $err) = $router->psql('app', "CALL shardid.move_shard(2, 'b', offline => true)");
$router->safe_psql('app', 'CALL shardid.abort_move(2)');
is(placed_on(2) . ' ' . $router->safe_psql('app', 'SELECT count(*) FROM shardid.shard_moves')
	  . ' ' . $node{b}->safe_psql('app', "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0002'"),
	'a 0 0', 'abort_move(): shard 2 stays on a, nothing left on b');

# --- a rebalance ---------------------------------------------------------------
$router->safe_psql('app', "CALL shardid.rebalance(strategy => 'by_count')");
is($router->safe_psql('app', "SELECT count(*) FROM shardid.rebalance_plan('by_count')"), '0', 'rebalance: balanced');
is($router->safe_psql('app', q{SELECT string_agg(node || '=' || n::text, ' ' ORDER BY node) FROM (SELECT node, count(*) AS n FROM shardid.placement GROUP BY node) AS x}),
	'a=2 b=2', 'rebalance: two shards on each node');

# --- a move refused for the owner's trigger on the source -------------------------
my $on_a = $router->safe_psql('app', q{SELECT min(shard) FROM shardid.placement WHERE node = 'a'});
my $schema = sprintf('shard_%04d', $on_a);
$node{a}->safe_psql('app', "CREATE TRIGGER shardid_retired AFTER TRUNCATE ON $schema.posts FOR EACH STATEMENT EXECUTE FUNCTION tenant_code.trg()", @as_tenant);
($ret, $out, $err) = $router->psql('app', "CALL shardid.move_shard($on_a, 'b')");
like($err, qr/has diverged from its templates: table posts: trigger shardid_retired/,
	"a move is refused for the owner's trigger named like shardid's on the source");

$node{a}->safe_psql('app', "DROP TRIGGER shardid_retired ON $schema.posts", @as_tenant);

# --- apply_ddl() from the router, every kind (issue 35) ---------------------------
# The template is the superuser's, the copies the tenant's: the tenant's
# code would run with a superuser's rights, so the change is refused.
sub columns
{
	my ($col) = @_;
	return join ' ', map {
		$node{$_}->safe_psql('app', "SELECT count(*) FROM pg_attribute WHERE attname = '$col' AND NOT attisdropped AND attrelid::regclass::text LIKE '%posts'")
	} qw(a b);
}
($ret, $out, $err) = $router->psql('app', "CALL shardid.apply_ddl('public.posts', 'ALTER TABLE %s ADD COLUMN mood text')");
like($err, qr/42501|not owned by the template's owner/, 'apply_ddl() from the router: a superuser\'s template over copies the tenant owns is refused');
is(columns('mood'), '0 0', 'nothing changed on either node');
# the tenant's template: every statement runs as the tenant, in the fence
# (an index is made in the template's schema: the owner needs CREATE there)
$node{$_}->safe_psql('app', 'ALTER TABLE public.posts OWNER TO tenant; GRANT CREATE ON SCHEMA public TO tenant') for qw(a b);
my $before = $node{a}->safe_psql('app', 'SELECT count(*) FROM audit.payload_log') . ' '
  . $node{b}->safe_psql('app', 'SELECT count(*) FROM audit.payload_log');
for my $cmd (
	'ALTER TABLE %s ADD COLUMN mood text',
	'ALTER TABLE %s ALTER COLUMN body TYPE varchar(1000)',
	'ALTER TABLE %s ADD CONSTRAINT posts_body_again CHECK (tenant_code.check_body(body)) NOT VALID',
	'ALTER TABLE %s VALIDATE CONSTRAINT posts_body_again',
	'ALTER TABLE %s ADD COLUMN note text DEFAULT tenant_code.dflt()',
	'ALTER TABLE %s ADD COLUMN tag tenant_code.checked DEFAULT \'\'x\'\'',
	'CREATE INDEX posts_note_idx ON %s (tenant_code.idx(note))',
	'CREATE INDEX CONCURRENTLY posts_tag_idx ON %s (tenant_code.idx(tag)) WHERE tenant_code.idx(body) IS NOT NULL',
	'DROP INDEX CONCURRENTLY %s_tag_idx')
{
	$router->safe_psql('app', "CALL shardid.apply_ddl('public.posts', '$cmd')");
}
is(columns('note') . ' ' . columns('tag'), '3 3 3 3', 'apply_ddl() from the router reached the templates and every copy');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NULL'), '0', 'every change finished');
my %ran = map {
	$_ => $node{$_}->safe_psql('app', q{SELECT string_agg(DISTINCT what, ', ' ORDER BY what) FROM (SELECT what FROM audit.payload_log OFFSET }
		  . (split / /, $before)[$_ eq 'a' ? 0 : 1] . ') AS x')
} qw(a b);
like($ran{$_}, qr/check.*default.*index expression/, "node $_: apply_ddl() ran the tenant's CHECK, DEFAULT and index expressions ($ran{$_})") for qw(a b);

# --- drain_node(), a background rebalance, drop_retired_copies() ----------------------
$router->safe_psql('app', "CALL shardid.drain_node('b')");
is($router->safe_psql('app', q{SELECT count(*) FROM shardid.placement WHERE node = 'b'}), '0', 'drain_node(): no shard left on b');
is($router->safe_psql('app', q{SELECT accepts_shards FROM shardid.nodes WHERE node = 'b'}), 'f', 'drain_node(): b accepts no shards');
# b takes shards again only once it is said to
$router->safe_psql('app', "SELECT shardid.set_node('b', accepts_shards => true)");
$router->safe_psql('app', "SELECT shardid.rebalance_start('by_count')");
is($router->safe_psql('app', 'SELECT state FROM shardid.rebalance_wait()'), 'finished', 'a background rebalance finished');
is($router->safe_psql('app', q{SELECT string_agg(node || '=' || n::text, ' ' ORDER BY node) FROM (SELECT node, count(*) AS n FROM shardid.placement GROUP BY node) AS x}),
	'a=2 b=2', 'the background rebalance moved two shards back to b');
$router->safe_psql('app', 'CALL shardid.drop_retired_copies()');
is($router->safe_psql('app', 'SELECT count(*) FROM shardid.retired_copies'), '0', 'drop_retired_copies(): none left');

# --- what ran, as whom ------------------------------------------------------------
for my $n (qw(a b))
{
	is($node{$n}->safe_psql('app', q{SELECT coalesce(string_agg(DISTINCT what || ' as ' || who::text, ', '), 'none') FROM audit.payload_log WHERE su}),
		'none', "node $n: no payload ran as a superuser");
	is($node{$n}->safe_psql('app', q{SELECT coalesce(string_agg(DISTINCT what, ', '), 'none') FROM audit.payload_log WHERE what LIKE 'p%.%'}),
		'none', "node $n: nothing in the default search_path's schemas was called");
	is($node{$n}->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'tenant'}),
		'f', "node $n: the tenant is still no superuser");
	note("node $n payloads: " . $node{$n}->safe_psql('app', q{SELECT string_agg(DISTINCT what || ' as ' || who::text, '; ') FROM audit.payload_log}));
}
ok($node{a}->safe_psql('app', q{SELECT count(DISTINCT what) FROM audit.payload_log WHERE what IN ('check', 'index expression')}) == 2,
	"the owner's CHECK and index expression ran during the copies, as roles without superuser");

done_testing();
