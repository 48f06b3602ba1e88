// The adapter's channel to the runner, protected from the implementation it runs in.
//
// The implementation's code runs in this process, so it could replace the built-ins the
// adapter calls (JSON.stringify, JSON.parse, fs.writeSync, crypto) and rewrite an answer
// after the adapter built it, or write lines of its own on stdout. Two defences:
//
// - Everything the adapter's judgments rely on is captured here, when this module is first
//   evaluated: before the runner's handshake, and so before any implementation module is
//   imported. Responses are written by a serializer of our own (own data properties only:
//   no toJSON, no getters, no prototype), so a polluted prototype cannot change them either.
// - Sealing: the handshake may carry a `channel_key`; from then on every line this program
//   writes ends with `"seal"`, an HMAC-SHA256 of the line under that key, computed in plain
//   JavaScript with captured primitives. The key lives only in this module's closure, so a
//   line the implementation writes itself cannot carry a valid seal, and the runner refuses it.
// - The functions that seal are handed out once (openChannel), to the protocol server, before
//   any implementation module loads: importing this module again gets the same instance, whose
//   channel is already taken. The process runs under Node.js's permission model with frozen
//   intrinsics (docs/isolation.md), so no inspector, worker, child process or /proc read can
//   reach the key in this module's closure either.
//
// No dependencies: Node.js 20 built-ins only.

import { writeSync } from "node:fs";

// A value, not the live binding: student code may redefine node:fs's export (syncBuiltinESMExports).
const writeFd = writeSync;

// -- captured built-ins ----------------------------------------------------------------
const { apply } = Reflect;
const uncurry = (method) => (self, ...args) => apply(method, self, args);
const jsonParse = JSON.parse;
const jsonStringify = JSON.stringify;
const objectKeys = Object.keys;
const hasOwn = Object.hasOwn;
const isArray = Array.isArray;
const isFinite = Number.isFinite;
const toText = String;
const charCodeAt = uncurry(String.prototype.charCodeAt);
const arrayPush = uncurry(Array.prototype.push);
const arrayJoin = uncurry(Array.prototype.join);
const stringSlice = uncurry(String.prototype.slice);
const Uint8 = Uint8Array;
const subarray = uncurry(Uint8Array.prototype.subarray);
const Uint32 = Uint32Array;
const ErrorClass = Error;
const wait = Atomics.wait;
const waitCell = new Int32Array(new SharedArrayBuffer(4));

/** JSON.parse as it was when the adapter started. */
export function parseJson(text) {
  return jsonParse(text);
}

/** JSON.stringify as it was when the adapter started (for values the adapter owns, not responses). */
export function stringifyJson(value, replacer) {
  return jsonStringify(value, replacer);
}

// -- a serializer that reads own data only ------------------------------------------------
// (No for-of, spread or destructuring of arrays below: they call Array.prototype[Symbol.iterator],
// which the implementation could replace. Indexes and captured methods only.)
const ESCAPES = { 34: '\\"', 92: "\\\\", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t" };
const HEX = "0123456789abcdef";

function quote(text) {
  const parts = ['"'];
  let start = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = charCodeAt(text, index);
    let escaped = null;
    if (code < 0x20 || code === 34 || code === 92) {
      escaped = hasOwn(ESCAPES, code) ? ESCAPES[code] : `\\u00${HEX[code >> 4]}${HEX[code & 15]}`;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      // A lone surrogate is written escaped (as JSON.stringify does), so the bytes stay UTF-8.
      const high = code <= 0xdbff;
      const next = index + 1 < text.length ? charCodeAt(text, index + 1) : 0;
      if (high && next >= 0xdc00 && next <= 0xdfff) {
        index += 1;
        continue;
      }
      escaped = `\\u${HEX[code >> 12]}${HEX[(code >> 8) & 15]}${HEX[(code >> 4) & 15]}${HEX[code & 15]}`;
    }
    if (escaped !== null) {
      arrayPush(parts, stringSlice(text, start, index), escaped);
      start = index + 1;
    }
  }
  arrayPush(parts, stringSlice(text, start), '"');
  return arrayJoin(parts, "");
}

/**
 * The JSON text of a value the adapter built (plain objects, arrays, strings, finite numbers,
 * booleans, null); `undefined` members are left out, as JSON.stringify does. Only own
 * enumerable data properties are read, so nothing on a prototype takes part.
 */
export function serialize(value) {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      return quote(value);
    case "number":
      return isFinite(value) ? toText(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      const parts = [];
      if (isArray(value)) {
        for (let index = 0; index < value.length; index += 1) arrayPush(parts, serialize(hasOwn(value, index) ? value[index] : null));
        return `[${arrayJoin(parts, ",")}]`;
      }
      const keys = objectKeys(value);
      for (let index = 0; index < keys.length; index += 1) {
        const key = keys[index];
        const item = value[key];
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
        arrayPush(parts, `${quote(key)}:${serialize(item)}`);
      }
      return `{${arrayJoin(parts, ",")}}`;
    }
    default:
      return "null";
  }
}

// -- HMAC-SHA256 in plain JavaScript -------------------------------------------------------
const K = new Uint32([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

function sha256(bytes) {
  const length = bytes.length;
  const padded = new Uint8(((length + 9 + 63) >> 6) << 6);
  for (let index = 0; index < length; index += 1) padded[index] = bytes[index];
  padded[length] = 0x80;
  const bits = length * 8;
  for (let index = 0; index < 8; index += 1) padded[padded.length - 1 - index] = (bits / 2 ** (8 * index)) & 0xff;
  const state = new Uint32([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32(64);
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i += 1) {
      const at = offset + i * 4;
      w[i] = (padded[at] << 24) | (padded[at + 1] << 16) | (padded[at + 2] << 8) | padded[at + 3];
    }
    for (let i = 16; i < 64; i += 1) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    let a = state[0];
    let b = state[1];
    let c = state[2];
    let d = state[3];
    let e = state[4];
    let f = state[5];
    let g = state[6];
    let h = state[7];
    for (let i = 0; i < 64; i += 1) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
  const digest = new Uint8(32);
  for (let i = 0; i < 8; i += 1) {
    digest[i * 4] = state[i] >>> 24;
    digest[i * 4 + 1] = (state[i] >>> 16) & 0xff;
    digest[i * 4 + 2] = (state[i] >>> 8) & 0xff;
    digest[i * 4 + 3] = state[i] & 0xff;
  }
  return digest;
}

/** UTF-8 bytes of a string (lone surrogates become U+FFFD), without Buffer, whose methods can be replaced. */
export function utf8(text) {
  const bytes = new Uint8(text.length * 3);
  let size = 0;
  for (let index = 0; index < text.length; index += 1) {
    let code = charCodeAt(text, index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = charCodeAt(text, index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        index += 1;
      }
    }
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    if (code < 0x80) {
      bytes[size++] = code;
    } else if (code < 0x800) {
      bytes[size++] = 0xc0 | (code >> 6);
      bytes[size++] = 0x80 | (code & 63);
    } else if (code < 0x10000) {
      bytes[size++] = 0xe0 | (code >> 12);
      bytes[size++] = 0x80 | ((code >> 6) & 63);
      bytes[size++] = 0x80 | (code & 63);
    } else {
      bytes[size++] = 0xf0 | (code >> 18);
      bytes[size++] = 0x80 | ((code >> 12) & 63);
      bytes[size++] = 0x80 | ((code >> 6) & 63);
      bytes[size++] = 0x80 | (code & 63);
    }
  }
  return subarray(bytes, 0, size);
}

function concat(first, second) {
  const joined = new Uint8(first.length + second.length);
  for (let i = 0; i < first.length; i += 1) joined[i] = first[i];
  for (let i = 0; i < second.length; i += 1) joined[first.length + i] = second[i];
  return joined;
}

/** HMAC-SHA256 of `message` (bytes) under `key` (64 bytes at most), as lowercase hex. */
export function hmacSha256Hex(key, message) {
  const inner = new Uint8(64);
  const outer = new Uint8(64);
  for (let i = 0; i < 64; i += 1) {
    const byte = i < key.length ? key[i] : 0;
    inner[i] = byte ^ 0x36;
    outer[i] = byte ^ 0x5c;
  }
  const digest = sha256(concat(outer, sha256(concat(inner, message))));
  let hex = "";
  for (let i = 0; i < digest.length; i += 1) hex += HEX[digest[i] >> 4] + HEX[digest[i] & 15];
  return hex;
}

// -- the channel ------------------------------------------------------------------------------
let sealKey = null;

/** Seal every later line with this key (64 hex digits, from the handshake). */
function startSealing(hexKey) {
  if (typeof hexKey !== "string" || !/^[0-9a-f]{64}$/.test(hexKey)) throw new ErrorClass("channel_key must be 64 hex digits");
  const key = new Uint8(32);
  for (let i = 0; i < 32; i += 1) key[i] = (HEX.indexOf(hexKey[i * 2]) << 4) | HEX.indexOf(hexKey[i * 2 + 1]);
  sealKey = key;
}

/** Write one protocol line (a response or a notice) on stdout, sealed once the handshake asked for it. */
function writeLine(message) {
  const text = serialize(message);
  let bytes = utf8(`${text}\n`);
  if (sealKey !== null) {
    const seal = hmacSha256Hex(sealKey, subarray(bytes, 0, bytes.length - 1));
    bytes = utf8(`${stringSlice(text, 0, -1)},"seal":"${seal}"}\n`);
  }
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeFd(1, bytes, written, bytes.length - written);
    } catch (error) {
      // stdout may have been made non-blocking by a stream on it: wait for room and retry.
      if (error?.code !== "EAGAIN") throw error;
      wait(waitCell, 0, 0, 5);
    }
  }
}

let channelTaken = false;

/**
 * The channel's two functions, `startSealing(hexKey)` and `writeLine(message)`: given once, to
 * the protocol server as it starts; any later caller (code under test importing this module)
 * gets an error instead.
 */
export function openChannel() {
  if (channelTaken) throw new ErrorClass("the adapter's channel is already open: only the protocol server writes on it");
  channelTaken = true;
  return { startSealing, writeLine };
}
