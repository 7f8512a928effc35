"""shardid_router — route by logical shard from the application, without PL/Proxy.

A ShardMap reads the placement (logical shard -> node name) from the router
database's ``shardid.placement`` and the layout from ``shardid.layout()``;
the node connect strings come from the application's own configuration,
never from the database. It keeps one connection pool per node (Debian's
python3-psycopg-pool) and runs a function in one transaction on the node of
a shard, retrying what a shard move makes fail:

- 25006 (read_only_sql_transaction) while the shard is frozen for a move's
  cut-over: retried after a short back-off, until ``retry_deadline``;
- the shard found moved (its retired copy refuses writes, 25006 "moved to
  node", or its schema is gone, 42P01/3F000): the map is reloaded and the
  function runs again on the new node;
- anything else is raised unchanged, as is the last error once the
  deadline has passed.

The map is reloaded on those errors and every ``reload_interval`` seconds,
never per call. If the router cannot be reached for a reload, the last map
is kept (the nodes still serve their shards).

    from shardid_router import ShardMap
    m = ShardMap(router="host=r dbname=app", nodes={"a": "host=a dbname=app", "b": "host=b dbname=app"})
    m.node_for_shard(5); m.node_for_id(some_id)          # -> "a"
    new_id = m.run(5, lambda conn: conn.execute(
        "INSERT INTO shard_0005.photos (caption) VALUES (%s) RETURNING id", ("dog",)).fetchone()[0])
    m.close()

The function passed to run() may run more than once: it must do nothing but
work on the connection it is given (no side effects outside the
transaction). Debian: python3-psycopg, python3-psycopg-pool.

fan_out() reads many shards without holding every shard's locks at once:
the query runs once per shard, with %s standing for the shard's schema,
grouped by node, one read-only transaction per batch of shards:

    for shard, row in m.fan_out("SELECT id, caption FROM %s.photos WHERE user_id = %(u)s", {"u": 19}):
        ...
"""

import logging
import random
import re
import threading
import time

__all__ = ["ShardMap", "ShardNotPlaced", "UnknownNode", "sqlstate_of", "move_error_kind", "fan_out_pieces"]
__version__ = "0.5.0"

log = logging.getLogger("shardid_router")

#: SQLSTATEs that say "the shard is not (or no longer) here"
_GONE = {"42P01", "3F000"}  # undefined_table, invalid_schema_name
#: 25006 read_only_sql_transaction: frozen for a cut-over, or the retired copy
_READ_ONLY = "25006"
#: the tokens fan_out() reads in a query: %s (the shard's schema) and %% (left to the driver)
_FAN_OUT_TOKEN = re.compile(r"%[%s]")


class ShardNotPlaced(LookupError):
    """The router's placement has no node for this shard."""


class UnknownNode(LookupError):
    """The placement names a node that the application's configuration lacks."""


def sqlstate_of(exc):
    """The SQLSTATE of a database error from psycopg 3, psycopg2, or an ORM's
    wrapper of one (SQLAlchemy's DBAPIError.orig, Django's __cause__); None if
    there is none."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        state = getattr(exc, "sqlstate", None) or getattr(exc, "pgcode", None)
        if isinstance(state, str) and state:
            return state
        exc = getattr(exc, "orig", None) or exc.__cause__
    return None


def _message_of(exc):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        diag = getattr(exc, "diag", None)
        msg = getattr(diag, "message_primary", None)
        if msg:
            return msg
        if getattr(exc, "sqlstate", None) or getattr(exc, "pgcode", None):
            return str(exc)
        exc = getattr(exc, "orig", None) or exc.__cause__
    return ""


def move_error_kind(exc):
    """'frozen' (retry after a back-off), 'moved' (reload the map, retry on the
    new node) or None (not caused by a shard move: raise it) for an exception."""
    state = sqlstate_of(exc)
    if state == _READ_ONLY:
        # shardid_internal._refuse_retired_write(): "shard N moved to node X: ... is its retired copy"
        return "moved" if "retired copy" in _message_of(exc) else "frozen"
    if state in _GONE:
        return "moved"
    return None


def _default_connect(conninfo):
    import psycopg  # Debian: python3-psycopg

    return psycopg.connect(conninfo, autocommit=True)


def _default_pool(conninfo, name, min_size, max_size, kwargs):
    from psycopg_pool import ConnectionPool  # Debian: python3-psycopg-pool

    return ConnectionPool(conninfo, min_size=min_size, max_size=max_size, kwargs=kwargs,
                          name=f"shardid-{name}", open=True)


def fan_out_pieces(query):
    """The text of a fan_out() query split at its %s (the shard schema):
    the pieces between them, %% left as it is (the driver makes it one %).
    Raises ValueError if there is no %s."""
    if not isinstance(query, str):
        raise TypeError(f"a fan_out() query is a str, not {type(query).__name__}")
    pieces, start = [], 0
    for m in _FAN_OUT_TOKEN.finditer(query):
        if m.group() == "%s":
            pieces.append(query[start:m.start()])
            start = m.end()
    pieces.append(query[start:])
    if len(pieces) < 2:
        raise ValueError("a fan_out() query names the shard's schema as %s (e.g. SELECT ... FROM %s.photos); "
                         "this one has no %s")
    return pieces


def _run_in_pool(pool, fn):
    # one transaction: psycopg's connection block commits on success and
    # rolls back on an exception; the connection goes back to the pool
    with pool.connection() as conn:
        return fn(conn)


class ShardMap:
    """Logical shard -> node, read from the router; one pool per node; move-aware run()."""

    def __init__(self, router, nodes, *, reload_interval=30.0, retry_deadline=10.0,
                 backoff=(0.005, 0.25), min_reload_gap=0.02, pool_min_size=1, pool_max_size=10,
                 connect_kwargs=None, connect=None, pool_factory=None, sleep=time.sleep,
                 clock=time.monotonic):
        """router: libpq connect string of the router database.
        nodes: {node name: libpq connect string}, the application's own.
        reload_interval: seconds between reloads of the placement when no
        error asks for one. retry_deadline: how long run() keeps retrying a
        shard that is frozen or moving. backoff: (first, longest) pause in
        seconds between tries on a frozen shard, doubling with jitter.
        min_reload_gap: reloads asked for by errors are at most this frequent.
        connect_kwargs: passed to every pooled connection (e.g.
        {"prepare_threshold": None} behind pgbouncer < 1.21).
        connect, pool_factory, sleep, clock: for tests."""
        if not isinstance(nodes, dict) or not nodes:
            raise ValueError("nodes is a non-empty dict {node name: connect string}")
        for name, conninfo in nodes.items():
            if not isinstance(name, str) or not isinstance(conninfo, str):
                raise TypeError("nodes maps node names (str) to connect strings (str)")
        self.router = router
        self.nodes = dict(nodes)
        self.reload_interval = reload_interval
        self.retry_deadline = retry_deadline
        self.backoff = backoff
        self.min_reload_gap = min_reload_gap
        self._pool_sizes = (pool_min_size, pool_max_size)
        self._connect_kwargs = dict(connect_kwargs or {})
        self._connect = connect or _default_connect
        self._pool_factory = pool_factory or _default_pool
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._router_conn = None
        self._pools = {}
        self._placement = {}      # shard -> node
        self._moving = frozenset()  # shards with a move in progress
        self._shard_bits = self._seq_bits = None
        self._max_shard = None
        self._loaded_at = None
        self._closed = False
        #: how many times the placement was read, and run()'s retries (for tests and metrics)
        self.reloads = 0
        self.retries = 0
        self.reload()

    # -- the map ---------------------------------------------------------------

    def reload(self):
        """Read the placement and layout from the router now (raises if it cannot)."""
        with self._lock:
            self._reload_locked()

    def _reload_locked(self):
        if self._closed:
            raise RuntimeError("this ShardMap is closed")
        try:
            if self._router_conn is None or getattr(self._router_conn, "closed", False):
                self._router_conn = self._connect(self.router)
            conn = self._router_conn
            layout = conn.execute("SELECT shard_bits, seq_bits, max_shard FROM shardid.layout()").fetchone()
            rows = conn.execute(
                "SELECT shard, node, moving_to IS NOT NULL FROM shardid.placement").fetchall()
        except Exception:
            # a broken router connection is made again next time
            conn, self._router_conn = self._router_conn, None
            if conn is not None:
                try:
                    conn.close()
                except Exception:
                    pass
            raise
        self._shard_bits, self._seq_bits, self._max_shard = layout
        self._placement = {shard: node for shard, node, _ in rows}
        self._moving = frozenset(shard for shard, _, moving in rows if moving)
        self._loaded_at = self._clock()
        self.reloads += 1

    def _refresh(self, force):
        """Reload if the interval has passed (or force, at most every
        min_reload_gap); keep the last map if the router cannot be reached."""
        age = self._clock() - self._loaded_at
        if age < (self.min_reload_gap if force else self.reload_interval):
            return
        with self._lock:
            age = self._clock() - self._loaded_at  # another thread may have done it
            if age < (self.min_reload_gap if force else self.reload_interval):
                return
            try:
                self._reload_locked()
            except Exception as e:
                if self._closed:
                    raise
                log.warning("shardid_router: keeping the placement of %.1f s ago: %s", age, e)

    def _lookup(self, shard):
        node = self._placement.get(shard)
        if node is None:
            raise ShardNotPlaced(f"shard {shard} is not placed on any node")
        if node not in self.nodes:
            raise UnknownNode(f"shard {shard} is placed on node {node!r}, which is not in this "
                              f"application's nodes ({', '.join(sorted(self.nodes))})")
        return node

    def _check_shard(self, shard):
        if isinstance(shard, bool) or not isinstance(shard, int):
            raise TypeError(f"a shard is an int, not {type(shard).__name__}")
        if not 0 <= shard <= self._max_shard:
            raise ValueError(f"shard {shard} is out of range: 0..{self._max_shard}")

    def node_for_shard(self, shard):
        """The name of the node holding a logical shard."""
        self._check_shard(shard)
        self._refresh(force=False)
        if shard not in self._placement:
            self._refresh(force=True)  # placed since the last reload?
        return self._lookup(shard)

    def shard_of(self, id):
        """The logical shard inside an ID (int or decimal str), under the router's layout."""
        from shardid_ids import _as_id

        return (_as_id(id) >> self._seq_bits) & ((1 << self._shard_bits) - 1)

    def node_for_id(self, id):
        """The name of the node holding the shard of an ID."""
        return self.node_for_shard(self.shard_of(id))

    def schema_for_shard(self, shard):
        """The schema name create_shard() gives a shard: shard_0005 (wider when
        the layout has more than 9999 shards)."""
        self._check_shard(shard)
        return "shard_" + str(shard).zfill(max(4, len(str(self._max_shard))))

    def shards(self, node=None):
        """The placed shards (of one node), in order."""
        self._refresh(force=False)
        return sorted(s for s, n in self._placement.items() if node is None or n == node)

    # -- running on a shard ----------------------------------------------------

    def pool(self, node):
        """The connection pool of a node (made on first use)."""
        pool = self._pools.get(node)
        if pool is None:
            if node not in self.nodes:
                raise UnknownNode(f"node {node!r} is not in this application's nodes")
            with self._lock:
                if self._closed:
                    raise RuntimeError("this ShardMap is closed")
                pool = self._pools.get(node)
                if pool is None:
                    pool = self._pool_factory(self.nodes[node], node, *self._pool_sizes,
                                              self._connect_kwargs)
                    self._pools[node] = pool
        return pool

    def run(self, shard, fn):
        """Run fn(conn) in one transaction on the node of shard, retrying
        while the shard is frozen or moving (see the module's doc); returns
        what fn returns."""
        self._check_shard(shard)
        return self.retry(shard, lambda node: _run_in_pool(self.pool(node), fn))

    def retry(self, shard, attempt):
        """attempt(node) -> result, called with the shard's node, again on
        move errors: the retry policy of run() for callers that manage their
        own connections (the SQLAlchemy and Django integrations)."""
        deadline = self._clock() + self.retry_deadline
        pause = self.backoff[0]
        while True:
            node = self.node_for_shard(shard)
            started = self._clock()
            try:
                return attempt(node)
            except Exception as e:
                kind = move_error_kind(e)
                if kind is None or self._clock() >= deadline:
                    raise
                self._refresh(force=True)
                moved_to = self._placement.get(shard)
                if moved_to == node and kind == "moved" and shard not in self._moving \
                        and self._loaded_at >= started:
                    raise  # a map read after the error shows no move: not ours to retry
                self.retries += 1
                if moved_to != node:
                    log.info("shardid_router: shard %s moved from %s to %s", shard, node, moved_to)
                    continue  # at once, on the new node
                if kind == "moved" and shard not in self._moving:
                    # the map predates the attempt (reloads are spaced): retry once it can be read
                    self._sleep(self.min_reload_gap)
                    continue
                self._sleep(min(pause * (0.5 + random.random()), max(0.0, deadline - self._clock())))
                pause = min(pause * 2, self.backoff[1])

    # -- reading many shards ----------------------------------------------------

    def fan_out(self, query, params=None, *, shards=None, batch_size=64, row_factory=None):
        """Run query on each shard (default: every placed shard) and yield
        (shard, row) for each row, as the rows arrive.

        query: SQL text where each %s stands for the shard's schema, quoted
        as an identifier by psycopg (sql.Identifier), never pasted in; %% is
        a literal %. params: the query's other parameters, the same for
        every shard: a dict for %(name)s placeholders (or a sequence for
        %t / %b). The shards are grouped by node (nodes in name order,
        shards in order within a node) and run in batches of batch_size
        shards, one READ ONLY transaction per batch on one pooled
        connection, so a transaction holds the locks of at most batch_size
        shards' tables. A shard found moved (its schema gone, 3F000 or
        42P01, and the placement read again says so) is run again on its
        new node, within retry_deadline as run() does; the shards already
        yielded are not run again. Any other error is raised; the rows
        yielded before it stay yielded. row_factory: a psycopg row factory
        (e.g. psycopg.rows.dict_row) for the rows. The arguments are checked
        at the call; the shards run as the generator is iterated (close it,
        or leave the loop, to end the batch's transaction early)."""
        pieces = fan_out_pieces(query)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size is a positive int, not {batch_size!r}")
        if params is None:
            params = ()  # so that %% means % whether there are parameters or not
        if shards is None:
            shards = self.shards()
        else:
            shards = sorted(set(shards))
            for shard in shards:
                self.node_for_shard(shard)  # an int in range, placed on a node of ours
        return self._fan_out(pieces, params, shards, batch_size, row_factory)

    def _fan_out(self, pieces, params, shards, batch_size, row_factory):
        from psycopg import sql  # Debian: python3-psycopg

        done = set()
        deadlines, pauses = {}, {}

        def composed(shard):
            ident = sql.Identifier(self.schema_for_shard(shard))
            parts = [sql.SQL(pieces[0])]
            for piece in pieces[1:]:
                parts += [ident, sql.SQL(piece)]
            return sql.Composed(parts)

        while True:
            todo = {}
            for shard in shards:
                if shard not in done:
                    todo.setdefault(self.node_for_shard(shard), []).append(shard)
            if not todo:
                return
            running = None  # (shard, node, started) while a shard's query is sent
            try:
                for node in sorted(todo):
                    node_shards = todo[node]
                    for i in range(0, len(node_shards), batch_size):
                        with self.pool(node).connection() as conn, conn.transaction():
                            conn.execute("SET TRANSACTION READ ONLY")
                            for shard in node_shards[i:i + batch_size]:
                                running = (shard, node, self._clock())
                                with (conn.cursor(row_factory=row_factory) if row_factory else conn.cursor()) as cur:
                                    cur.execute(composed(shard), params)
                                    running = None
                                    done.add(shard)
                                    for row in cur:
                                        yield shard, row
                return
            except Exception as e:
                if running is None or not self._fan_out_retry(e, *running, deadlines, pauses):
                    raise

    def _fan_out_retry(self, exc, shard, node, started, deadlines, pauses):
        """After fan_out()'s query failed on shard: True to go on (the map
        read again, after a pause if need be), False to raise. Only a
        missing schema or table can be a move: a read is never refused by a
        freeze, so 25006 here is the query writing in a READ ONLY batch."""
        if sqlstate_of(exc) not in _GONE:
            return False
        deadline = deadlines.setdefault(shard, started + self.retry_deadline)
        if self._clock() >= deadline:
            return False
        self._refresh(force=True)
        moved_to = self._placement.get(shard)
        if moved_to == node and shard not in self._moving and self._loaded_at >= started:
            return False  # a map read after the error shows no move: not ours to retry
        self.retries += 1
        if moved_to != node:
            log.info("shardid_router: shard %s moved from %s to %s", shard, node, moved_to)
        elif shard not in self._moving:
            self._sleep(self.min_reload_gap)  # the map predates the attempt: retry once it can be read
        else:
            pause = pauses.get(shard, self.backoff[0])
            self._sleep(min(pause * (0.5 + random.random()), max(0.0, deadline - self._clock())))
            pauses[shard] = min(pause * 2, self.backoff[1])
        return True

    def close(self):
        """Close every pool and the router connection."""
        with self._lock:
            self._closed = True
            pools, self._pools = list(self._pools.values()), {}
            conn, self._router_conn = self._router_conn, None
        for pool in pools:
            pool.close()
        if conn is not None:
            conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
