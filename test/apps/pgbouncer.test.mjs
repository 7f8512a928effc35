// Prepared statements per client through pgbouncer in transaction mode,
// for test/tap/pgbouncer.pl: node-postgres' unnamed statements work on
// every pgbouncer; a named query (a named prepared statement) works from
// pgbouncer 1.21 on with max_prepared_statements and fails before it.
//   BOUNCER_HOST=... BOUNCER_PORT=... NAMED_OK=0|1 node --test pgbouncer.test.mjs
// (in a directory with node-postgres as node_modules/pg)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';

const namedOk = process.env.NAMED_OK === '1';
const pool = new pg.Pool({
  host: process.env.BOUNCER_HOST, port: Number(process.env.BOUNCER_PORT), user: process.env.PGUSER, database: 'app', max: 8,
});
pool.on('error', () => {});
const insert = (name) => pool.query({
  name, text: 'INSERT INTO shard_0002.photos (caption) VALUES ($1) RETURNING id', values: [`pg ${name ?? 'unnamed'}`],
});

test('node-postgres through pgbouncer', async (t) => {
  try {
    await t.test('unnamed statements', async () => {
      const unnamed = await Promise.all([...Array(400).keys()].map(() => insert(undefined)));
      assert.equal(unnamed.length, 400);
      console.log(`node-postgres unnamed statements: 400 inserts from 8 clients, ids like ${unnamed[0].rows[0].id}`);
    });
    await t.test('named statements', async () => {
      const results = await Promise.allSettled([...Array(200).keys()].map(() => insert('photo_insert')));
      const failed = results.filter((r) => r.status === 'rejected').map((r) => r.reason.code);
      if (namedOk) {
        assert.deepEqual(failed, []);
        console.log('node-postgres named statements work with max_prepared_statements (pgbouncer >= 1.21)');
      } else {
        assert.ok(failed.length > 0, 'named statements failed');
        assert.deepEqual(failed.filter((c) => c !== '26000' && c !== '42P05'), []);
        console.log(`node-postgres named statements fail before pgbouncer 1.21 (${failed.length} of 200: ${[...new Set(failed)]})`);
      }
    });
  } finally {
    await pool.end();
  }
});
