#!/usr/bin/env bash
# test/e2e/nodes_secrets.sh — no role but an administrator reads a node's
# connect string, and none holds a password (issue 10, item 5): updating a
# 0.1 router whose nodes have passwords in their connect strings stops with
# 22023 naming them; once they are removed the update goes through, and an
# ordinary role can read neither shardid.nodes nor a password anywhere.
# With PL/Proxy where it is installed (0.1 needed it for add_node()).
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/e2e.sh
PATH=$(pg_config --bindir):$PATH
export PATH

pg_start secrets
createdb app
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d app "$@"; }
# 0.1's add_node() needs PL/Proxy; without it (19) the nodes go into 0.1's
# table as add_node() would have put them
if have_extension plproxy; then
	plproxy=1
	sql >/dev/null <<-'EOF'
	CREATE EXTENSION plproxy;
	CREATE EXTENSION shardid VERSION '0.1';
	SELECT shardid.add_node('a', 'host=/nonexistent/a dbname=app password=s3cret');
	SELECT shardid.add_node('b', 'host=/nonexistent/b dbname=app');
	EOF
else
	plproxy=
	sql >/dev/null <<-'EOF'
	CREATE EXTENSION shardid VERSION '0.1';
	INSERT INTO shardid.nodes (node, connstr) VALUES ('a', 'host=/nonexistent/a dbname=app password=s3cret'),
	                                                 ('b', 'host=/nonexistent/b dbname=app');
	EOF
fi
sql -c "CREATE ROLE app_user LOGIN" >/dev/null
expect "0.1: an ordinary role reads the password" \
	"$(sql -c "SET ROLE app_user; SELECT count(*) FROM shardid.nodes WHERE connstr LIKE '%s3cret%'")" 1

err=$(psql -X -q -d app -v VERBOSITY=verbose -c "ALTER EXTENSION shardid UPDATE TO '0.2'" 2>&1) && fail "update with a password accepted"
[[ $err == *'22023'*'hold a password: a'* ]] || fail "update refusal: $err"
ok "update refused while node a's connect string holds a password"
expect "still 0.1" "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'shardid'")" 0.1

sql -c "UPDATE shardid.nodes SET connstr = 'host=/nonexistent/a dbname=app'" >/dev/null
[ -z "$plproxy" ] || sql -c "SELECT shardid.refresh_cluster()" >/dev/null
sql -c "ALTER EXTENSION shardid UPDATE TO '0.2'"
expect "updated once the password is gone" "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'shardid'")" 0.2

err=$(sql -c "SET ROLE app_user; SELECT * FROM shardid.nodes" 2>&1) && fail "an ordinary role read shardid.nodes"
[[ $err == *'permission denied'* ]] || fail "nodes: $err"
ok "0.2: an ordinary role cannot read shardid.nodes"
err=$(sql -c "SELECT shardid.add_node('c', 'host=x password=p')" 2>&1) && fail "add_node took a password"
[[ $err == *'must not hold a password'* ]] || fail "add_node: $err"
ok "0.2: add_node refuses a password"
expect "0.2: no connect string or password in what an ordinary role can read (placement columns, server options with 'password')" \
	"$(sql -c "SET ROLE app_user; SELECT count(*) FROM pg_attribute WHERE attrelid = 'shardid.placement'::regclass AND attname = 'connstr'")/$(sql -c "SET ROLE app_user; SELECT count(*) FROM pg_foreign_server s, pg_options_to_table(s.srvoptions) o WHERE o.option_value ~* 'password'")" 0/0
echo "nodes_secrets: all checks passed"
