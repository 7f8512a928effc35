# shardid — PGXS build of a C++17 core (src/core) and its PostgreSQL glue (src/pg).

EXTENSION = shardid
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" shardid.control)
MODULE_big = shardid

CORE_SRCS = $(sort $(wildcard src/core/*.cpp))
PG_SRCS = $(sort $(wildcard src/pg/*.cpp))
OBJS = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.cpp=.o)

# SQL sources live under src/sql by area (common/, layout/, generator/,
# schema_changes/, shards/, nodes/, moves/, rebalance/, operations/; router/
# subfolders for what runs on the router), one object per file. The install
# script of the version in development is assembled from src/sql/shardid.sql,
# which names each area's install.sql in order, whose "\ir" lines name the
# area's files; its upgrade script from the previous version is
# src/sql/updates/PREV--VERSION.sql (what CREATE OR REPLACE cannot do)
# followed by every function, procedure and view of the install script.
# src/sql/include.awk expands them into build/ (build output, not tracked).
# Released scripts are kept in git as shipped, in src/sql/released/. sql/
# and expected/ hold pg_regress tests only.
SQL_MAIN = src/sql/shardid.sql
SQL_OBJECTS = $(filter-out src/sql/released/%,$(wildcard src/sql/*.sql src/sql/*/*.sql src/sql/*/*/*.sql))
UPDATES_BUILT = $(patsubst src/sql/updates/%.sql,build/$(EXTENSION)--%.sql,$(wildcard src/sql/updates/*--$(EXTVERSION).sql))
DATA_built = build/$(EXTENSION)--$(EXTVERSION).sql $(UPDATES_BUILT)
DATA = $(wildcard src/sql/released/$(EXTENSION)--*.sql)
# The command-line tools, installed beside PostgreSQL's (pg_config --bindir).
SCRIPTS = bin/shardid-move-shard bin/shardid-rebalance

ALL_REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
# Router tests connect back to this server over dblink (databases of it
# stand for the nodes), which a packager's build server or pg_virtualenv
# need not allow: `make installcheck-router` runs them. The PL/Proxy
# cluster's own test also needs PL/Proxy, which a router that lets
# applications route need not have: `make installcheck-plproxy`.
# `make installcheck` runs the rest.
ROUTER_REGRESS = nodes_moves nodes_rebalance cluster_check
PLPROXY_REGRESS = nodes
REGRESS = $(filter-out $(ROUTER_REGRESS) $(PLPROXY_REGRESS),$(ALL_REGRESS))
# installcheck is defined below, to run REGRESS by its schedule.
NO_INSTALLCHECK = 1
REGRESS_OPTS = --inputdir=. --outputdir=results --load-extension=$(EXTENSION)

ISOLATION = $(patsubst test/isolation/specs/%.spec,%,$(sort $(wildcard test/isolation/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test/isolation --outputdir=results/isolation --load-extension=$(EXTENSION)

EXTRA_CLEAN = results tmp_check test/unit/unit_tests test/unit/*.o

PG_CONFIG ?= pg_config
# PostgreSQL's headers as system headers: -Wextra is for our code, not theirs.
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server) -DSHARDID_VERSION='"$(EXTVERSION)"'
PG_CXXFLAGS = -std=c++17 -Wall -Wextra -Werror -Wno-register -fno-exceptions
SHLIB_LINK += -lstdc++
# libpq parses node connect strings (src/pg/connstr.cpp), as in contrib/dblink;
# its header is in pg_config --includedir (Debian: libpq-dev, which
# postgresql-server-dev-NN depends on).
PG_CPPFLAGS += -isystem $(shell $(PG_CONFIG) --includedir)
SHLIB_LINK_INTERNAL = $(libpq)

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# This server is built with LLVM: the bitcode rule ignores CXXFLAGS otherwise.
COMPILE.cxx.bc += $(PG_CXXFLAGS)

# PGXS tracks header dependencies only for a PostgreSQL configured with
# --enable-depend, which Debian's is not: every object depends on every
# header of the tree, so make rebuilds what a header change touches without
# a `make clean` (test/run-all --fast relies on it).
HEADERS = $(wildcard src/core/*.hpp src/pg/*.h)
$(OBJS) $(if $(with_llvm:no=),$(OBJS:.o=.bc)): $(HEADERS)

build/$(EXTENSION)--$(EXTVERSION).sql: $(SQL_OBJECTS) src/sql/include.awk
	@mkdir -p build
	awk -f src/sql/include.awk $(SQL_MAIN) > $@

build/$(EXTENSION)--%--$(EXTVERSION).sql: src/sql/updates/%--$(EXTVERSION).sql $(SQL_OBJECTS) src/sql/include.awk
	@mkdir -p build
	awk -v upgrade=1 -f src/sql/include.awk $< $(SQL_MAIN) > $@

# Unit tests of src/core: GoogleTest, no PostgreSQL. An object per source
# (the core's compiled again, without the module's flags), so that make -j
# builds them side by side.
UNIT_SRCS = $(sort $(wildcard test/unit/*.cpp))
UNIT_OBJS = $(UNIT_SRCS:.cpp=.o) $(patsubst src/core/%.cpp,test/unit/core_%.o,$(CORE_SRCS))
UNIT_CXX = $(CXX) -std=c++17 -O1 -g -Wall -Wextra -Werror -Isrc/core
test/unit/%.o: test/unit/%.cpp $(wildcard src/core/*.hpp)
	$(UNIT_CXX) -c -o $@ $<
test/unit/core_%.o: src/core/%.cpp $(wildcard src/core/*.hpp)
	$(UNIT_CXX) -c -o $@ $<
test/unit/unit_tests: $(UNIT_OBJS)
	$(CXX) -o $@ $(UNIT_OBJS) -lgtest -lgtest_main -pthread

.PHONY: unitcheck
unitcheck: test/unit/unit_tests
	test/unit/unit_tests

# installcheck split by kind, so test/run-all can report each suite. The
# pg_regress suite runs by its schedule, sql/schedule: tests in databases
# of their own at once, two cores busy instead of one (the router tests
# share contrib_regression and its dblink: one at a time). make stops when
# the schedule does not name each test of REGRESS exactly once.
SCHEDULED = $(shell sed -n 's/^test: //p' sql/schedule)
schedule_check = $(strip \
	$(if $(filter-out $(SCHEDULED),$(REGRESS)),$(error sql/schedule does not name $(filter-out $(SCHEDULED),$(REGRESS)))) \
	$(if $(filter-out $(REGRESS),$(SCHEDULED)),$(error sql/schedule names what is not a test of its suite: $(filter-out $(REGRESS),$(SCHEDULED)))) \
	$(if $(filter-out $(words $(SCHEDULED)),$(words $(sort $(SCHEDULED)))),$(error sql/schedule names a test twice)))
.PHONY: installcheck-regress installcheck-router installcheck-plproxy installcheck-isolation
installcheck-regress:
	$(schedule_check)
	$(pg_regress_installcheck) $(REGRESS_OPTS) --schedule=sql/schedule
installcheck-router:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(ROUTER_REGRESS)
installcheck-plproxy:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(PLPROXY_REGRESS)
# make installcheck (pg_buildext's autopkgtest, pgxn check): pg_regress by
# its schedule, then the isolation specs; PGXS's own, which runs REGRESS
# one test at a time, is off (NO_INSTALLCHECK).
.PHONY: installcheck
installcheck: installcheck-regress installcheck-isolation router-tests-note
.PHONY: router-tests-note
router-tests-note:
	@echo "shardid: the router tests ($(ROUTER_REGRESS): dblink to this server) run with make installcheck-router, the PL/Proxy cluster's ($(PLPROXY_REGRESS)) with make installcheck-plproxy"
# TAP suites (test/tap/*.pl, PostgreSQL::Test::Cluster) through PGXS's own
# prove_installcheck. They start their own servers, so they run as an
# ordinary user (test/run-all runs them as postgres); `make installcheck`,
# which pg_buildext runs as root, leaves them out.
PROVE_TESTS = $(sort $(wildcard test/tap/*.pl))
.PHONY: installcheck-tap
installcheck-tap:
	$(prove_installcheck)
installcheck-isolation:
	@mkdir -p results
	$(if $(ISOLATION),$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION),@echo "no isolation specs")
