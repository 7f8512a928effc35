// shardid-router.mjs — route by logical shard from the application, without PL/Proxy.
//
// A ShardMap reads the placement (logical shard -> node name) from the router
// database's shardid.placement and the layout from shardid.layout(); the node
// connection settings come from the application's own configuration, never
// from the database. It keeps one pg.Pool per node (node-postgres; Debian:
// node-pg) and runs a function in one transaction on the node of a shard,
// retrying what a shard move makes fail:
//   - 25006 (read_only_sql_transaction) while the shard is frozen for a
//     move's cut-over: retried after a short back-off, until retryDeadline;
//   - the shard found moved (its retired copy refuses writes, 25006 "moved
//     to node", or its schema is gone, 42P01/3F000): the map is reloaded
//     and the function runs again on the new node;
//   - anything else is thrown unchanged, as is the last error once the
//     deadline has passed.
// The map is reloaded on those errors and every reloadInterval ms, never per
// call. If the router cannot be reached for a reload, the last map is kept.
//
//   import { ShardMap } from './shardid-router.mjs';
//   const m = new ShardMap({ router: 'host=r dbname=app', nodes: { a: 'host=a dbname=app', b: 'postgres://b/app' } });
//   await m.nodeForShard(5); await m.nodeForId('4035735874804122625');   // 'a'
//   const id = await m.run(5, async (client) =>
//     (await client.query('INSERT INTO shard_0005.photos (caption) VALUES ($1) RETURNING id', ['dog'])).rows[0].id);
//   await m.close();
//
// The function passed to run() may run more than once: it must do nothing but
// work on the client it is given.
//
// fanOut() reads many shards without holding every shard's locks at once: the
// query runs once per shard, %s standing for the shard's schema, grouped by
// node, one read-only transaction per batch of shards:
//   for await (const { shard, row } of m.fanOut('SELECT id, caption FROM %s.photos WHERE user_id = $1', [19])) ... Connection settings are libpq key=value
// strings (host, port, dbname, user, password, application_name, options,
// connect_timeout), postgres:// URLs, or node-postgres config objects.

import { asId } from './shardid-ids.mjs';

const GONE = new Set(['42P01', '3F000']); // undefined_table, invalid_schema_name
const READ_ONLY = '25006';

export class ShardNotPlaced extends Error {
  constructor(message) { super(message); this.name = 'ShardNotPlaced'; }
}

export class UnknownNode extends Error {
  constructor(message) { super(message); this.name = 'UnknownNode'; }
}

/** The SQLSTATE of a database error (node-postgres: .code), or of the error it wraps (.cause, .original, .parent). */
export function sqlstateOf(err) {
  const seen = new Set();
  while (err && typeof err === 'object' && !seen.has(err)) {
    seen.add(err);
    if (typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code)) return err.code;
    err = err.original ?? err.parent ?? err.driverError ?? err.cause;
  }
  return null;
}

function messageOf(err) {
  const seen = new Set();
  while (err && typeof err === 'object' && !seen.has(err)) {
    seen.add(err);
    if (typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code)) return String(err.message ?? '');
    err = err.original ?? err.parent ?? err.driverError ?? err.cause;
  }
  return '';
}

/** 'frozen' (retry after a back-off), 'moved' (reload the map, retry on the new node) or null (throw it). */
export function moveErrorKind(err) {
  const state = sqlstateOf(err);
  // shardid_internal._refuse_retired_write(): "shard N moved to node X: ... is its retired copy"
  if (state === READ_ONLY) return messageOf(err).includes('retired copy') ? 'moved' : 'frozen';
  if (GONE.has(state)) return 'moved';
  return null;
}

const CONNINFO_KEYS = {
  host: 'host', hostaddr: 'host', port: 'port', dbname: 'database', user: 'user', password: 'password',
  application_name: 'application_name', options: 'options', connect_timeout: 'connectionTimeoutMillis',
};

/** A libpq key=value connect string as a node-postgres config object (a postgres:// URL as {connectionString}). */
export function parseConninfo(conninfo) {
  if (typeof conninfo === 'object' && conninfo !== null) return { ...conninfo };
  if (typeof conninfo !== 'string') throw new TypeError(`connection settings are a string or an object, not ${typeof conninfo}`);
  if (/^postgres(ql)?:\/\//.test(conninfo)) return { connectionString: conninfo };
  const config = {};
  const re = /\s*([A-Za-z_]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|((?:[^\s'\\]|\\.)*))/y;
  let pos = 0;
  while (pos < conninfo.length) {
    if (/^\s*$/.test(conninfo.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(conninfo);
    if (!m) throw new SyntaxError(`cannot parse connect string ${JSON.stringify(conninfo)} at position ${pos + 1}`);
    pos = re.lastIndex;
    const key = m[1];
    const value = (m[2] ?? m[3]).replace(/\\(.)/g, '$1');
    const to = CONNINFO_KEYS[key];
    if (!to) throw new SyntaxError(`connect string key ${JSON.stringify(key)} is not supported here (${Object.keys(CONNINFO_KEYS).join(', ')})`);
    if (to === 'port') config.port = Number(value);
    else if (to === 'connectionTimeoutMillis') config.connectionTimeoutMillis = Number(value) * 1000;
    else config[to] = value;
  }
  return config;
}

/** The text of a fanOut() query split at its %s (the shard's schema), %% made a literal %. */
export function fanOutPieces(query) {
  if (typeof query !== 'string') throw new TypeError(`a fanOut() query is a string, not ${typeof query}`);
  const pieces = [];
  let piece = '';
  let start = 0;
  for (const m of query.matchAll(/%[%s]/g)) {
    piece += query.slice(start, m.index);
    start = m.index + 2;
    if (m[0] === '%%') {
      piece += '%';
    } else {
      pieces.push(piece);
      piece = '';
    }
  }
  pieces.push(piece + query.slice(start));
  if (pieces.length < 2) {
    throw new SyntaxError('a fanOut() query names the shard\'s schema as %s (e.g. SELECT ... FROM %s.photos); this one has no %s');
  }
  return pieces;
}

async function defaultConnect(conninfo) {
  const pg = (await import('pg')).default;
  const client = new pg.Client(parseConninfo(conninfo));
  await client.connect();
  // a broken router session is made again at the next reload
  client.on('error', () => { client.broken = true; });
  return client;
}

async function defaultPool(conninfo, name, options) {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ ...parseConninfo(conninfo), ...options });
  pool.on('error', () => {}); // an idle client lost: the pool drops it
  return pool;
}

// fn(client) in one transaction on a client of pool. A client whose
// transaction could not be ended (its connection is lost) is not reused.
async function runInPool(pool, fn) {
  const client = await pool.connect();
  let broken = false;
  const ends = async (sql) => {
    try {
      await client.query(sql);
    } catch (err) {
      broken = broken || !sqlstateOf(err);
      throw err;
    }
  };
  try {
    await ends('BEGIN');
    let result;
    try {
      result = await fn(client);
    } catch (err) {
      await ends('ROLLBACK').catch(() => {});
      throw err;
    }
    await ends('COMMIT');
    return result;
  } finally {
    client.release(broken);
  }
}

function checkShardType(shard) {
  if (typeof shard === 'bigint') shard = Number(shard);
  if (typeof shard !== 'number' || !Number.isSafeInteger(shard)) {
    throw new TypeError(`a shard is an integer Number or a BigInt, not ${typeof shard === 'number' ? shard : typeof shard}`);
  }
  return shard;
}

export class ShardMap {
  /**
   * router: the router database (connect string or config); nodes: {name: connect string or config}.
   * reloadInterval: ms between reloads when no error asks for one; retryDeadline: ms run() keeps
   * retrying a frozen or moving shard; backoff: [first, longest] pause in ms, doubling with jitter;
   * minReloadGap: reloads asked for by errors are at most this frequent (ms); pool: pg.Pool options
   * (max, idleTimeoutMillis, ...). connect, poolFactory, sleep, clock: for tests.
   */
  constructor({ router, nodes, reloadInterval = 30000, retryDeadline = 10000, backoff = [5, 250],
    minReloadGap = 20, pool = {}, connect = defaultConnect, poolFactory = defaultPool,
    sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)), clock = () => performance.now() } = {}) {
    if (nodes === null || typeof nodes !== 'object' || Object.keys(nodes).length === 0) {
      throw new TypeError('nodes is a non-empty object {node name: connect string or config}');
    }
    for (const settings of Object.values(nodes)) parseConninfo(settings); // fail early on a bad one
    this.router = router;
    this.nodes = { ...nodes };
    Object.assign(this, { reloadInterval, retryDeadline, backoff, minReloadGap });
    this._poolOptions = pool;
    this._connect = connect;
    this._poolFactory = poolFactory;
    this._sleep = sleep;
    this._clock = clock;
    this._routerClient = null;
    this._pools = new Map(); // node -> Promise<pool>
    this._placement = new Map(); // shard -> node
    this._moving = new Set();
    this._layout = null;
    this._loadedAt = -Infinity;
    this._loading = null; // the reload in progress, shared by concurrent callers
    this._closed = false;
    this.reloads = 0;
    this.retries = 0;
  }

  /** Read the placement and layout from the router now (throws if it cannot). */
  reload() {
    if (!this._loading) {
      this._loading = this._reloadOnce().finally(() => { this._loading = null; });
    }
    return this._loading;
  }

  async _reloadOnce() {
    if (this._closed) throw new Error('this ShardMap is closed');
    try {
      if (!this._routerClient || this._routerClient.broken) this._routerClient = await this._connect(this.router);
      const client = this._routerClient;
      const layout = (await client.query('SELECT shard_bits, seq_bits, max_shard FROM shardid.layout()')).rows[0];
      const { rows } = await client.query('SELECT shard, node, moving_to IS NOT NULL AS moving FROM shardid.placement');
      this._layout = { shardBits: BigInt(layout.shard_bits), seqBits: BigInt(layout.seq_bits), maxShard: Number(layout.max_shard) };
      this._placement = new Map(rows.map((r) => [Number(r.shard), r.node]));
      this._moving = new Set(rows.filter((r) => r.moving).map((r) => Number(r.shard)));
      this._loadedAt = this._clock();
      this.reloads += 1;
    } catch (err) {
      const client = this._routerClient;
      this._routerClient = null;
      if (client) await Promise.resolve(client.end()).catch(() => {});
      throw err;
    }
  }

  // Reload if the interval has passed (force: at most every minReloadGap);
  // keep the last map if the router cannot be reached, once there is one.
  async _refresh(force) {
    const age = this._clock() - this._loadedAt;
    if (age < (force ? this.minReloadGap : this.reloadInterval)) return;
    try {
      await this.reload();
    } catch (err) {
      if (this._closed || !this._layout) throw err;
      console.warn(`shardid-router: keeping the placement of ${(age / 1000).toFixed(1)} s ago: ${err.message}`);
    }
  }

  _lookup(shard) {
    const node = this._placement.get(shard);
    if (node === undefined) throw new ShardNotPlaced(`shard ${shard} is not placed on any node`);
    if (!Object.hasOwn(this.nodes, node)) {
      throw new UnknownNode(`shard ${shard} is placed on node ${JSON.stringify(node)}, which is not in this application's nodes (${Object.keys(this.nodes).sort().join(', ')})`);
    }
    return node;
  }

  _checkShard(shard) {
    shard = checkShardType(shard);
    if (shard < 0 || shard > this._layout.maxShard) throw new RangeError(`shard ${shard} is out of range: 0..${this._layout.maxShard}`);
    return shard;
  }

  /** The name of the node holding a logical shard (a Number or a BigInt). */
  async nodeForShard(shard) {
    checkShardType(shard);
    await this._refresh(false);
    shard = this._checkShard(shard);
    if (!this._placement.has(shard)) await this._refresh(true); // placed since the last reload?
    return this._lookup(shard);
  }

  /** The logical shard inside an ID (BigInt, decimal string or safe-integer Number), under the router's layout. */
  async shardOf(id) {
    await this._refresh(false);
    const { shardBits, seqBits } = this._layout;
    return Number((asId(id) >> seqBits) & ((1n << shardBits) - 1n));
  }

  /** The name of the node holding the shard of an ID. */
  async nodeForId(id) {
    return this.nodeForShard(await this.shardOf(id));
  }

  /** The schema name create_shard() gives a shard: shard_0005 (wider with more than 9999 shards). */
  async schemaForShard(shard) {
    await this._refresh(false);
    return this._schemaName(this._checkShard(shard));
  }

  _schemaName(shard) {
    return `shard_${String(shard).padStart(Math.max(4, String(this._layout.maxShard).length), '0')}`;
  }

  /** The placed shards (of one node), in order. */
  async shards(node) {
    await this._refresh(false);
    return [...this._placement].filter(([, n]) => node === undefined || n === node).map(([s]) => s).sort((x, y) => x - y);
  }

  /** The pg.Pool of a node (made on first use). */
  pool(node) {
    if (!Object.hasOwn(this.nodes, node)) return Promise.reject(new UnknownNode(`node ${JSON.stringify(node)} is not in this application's nodes`));
    if (this._closed) return Promise.reject(new Error('this ShardMap is closed'));
    if (!this._pools.has(node)) this._pools.set(node, this._poolFactory(this.nodes[node], node, this._poolOptions));
    return this._pools.get(node);
  }

  /** fn(client) in one transaction on the node of shard, retried while the shard is frozen or moving. */
  async run(shard, fn) {
    checkShardType(shard);
    return this.retry(shard, async (node) => runInPool(await this.pool(node), fn));
  }

  /** attempt(node), called with the shard's node and again on move errors: run()'s policy for
   * callers that manage their own connections (ORMs). */
  async retry(shard, attempt) {
    const deadline = this._clock() + this.retryDeadline;
    let pause = this.backoff[0];
    for (;;) {
      const node = await this.nodeForShard(shard);
      shard = checkShardType(shard);
      const started = this._clock();
      try {
        return await attempt(node);
      } catch (err) {
        const kind = moveErrorKind(err);
        if (kind === null || this._clock() >= deadline) throw err;
        await this._refresh(true);
        const movedTo = this._placement.get(shard);
        // a map read after the error shows no move: not ours to retry
        if (movedTo === node && kind === 'moved' && !this._moving.has(shard) && this._loadedAt >= started) throw err;
        this.retries += 1;
        if (movedTo !== node) continue; // at once, on the new node
        if (kind === 'moved' && !this._moving.has(shard)) {
          await this._sleep(this.minReloadGap); // the map predates the attempt: retry once it can be read
          continue;
        }
        await this._sleep(Math.min(pause * (0.5 + Math.random()), Math.max(0, deadline - this._clock())));
        pause = Math.min(pause * 2, this.backoff[1]);
      }
    }
  }

  /**
   * Run query on each shard (default: every placed shard) and yield { shard, row } for each row,
   * as the rows arrive (an async iterator: for await ... of). query: SQL text where each %s
   * stands for the shard's schema, quoted by node-postgres's escapeIdentifier, never pasted in;
   * %% is a literal %. params: the values of $1, $2, ..., the same for every shard. The shards
   * are grouped by node (nodes in name order, shards in order within a node) and run in batches
   * of batchSize shards, one READ ONLY transaction per batch on one pooled client, so a
   * transaction holds the locks of at most batchSize shards' tables. A shard found moved (its
   * schema gone, 3F000 or 42P01, and the placement read again says so) runs again on its new
   * node, within retryDeadline as run() does; the shards already yielded are not run again. Any
   * other error is thrown; the rows yielded before it stay yielded. Leaving the loop early
   * (break) ends the batch's transaction and returns its client to the pool. The query, params
   * and batchSize are checked at the call, the shards when the iteration starts.
   */
  fanOut(query, params = [], { shards, batchSize = 64 } = {}) {
    const pieces = fanOutPieces(query);
    if (!Array.isArray(params)) throw new TypeError('fanOut() params are an array (the values of $1, $2, ...)');
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize is a positive integer, not ${batchSize}`);
    if (shards !== undefined && shards !== null) shards = [...shards].map(checkShardType);
    return this._fanOut(pieces, params, shards, batchSize);
  }

  async *_fanOut(pieces, params, shards, batchSize) {
    let list;
    if (shards === undefined || shards === null) {
      list = await this.shards();
    } else {
      await this._refresh(false);
      list = [...new Set(shards.map((s) => this._checkShard(s)))].sort((x, y) => x - y);
      for (const shard of list) await this.nodeForShard(shard); // placed on a node of ours
    }
    const done = new Set();
    const deadlines = new Map();
    const pauses = new Map();
    for (;;) {
      const todo = new Map(); // node -> shards
      for (const shard of list) {
        if (done.has(shard)) continue;
        const node = await this.nodeForShard(shard);
        if (!todo.has(node)) todo.set(node, []);
        todo.get(node).push(shard);
      }
      if (todo.size === 0) return;
      let running = null; // { shard, node, started } while a shard's query is sent
      try {
        for (const node of [...todo.keys()].sort()) {
          const nodeShards = todo.get(node);
          for (let i = 0; i < nodeShards.length; i += batchSize) {
            const client = await (await this.pool(node)).connect();
            let broken = false;
            let open = false;
            const query = async (text, values) => {
              try {
                return await client.query(text, values);
              } catch (err) {
                broken = broken || !sqlstateOf(err); // the connection, not the statement
                throw err;
              }
            };
            try {
              await query('BEGIN READ ONLY');
              open = true;
              for (const shard of nodeShards.slice(i, i + batchSize)) {
                running = { shard, node, started: this._clock() };
                const result = await query(pieces.join(client.escapeIdentifier(this._schemaName(shard))), params);
                running = null;
                done.add(shard);
                for (const row of result.rows) yield { shard, row };
              }
              open = false;
              await query('COMMIT');
            } finally {
              if (open) await query('ROLLBACK').catch(() => {});
              client.release(broken);
            }
          }
        }
        return;
      } catch (err) {
        if (!running || !(await this._fanOutRetry(err, running, deadlines, pauses))) throw err;
      }
    }
  }

  // After fanOut()'s query failed on a shard: true to go on (the map read again, after a pause
  // if need be), false to throw. Only a missing schema or table can be a move: a read is never
  // refused by a freeze, so 25006 here is the query writing in a READ ONLY batch.
  async _fanOutRetry(err, { shard, node, started }, deadlines, pauses) {
    if (!GONE.has(sqlstateOf(err))) return false;
    if (!deadlines.has(shard)) deadlines.set(shard, started + this.retryDeadline);
    const deadline = deadlines.get(shard);
    if (this._clock() >= deadline) return false;
    await this._refresh(true);
    const movedTo = this._placement.get(shard);
    // a map read after the error shows no move: not ours to retry
    if (movedTo === node && !this._moving.has(shard) && this._loadedAt >= started) return false;
    this.retries += 1;
    if (movedTo !== node) return true; // at once, on the new node
    if (!this._moving.has(shard)) {
      await this._sleep(this.minReloadGap); // the map predates the attempt: retry once it can be read
      return true;
    }
    const pause = pauses.get(shard) ?? this.backoff[0];
    await this._sleep(Math.min(pause * (0.5 + Math.random()), Math.max(0, deadline - this._clock())));
    pauses.set(shard, Math.min(pause * 2, this.backoff[1]));
    return true;
  }

  /** Close every pool and the router connection. */
  async close() {
    this._closed = true;
    const pools = [...this._pools.values()];
    this._pools.clear();
    const router = this._routerClient;
    this._routerClient = null;
    await Promise.all(pools.map(async (p) => (await p).end()));
    if (router) await router.end();
  }
}
