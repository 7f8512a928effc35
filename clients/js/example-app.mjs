import pg from 'pg'; // Debian: node-pg
import { decode, fromShortcode, toShortcode } from './shardid-ids.mjs';

// bigint columns arrive as strings; make them BigInt, never Number (2^53)
pg.types.setTypeParser(pg.types.builtins.INT8, BigInt);

async function createPhoto(client, caption) {
  // the ID comes from the column DEFAULT (shardid.next_id); RETURNING hands it back
  const { rows } = await client.query(
    'INSERT INTO public.photos (caption) VALUES ($1) RETURNING id', [caption]);
  const id = rows[0].id;
  const { time, shard } = decode(id); // decode(id, { epochMs, shardBits, seqBits }) for a configured layout
  return {
    id: id.toString(), // a string: JSON.stringify refuses BigInt, and JSON numbers lose digits
    createdAt: time.toISOString(),
    shard: Number(shard),
    url: `/p/${toShortcode(id)}`,
  };
}

async function getPhoto(client, code) {
  let id;
  try {
    id = fromShortcode(code);
  } catch {
    return null; // not a short code: 404
  }
  const { rows } = await client.query('SELECT caption FROM public.photos WHERE id = $1', [id]);
  return rows.length ? { id: id.toString(), caption: rows[0].caption } : null;
}

const client = new pg.Client(); // PGHOST, PGDATABASE, ... from the environment
await client.connect();
try {
  const photo = await createPhoto(client, 'dog');
  console.log(JSON.stringify(photo));
  console.log(JSON.stringify(await getPhoto(client, photo.url.slice('/p/'.length))));
} finally {
  await client.end();
}
