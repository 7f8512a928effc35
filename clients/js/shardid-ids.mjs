// shardid-ids.mjs — decode shardid IDs and short codes in JavaScript, without a database.
//
// A copy of this one file is enough (an ES module, no dependencies). IDs are
// 63-bit, above Number.MAX_SAFE_INTEGER (2^53 - 1): keep them as BigInt or as
// decimal strings (how they should travel in JSON), never as Numbers.
// Mirrors the server's shardid.id_decode(), time_to_id(), to_shortcode() and
// from_shortcode(); pass your database's layout (shardid.layout()) if it is
// not Instagram's default.
//
//   decode('4035735874804122625')
//     // { time: 2026-11-22T03:13:48.171Z, shard: 1n, seq: 1n }
//   toShortcode(4035735874804122625n)   // 'DgB0GVZAAQB'
//   fromShortcode('DgB0GVZAAQB')        // 4035735874804122625n

/** Instagram's layout: epoch 2011-08-24 21:07:01.721 UTC, 13 shard bits, 10 seq bits. */
export const DEFAULT_LAYOUT = Object.freeze({ epochMs: 1314220021721, shardBits: 13, seqBits: 10 });

/** The short code digits, value 0 to 63. */
export const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const MAX_ID = (1n << 63n) - 1n;
const MAX_EPOCH_MS = 253402300799999; // 9999-12-31 23:59:59.999 UTC
const MAX_DATE_MS = 8.64e15; // the largest time a Date holds

const MAX_CODE_LEN = 11; // 'H__________' is 2^63 - 1

function checkLayout(layout) {
  if (layout === null || typeof layout !== 'object') {
    throw new TypeError(`a layout is an object {epochMs, shardBits, seqBits}, not ${layout === null ? 'null' : typeof layout}`);
  }
  const { epochMs, shardBits, seqBits } = { ...DEFAULT_LAYOUT, ...layout };
  for (const [name, value] of [['epochMs', epochMs], ['shardBits', shardBits], ['seqBits', seqBits]]) {
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      throw new TypeError(`${name} is an integer Number, not ${typeof value === 'number' ? value : typeof value}`);
    }
  }
  for (const [name, bits] of [['shardBits', shardBits], ['seqBits', seqBits]]) {
    if (bits < 0 || bits > 31) {
      throw new RangeError(`${name} ${bits} is out of range: 0..31`);
    }
  }
  if (63 - shardBits - seqBits < 35) {
    throw new RangeError(`shardBits + seqBits = ${shardBits + seqBits} leaves less than 35 bits for time`);
  }
  if (epochMs < 0 || epochMs > MAX_EPOCH_MS) {
    throw new RangeError(`epochMs ${epochMs} is out of range: 1970..9999`);
  }
  return { epochMs, shardBits: BigInt(shardBits), seqBits: BigInt(seqBits) };
}

/** An ID as a BigInt: accepts a BigInt, a decimal string, or a safe-integer Number; throws otherwise. */
export function asId(id) {
  let v;
  if (typeof id === 'bigint') {
    v = id;
  } else if (typeof id === 'string') {
    if (!/^[0-9]+$/.test(id)) throw new SyntaxError(`invalid ID ${JSON.stringify(id)}: expected decimal digits`);
    v = BigInt(id);
  } else if (typeof id === 'number') {
    if (!Number.isSafeInteger(id)) {
      // above Number.MAX_SAFE_INTEGER (2^53 - 1) a Number is rounded: its
      // shard and seq bits are already wrong. A rounded decimal *string*
      // (such as one from parseInt8 or JSON.parse) cannot be told apart.
      throw new RangeError(`ID ${id} is not a safe integer (above 2^53 - 1 a Number has lost digits); pass a BigInt or a decimal string`);
    }
    v = BigInt(id);
  } else {
    throw new TypeError(`an ID is a bigint or a decimal string, not ${typeof id}`);
  }
  if (v < 0n || v > MAX_ID) throw new RangeError(`ID ${v} is out of range: 0..9223372036854775807`);
  return v;
}

/** {time: Date, shard: bigint, seq: bigint} of an ID, like shardid.id_decode(). */
export function decode(id, layout = DEFAULT_LAYOUT) {
  const { epochMs, shardBits, seqBits } = checkLayout(layout);
  const v = asId(id);
  const ms = epochMs + Number(v >> (shardBits + seqBits));
  if (ms > MAX_DATE_MS) throw new RangeError(`ID ${v} decodes to a time past what a Date holds`);
  return {
    time: new Date(ms),
    shard: (v >> seqBits) & ((1n << shardBits) - 1n),
    seq: v & ((1n << seqBits) - 1n),
  };
}

/** The smallest ID of a Date's millisecond, like shardid.time_to_id(). */
export function timeToId(time, layout = DEFAULT_LAYOUT) {
  const { epochMs, shardBits, seqBits } = checkLayout(layout);
  const ms = time instanceof Date ? time.getTime() : NaN;
  if (Number.isNaN(ms)) throw new TypeError('time must be a valid Date');
  const offset = BigInt(ms - epochMs);
  if (offset < 0n || offset >= 1n << (63n - shardBits - seqBits)) {
    throw new RangeError(`${time.toISOString()} is outside the layout's time range`);
  }
  return offset << (shardBits + seqBits);
}

/** The URL-safe short code of an ID, like shardid.to_shortcode(). */
export function toShortcode(id) {
  let v = asId(id);
  let code = '';
  do {
    code = ALPHABET[Number(v & 63n)] + code;
    v >>= 6n;
  } while (v !== 0n);
  return code;
}

// A code as error messages show it: at most 24 characters of it.
function shown(code) {
  return code.length <= 24 ? JSON.stringify(code) : `${JSON.stringify(code.slice(0, 20))}... (${code.length} characters)`;
}

/**
 * The ID of a short code, like shardid.from_shortcode(); throws if it is not canonical.
 * Linear in the code's length, checks in the server's order: empty, a
 * character outside the alphabet, a leading zero digit, then more than 63
 * bits (any canonical code longer than 11 digits), before any arithmetic.
 */
export function fromShortcode(code) {
  if (typeof code !== 'string') throw new TypeError(`a short code is a string, not ${typeof code}`);
  if (code === '') throw new SyntaxError('short code is empty');
  for (let i = 0; i < code.length; i++) {
    if (ALPHABET.indexOf(code[i]) < 0) {
      throw new SyntaxError(`invalid character ${JSON.stringify(code[i])} in short code ${shown(code)} at position ${i + 1}`);
    }
  }
  if (code.length > 1 && code[0] === 'A') {
    throw new SyntaxError(`short code ${shown(code)} has a leading zero digit "A"`);
  }
  if (code.length > MAX_CODE_LEN) throw new RangeError(`short code ${shown(code)} is out of range for a 63-bit ID`);
  let v = 0n;
  for (let i = 0; i < code.length; i++) v = (v << 6n) | BigInt(ALPHABET.indexOf(code[i]));
  if (v > MAX_ID) throw new RangeError(`short code ${shown(code)} is out of range for a 63-bit ID`);
  return v;
}
