// Unit tests of shardid-router.mjs with a fake router, fake pools and a fake
// clock: no server. test/tap/apps.pl runs it against real servers and through
// an online move.
//   node --test shardid-router.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShardMap, ShardNotPlaced, UnknownNode, fanOutPieces, moveErrorKind, parseConninfo, sqlstateOf } from './shardid-router.mjs';

class PgError extends Error { // shaped like node-postgres's DatabaseError
  constructor(code, message) { super(message); this.code = code; }
}
const frozenError = () => new PgError('25006', 'shard 5 is being moved to node b: shard_0005.t refuses writes for the cut-over');
const retiredError = () => new PgError('25006', 'shard 5 moved to node b: shard_0005.t is its retired copy');
const missingError = () => new PgError('42P01', 'relation "shard_0005.t" does not exist');

class FakeRouter {
  constructor(placement, layout = { shard_bits: 13, seq_bits: 10, max_shard: 8191 }) {
    this.placement = new Map(placement);
    this.moving = new Set();
    this.layout = layout;
    this.down = false;
    this.connects = 0;
  }

  async connect() {
    if (this.down) throw new PgError('08006', 'connection to the router failed');
    this.connects += 1;
    const router = this;
    return {
      ended: false,
      async query(sql) {
        if (router.down) { this.broken = true; throw new PgError('08006', 'server closed the connection unexpectedly'); }
        if (sql.includes('shardid.layout()')) return { rows: [router.layout] };
        assert.match(sql, /shardid\.placement/);
        return { rows: [...router.placement].map(([shard, node]) => ({ shard, node, moving: router.moving.has(shard) })) };
      },
      async end() { this.ended = true; },
    };
  }
}

function setup(options = {}) {
  const router = new FakeRouter([...Array(64).keys()].map((s) => [s, s < 32 ? 'a' : 'b']), options.layout);
  const clock = { now: 1000, slept: [] };
  const pools = {};
  const m = new ShardMap({
    router: 'host=router dbname=app',
    nodes: { a: 'host=a dbname=app', b: 'host=b dbname=app' },
    connect: () => router.connect(),
    poolFactory: async (conninfo, name) => {
      const log = [];
      const pool = {
        conninfo, log, ended: false,
        async connect() {
          return {
            node: name,
            async query(sql) { log.push(sql); },
            release(broken) { log.push(broken ? 'release broken' : 'release'); },
          };
        },
        async end() { pool.ended = true; },
      };
      pools[name] = pool;
      return pool;
    },
    sleep: async (ms) => { clock.slept.push(ms); clock.now += ms; },
    clock: () => clock.now,
    ...options,
  });
  return { m, router, clock, pools };
}

test('node for a shard and for an ID', async () => {
  const { m } = setup();
  assert.equal(await m.nodeForShard(5), 'a');
  assert.equal(await m.nodeForShard(40n), 'b');
  assert.equal(await m.nodeForId('4035735874804122625'), 'a'); // the README's ID, shard 1
  const id40 = ((4035735874804122625n >> 23n) << 23n) | (40n << 10n) | 7n;
  assert.equal(await m.shardOf(id40), 40);
  assert.equal(await m.nodeForId(id40), 'b');
  assert.equal(await m.schemaForShard(5), 'shard_0005');
  assert.deepEqual(await m.shards('b'), [...Array(32).keys()].map((s) => s + 32));
  assert.equal(m.reloads, 1);
});

test('the layout comes from the router', async () => {
  const { m, router } = setup({ layout: { shard_bits: 12, seq_bits: 11, max_shard: 4095 } });
  assert.equal(await m.shardOf((123456n << 23n) | (40n << 11n) | 2047n), 40);
  await assert.rejects(m.nodeForShard(4096), RangeError);
  router.layout = { shard_bits: 16, seq_bits: 10, max_shard: 65535 };
  await m.reload();
  assert.equal(await m.schemaForShard(7), 'shard_00007');
});

test('argument types', async () => {
  const { m } = setup();
  for (const bad of [true, 5.5, '5', null, undefined]) await assert.rejects(m.nodeForShard(bad), TypeError, String(bad));
  await assert.rejects(m.nodeForShard(-1), RangeError);
  await assert.rejects(m.nodeForId(4035735874804122625), /not a safe integer/); // a rounded Number
  await assert.rejects(m.run('5', async () => {}), TypeError);
  assert.throws(() => new ShardMap({ router: 'x', nodes: {} }), TypeError);
  assert.throws(() => new ShardMap({ router: 'x', nodes: { a: 'host=a sslmode=verify-full' } }), /not supported/);
});

test('connect strings', () => {
  assert.deepEqual(parseConninfo("host=/tmp/x port=5433 user=postgres dbname=app application_name='my app' connect_timeout=3"),
    { host: '/tmp/x', port: 5433, user: 'postgres', database: 'app', application_name: 'my app', connectionTimeoutMillis: 3000 });
  assert.deepEqual(parseConninfo("dbname='it\\'s' host = h"), { database: "it's", host: 'h' });
  assert.deepEqual(parseConninfo('postgres://u@h:5/app'), { connectionString: 'postgres://u@h:5/app' });
  assert.deepEqual(parseConninfo({ host: 'h', port: 5 }), { host: 'h', port: 5 });
  assert.throws(() => parseConninfo('host'), SyntaxError);
  assert.throws(() => parseConninfo(5), TypeError);
});

test('reloads on an interval, not per call', async () => {
  const { m, router, clock } = setup({ reloadInterval: 10000 });
  for (let i = 0; i < 1000; i++) await m.nodeForShard(5);
  assert.deepEqual([m.reloads, router.connects], [1, 1]);
  router.placement.set(5, 'b');
  clock.now += 9900;
  assert.equal(await m.nodeForShard(5), 'a'); // not yet
  clock.now += 200;
  assert.equal(await m.nodeForShard(5), 'b');
  assert.deepEqual([m.reloads, router.connects], [2, 1]); // one router session kept
});

test('concurrent callers share one reload', async () => {
  const { m, router } = setup();
  const nodes = await Promise.all([...Array(50).keys()].map((s) => m.nodeForShard(s)));
  assert.equal(nodes[40], 'b');
  assert.deepEqual([m.reloads, router.connects], [1, 1]);
});

test('an unplaced shard, then placed', async () => {
  const { m, router, clock } = setup();
  await m.nodeForShard(0);
  clock.now += 1000;
  await assert.rejects(m.nodeForShard(100), new ShardNotPlaced('shard 100 is not placed on any node'));
  assert.equal(m.reloads, 2); // looked once more
  clock.now += 1000;
  router.placement.set(100, 'b');
  assert.equal(await m.nodeForShard(100), 'b');
});

test('a node missing from the configuration', async () => {
  const { m, router } = setup();
  router.placement.set(7, 'c');
  await assert.rejects(m.nodeForShard(7), (err) => err instanceof UnknownNode &&
    err.message === 'shard 7 is placed on node "c", which is not in this application\'s nodes (a, b)');
});

test('the router down keeps the last map', async (t) => {
  const warn = t.mock.method(console, 'warn', () => {});
  const { m, router, clock } = setup({ reloadInterval: 5000 });
  await m.nodeForShard(40);
  router.down = true;
  clock.now += 6000;
  assert.equal(await m.nodeForShard(40), 'b');
  assert.match(warn.mock.calls[0].arguments[0], /keeping the placement of 6\.0 s ago/);
  router.down = false;
  router.placement.set(40, 'a');
  clock.now += 6000;
  assert.equal(await m.nodeForShard(40), 'a');
  assert.equal(router.connects, 2);
});

test('the router unreachable at the first call', async () => {
  const { m, router } = setup();
  router.down = true;
  await assert.rejects(m.nodeForShard(5), /connection to the router failed/);
});

test('run: the result, one transaction, one pool per node', async () => {
  const { m, pools } = setup();
  assert.deepEqual(await m.run(5, async (c) => ['ran on', c.node]), ['ran on', 'a']);
  assert.equal(await m.run(40, async (c) => c.node), 'b');
  assert.equal(await m.run(6, async (c) => c.node), 'a');
  assert.deepEqual(Object.keys(pools).sort(), ['a', 'b']);
  assert.deepEqual(pools.a.log, ['BEGIN', 'COMMIT', 'release', 'BEGIN', 'COMMIT', 'release']);
  assert.equal(pools.a.conninfo, 'host=a dbname=app');
  assert.equal(m.retries, 0);
});

test('a frozen shard is retried after a back-off', async () => {
  const { m, router, clock, pools } = setup();
  router.moving.add(5);
  const calls = [];
  const result = await m.run(5, async (c) => {
    calls.push(c.node);
    if (calls.length <= 3) throw frozenError();
    return 42;
  });
  assert.equal(result, 42);
  assert.deepEqual(calls, ['a', 'a', 'a', 'a']);
  assert.equal(m.retries, 3);
  assert.equal(clock.slept.length, 3);
  [5, 10, 20].forEach((base, i) => assert.ok(clock.slept[i] >= 0.5 * base && clock.slept[i] <= 1.5 * base, `${clock.slept[i]} ${base}`));
  assert.deepEqual(pools.a.log.filter((s) => s === 'ROLLBACK' || s === 'COMMIT'), ['ROLLBACK', 'ROLLBACK', 'ROLLBACK', 'COMMIT']);
});

test('frozen past the deadline throws the error', async () => {
  const { m, clock } = setup({ retryDeadline: 2000 });
  const errors = [];
  await assert.rejects(m.run(5, async () => { errors.push(frozenError()); throw errors.at(-1); }),
    (err) => err === errors.at(-1));
  const slept = clock.slept.reduce((a, b) => a + b, 0);
  assert.ok(slept >= 1700 && slept <= 2300, String(slept));
  assert.ok(clock.slept.every((s) => s <= 375));
  assert.ok(m.reloads < errors.length + 1);
});

test('a moved shard: reload, run on the new node at once', async () => {
  const { m, router, clock } = setup();
  await m.nodeForShard(5);
  clock.now += 1000;
  const calls = [];
  const result = await m.run(5, async (c) => {
    calls.push(c.node);
    if (c.node === 'a') { router.placement.set(5, 'b'); throw retiredError(); }
    return 'done';
  });
  assert.equal(result, 'done');
  assert.deepEqual([calls, clock.slept, m.retries], [['a', 'b'], [], 1]);
});

test('a missing schema during a move is retried', async () => {
  const { m, router, clock } = setup();
  await m.nodeForShard(5);
  clock.now += 1000;
  router.moving.add(5);
  const calls = [];
  assert.equal(await m.run(5, async (c) => {
    calls.push(c.node);
    if (c.node === 'a') {
      if (calls.length === 2) router.placement.set(5, 'b');
      throw missingError();
    }
    return c.node;
  }), 'b');
  assert.deepEqual(calls.slice(0, 2), ['a', 'a']);
  assert.equal(calls.at(-1), 'b');
  assert.ok(calls.length <= 5);
});

test('a missing table without a move is thrown', async () => {
  const { m, clock } = setup();
  await m.nodeForShard(5);
  clock.now += 1000;
  const calls = [];
  await assert.rejects(m.run(5, async (c) => { calls.push(c.node); throw missingError(); }), /does not exist/);
  assert.deepEqual(calls, ['a']);
  assert.equal(m.reloads, 2);
});

test('other errors are thrown unchanged at once', async () => {
  const { m, clock, pools } = setup();
  for (const err of [new PgError('23505', 'duplicate key'), new PgError('40001', 'could not serialize'), new TypeError('not a database error')]) {
    const calls = [];
    await assert.rejects(m.run(5, async (c) => { calls.push(c.node); throw err; }), (e) => e === err);
    assert.deepEqual(calls, ['a']);
  }
  assert.deepEqual([m.reloads, m.retries, clock.slept], [1, 0, []]);
  assert.deepEqual(pools.a.log.filter((s) => s.startsWith('release')), ['release', 'release', 'release']);
});

test('a client whose transaction cannot end is not reused', async () => {
  const { m, pools } = setup();
  await m.run(5, async () => {});
  const pool = await m.pool('a');
  const connect = pool.connect;
  pool.connect = async () => {
    const c = await connect();
    c.query = async (sql) => { pool.log.push(sql); if (sql === 'COMMIT') throw new Error('Connection terminated unexpectedly'); };
    return c;
  };
  await assert.rejects(m.run(5, async () => 1), /Connection terminated/);
  assert.deepEqual(pools.a.log.slice(-3), ['BEGIN', 'COMMIT', 'release broken']);
});

test('close', async () => {
  const { m, pools, clock } = setup();
  await m.run(5, async () => {});
  await m.run(40, async () => {});
  await m.close();
  assert.ok(pools.a.ended && pools.b.ended);
  clock.now += 100000;
  await assert.rejects(m.run(5, async () => {}), /closed/);
});

// fanOut() on fake nodes: each query returns two rows made from the shard
// number; every transaction is recorded with the shards it queried.
function fakeNode(name, shards) {
  const node = { name, shards: new Set(shards), transactions: [], queries: [], fail: new Map(), before: null, out: 0, released: [] };
  node.pool = {
    async connect() {
      node.out += 1;
      let tx = null;
      return {
        escapeIdentifier: (s) => `"${s.replace(/"/g, '""')}"`, // as node-postgres's
        async query(text, values) {
          if (text === 'BEGIN READ ONLY') {
            assert.ok(!tx || tx.status !== 'open');
            tx = { status: 'open', shards: [] };
            node.transactions.push(tx);
            return {};
          }
          if (text === 'COMMIT' || text === 'ROLLBACK') {
            tx.status = text === 'COMMIT' && !tx.failed ? 'commit' : 'rollback';
            return {};
          }
          assert.equal(tx?.status, 'open', text);
          const shard = Number(/"shard_(\d{4})"/.exec(text)[1]);
          node.queries.push({ text, values });
          if (node.before) node.before(node, shard);
          tx.shards.push(shard);
          if (node.fail.has(shard) || !node.shards.has(shard)) {
            tx.failed = true;
            throw node.fail.get(shard) ?? new PgError('3F000', `schema "shard_${String(shard).padStart(4, '0')}" does not exist`);
          }
          return { rows: [{ shard, n: 1 }, { shard, n: 2 }] };
        },
        release(broken) { node.out -= 1; node.released.push(broken ? 'broken' : 'ok'); },
      };
    },
    async end() {},
  };
  return node;
}

function fanOutSetup(options = {}) {
  const nodes = { a: fakeNode('a', [...Array(32).keys()]), b: fakeNode('b', [...Array(32).keys()].map((s) => s + 32)) };
  const t = setup({ poolFactory: async (conninfo, name) => nodes[name].pool, ...options });
  return { ...t, nodes };
}

const batches = (node) => node.transactions.map((tx) => [tx.status, tx.shards]);
const range = (from, to) => [...Array(to - from).keys()].map((i) => i + from);
async function collect(iterator) {
  const out = [];
  for await (const item of iterator) out.push(item);
  return out;
}

test('fanOut: every shard, by node, in batches', async () => {
  const { m, nodes } = fanOutSetup();
  const rows = await collect(m.fanOut("SELECT shard, n FROM %s.t WHERE x = $1 AND y LIKE 'a%%'", [1], { batchSize: 10 }));
  assert.deepEqual(rows, range(0, 64).flatMap((s) => [{ shard: s, row: { shard: s, n: 1 } }, { shard: s, row: { shard: s, n: 2 } }]));
  assert.deepEqual(batches(nodes.a), [['commit', range(0, 10)], ['commit', range(10, 20)], ['commit', range(20, 30)], ['commit', [30, 31]]]);
  assert.deepEqual(batches(nodes.b), [0, 10, 20, 30].map((i) => ['commit', range(32 + i, Math.min(64, 42 + i))]));
  // the schema quoted by the client's escapeIdentifier; %% is a %
  assert.deepEqual(nodes.a.queries[5], { text: 'SELECT shard, n FROM "shard_0005".t WHERE x = $1 AND y LIKE \'a%\'', values: [1] });
  assert.deepEqual([m.retries, m.reloads, nodes.a.out, nodes.b.out], [0, 1, 0, 0]);
  assert.ok([...nodes.a.released, ...nodes.b.released].every((r) => r === 'ok'));
});

test('fanOut: the default batch, each %s', async () => {
  const { m, nodes } = fanOutSetup();
  assert.equal((await collect(m.fanOut('SELECT 1 FROM %s.t JOIN %s.u USING (id)'))).length, 128);
  assert.deepEqual(nodes.a.transactions.map((tx) => tx.shards.length), [32]); // batchSize 64
  assert.deepEqual(nodes.b.queries[0], { text: 'SELECT 1 FROM "shard_0032".t JOIN "shard_0032".u USING (id)', values: [] });
});

test('fanOut: some shards', async () => {
  const { m, nodes } = fanOutSetup();
  const rows = await collect(m.fanOut('SELECT * FROM %s.t', [], { shards: [40, 3, 3n, 2], batchSize: 2 }));
  assert.deepEqual(rows.map((r) => r.shard), [2, 2, 3, 3, 40, 40]);
  assert.deepEqual([batches(nodes.a), batches(nodes.b)], [[['commit', [2, 3]]], [['commit', [40]]]]);
  assert.deepEqual(await collect(m.fanOut('SELECT * FROM %s.t', [], { shards: [] })), []);
});

test('fanOut: arguments', async () => {
  const { m, nodes, clock } = fanOutSetup();
  assert.throws(() => m.fanOut('SELECT * FROM shard_0001.t'), /names the shard's schema as %s/);
  assert.throws(() => m.fanOut("SELECT '%%s' FROM t"), SyntaxError); // %% then s: a literal %s
  assert.throws(() => m.fanOut(5), TypeError);
  for (const bad of [0, -1, 1.5, '2', null]) assert.throws(() => m.fanOut('SELECT * FROM %s.t', [], { batchSize: bad }), RangeError);
  assert.throws(() => m.fanOut('SELECT * FROM %s.t', 5), TypeError);
  assert.throws(() => m.fanOut('SELECT * FROM %s.t', [], { shards: ['5'] }), TypeError);
  await assert.rejects(collect(m.fanOut('SELECT * FROM %s.t', [], { shards: [8192] })), RangeError);
  clock.now += 1000;
  await assert.rejects(collect(m.fanOut('SELECT * FROM %s.t', [], { shards: [1, 100] })), ShardNotPlaced);
  assert.deepEqual(nodes.a.transactions, []);
  assert.deepEqual(fanOutPieces('a %s b %%s c %% %s'), ['a ', ' b %s c % ', '']);
  assert.deepEqual(fanOutPieces('%s'), ['', '']);
});

test('fanOut: a moved shard runs again on its new node', async () => {
  const { m, router, nodes, clock } = fanOutSetup();
  await m.nodeForShard(5);
  router.placement.set(5, 'b'); // moved (--drop-old) since the map was read
  nodes.a.shards.delete(5);
  nodes.b.shards.add(5);
  clock.now += 1000;
  const rows = await collect(m.fanOut('SELECT * FROM %s.t', [], { batchSize: 4 }));
  assert.deepEqual(rows.map((r) => r.shard).sort((x, y) => x - y), range(0, 64).flatMap((s) => [s, s])); // each shard's rows once
  assert.deepEqual(rows.slice(0, 12).map((r) => r.shard), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 6, 6]); // 4's rows came before the error
  assert.deepEqual(batches(nodes.a), [['commit', [0, 1, 2, 3]], ['rollback', [4, 5]], ['commit', [6, 7, 8, 9]],
    ...[10, 14, 18, 22, 26, 30].map((i) => ['commit', range(i, Math.min(32, i + 4))])]);
  assert.deepEqual(batches(nodes.b)[0], ['commit', [5, 32, 33, 34]]);
  assert.deepEqual([m.retries, m.reloads, clock.slept, nodes.a.out], [1, 2, [], 0]);
});

test('fanOut: a moving shard is waited for', async () => {
  const { m, router, nodes, clock } = fanOutSetup();
  await m.nodeForShard(5);
  clock.now += 1000;
  router.moving.add(5);
  nodes.a.shards.delete(5); // gone from a, the router not yet repointed
  nodes.a.before = (node, shard) => {
    if (shard === 5 && node.queries.length === 4) { // the third try on a
      router.placement.set(5, 'b');
      nodes.b.shards.add(5);
    }
  };
  const rows = await collect(m.fanOut('SELECT * FROM %s.t', [], { shards: [4, 5, 6, 7], batchSize: 2 }));
  assert.deepEqual(rows.map((r) => r.shard), [4, 4, 6, 6, 7, 7, 5, 5]);
  assert.deepEqual(batches(nodes.a).slice(0, 3), [['rollback', [4, 5]], ['rollback', [5]], ['rollback', [5]]]);
  assert.deepEqual(batches(nodes.a).at(-1), ['commit', [6, 7]]);
  assert.deepEqual(batches(nodes.b), [['commit', [5]]]);
  // backed off while the router said a, moving (the map read again at most every 20 ms), then on b at once
  assert.ok(m.retries >= 3 && m.retries <= 8, String(m.retries));
  assert.equal(clock.slept.length, m.retries - 1);
});

test('fanOut: moving past the deadline throws', async () => {
  const { m, router, nodes, clock } = fanOutSetup({ retryDeadline: 1000 });
  router.moving.add(5);
  nodes.a.shards.delete(5);
  await assert.rejects(collect(m.fanOut('SELECT * FROM %s.t', [], { shards: [5] })), (err) => err.code === '3F000');
  const slept = clock.slept.reduce((x, y) => x + y, 0);
  assert.ok(slept >= 700 && slept <= 1300, String(slept));
});

test('fanOut: a missing table without a move is thrown', async () => {
  const { m, nodes, clock } = fanOutSetup();
  await m.nodeForShard(0);
  clock.now += 1000;
  nodes.a.fail.set(6, missingError());
  const got = [];
  await assert.rejects(async () => { for await (const { shard } of m.fanOut('SELECT * FROM %s.t', [], { batchSize: 4 })) got.push(shard); },
    /does not exist/);
  assert.deepEqual(got, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]); // what came before the error
  assert.deepEqual(batches(nodes.a), [['commit', [0, 1, 2, 3]], ['rollback', [4, 5, 6]]]);
  assert.deepEqual([m.retries, m.reloads, nodes.a.out, nodes.a.released], [0, 2, 0, ['ok', 'ok']]);
});

test('fanOut: other errors are thrown at once', async () => {
  const { m, nodes, clock } = fanOutSetup();
  await m.nodeForShard(0);
  clock.now += 1000;
  for (const err of [new PgError('22012', 'division by zero'), new PgError('25006', 'cannot execute INSERT in a read-only transaction'),
    retiredError(), new Error('Connection terminated unexpectedly')]) {
    nodes.a.fail.set(7, err);
    nodes.a.transactions.length = 0;
    await assert.rejects(collect(m.fanOut('SELECT * FROM %s.t', [], { shards: [7, 8] })), (e) => e === err);
    assert.deepEqual(batches(nodes.a), [['rollback', [7]]]);
  }
  assert.deepEqual([m.retries, m.reloads, clock.slept], [0, 1, []]);
  assert.deepEqual(nodes.a.released, ['ok', 'ok', 'ok', 'broken']); // a lost connection is not reused
});

test('fanOut: leaving the loop ends the transaction', async () => {
  const { m, nodes, pools } = fanOutSetup();
  for await (const { shard } of m.fanOut('SELECT * FROM %s.t', [], { batchSize: 8 })) {
    assert.equal(shard, 0);
    assert.deepEqual([nodes.a.transactions[0].status, nodes.a.out], ['open', 1]);
    break;
  }
  assert.deepEqual([batches(nodes.a), nodes.a.out, nodes.a.released], [[['rollback', [0]]], 0, ['ok']]);
  assert.deepEqual(nodes.b.transactions, []);
  assert.equal(pools.b, undefined);
});

test('SQLSTATEs through ORM wrappers', () => {
  const err = retiredError();
  assert.equal(sqlstateOf({ original: err }), '25006'); // sequelize
  assert.equal(sqlstateOf({ driverError: err }), '25006'); // typeorm QueryFailedError
  assert.equal(sqlstateOf(new Error('wrapped', { cause: err })), '25006');
  assert.equal(moveErrorKind({ parent: err }), 'moved');
  assert.equal(moveErrorKind(frozenError()), 'frozen');
  assert.equal(moveErrorKind(missingError()), 'moved');
  assert.equal(moveErrorKind(new PgError('23505', 'dup')), null);
  assert.equal(moveErrorKind(new Error('x')), null);
  assert.equal(moveErrorKind(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })), null);
});

// Against a router and two nodes (test/tap/apps.pl): shards 0-7 on a, 8-15 on
// b, each with a table posts (id, user_id, body).
const live = process.env.SHARDID_LIVE && JSON.parse(process.env.SHARDID_LIVE);
test('live: a router and two nodes', { skip: !live && 'SHARDID_LIVE not set (test/tap/apps.pl sets it)' }, async (t) => {
  const pg = (await import('pg')).default;
  pg.types.setTypeParser(pg.types.builtins.INT8, BigInt);
  const m = new ShardMap({ router: live.router, nodes: live.nodes, retryDeadline: 5000 });
  const admin = async (node, sql) => {
    const c = new pg.Client(parseConninfo(live.nodes[node]));
    await c.connect();
    try { return (await c.query(sql)).rows; } finally { await c.end(); }
  };
  const insert = async (shard, client, body = 'live') => (await client.query(
    `INSERT INTO ${await m.schemaForShard(shard)}.posts (user_id, body) VALUES ($1, $2) RETURNING id`, [shard, body])).rows[0].id;
  try {
    await t.test('the map is the router\'s placement', async () => {
      const r = new pg.Client(parseConninfo(live.router));
      await r.connect();
      const { rows } = await r.query('SELECT shard, node FROM shardid.placement ORDER BY shard');
      await r.end();
      for (const { shard, node } of rows) assert.equal(await m.nodeForShard(shard), node);
      assert.deepEqual(await m.shards('a'), [0, 1, 2, 3, 4, 5, 6, 7]);
    });
    await t.test('insert and read back by ID', async () => {
      for (const shard of [2, 9]) {
        const id = await m.run(shard, (c) => insert(shard, c));
        assert.equal(typeof id, 'bigint');
        assert.ok(id > 2n ** 53n);
        assert.deepEqual([await m.shardOf(id), await m.nodeForId(id)], [shard, shard < 8 ? 'a' : 'b']);
        const rows = await m.run(await m.shardOf(id), async (c) => (await c.query(
          `SELECT id, body FROM ${await m.schemaForShard(shard)}.posts WHERE id = $1`, [id])).rows);
        assert.deepEqual(rows, [{ id, body: 'live' }]);
      }
    });
    await t.test('errors are thrown unchanged', async () => {
      const id = await m.run(2, (c) => insert(2, c));
      const retries = m.retries;
      await assert.rejects(m.run(2, (c) => c.query("INSERT INTO shard_0002.posts (id, user_id, body) VALUES ($1, 2, 'dup')", [id])),
        (err) => err.code === '23505');
      assert.equal(m.retries, retries);
      await assert.rejects(m.run(2, (c) => c.query('SELECT * FROM shard_0002.nope')), (err) => err.code === '42P01');
      // at most one more try, when the map was read less than minReloadGap before the error
      assert.ok(m.retries <= retries + 1);
      assert.equal(await m.run(2, async (c) => (await c.query('SELECT 1 AS one')).rows[0].one), 1);
    });
    await t.test('fanOut: every shard, in batches', async () => {
      const body = `fan-out js ${Date.now()}`;
      for (let shard = 0; shard < 16; shard++) await m.run(shard, (c) => insert(shard, c, body));
      // per shard: its rows, the transaction (its virtual xid), the locks this transaction
      // holds on shard tables and indexes, read-only or not
      const rows = await collect(m.fanOut(
        `SELECT p.user_id,
                (SELECT virtualxid FROM pg_locks WHERE locktype = 'virtualxid' AND pid = pg_backend_pid()) AS tx,
                (SELECT count(*) FROM pg_locks AS l JOIN pg_class AS c ON c.oid = l.relation
                  WHERE l.pid = pg_backend_pid() AND c.relnamespace::regnamespace::text LIKE 'shard\\_%%')::int AS locks,
                current_setting('transaction_read_only') AS ro
           FROM %s.posts AS p WHERE p.body = $1`, [body], { batchSize: 3 }));
      assert.deepEqual(rows.map(({ shard, row }) => [shard, row.user_id]), range(0, 16).map((s) => [s, BigInt(s)]));
      assert.deepEqual(new Set(rows.map(({ row }) => row.ro)), new Set(['on']));
      // a transaction is its node and its virtual xid: the two servers number
      // theirs alike, and may both hand out the same one
      const txs = new Map();
      for (const { shard, row } of rows) {
        const tx = `${await m.nodeForShard(shard)} ${row.tx}`;
        if (!txs.has(tx)) txs.set(tx, []);
        txs.get(tx).push([shard, row.locks]);
      }
      assert.deepEqual([...txs.values()].map((b) => b.map(([s]) => s)),
        [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9, 10], [11, 12, 13], [14, 15]]);
      // a table and its index per shard read, held until the batch's transaction ends
      for (const b of txs.values()) assert.deepEqual(b.map(([, n]) => n), b.map((_, i) => 2 * (i + 1)));
    });
    await t.test('fanOut: quoting, %%, read-only', async () => {
      const [{ shard, row }, ...more] = await collect(m.fanOut(
        "SELECT current_query() AS q, '100%%' AS pct, (SELECT count(*) FROM %s.posts) >= 0 AS ok", [], { shards: [9] }));
      assert.deepEqual([shard, row.pct, row.ok, more], [9, '100%', true, []]);
      assert.ok(row.q.includes('FROM "shard_0009".posts'), row.q); // node-postgres's escapeIdentifier
      const retries = m.retries;
      await assert.rejects(collect(m.fanOut("INSERT INTO %s.posts (id, user_id, body) VALUES (1, 1, 'x') RETURNING id", [], { shards: [1] })),
        (err) => err.code === '25006'); // a write refused in a read-only batch: not retried
      assert.equal(m.retries, retries);
      await assert.rejects(collect(m.fanOut('SELECT * FROM %s.nope', [], { shards: [1] })), (err) => err.code === '42P01');
      assert.ok(m.retries <= retries + 1);
    });
    await t.test('a frozen shard waits for the thaw', async () => {
      await admin('a', "SELECT shardid.freeze_shard_tables('shard_0003', 3, 'b')");
      const thaw = new Promise((resolve) => setTimeout(resolve, 400)).then(() => admin('a', "SELECT shardid.unfreeze_shard_tables('shard_0003')"));
      const retries = m.retries;
      const start = performance.now();
      const id = await m.run(3, (c) => insert(3, c, 'after the thaw'));
      await thaw;
      assert.ok(performance.now() - start >= 350);
      assert.ok(m.retries > retries);
      assert.equal(await m.shardOf(id), 3);
    });
    await t.test('frozen past the deadline', async () => {
      const m2 = new ShardMap({ router: live.router, nodes: live.nodes, retryDeadline: 500 });
      await admin('a', "SELECT shardid.freeze_shard_tables('shard_0004', 4, 'b')");
      try {
        const start = performance.now();
        await assert.rejects(m2.run(4, (c) => insert(4, c)), (err) => err.code === '25006' && /refuses writes for the cut-over/.test(err.message));
        assert.ok(performance.now() - start < 1500);
        assert.ok(m2.retries > 2);
        assert.equal(await m2.run(4, async (c) => (await c.query('SELECT count(*) >= 0 AS ok FROM shard_0004.posts')).rows[0].ok), true);
      } finally {
        await admin('a', "SELECT shardid.unfreeze_shard_tables('shard_0004')");
        await m2.close();
      }
    });
  } finally {
    await m.close();
  }
});
