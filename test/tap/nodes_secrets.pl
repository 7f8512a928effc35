# nodes_secrets.pl — no role but an administrator reads a node's connect
# string, and none holds a password (issue 10, item 5): updating a 0.1
# router whose nodes have passwords in their connect strings stops with
# 22023 naming them; once they are removed the update goes through, and an
# ordinary role can read neither shardid.nodes nor a password anywhere.
# With PL/Proxy where it is installed (0.1 needed it for add_node()); needs
# the frozen 0.1 release installed (src/sql/released/).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;

my $node = data_node('secrets', logical => 0, extension => 0);
# 0.1's add_node() needs PL/Proxy; without it (19) the nodes go into 0.1's
# table as add_node() would have put them
my $plproxy = have_extension('plproxy');
if ($plproxy)
{
	$node->safe_psql('app', q{
CREATE EXTENSION plproxy;
CREATE EXTENSION shardid VERSION '0.1';
SELECT shardid.add_node('a', 'host=/nonexistent/a dbname=app password=s3cret');
SELECT shardid.add_node('b', 'host=/nonexistent/b dbname=app');
});
}
else
{
	$node->safe_psql('app', q{
CREATE EXTENSION shardid VERSION '0.1';
INSERT INTO shardid.nodes (node, connstr) VALUES ('a', 'host=/nonexistent/a dbname=app password=s3cret'),
                                                 ('b', 'host=/nonexistent/b dbname=app');
});
}
note($plproxy ? 'with PL/Proxy' : 'without PL/Proxy: the nodes inserted into 0.1\'s table');
$node->safe_psql('app', 'CREATE ROLE app_user LOGIN');
is($node->safe_psql('app', "SET ROLE app_user; SELECT count(*) FROM shardid.nodes WHERE connstr LIKE '%s3cret%'"),
	'1', '0.1: an ordinary role reads the password');

my ($ret, $out, $err) = $node->psql('app', "\\set VERBOSITY verbose\nALTER EXTENSION shardid UPDATE TO '0.2'");
isnt($ret, 0, 'update with a password refused');
like($err, qr/22023.*hold a password: a/s, "update refused while node a's connect string holds a password");
is($node->safe_psql('app', "SELECT extversion FROM pg_extension WHERE extname = 'shardid'"), '0.1', 'still 0.1');

$node->safe_psql('app', "UPDATE shardid.nodes SET connstr = 'host=/nonexistent/a dbname=app'");
$node->safe_psql('app', 'SELECT shardid.refresh_cluster()') if $plproxy;
$node->safe_psql('app', "ALTER EXTENSION shardid UPDATE TO '0.2'");
is($node->safe_psql('app', "SELECT extversion FROM pg_extension WHERE extname = 'shardid'"), '0.2',
	'updated once the password is gone');

($ret, $out, $err) = $node->psql('app', 'SET ROLE app_user; SELECT * FROM shardid.nodes');
isnt($ret, 0, 'an ordinary role is refused shardid.nodes');
like($err, qr/permission denied/, '0.2: an ordinary role cannot read shardid.nodes');
($ret, $out, $err) = $node->psql('app', "SELECT shardid.add_node('c', 'host=x password=p')");
isnt($ret, 0, 'add_node with a password refused');
like($err, qr/must not hold a password/, '0.2: add_node refuses a password');
my $columns = $node->safe_psql('app', q{SET ROLE app_user;
SELECT count(*) FROM pg_attribute WHERE attrelid = 'shardid.placement'::regclass AND attname = 'connstr'});
my $options = $node->safe_psql('app', q{SET ROLE app_user;
SELECT count(*) FROM pg_foreign_server s, pg_options_to_table(s.srvoptions) o WHERE o.option_value ~* 'password'});
is("$columns/$options", '0/0',
	"0.2: no connect string or password in what an ordinary role can read (placement columns, server options with 'password')");

done_testing();
