// Unit tests of shardid-router.mjs with a fake router, fake pools and a fake
// clock: no server. test/e2e/apps.sh runs it against real servers and through
// an online move.
//   node --test shardid-router.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShardMap, ShardNotPlaced, UnknownNode, moveErrorKind, parseConninfo, sqlstateOf } from './shardid-router.mjs';

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

// Against a router and two nodes (test/e2e/apps.sh): shards 0-7 on a, 8-15 on
// b, each with a table posts (id, user_id, body).
const live = process.env.SHARDID_LIVE && JSON.parse(process.env.SHARDID_LIVE);
test('live: a router and two nodes', { skip: !live && 'SHARDID_LIVE not set (test/e2e/apps.sh sets it)' }, async (t) => {
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
    await t.test('a frozen shard waits for the thaw', async () => {
      await admin('a', "SELECT shardid.freeze_shard_tables('shard_0003', 3, 'b')");
      const thaw = new Promise((resolve) => setTimeout(resolve, 400)).then(() => admin('a', "SELECT shardid.thaw_shard_tables('shard_0003')"));
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
        await admin('a', "SELECT shardid.thaw_shard_tables('shard_0004')");
        await m2.close();
      }
    });
  } finally {
    await m.close();
  }
});
