// A writer through the JavaScript shard map, for test/tap/apps.pl: inserts
// into the given shards in turn until the stop file exists, reads every row
// back by its ID, and writes one line per acknowledged insert to the output
// file: "ID SHARD RETRIES MILLISECONDS". Any error but the shard map's own
// retries ends it with status 1. Its map is reloaded only when a moved
// shard's error asks for it (reloadInterval: 1 hour), so every move is seen
// as retries whatever the timing; a frozen shard is waited for up to a
// minute (retryDeadline).
//   node writer.mjs ROUTER NODES_JSON SHARDS STOP_FILE OUT_FILE
import { existsSync, openSync, writeSync } from 'node:fs';
import { ShardMap } from './shardid-router.mjs';

const [router, nodesJson, shardList, stop, out] = process.argv.slice(2);
const shards = shardList.split(',').map(Number);
const m = new ShardMap({ router, nodes: JSON.parse(nodesJson), reloadInterval: 3600000, retryDeadline: 60000 });
const f = openSync(out, 'w');
let n = 0;
while (!existsSync(stop)) {
  const shard = shards[n % shards.length];
  n += 1;
  const body = `js writer ${n}`;
  const schema = await m.schemaForShard(shard);
  const before = m.retries;
  const start = performance.now();
  const id = await m.run(shard, async (c) => (await c.query(
    `INSERT INTO ${schema}.posts (user_id, body) VALUES ($1, $2) RETURNING id`, [shard, body])).rows[0].id);
  writeSync(f, `${id} ${shard} ${m.retries - before} ${(performance.now() - start).toFixed(1)}\n`);
  const found = await m.run(await m.shardOf(id), async (c) => (await c.query(
    `SELECT body FROM ${await m.schemaForShard(await m.shardOf(id))}.posts WHERE id = $1`, [id])).rows);
  if (found.length !== 1 || found[0].body !== body) {
    console.error(`lookup by ID ${id} on node ${await m.nodeForId(id)} found ${JSON.stringify(found)}`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 2));
}
await m.close();
console.log(`js writer: ${n} inserts, ${m.retries} retries, ${m.reloads} reloads of the map`);
