// The JavaScript recipes of docs/applications.md, tested: each library
// inserts into public.photos (id DEFAULT shardid.next_id(5, ...)), reads the
// row back by its ID, and the ID it hands back is exact (the server's
// id::text) and decodes to shard 5; each trap the page warns about is shown
// to happen. test/tap/orm_recipes.pl makes the table and runs it with the
// versions pinned in package-lock.json.
//   PGHOST=... PGPORT=... PGUSER=... PGDATABASE=... node --test recipes.test.mjs
import 'reflect-metadata';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { decode } from '../shardid-ids.mjs';

const cfg = { host: process.env.PGHOST, port: Number(process.env.PGPORT), user: process.env.PGUSER, database: process.env.PGDATABASE };
const raw = new pg.Pool(cfg);
after(() => raw.end());

// The ID of the row with this caption, as the server spells it.
async function exact(caption) {
  const { rows } = await raw.query('SELECT id::text AS id FROM public.photos WHERE caption = $1', [caption]);
  assert.equal(rows.length, 1, `one row ${caption}`);
  return rows[0].id;
}
// A row whose ID a Number cannot hold: seq 1, made by the server (an ID the
// generator hands out first in its millisecond, seq 0, happens to be exact).
async function inexactRow(caption) {
  const { rows } = await raw.query(
    "INSERT INTO public.photos (id, caption) VALUES (shardid.make_id(clock_timestamp() - interval '1 day', 5, 1), $1) RETURNING id::text AS id", [caption]);
  assert.notEqual(BigInt(Number(rows[0].id)), BigInt(rows[0].id));
  return rows[0].id;
}
function assertShard5(id) {
  assert.equal(decode(id).shard, 5n, `${id} decodes to shard 5`);
}

test('node-postgres: strings by default, BigInt with a parser; parseInt rounds', async () => {
  const client = new pg.Client(cfg);
  await client.connect();
  try {
    const { rows } = await client.query("INSERT INTO public.photos (caption) VALUES ('pg') RETURNING id");
    const id = rows[0].id;
    assert.equal(typeof id, 'string');
    assert.equal(id, await exact('pg'));
    assertShard5(id);
    const back = await client.query('SELECT caption FROM public.photos WHERE id = $1', [id]);
    assert.equal(back.rows[0].caption, 'pg');
  } finally {
    await client.end();
  }
  const big = new pg.Client({ ...cfg, types: { getTypeParser: (oid, f) => (oid === 20 ? BigInt : pg.types.getTypeParser(oid, f)) } });
  await big.connect();
  const bad = new pg.Client({ ...cfg, types: { getTypeParser: (oid, f) => (oid === 20 ? parseInt : pg.types.getTypeParser(oid, f)) } });
  await bad.connect();
  try {
    const id = (await big.query("INSERT INTO public.photos (caption) VALUES ('pg bigint') RETURNING id")).rows[0].id;
    assert.equal(typeof id, 'bigint');
    assert.equal(id.toString(), await exact('pg bigint'));
    assert.equal((await big.query('SELECT caption FROM public.photos WHERE id = $1', [id])).rows[0].caption, 'pg bigint');
    // the trap: setTypeParser(20, parseInt) rounds; the decoder refuses the Number
    const id2 = await inexactRow('pg parseInt');
    const rounded = (await bad.query("SELECT id FROM public.photos WHERE caption = 'pg parseInt'")).rows[0].id;
    assert.equal(typeof rounded, 'number');
    assert.notEqual(BigInt(rounded).toString(), id2);
    assert.throws(() => decode(rounded), /not a safe integer/);
  } finally {
    await big.end();
    await bad.end();
  }
});

test('knex: returning("id") gives exact strings', async () => {
  const { default: knex } = await import('knex');
  const db = knex({ client: 'pg', connection: cfg });
  try {
    const [row] = await db('public.photos').insert({ caption: 'knex' }).returning('id');
    assert.equal(row.id, await exact('knex'));
    assertShard5(row.id);
    assert.equal((await db('public.photos').where({ id: row.id }).first()).caption, 'knex');
    const many = await db('public.photos').insert([{ caption: 'knex 1' }, { caption: 'knex 2' }]).returning('id');
    assert.deepEqual(many.map((r) => r.id), [await exact('knex 1'), await exact('knex 2')]);
  } finally {
    await db.destroy();
  }
});

test('kysely: returning("id") gives exact strings', async () => {
  const { Kysely, PostgresDialect } = await import('kysely');
  const db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool(cfg) }) });
  try {
    const { id } = await db.insertInto('photos').values({ caption: 'kysely' }).returning('id').executeTakeFirstOrThrow();
    assert.equal(id, await exact('kysely'));
    assertShard5(id);
    const back = await db.selectFrom('photos').select('caption').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(back.caption, 'kysely');
  } finally {
    await db.destroy();
  }
});

test('sequelize: BIGINT with autoIncrement: true; without it, NULL is sent', async () => {
  const { Sequelize, DataTypes } = await import('sequelize');
  const sequelize = new Sequelize({ dialect: 'postgres', host: cfg.host, port: cfg.port, username: cfg.user, database: cfg.database, logging: false });
  try {
    const Photo = sequelize.define('Photo', {
      id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true }, // the DEFAULT makes it; RETURNING reads it
      caption: DataTypes.TEXT,
    }, { tableName: 'photos', timestamps: false });
    const photo = await Photo.create({ caption: 'sequelize' });
    assert.equal(photo.id, await exact('sequelize'));
    assertShard5(photo.id);
    assert.equal((await Photo.findByPk(photo.id)).caption, 'sequelize');
    const bulk = await Photo.bulkCreate([{ caption: 'sequelize 1' }, { caption: 'sequelize 2' }], { returning: true });
    assert.deepEqual(bulk.map((p) => p.id), [await exact('sequelize 1'), await exact('sequelize 2')]);
    // the trap: without autoIncrement, sequelize sends id NULL
    const NoAuto = sequelize.define('NoAuto', { id: { type: DataTypes.BIGINT, primaryKey: true }, caption: DataTypes.TEXT },
      { tableName: 'photos', timestamps: false });
    await assert.rejects(NoAuto.create({ caption: 'sequelize null' }),
      (err) => err.original?.code === '23502' && /null value in column "id"/.test(err.message));
  } finally {
    await sequelize.close();
  }
});

test('typeorm: generated "increment", synchronize off, parseInt8 off', async () => {
  const { default: typeorm } = await import('typeorm');
  const { DataSource, EntitySchema } = typeorm;
  const schema = (tableName) => new EntitySchema({
    name: `Photo_${tableName}`, tableName,
    columns: { id: { type: 'bigint', primary: true, generated: 'increment' }, caption: { type: 'text', nullable: true } },
  });
  const base = { type: 'postgres', host: cfg.host, port: cfg.port, username: cfg.user, database: cfg.database, logging: false };
  const ds = await new DataSource({ ...base, entities: [schema('photos')], synchronize: false }).initialize();
  try {
    const repo = ds.getRepository('Photo_photos');
    const saved = await repo.save({ caption: 'typeorm' });
    assert.equal(typeof saved.id, 'string');
    assert.equal(saved.id, await exact('typeorm'));
    assertShard5(saved.id);
    assert.equal((await repo.findOneBy({ id: saved.id })).caption, 'typeorm');
  } finally {
    await ds.destroy();
  }
  // the trap: parseInt8 turns the ID into a Number, then typeorm makes it a *string* again: rounded, undetectable
  const ds8 = await new DataSource({ ...base, entities: [schema('photos')], synchronize: false, parseInt8: true }).initialize();
  try {
    const repo = ds8.getRepository('Photo_photos');
    // save() hands back the generated ID as a string made from the rounded
    // Number: its shortest decimal spelling, which is the ID's own digits only
    // by chance (a few IDs in a hundred), so rows are saved in batches of 20
    // until one ID's string changes.
    let saved;
    let id;
    let caption;
    for (let batch = 0; batch < 10 && saved === undefined; batch++) {
      const rows = await repo.save(Array.from({ length: 20 }, (_, i) => ({ caption: `typeorm parseInt8 ${batch}.${i}` })));
      for (let i = 0; i < rows.length && saved === undefined; i++) {
        const candidate = await exact(`typeorm parseInt8 ${batch}.${i}`);
        if (String(Number(candidate)) !== candidate) [saved, id, caption] = [rows[i], candidate, `typeorm parseInt8 ${batch}.${i}`];
      }
    }
    assert.notEqual(saved, undefined, 'no ID of 200 changed as a Number');
    assert.equal(typeof saved.id, 'string');
    assert.notEqual(saved.id, id);
    assert.doesNotThrow(() => decode(saved.id)); // a rounded string decodes without complaint
    // and a lookup by it misses the saved row: it finds nothing, or, where the
    // rounded string happens to spell another ID of the millisecond, that row
    const found = await repo.findOneBy({ id: saved.id });
    if (found !== null) assert.notEqual(found.caption, caption);
    // reads give a rounded Number, which the decoder refuses
    await inexactRow('typeorm parseInt8 read');
    const read = (await repo.findOneBy({ caption: 'typeorm parseInt8 read' })).id;
    assert.equal(typeof read, 'number');
    assert.throws(() => decode(read), /not a safe integer/);
  } finally {
    await ds8.destroy();
  }
  // the trap: synchronize replaces the shardid DEFAULT of photos_sync with a sequence of its own
  const sync = await new DataSource({ ...base, entities: [schema('photos_sync')], synchronize: true }).initialize();
  await sync.destroy();
  const { rows } = await raw.query("SELECT pg_get_expr(d.adbin, d.adrelid) AS def FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid = 'public.photos_sync'::regclass AND a.attname = 'id'");
  assert.ok(rows.length === 0 || !/shardid\.next_id/.test(rows[0].def), `photos_sync id default after synchronize: ${rows[0]?.def}`);
});

test('drizzle: bigint mode "bigint"; mode "number" rounds and finds nothing', async () => {
  const { drizzle } = await import('drizzle-orm/node-postgres');
  const { pgTable, bigint, text } = await import('drizzle-orm/pg-core');
  const { eq } = await import('drizzle-orm');
  const pool = new pg.Pool(cfg);
  const db = drizzle(pool);
  try {
    const photos = pgTable('photos', { id: bigint('id', { mode: 'bigint' }).primaryKey(), caption: text('caption') });
    const [row] = await db.insert(photos).values({ caption: 'drizzle' }).returning({ id: photos.id });
    assert.equal(typeof row.id, 'bigint');
    assert.equal(row.id.toString(), await exact('drizzle'));
    assertShard5(row.id);
    const back = await db.select().from(photos).where(eq(photos.id, row.id));
    assert.equal(back[0].caption, 'drizzle');
    // the trap: mode "number" rounds the ID; a lookup by it finds nothing
    const asNumber = pgTable('photos', { id: bigint('id', { mode: 'number' }).primaryKey(), caption: text('caption') });
    const id = await inexactRow('drizzle number');
    const [r2] = await db.select().from(asNumber).where(eq(asNumber.caption, 'drizzle number'));
    assert.equal(typeof r2.id, 'number');
    assert.notEqual(BigInt(r2.id).toString(), id);
    assert.equal((await db.select().from(asNumber).where(eq(asNumber.id, r2.id))).length, 0);
  } finally {
    await pool.end();
  }
});
