"""Unit tests of shardid_router.ShardMap with a fake router, fake pools and a
fake clock: no server. test/tap/apps.pl runs the same module against real
servers and through an online move.

    python3 -m pytest test_shardid_router.py
"""

import contextlib
import json
import os
import threading
import time
import unittest

import shardid_router
from shardid_router import ShardMap, ShardNotPlaced, UnknownNode, move_error_kind, sqlstate_of

try:
    import psycopg
except ImportError:  # the fakes below do not need it
    psycopg = None


class Diag:
    def __init__(self, message):
        self.message_primary = message


class PgError(Exception):
    """Shaped like a psycopg 3 error: .sqlstate and .diag.message_primary."""

    def __init__(self, sqlstate, message):
        super().__init__(message)
        self.sqlstate = sqlstate
        self.diag = Diag(message)


def frozen_error():
    return PgError("25006", "shard 5 is being moved to node b: shard_0005.t refuses writes for the cut-over")


def retired_error():
    return PgError("25006", "shard 5 moved to node b: shard_0005.t is its retired copy")


def missing_error():
    return PgError("42P01", 'relation "shard_0005.t" does not exist')


class Clock:
    def __init__(self):
        self.now = 1000.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.slept.append(s)
        self.now += s


class FakeRouter:
    """The router database: a placement and a layout; connect() opens a session on it."""

    def __init__(self, placement, layout=(13, 10, 8191)):
        self.placement = dict(placement)  # shard -> node
        self.moving = set()
        self.layout = layout
        self.down = False
        self.connects = 0
        self.queries = 0

    def connect(self, conninfo):
        if self.down:
            raise PgError("08006", "connection to the router failed")
        self.connects += 1
        return FakeRouterConn(self)


class FakeCursor:
    def __init__(self, rows):
        self.rows = rows

    def fetchone(self):
        return self.rows[0]

    def fetchall(self):
        return self.rows


class FakeRouterConn:
    def __init__(self, router):
        self.router = router
        self.closed = False

    def execute(self, sql):
        r = self.router
        if r.down:
            self.closed = True
            raise PgError("08006", "server closed the connection unexpectedly")
        r.queries += 1
        if "shardid.layout()" in sql:
            return FakeCursor([r.layout])
        assert "shardid.placement" in sql, sql
        return FakeCursor([(s, n, s in r.moving) for s, n in sorted(r.placement.items())])

    def close(self):
        self.closed = True


class FakePool:
    """A node's pool: connection() yields the node name as the 'connection'."""

    def __init__(self, conninfo, name, min_size, max_size, kwargs):
        self.conninfo, self.name, self.kwargs = conninfo, name, kwargs
        self.closed = False
        self.transactions = []  # "commit" / "rollback"

    @contextlib.contextmanager
    def connection(self):
        assert not self.closed
        try:
            yield self.name
        except BaseException:
            self.transactions.append("rollback")
            raise
        self.transactions.append("commit")

    def close(self):
        self.closed = True


class Base(unittest.TestCase):
    def setUp(self):
        self.router = FakeRouter({s: ("a" if s < 32 else "b") for s in range(64)})
        self.clock = Clock()
        self.pools = {}

    def make(self, **kw):
        def pool_factory(*args):
            p = FakePool(*args)
            self.pools[p.name] = p
            return p

        kw.setdefault("reload_interval", 30.0)
        m = ShardMap("host=router dbname=app", {"a": "host=a dbname=app", "b": "host=b dbname=app"},
                     connect=self.router.connect, pool_factory=pool_factory,
                     sleep=self.clock.sleep, clock=self.clock, **kw)
        self.addCleanup(m.close)
        return m


class Routing(Base):
    def test_node_for_shard_and_id(self):
        m = self.make()
        self.assertEqual((m.node_for_shard(5), m.node_for_shard(40)), ("a", "b"))
        # the README's ID is shard 1; make_id('2026-11-22 03:13:48.171+00', 40, 7)
        self.assertEqual(m.shard_of(4035735874804122625), 1)
        self.assertEqual(m.node_for_id(4035735874804122625), "a")
        id40 = (4035735874804122625 >> 23 << 23) | (40 << 10) | 7
        self.assertEqual((m.shard_of(id40), m.node_for_id(str(id40))), (40, "b"))
        self.assertEqual(m.schema_for_shard(5), "shard_0005")
        self.assertEqual(m.shards("b"), list(range(32, 64)))

    def test_layout_comes_from_the_router(self):
        self.router.layout = (12, 11, 4095)  # configure(..., 12, 11) on the router
        m = self.make()
        id = (123456 << 23) | (40 << 11) | 2047
        self.assertEqual(m.shard_of(id), 40)
        with self.assertRaises(ValueError):
            m.node_for_shard(4096)
        self.router.layout = (16, 10, 65535)
        m.reload()
        self.assertEqual(m.schema_for_shard(7), "shard_00007")

    def test_argument_types(self):
        m = self.make()
        for bad in (True, 5.0, "5", None):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                m.node_for_shard(bad)
        with self.assertRaises(ValueError):
            m.node_for_shard(-1)
        with self.assertRaises(ValueError):
            m.node_for_id(-1)
        with self.assertRaises(TypeError):
            m.node_for_id(1.5)
        with self.assertRaises(TypeError):
            ShardMap("host=r", {"a": 5}, connect=self.router.connect)
        with self.assertRaises(ValueError):
            ShardMap("host=r", {}, connect=self.router.connect)

    def test_reloads_on_an_interval_not_per_call(self):
        m = self.make(reload_interval=10.0)
        self.assertEqual(m.reloads, 1)
        for _ in range(1000):
            m.node_for_shard(5)
        self.assertEqual((m.reloads, self.router.connects), (1, 1))
        self.router.placement[5] = "b"
        self.clock.now += 9.9
        self.assertEqual(m.node_for_shard(5), "a")  # not yet
        self.clock.now += 0.2
        self.assertEqual(m.node_for_shard(5), "b")
        self.assertEqual((m.reloads, self.router.connects), (2, 1))  # one router session kept

    def test_unplaced_shard(self):
        m = self.make()
        self.clock.now += 1
        with self.assertRaisesRegex(ShardNotPlaced, "shard 100 is not placed on any node"):
            m.node_for_shard(100)
        self.assertEqual(m.reloads, 2)  # looked once more: it may have been placed since
        self.clock.now += 1
        self.router.placement[100] = "b"
        self.assertEqual(m.node_for_shard(100), "b")

    def test_node_missing_from_the_configuration(self):
        self.router.placement[7] = "c"
        m = self.make()
        with self.assertRaisesRegex(UnknownNode, r"shard 7 is placed on node 'c', which is not in this application's nodes \(a, b\)"):
            m.node_for_shard(7)

    def test_router_down_keeps_the_last_map(self):
        m = self.make(reload_interval=5.0)
        self.router.down = True
        self.clock.now += 6
        with self.assertLogs("shardid_router", "WARNING") as logs:
            self.assertEqual(m.node_for_shard(40), "b")
        self.assertIn("keeping the placement", logs.output[0])
        self.router.down = False
        self.router.placement[40] = "a"
        self.clock.now += 6
        self.assertEqual(m.node_for_shard(40), "a")  # a new router session
        self.assertEqual(self.router.connects, 2)

    def test_router_unreachable_at_start(self):
        self.router.down = True
        with self.assertRaises(PgError):
            self.make()


class Run(Base):
    def test_run_returns_the_result_in_one_transaction_per_call(self):
        m = self.make()
        self.assertEqual(m.run(5, lambda conn: ("ran on", conn)), ("ran on", "a"))
        self.assertEqual(m.run(40, lambda conn: conn), "b")
        self.assertEqual(m.run(6, lambda conn: conn), "a")
        self.assertEqual(sorted(self.pools), ["a", "b"])  # one pool per node
        self.assertEqual(self.pools["a"].transactions, ["commit", "commit"])
        self.assertEqual(self.pools["a"].conninfo, "host=a dbname=app")
        self.assertEqual(m.retries, 0)

    def test_frozen_shard_is_retried_after_a_back_off(self):
        m = self.make()
        self.router.moving.add(5)
        calls = []

        def fn(conn):
            calls.append(conn)
            if len(calls) <= 3:
                raise frozen_error()
            return 42

        self.assertEqual(m.run(5, fn), 42)
        self.assertEqual(calls, ["a"] * 4)
        self.assertEqual(m.retries, 3)
        self.assertEqual(len(self.clock.slept), 3)
        # doubling with jitter: 5 ms, 10 ms, 20 ms, each times 0.5..1.5
        for s, base in zip(self.clock.slept, (0.005, 0.01, 0.02)):
            self.assertTrue(0.5 * base <= s <= 1.5 * base, (s, base))
        self.assertEqual(self.pools["a"].transactions, ["rollback"] * 3 + ["commit"])

    def test_frozen_past_the_deadline_raises_the_error(self):
        m = self.make(retry_deadline=2.0)
        errors = []

        def fn(conn):
            errors.append(frozen_error())
            raise errors[-1]

        with self.assertRaises(PgError) as cm:
            m.run(5, fn)
        self.assertIs(cm.exception, errors[-1])
        self.assertAlmostEqual(sum(self.clock.slept), 2.0, delta=0.3)
        self.assertTrue(all(s <= 0.375 for s in self.clock.slept))  # longest back-off 0.25 s (+ jitter)
        # reloads on errors are spaced by min_reload_gap, not one per try
        self.assertLess(m.reloads, len(errors) + 1)

    def test_moved_shard_reloads_and_runs_on_the_new_node(self):
        m = self.make()
        calls = []

        def fn(conn):
            calls.append(conn)
            if conn == "a":
                # the move repointed the router while this map still said "a"
                self.router.placement[5] = "b"
                raise retired_error()
            return "done"

        self.clock.now += 1
        self.assertEqual(m.run(5, fn), "done")
        self.assertEqual((calls, self.clock.slept, m.retries), (["a", "b"], [], 1))
        self.assertEqual(m.node_for_shard(5), "b")

    def test_missing_schema_during_a_move_is_retried(self):
        m = self.make()
        self.clock.now += 1
        self.router.moving.add(5)
        calls = []

        def fn(conn):
            calls.append(conn)
            if conn == "a":
                # first the router still says 5 is on a (back off), then it is repointed
                if len(calls) == 2:
                    self.router.placement[5] = "b"
                raise missing_error()
            return conn

        self.assertEqual(m.run(5, fn), "b")
        self.assertEqual(calls[:2], ["a", "a"])
        self.assertEqual(calls[-1], "b")
        self.assertLessEqual(len(calls), 5)  # reloads are spaced by min_reload_gap (20 ms)

    def test_missing_table_without_a_move_is_raised(self):
        m = self.make()
        self.clock.now += 1
        calls = []

        def fn(conn):
            calls.append(conn)
            raise missing_error()

        with self.assertRaisesRegex(PgError, "does not exist"):
            m.run(5, fn)
        self.assertEqual(calls, ["a"])  # the map read after the error shows no move
        self.assertEqual(m.reloads, 2)

    def test_other_errors_are_raised_unchanged_at_once(self):
        m = self.make()
        for err in (PgError("23505", "duplicate key value violates unique constraint"),
                    PgError("40001", "could not serialize access"),
                    ValueError("not a database error")):
            with self.subTest(err=err):
                calls = []

                def fn(conn):
                    calls.append(conn)
                    raise err

                with self.assertRaises(type(err)) as cm:
                    m.run(5, fn)
                self.assertIs(cm.exception, err)
                self.assertEqual(calls, ["a"])
        self.assertEqual((m.reloads, m.retries, self.clock.slept), (1, 0, []))

    def test_close(self):
        m = self.make()
        m.run(5, lambda conn: None)
        m.run(40, lambda conn: None)
        m.close()
        self.assertTrue(all(p.closed for p in self.pools.values()))
        self.clock.now += 100
        with self.assertRaisesRegex(RuntimeError, "closed"):
            m.run(5, lambda conn: None)


class FakeNode:
    """A data node for fan_out(): the shard schemas it has; each query
    returns two rows made from the shard number. Records its transactions."""

    def __init__(self, name, shards):
        self.name = name
        self.shards = set(shards)
        self.transactions = []  # [status, [shards queried]], status "open", "commit", "rollback"
        self.queries = []  # (composed, params, row_factory)
        self.fail = {}  # shard -> the error its query raises
        self.before = None  # called with the shard before each query


class FakeNodeConn:
    def __init__(self, node):
        self.node = node

    @contextlib.contextmanager
    def transaction(self):
        tx = ["open", []]
        self.node.transactions.append(tx)
        try:
            yield
        except BaseException:
            tx[0] = "rollback"
            raise
        tx[0] = "commit"

    def execute(self, query, params=None):
        assert query == "SET TRANSACTION READ ONLY" and self.node.transactions[-1] == ["open", []], query
        self.node.transactions[-1].append("read only")

    def cursor(self, row_factory=None):
        return FakeNodeCursor(self.node, row_factory)


class FakeNodeCursor:
    def __init__(self, node, row_factory):
        self.node, self.row_factory, self.rows = node, row_factory, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def execute(self, query, params):
        from psycopg import sql

        tx = self.node.transactions[-1]
        assert tx[0] == "open" and tx[2:] == ["read only"], tx
        self.node.queries.append((query, params, self.row_factory))
        shard = next(s for s in range(100) if sql.Identifier(f"shard_{s:04d}") in list(query))
        if self.node.before:
            self.node.before(self.node, shard)
        tx[1].append(shard)
        if shard in self.node.fail:
            raise self.node.fail[shard]
        if shard not in self.node.shards:
            raise PgError("3F000", f'schema "shard_{shard:04d}" does not exist')
        rows = [(shard, 1), (shard, 2)]
        self.rows = [self.row_factory(r) for r in rows] if self.row_factory else rows

    def __iter__(self):
        return iter(self.rows)


class FakeNodePool:
    def __init__(self, node):
        self.node = node
        self.out = 0  # connections lent and not returned

    @contextlib.contextmanager
    def connection(self):
        self.out += 1
        try:
            yield FakeNodeConn(self.node)
        finally:
            self.out -= 1

    def close(self):
        pass


@unittest.skipIf(psycopg is None, "python3-psycopg is not installed (fan_out quotes with psycopg.sql)")
class FanOut(Base):
    """fan_out() on fake nodes: shards 0-31 on a, 32-63 on b."""

    def setUp(self):
        super().setUp()
        self.nodes = {"a": FakeNode("a", range(32)), "b": FakeNode("b", range(32, 64))}

    def make(self, **kw):
        def pool_factory(conninfo, name, *args):
            self.pools[name] = FakeNodePool(self.nodes[name])
            return self.pools[name]

        m = ShardMap("host=router dbname=app", {"a": "host=a dbname=app", "b": "host=b dbname=app"},
                     connect=self.router.connect, pool_factory=pool_factory,
                     sleep=self.clock.sleep, clock=self.clock, **kw)
        self.addCleanup(m.close)
        return m

    def batches(self, node):
        return [(tx[0], tx[1]) for tx in self.nodes[node].transactions]

    def test_every_shard_by_node_in_batches(self):
        from psycopg import sql

        m = self.make()
        rows = list(m.fan_out("SELECT shard, n FROM %s.t WHERE x = %(x)s AND y LIKE 'a%%'", {"x": 1}, batch_size=10))
        self.assertEqual(rows, [(s, (s, n)) for s in range(64) for n in (1, 2)])
        self.assertEqual(self.batches("a"), [("commit", list(range(0, 10))), ("commit", list(range(10, 20))),
                                             ("commit", list(range(20, 30))), ("commit", [30, 31])])
        self.assertEqual(self.batches("b"), [("commit", list(range(32 + i, min(64, 42 + i)))) for i in range(0, 32, 10)])
        query, params, _ = self.nodes["a"].queries[5]
        # the schema as an identifier, never in the SQL text; %% left for psycopg, which makes it %
        self.assertEqual(query, sql.Composed([sql.SQL("SELECT shard, n FROM "), sql.Identifier("shard_0005"),
                                              sql.SQL(".t WHERE x = %(x)s AND y LIKE 'a%%'")]))
        self.assertEqual(params, {"x": 1})
        self.assertEqual((m.retries, m.reloads), (0, 1))
        self.assertEqual([p.out for p in self.pools.values()], [0, 0])

    def test_default_batch_and_each_percent_s(self):
        from psycopg import sql

        m = self.make()
        self.assertEqual(len(list(m.fan_out("SELECT 1 FROM %s.t JOIN %s.u USING (id)"))), 128)
        self.assertEqual([len(tx[1]) for tx in self.nodes["a"].transactions], [32])  # batch_size 64
        query, params, _ = self.nodes["b"].queries[0]
        ident = sql.Identifier("shard_0032")
        self.assertEqual(query, sql.Composed([sql.SQL("SELECT 1 FROM "), ident, sql.SQL(".t JOIN "), ident,
                                              sql.SQL(".u USING (id)")]))
        self.assertEqual(params, ())  # always parameters: %% is a % with or without them

    def test_some_shards_and_a_row_factory(self):
        m = self.make()
        rows = list(m.fan_out("SELECT * FROM %s.t", shards=[40, 3, 3, 2], batch_size=2, row_factory=list))
        self.assertEqual(rows, [(2, [2, 1]), (2, [2, 2]), (3, [3, 1]), (3, [3, 2]), (40, [40, 1]), (40, [40, 2])])
        self.assertEqual((self.batches("a"), self.batches("b")), ([("commit", [2, 3])], [("commit", [40])]))
        self.assertIs(self.nodes["a"].queries[0][2], list)

    def test_arguments_are_checked_at_the_call(self):
        m = self.make()
        with self.assertRaisesRegex(ValueError, "names the shard's schema as %s"):
            m.fan_out("SELECT * FROM shard_0001.t")
        with self.assertRaisesRegex(ValueError, "has no %s"):
            m.fan_out("SELECT '%%s' FROM t")  # %% then s: a literal %s
        with self.assertRaises(TypeError):
            m.fan_out(b"SELECT * FROM %s.t")
        for bad in (0, -1, 1.5, True, None):
            with self.subTest(batch_size=bad), self.assertRaises(ValueError):
                m.fan_out("SELECT * FROM %s.t", batch_size=bad)
        with self.assertRaises(TypeError):
            m.fan_out("SELECT * FROM %s.t", shards=["5"])
        with self.assertRaises(ValueError):
            m.fan_out("SELECT * FROM %s.t", shards=[8192])
        self.clock.now += 1
        with self.assertRaisesRegex(ShardNotPlaced, "shard 100"):
            m.fan_out("SELECT * FROM %s.t", shards=[1, 100])
        self.assertEqual(self.nodes["a"].transactions, [])
        self.assertEqual(list(m.fan_out("SELECT * FROM %s.t", shards=[])), [])

    def test_pieces(self):
        self.assertEqual(shardid_router.fan_out_pieces("a %s b %%s c %% %s"), ["a ", " b %%s c %% ", ""])
        self.assertEqual(shardid_router.fan_out_pieces("%s"), ["", ""])
        self.assertEqual(shardid_router.fan_out_pieces("%(x)s %s"), ["%(x)s ", ""])

    def test_a_shard_moved_runs_again_on_its_new_node(self):
        m = self.make()
        # shard 5 moved to b (--drop-old) since the map was read
        self.router.placement[5] = "b"
        self.nodes["a"].shards.discard(5)
        self.nodes["b"].shards.add(5)
        self.clock.now += 1
        rows = list(m.fan_out("SELECT * FROM %s.t", batch_size=4))
        self.assertEqual(sorted(s for s, r in rows), sorted(list(range(64)) * 2))  # each shard's rows once
        self.assertEqual(self.batches("a"), [("commit", [0, 1, 2, 3]), ("rollback", [4, 5]),
                                             ("commit", [6, 7, 8, 9])] + [("commit", list(range(i, min(32, i + 4)))) for i in range(10, 32, 4)])
        self.assertEqual(self.batches("b")[0], ("commit", [5, 32, 33, 34]))
        self.assertEqual((m.retries, m.reloads, self.clock.slept), (1, 2, []))
        self.assertEqual([s for s, r in rows][:12], [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 6, 6])  # 4's rows came before the error

    def test_a_moving_shard_is_waited_for(self):
        m = self.make()
        self.clock.now += 1
        self.router.moving.add(5)
        self.nodes["a"].shards.discard(5)  # gone from a, the router not yet repointed

        def before(node, shard):
            if shard == 5 and len(node.queries) == 4:  # the third try on a
                self.router.placement[5] = "b"
                self.nodes["b"].shards.add(5)

        self.nodes["a"].before = before
        rows = list(m.fan_out("SELECT * FROM %s.t", shards=range(4, 8), batch_size=2))
        self.assertEqual([s for s, r in rows], [4, 4, 6, 6, 7, 7, 5, 5])
        self.assertEqual(self.batches("a")[:3], [("rollback", [4, 5]), ("rollback", [5]), ("rollback", [5])])
        self.assertEqual(self.batches("a")[-1], ("commit", [6, 7]))
        self.assertEqual(self.batches("b"), [("commit", [5])])
        # backed off while the router said a, moving (the map is read again at most every 20 ms),
        # then on b at once
        self.assertTrue(3 <= m.retries <= 8, m.retries)
        self.assertEqual(len(self.clock.slept), m.retries - 1)

    def test_moving_past_the_deadline_raises(self):
        self.router.moving.add(5)
        self.nodes["a"].shards.discard(5)
        m = self.make(retry_deadline=1.0)
        with self.assertRaises(PgError) as cm:
            list(m.fan_out("SELECT * FROM %s.t", shards=[5]))
        self.assertEqual(cm.exception.sqlstate, "3F000")
        self.assertAlmostEqual(sum(self.clock.slept), 1.0, delta=0.3)

    def test_a_missing_table_without_a_move_is_raised(self):
        m = self.make()
        self.clock.now += 1
        self.nodes["a"].fail[6] = missing_error()
        got = []
        with self.assertRaisesRegex(PgError, "does not exist"):
            for shard, row in m.fan_out("SELECT * FROM %s.t", batch_size=4):
                got.append(shard)
        self.assertEqual(got, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5])  # what came before the error
        self.assertEqual(self.batches("a"), [("commit", [0, 1, 2, 3]), ("rollback", [4, 5, 6])])
        self.assertEqual((m.retries, m.reloads, self.pools["a"].out), (0, 2, 0))

    def test_other_errors_are_raised_at_once(self):
        m = self.make()
        self.clock.now += 1
        for err in (PgError("22012", "division by zero"),
                    PgError("25006", "cannot execute INSERT in a read-only transaction"),
                    retired_error()):
            with self.subTest(err=err):
                self.nodes["a"].fail[7] = err
                self.nodes["a"].transactions.clear()
                with self.assertRaises(PgError) as cm:
                    list(m.fan_out("SELECT * FROM %s.t", shards=[7, 8]))
                self.assertIs(cm.exception, err)
                self.assertEqual(self.batches("a"), [("rollback", [7])])
        self.assertEqual((m.retries, m.reloads, self.clock.slept), (0, 1, []))

    def test_leaving_the_loop_ends_the_transaction(self):
        m = self.make()
        it = m.fan_out("SELECT * FROM %s.t", batch_size=8)
        self.assertEqual(next(it), (0, (0, 1)))
        self.assertEqual((self.nodes["a"].transactions[0][0], self.pools["a"].out), ("open", 1))
        it.close()
        self.assertEqual((self.batches("a"), self.pools["a"].out), ([("rollback", [0])], 0))
        self.assertNotIn("b", self.pools)


class Errors(unittest.TestCase):
    def test_sqlstate_through_wrappers(self):
        err = retired_error()

        class DBAPIError(Exception):  # SQLAlchemy: the driver's error in .orig
            def __init__(self, orig):
                self.orig = orig

        class DjangoError(Exception):  # Django: raise ... from the driver's error
            pass

        class Psycopg2Error(Exception):
            pgcode = "42P01"
            pgerror = 'ERROR:  relation "x" does not exist'

        try:
            raise DjangoError("wrapped") from err
        except DjangoError as e:
            django_err = e
        self.assertEqual(sqlstate_of(DBAPIError(err)), "25006")
        self.assertEqual(sqlstate_of(django_err), "25006")
        self.assertEqual(move_error_kind(DBAPIError(err)), "moved")
        self.assertEqual(move_error_kind(django_err), "moved")
        self.assertEqual(move_error_kind(DBAPIError(frozen_error())), "frozen")
        self.assertEqual(move_error_kind(Psycopg2Error()), "moved")
        self.assertEqual(move_error_kind(ValueError("x")), None)
        self.assertEqual(move_error_kind(PgError("23505", "dup")), None)

    @unittest.skipIf(psycopg is None, "python3-psycopg is not installed")
    def test_psycopg_error_classes(self):
        e = psycopg.errors.lookup("25006")("shard 5 moved to node b: shard_0005.t is its retired copy")
        self.assertEqual((e.sqlstate, move_error_kind(e)), ("25006", "moved"))
        self.assertEqual(move_error_kind(psycopg.errors.UndefinedTable("x")), "moved")
        self.assertEqual(move_error_kind(psycopg.errors.lookup("25006")("cut-over")), "frozen")
        self.assertEqual(move_error_kind(psycopg.errors.UniqueViolation("x")), None)


LIVE = os.environ.get("SHARDID_LIVE")


@unittest.skipUnless(LIVE, "SHARDID_LIVE not set (test/tap/apps.pl sets it)")
class Live(unittest.TestCase):
    """Against a router and two nodes (test/tap/apps.pl): shards 0-7 on a,
    8-15 on b, each with a table posts (id, user_id, body)."""

    @classmethod
    def setUpClass(cls):
        cls.cfg = json.loads(LIVE)
        cls.m = ShardMap(cls.cfg["router"], cls.cfg["nodes"], retry_deadline=5.0)

    @classmethod
    def tearDownClass(cls):
        cls.m.close()

    def insert(self, shard, conn, body="live"):
        return conn.execute(f"INSERT INTO {self.m.schema_for_shard(shard)}.posts (user_id, body) "
                            "VALUES (%s, %s) RETURNING id", (shard, body)).fetchone()[0]

    def admin(self, node):
        return psycopg.connect(self.cfg["nodes"][node], autocommit=True)

    def test_map_is_the_routers_placement(self):
        with psycopg.connect(self.cfg["router"]) as conn:
            placement = dict(conn.execute("SELECT shard, node FROM shardid.placement").fetchall())
        self.assertEqual({s: self.m.node_for_shard(s) for s in placement}, placement)
        self.assertEqual(self.m.shards("a"), list(range(8)))

    def test_insert_and_read_back_by_id(self):
        for shard in (2, 9):
            id = self.m.run(shard, lambda conn: self.insert(shard, conn))
            self.assertGreater(id, 2**53)
            self.assertEqual((self.m.shard_of(id), self.m.node_for_id(id)), (shard, "a" if shard < 8 else "b"))
            row = self.m.run(self.m.shard_of(id), lambda conn: conn.execute(
                f"SELECT id, body FROM {self.m.schema_for_shard(shard)}.posts WHERE id = %s", (id,)).fetchone())
            self.assertEqual(row, (id, "live"))

    def test_errors_are_raised_unchanged(self):
        id = self.m.run(2, lambda conn: self.insert(2, conn))
        retries = self.m.retries
        with self.assertRaises(psycopg.errors.UniqueViolation):
            self.m.run(2, lambda conn: conn.execute(
                "INSERT INTO shard_0002.posts (id, user_id, body) VALUES (%s, 2, 'dup')", (id,)))
        self.assertEqual(self.m.retries, retries)
        with self.assertRaises(psycopg.errors.UndefinedTable):
            self.m.run(2, lambda conn: conn.execute("SELECT * FROM shard_0002.nope"))
        # at most one more try, when the map was read less than min_reload_gap before the error
        self.assertLessEqual(self.m.retries, retries + 1)
        # the failed transactions were rolled back: the pool's connections still work
        self.assertEqual(self.m.run(2, lambda conn: conn.execute("SELECT 1").fetchone()[0]), 1)

    def test_fan_out_every_shard_in_batches(self):
        body = f"fan-out py {time.time()}"
        for shard in range(16):
            self.m.run(shard, lambda conn, s=shard: self.insert(s, conn, body))
        # per shard: its rows, the transaction (its virtual xid), the locks this
        # transaction holds on shard tables and indexes, read-only or not
        rows = list(self.m.fan_out(
            "SELECT p.user_id,"
            "       (SELECT virtualxid FROM pg_locks WHERE locktype = 'virtualxid' AND pid = pg_backend_pid()),"
            "       (SELECT count(*) FROM pg_locks AS l JOIN pg_class AS c ON c.oid = l.relation"
            "         WHERE l.pid = pg_backend_pid() AND c.relnamespace::regnamespace::text LIKE 'shard\\_%%'),"
            "       current_setting('transaction_read_only')"
            "  FROM %s.posts AS p WHERE p.body = %(body)s", {"body": body}, batch_size=3))
        self.assertEqual([(shard, row[0]) for shard, row in rows], [(s, s) for s in range(16)])
        self.assertEqual({row[3] for _, row in rows}, {"on"})
        # a transaction is its node and its virtual xid: the two servers
        # number theirs alike, and may both hand out the same one
        batches = {}
        for shard, row in rows:
            batches.setdefault((self.m.node_for_shard(shard), row[1]), []).append((shard, row[2]))
        self.assertEqual([[s for s, _ in b] for b in batches.values()],
                         [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9, 10], [11, 12, 13], [14, 15]])
        for b in batches.values():
            locks = [n for _, n in b]
            # a table and its index per shard read, held until the batch's transaction ends
            self.assertEqual(locks, [2 * (i + 1) for i in range(len(b))], b)

    def test_fan_out_quoting_parameters_and_read_only(self):
        (shard, (query, pct, n)), = self.m.fan_out(
            "SELECT current_query(), '100%%', (SELECT count(*) FROM %s.posts) >= 0", shards=[9])
        self.assertEqual((shard, pct, n), (9, "100%", True))
        self.assertIn('FROM "shard_0009".posts', query)  # psycopg's identifier quoting
        self.assertEqual(list(self.m.fan_out("SELECT %t::int + 1 FROM %s.posts LIMIT 1", [41], shards=[2])),
                         [(2, (42,))])
        retries = self.m.retries
        with self.assertRaises(psycopg.errors.ReadOnlySqlTransaction):
            list(self.m.fan_out("INSERT INTO %s.posts (id, user_id, body) VALUES (1, 1, 'x') RETURNING id", shards=[1]))
        self.assertEqual(self.m.retries, retries)  # a write refused in a read-only batch: not retried
        with self.assertRaises(psycopg.errors.UndefinedTable):
            list(self.m.fan_out("SELECT * FROM %s.nope", shards=[1]))
        self.assertLessEqual(self.m.retries, retries + 1)

    def test_frozen_shard_waits_for_the_thaw(self):
        with self.admin("a") as admin:
            admin.execute("SELECT shardid.freeze_shard_tables('shard_0003', 3, 'b')")
            def thaw():
                with self.admin("a") as conn:
                    conn.execute("SELECT shardid.unfreeze_shard_tables('shard_0003')")

            timer = threading.Timer(0.4, thaw)
            timer.start()
            retries, start = self.m.retries, time.monotonic()
            id = self.m.run(3, lambda conn: self.insert(3, conn, "after the thaw"))
            timer.join()
        self.assertGreaterEqual(time.monotonic() - start, 0.35)
        self.assertGreater(self.m.retries, retries)
        self.assertEqual(self.m.shard_of(id), 3)

    def test_frozen_past_the_deadline(self):
        m = ShardMap(self.cfg["router"], self.cfg["nodes"], retry_deadline=1.0)
        self.addCleanup(m.close)
        # the pool's connection is open before the clock starts: under load,
        # opening it took the whole deadline (no retry at all)
        m.run(4, lambda conn: conn.execute("SELECT 1"))
        with self.admin("a") as admin:
            admin.execute("SELECT shardid.freeze_shard_tables('shard_0004', 4, 'b')")
            try:
                start = time.monotonic()
                with self.assertRaisesRegex(psycopg.errors.ReadOnlySqlTransaction, "refuses writes for the cut-over"):
                    m.run(4, lambda conn: self.insert(4, conn))
                self.assertLess(time.monotonic() - start, 2.5)
                self.assertGreater(m.retries, 2)
                # reads go on while frozen
                self.assertEqual(m.run(4, lambda conn: conn.execute("SELECT count(*) >= 0 FROM shard_0004.posts").fetchone()[0]), True)
            finally:
                admin.execute("SELECT shardid.unfreeze_shard_tables('shard_0004')")


if __name__ == "__main__":
    unittest.main()
