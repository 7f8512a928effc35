// Tests of shardid-ids.mjs: fixed vectors, and (with SHARDID_FIXTURE set to a
// JSON file written by test/tap/clients.pl) IDs and codes made by a real server.
//   node --test
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decode, timeToId, toShortcode, fromShortcode } from './shardid-ids.mjs';

// The README's quick-start ID: made by shard 1 at 2026-11-22 03:13:48.171 UTC.
const README_ID = 4035735874804122625n;

test('decode, default layout', () => {
  assert.deepEqual(decode(README_ID), { time: new Date('2026-11-22T03:13:48.171Z'), shard: 1n, seq: 1n });
  assert.deepEqual(decode('4035735874804122625'), decode(README_ID));
  assert.deepEqual(decode(0n), { time: new Date('2011-08-24T21:07:01.721Z'), shard: 0n, seq: 0n });
  assert.deepEqual(decode((1n << 63n) - 1n), { time: new Date('2046-06-27T17:00:49.496Z'), shard: 8191n, seq: 1023n });
  assert.deepEqual(decode(1025), { time: new Date('2011-08-24T21:07:01.721Z'), shard: 1n, seq: 1n });
});

test('decode, configured layout', () => {
  const layout = { epochMs: Date.UTC(2024, 0, 1), shardBits: 12, seqBits: 11 };
  const id = (5000n << 23n) | (4095n << 11n) | 2047n;
  assert.deepEqual(decode(id, layout), { time: new Date('2024-01-01T00:00:05Z'), shard: 4095n, seq: 2047n });
  // a partial layout takes the rest from the default (13 shard bits, 10 seq bits)
  const d = decode(id, { epochMs: Date.UTC(2024, 0, 1) });
  assert.deepEqual([d.shard, d.seq], [8191n, 1023n]);
});

test('decode refuses what is not an ID', () => {
  assert.throws(() => decode(4035735874804122625), RangeError); // a Number that lost digits
  assert.throws(() => decode(-1n), RangeError);
  assert.throws(() => decode(1n << 63n), RangeError);
  for (const bad of ['', '-1', '1e3', ' 1', '0x10']) assert.throws(() => decode(bad), SyntaxError, bad);
  assert.throws(() => decode(null), TypeError);
  assert.throws(() => decode(1n, { shardBits: 32 }), RangeError);
  assert.throws(() => decode(1n, { shardBits: 20, seqBits: 9 }), RangeError);
  assert.throws(() => decode(1n, { epochMs: -1 }), RangeError);
  assert.throws(() => decode(9007199254740993), /not a safe integer \(above 2\^53 - 1 a Number has lost digits\)/);
  assert.deepEqual(decode(Number.MAX_SAFE_INTEGER).seq, 1023n);
});

test('layout arguments are integer Numbers', () => {
  for (const layout of [{ shardBits: true }, { seqBits: false }, { epochMs: true }, { shardBits: 13.5 },
    { seqBits: '10' }, { shardBits: 13n }, { epochMs: null }]) {
    assert.throws(() => decode(README_ID, layout), TypeError, JSON.stringify(layout, (k, v) => (typeof v === 'bigint' ? `${v}n` : v)));
    assert.throws(() => timeToId(new Date('2020-01-01Z'), layout), TypeError);
  }
  assert.throws(() => decode(README_ID, null), TypeError);
  assert.throws(() => decode(README_ID, 'default'), TypeError);
});

test('timeToId', () => {
  assert.equal(timeToId(decode(README_ID).time), (README_ID >> 23n) << 23n);
  assert.throws(() => timeToId(new Date('2011-01-01Z')), RangeError);
  assert.throws(() => timeToId('2020-01-01'), TypeError);
});

test('short codes both ways', () => {
  const cases = [[0n, 'A'], [1n, 'B'], [63n, '_'], [64n, 'BA'], [README_ID, 'DgB0GVZAAQB'], [(1n << 63n) - 1n, 'H__________']];
  for (const [id, code] of cases) {
    assert.equal(toShortcode(id), code);
    assert.equal(fromShortcode(code), id);
  }
  assert.equal(toShortcode('4035735874804122625'), 'DgB0GVZAAQB');
});

test('fromShortcode refuses non-canonical codes', () => {
  for (const bad of ['', 'AB', 'a!b', 'DgB0GVZAAQB ']) assert.throws(() => fromShortcode(bad), SyntaxError, bad);
  for (const bad of ['I__________', 'BAAAAAAAAAAA']) assert.throws(() => fromShortcode(bad), RangeError, bad);
  assert.throws(() => toShortcode(-5n), RangeError);
});

test('fromShortcode is linear in the length of its input', () => {
  // 300,000 digits took 47.9 s (the value was built before its range was checked)
  for (const [code, err] of [['B'.repeat(300000), RangeError], ['A'.repeat(300000), SyntaxError],
    ['B'.repeat(300000) + '!', SyntaxError]]) {
    const start = performance.now();
    assert.throws(() => fromShortcode(code), err);
    assert.ok(performance.now() - start < 500, `${err.name} took ${performance.now() - start} ms`);
  }
  // the server's order: a bad character is reported before the length
  assert.throws(() => fromShortcode('BAAAAAAAAAAA!'), /invalid character "!" .* at position 13/);
  assert.throws(() => fromShortcode('BAAAAAAAAAAA'), RangeError);
  assert.equal(fromShortcode('H__________'), (1n << 63n) - 1n);
});

const fixturePath = process.env.SHARDID_FIXTURE;
test('server fixture (test/tap/clients.pl)', { skip: !fixturePath && 'SHARDID_FIXTURE not set' }, async (t) => {
  const fixture = JSON.parse(readFileSync(fixturePath, 'utf8'));
  assert.ok(fixture.layouts.length >= 2);

  await t.test('every layout has IDs above 2^53', () => {
    for (const l of fixture.layouts) assert.ok(l.ids.some((r) => BigInt(r.id) > 2n ** 53n), l.name);
  });
  await t.test('decode and timeToId match the server', () => {
    for (const l of fixture.layouts) {
      const layout = { epochMs: l.epoch_ms, shardBits: l.shard_bits, seqBits: l.seq_bits };
      for (const r of l.ids) {
        const d = decode(r.id, layout);
        assert.deepEqual([d.time.getTime(), d.shard, d.seq], [r.unix_ms, BigInt(r.shard), BigInt(r.seq)], `${l.name} ${r.id}`);
        assert.equal(timeToId(d.time, layout), BigInt(r.time_to_id));
      }
    }
  });
  await t.test('short codes match the server', () => {
    for (const l of fixture.layouts) {
      for (const r of l.ids) {
        assert.equal(toShortcode(BigInt(r.id)), r.code);
        assert.equal(fromShortcode(r.code), BigInt(r.id));
      }
    }
  });
  await t.test('codes the server refuses are refused', () => {
    assert.ok(fixture.bad_codes.length > 0);
    for (const code of fixture.bad_codes) assert.throws(() => fromShortcode(code), /short code/, code);
  });
});
