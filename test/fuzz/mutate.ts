/**
 * Mutators. Byte-level ones know nothing of the format; structure-aware ones find the fields a
 * reader trusts (a minidump's directory and stream fields, JSON's structure, an ETL file's buffer
 * and record headers, a zip's directory records) and give them values that break assumptions.
 * Every mutator is a pure function of its input bytes and the generator.
 */
import type { Rng } from "./rng.js";

/** The kinds of structure a target's inputs have. */
export type Structure = "bytes" | "minidump" | "json" | "etl" | "zip" | "text";

/** Values that break size and offset arithmetic. */
const INTERESTING_32 = [0, 1, 2, 3, 4, 7, 8, 0x10, 0x20, 0x40, 0x7f, 0x80, 0xff, 0x100, 0x1000, 0xfff, 0xffff, 0x10000, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, 0xffff_ffff, 0x0fff_ffff, 0x1000_0000];
const INTERESTING_8 = [0, 1, 0x7f, 0x80, 0xff, 0x20, 0x0a, 0x2c, 0x7b, 0x7d, 0x5b, 0x5d, 0x22, 0x30];

const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

function u32At(b: Uint8Array, at: number): number {
  return at >= 0 && at + 4 <= b.length ? view(b).getUint32(at, true) : 0;
}

function setU32(b: Uint8Array, at: number, v: number): void {
  if (at >= 0 && at + 4 <= b.length) view(b).setUint32(at, v >>> 0, true);
}

function setU16(b: Uint8Array, at: number, v: number): void {
  if (at >= 0 && at + 2 <= b.length) view(b).setUint16(at, v & 0xffff, true);
}

/** A value for a size or offset field: interesting constants, near the input's length, or near the old value. */
function fieldValue(rng: Rng, old: number, length: number): number {
  switch (rng.below(6)) {
    case 0:
      return rng.pick(INTERESTING_32);
    case 1:
      return Math.max(0, length + rng.between(-16, 16));
    case 2:
      return (old + rng.between(-64, 64)) >>> 0;
    case 3:
      return (old * rng.pick([2, 4, 16, 256, 65536])) >>> 0;
    case 4:
      return rng.below(Math.max(1, length));
    default:
      return rng.u32();
  }
}

/** One byte-level change. */
export function mutateBytes(input: Uint8Array, rng: Rng): Uint8Array {
  const n = input.length;
  const at = rng.below(n);
  switch (rng.below(12)) {
    case 0: {
      if (n === 0) return Uint8Array.of(rng.below(256));
      const out = input.slice();
      out[at] = out[at]! ^ (1 << rng.below(8));
      return out;
    }
    case 1: {
      if (n === 0) return input;
      const out = input.slice();
      out[at] = rng.chance(0.5) ? rng.pick(INTERESTING_8) : rng.below(256);
      return out;
    }
    case 2: {
      if (n < 4) return input;
      const out = input.slice();
      const p = rng.chance(0.7) ? at & ~3 : at;
      setU32(out, Math.min(p, n - 4), fieldValue(rng, u32At(out, Math.min(p, n - 4)), n));
      return out;
    }
    case 3: {
      if (n < 2) return input;
      const out = input.slice();
      setU16(out, Math.min(at & ~1, n - 2), rng.pick([0, 1, 0x7fff, 0x8000, 0xffff, rng.below(0x10000)]));
      return out;
    }
    case 4: {
      // Delete a range.
      const len = Math.min(n - at, rng.small(12));
      return concat(input.subarray(0, at), input.subarray(at + len));
    }
    case 5: {
      // Insert random or repeated bytes.
      const len = rng.small(10);
      const ins = new Uint8Array(len);
      const fill = rng.chance(0.5) ? rng.below(256) : -1;
      for (let i = 0; i < len; i++) ins[i] = fill >= 0 ? fill : rng.below(256);
      return concat(input.subarray(0, at), ins, input.subarray(at));
    }
    case 6: {
      // Duplicate a range in place (repeats structures).
      const len = Math.min(n - at, rng.small(12));
      const times = rng.between(1, 4);
      const parts = [input.subarray(0, at + len)];
      for (let i = 0; i < times; i++) parts.push(input.subarray(at, at + len));
      parts.push(input.subarray(at + len));
      return concat(...parts);
    }
    case 7:
      // Cut the input short.
      return input.subarray(0, at);
    case 8: {
      // Copy a chunk over another place.
      if (n < 2) return input;
      const out = input.slice();
      const from = rng.below(n);
      const len = Math.min(rng.small(10), n - from, n - at);
      out.copyWithin(at, from, from + len);
      return out;
    }
    case 9: {
      // Zero a range.
      const out = input.slice();
      out.fill(0, at, Math.min(n, at + rng.small(12)));
      return out;
    }
    case 10: {
      // Fill a range with 0xff.
      const out = input.slice();
      out.fill(0xff, at, Math.min(n, at + rng.small(8)));
      return out;
    }
    default: {
      // Add or subtract a little at a byte.
      if (n === 0) return input;
      const out = input.slice();
      out[at] = (out[at]! + rng.between(-16, 16)) & 0xff;
      return out;
    }
  }
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A prefix of `a` joined to a suffix of `b` (cross-seed splicing); at aligned cut points half the time. */
export function splice(a: Uint8Array, b: Uint8Array, rng: Rng): Uint8Array {
  let cutA = rng.below(a.length + 1);
  let cutB = rng.below(b.length + 1);
  if (rng.chance(0.5)) {
    cutA &= ~7;
    cutB = rng.chance(0.5) ? cutA : cutB & ~7;
  }
  return concat(a.subarray(0, cutA), b.subarray(Math.min(cutB, b.length)));
}

// ---------------------------------------------------------------------------------------------
// Minidumps (minidump.md §1-§4): the header, the directory, and the list streams' fields.

const MDMP = 0x504d444d;
const STREAM_TYPES = [3, 4, 5, 6, 7, 9, 14, 15, 0x47670001, 0x47670002, 0x47670003, 0x47670004, 8, 0, 0xffff];

interface DirectoryEntry {
  /** File offset of the entry. */
  at: number;
  type: number;
  size: number;
  rva: number;
}

function directory(b: Uint8Array): DirectoryEntry[] {
  if (b.length < 32 || u32At(b, 0) !== MDMP) return [];
  const count = Math.min(u32At(b, 8), 256);
  const rva = u32At(b, 12);
  const out: DirectoryEntry[] = [];
  for (let i = 0; i < count; i++) {
    const at = rva + i * 12;
    if (at + 12 > b.length) break;
    out.push({ at, type: u32At(b, at), size: u32At(b, at + 4), rva: u32At(b, at + 8) });
  }
  return out;
}

/** Entry sizes of the list streams whose entries hold location descriptors. */
const LIST_ENTRY: Record<number, { size: number; locations: number[]; first: number }> = {
  3: { size: 48, locations: [32, 40], first: 4 }, // ThreadList: Stack descriptor (start u64, size, rva), ThreadContext (size, rva)
  4: { size: 108, locations: [28, 76, 84], first: 4 }, // ModuleList: ModuleNameRva (u32 at 20), CvRecord, MiscRecord
  5: { size: 16, locations: [8], first: 4 }, // MemoryList
  8: { size: 48, locations: [32, 40], first: 4 },
};

/** One change to a minidump's structure. */
export function mutateMinidump(input: Uint8Array, rng: Rng): Uint8Array {
  const dir = directory(input);
  if (dir.length === 0) return mutateBytes(input, rng);
  const out = input.slice();
  const n = out.length;
  const entry = rng.pick(dir);
  switch (rng.below(10)) {
    case 0:
      setU32(out, entry.at, rng.pick(STREAM_TYPES));
      return out;
    case 1:
      setU32(out, entry.at + 4, fieldValue(rng, entry.size, n));
      return out;
    case 2:
      setU32(out, entry.at + 8, rng.chance(0.5) ? rng.pick(dir).rva : fieldValue(rng, entry.rva, n));
      return out;
    case 3:
      // The header: stream count, directory RVA, or the version's low half.
      setU32(out, rng.pick([8, 12]), fieldValue(rng, u32At(out, 8), n));
      return out;
    case 4: {
      // Another entry points at the same stream (two directory entries, one stream).
      const other = rng.pick(dir);
      out.copyWithin(other.at, entry.at, entry.at + 12);
      return out;
    }
    default: {
      // A field of a list stream: its count, or an entry's descriptor.
      const list = LIST_ENTRY[entry.type];
      if (list === undefined || entry.rva + 4 > n) {
        setU32(out, entry.rva + 4 * rng.below(Math.max(1, Math.min(entry.size, n) >> 2)), fieldValue(rng, 0, n));
        return out;
      }
      const count = u32At(out, entry.rva);
      const i = rng.below(Math.max(1, Math.min(count, 512)));
      const base = entry.rva + list.first + i * list.size;
      const r = rng.below(5);
      if (r === 0) {
        setU32(out, entry.rva, rng.chance(0.5) ? count + rng.between(1, 200) : fieldValue(rng, count, n));
      } else if (r === 1 && count > 1) {
        // One entry takes another's descriptors (threads sharing one stack, modules one name).
        const j = rng.below(Math.min(count, 512));
        const src = entry.rva + list.first + j * list.size;
        if (src + list.size <= n && base + list.size <= n) {
          for (const l of list.locations) out.copyWithin(base + l - 8, src + l - 8, src + l + 8);
        }
      } else if (r === 2) {
        // Entries repeated: the count grows and the stream's bytes repeat its entries.
        const times = rng.between(2, 64);
        const entries = out.subarray(entry.rva + list.first, Math.min(n, entry.rva + list.first + count * list.size));
        const extra = new Uint8Array(entries.length * (times - 1));
        for (let t = 0; t < times - 1; t++) extra.set(entries, t * entries.length);
        const grown = concat(out.subarray(0, entry.rva + list.first + entries.length), extra, out.subarray(entry.rva + list.first + entries.length));
        setU32(grown, entry.rva, count * times);
        setU32(grown, entry.at + 4, entry.size + extra.length);
        // Streams after the insertion point move; their RVAs do not, which is damage too.
        return grown;
      } else {
        const l = rng.pick(list.locations);
        const field = base + l + (rng.chance(0.5) ? 0 : -4) - (entry.type === 5 || entry.type === 3 ? 0 : 0);
        setU32(out, field, fieldValue(rng, u32At(out, field), n));
      }
      return out;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// JSON: structure-aware changes to the parsed value, then, now and then, damage to the text.

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const decoder = new TextDecoder("utf-8", { fatal: false });
const encoder = new TextEncoder();

/** Every container node of a value, with a way to replace one of its children. */
function containers(value: Json, out: (Json[] | { [k: string]: Json })[] = [], depth = 0): (Json[] | { [k: string]: Json })[] {
  if (value === null || typeof value !== "object" || depth > 40) return out;
  out.push(value);
  if (Array.isArray(value)) {
    // Long arrays (memory bytes, sweeps) are sampled, not walked whole.
    const step = Math.max(1, Math.floor(value.length / 64));
    for (let i = 0; i < value.length; i += step) containers(value[i]!, out, depth + 1);
  } else for (const k of Object.keys(value)) containers(value[k]!, out, depth + 1);
  return out;
}

function randomJson(rng: Rng, like: Json): Json {
  switch (rng.below(14)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1, 1.5, 1e300, -1e300, 2 ** 53, 2 ** 64, 4294967296, 0x7fffffff, 1e-7]);
    case 3:
      return rng.pick(["", "0x", "0x0", "0xffffffffffffffffffff", "0xFFFFFFFF", "0x100000000", "zz", "0x1g", "-0x1", "x86", "x64", "ia64", "arm64"]);
    case 4:
      return [];
    case 5:
      return {};
    case 6:
      return "ab".repeat(rng.small(8));
    case 7:
      return typeof like === "string" && like.startsWith("0x") ? `0x${"f".repeat(rng.between(1, 24))}` : like;
    case 8:
      return typeof like === "string" ? like.slice(0, rng.below(like.length + 1)) : like;
    case 9:
      return typeof like === "string" ? like + like : like;
    case 10:
      return typeof like === "number" ? like + rng.between(-3, 3) : like;
    case 11:
      return typeof like === "string" && /^[0-9a-f]*$/i.test(like) ? like.slice(0, like.length - 1) : like;
    case 12:
      return rng.pick(["stackwalk-vector/1", "stackwalk-sweep/1", "x", "0x00400000", "0x0012fe84"]);
    default:
      return typeof like === "number" ? -like : "0x" + rng.u32().toString(16);
  }
}

function mutateValue(root: Json, rng: Rng): Json {
  const nodes = containers(root);
  if (nodes.length === 0) return randomJson(rng, root);
  const node = rng.pick(nodes);
  if (Array.isArray(node)) {
    const i = rng.below(node.length);
    switch (rng.below(6)) {
      case 0:
        node.splice(i, 1);
        break;
      case 1:
        if (node.length > 0) node.splice(i, 0, ...Array.from({ length: rng.between(1, 16) }, () => structuredClone(node[i]!)));
        break;
      case 2:
        if (node.length > 1) {
          const j = rng.below(node.length);
          [node[i], node[j]] = [node[j]!, node[i]!];
        }
        break;
      case 3:
        node.length = rng.below(node.length + 1);
        break;
      default:
        if (node.length > 0) node[i] = randomJson(rng, node[i]!);
        else node.push(randomJson(rng, null));
    }
    return root;
  }
  const keys = Object.keys(node);
  const k = keys.length > 0 ? rng.pick(keys) : "x";
  switch (rng.below(6)) {
    case 0:
      delete node[k];
      break;
    case 1:
      node[rng.pick(["extra", "base", "hex", "zeros", "rva", "size", "name", "context", "threads", k + "_"])] = randomJson(rng, node[k] ?? null);
      break;
    case 2: {
      // Another node's value here (types where another type is expected).
      const other = rng.pick(nodes);
      node[k] = structuredClone(other) as Json;
      break;
    }
    default:
      node[k] = randomJson(rng, node[k] ?? null);
  }
  return root;
}

/** One change to a JSON input: structural when it parses, textual otherwise (and sometimes anyway). */
export function mutateJson(input: Uint8Array, rng: Rng): Uint8Array {
  const text = decoder.decode(input);
  if (rng.chance(0.25)) return mutateText(input, rng);
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch {
    return mutateText(input, rng);
  }
  const rounds = rng.between(1, 3);
  for (let i = 0; i < rounds; i++) value = mutateValue(value, rng);
  const pretty = rng.chance(0.5);
  return encoder.encode(JSON.stringify(value, null, pretty ? 2 : undefined));
}

/** Text damage: characters that matter to JSON and to line formats, lines dropped or doubled. */
export function mutateText(input: Uint8Array, rng: Rng): Uint8Array {
  const text = decoder.decode(input);
  const at = rng.below(text.length + 1);
  switch (rng.below(7)) {
    case 0:
      return encoder.encode(text.slice(0, at) + rng.pick(["{", "}", "[", "]", ",", ":", '"', "\\", "\n", " ", "0x", "-", "1e999", "\u0000", "\ud800", "\r\n", "\t"]) + text.slice(at));
    case 1:
      return encoder.encode(text.slice(0, at) + text.slice(at + rng.small(6)));
    case 2: {
      const lines = text.split("\n");
      const i = rng.below(lines.length);
      const r = rng.below(3);
      if (r === 0) lines.splice(i, 1);
      else if (r === 1) lines.splice(i, 0, ...Array.from({ length: rng.small(6) }, () => lines[i] ?? ""));
      else {
        const fields = (lines[i] ?? "").split(" ");
        const f = rng.below(fields.length);
        fields[f] = rng.pick(["", "0", "ffffffff", "ffffffffffffffffff", "-1", "x", "$eip", ".cfa:", "^", "+", "=", "100000000", (fields[f] ?? "") + (fields[f] ?? "")]);
        lines[i] = fields.join(" ");
      }
      return encoder.encode(lines.join("\n"));
    }
    case 3:
      return encoder.encode(text.slice(0, at));
    default:
      return mutateBytes(input, rng);
  }
}

// ---------------------------------------------------------------------------------------------
// ETL files (etw.md §5): buffer headers (BufferSize, SavedOffset, FilledBytes, BufferFlag) and
// record headers (the size fields the reader steps by).

function etlBuffers(b: Uint8Array): number[] {
  const out: number[] = [];
  let at = 0;
  while (at + 0x48 <= b.length && out.length < 64) {
    out.push(at);
    const size = u32At(b, at);
    if (size < 0x48) break;
    at += size;
  }
  return out;
}

/** One change to an ETL file's buffer or record headers. */
export function mutateEtl(input: Uint8Array, rng: Rng): Uint8Array {
  const buffers = etlBuffers(input);
  if (buffers.length === 0) return mutateBytes(input, rng);
  const out = input.slice();
  const n = out.length;
  const buffer = rng.pick(buffers);
  switch (rng.below(6)) {
    case 0:
      setU32(out, buffer, fieldValue(rng, u32At(out, buffer), n));
      return out;
    case 1:
      setU32(out, buffer + 4, fieldValue(rng, u32At(out, buffer + 4), n));
      return out;
    case 2:
      setU32(out, buffer + 0x30, fieldValue(rng, u32At(out, buffer + 0x30), n));
      return out;
    case 3:
      setU16(out, buffer + 0x34, u32At(out, buffer + 0x34) ^ (1 << rng.below(8)));
      return out;
    default: {
      // A record's size or marker in an uncompressed buffer (the first one, the log file header).
      const at = buffer + 0x48 + 8 * rng.below(32);
      if (rng.chance(0.5)) setU16(out, at + 4, fieldValue(rng, 0, 0x200) & 0xffff);
      else setU16(out, at, fieldValue(rng, 0, 0x200) & 0xffff);
      return out;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Zip archives (PKWARE APPNOTE §4.3): the end-of-central-directory record, central directory
// entries and local headers.

/** One change to a zip archive's records. */
export function mutateZip(input: Uint8Array, rng: Rng): Uint8Array {
  const n = input.length;
  let eocd = -1;
  for (let at = n - 22; at >= Math.max(0, n - 22 - 0xffff); at--) {
    if (u32At(input, at) === 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) return mutateBytes(input, rng);
  const out = input.slice();
  const cd = u32At(out, eocd + 16);
  switch (rng.below(4)) {
    case 0:
      setU16(out, eocd + rng.pick([8, 10]), rng.pick([0, 1, 2, 0xffff, rng.below(0x10000)]));
      return out;
    case 1:
      setU32(out, eocd + rng.pick([12, 16]), fieldValue(rng, cd, n));
      return out;
    case 2: {
      // Central directory entry: method, sizes, name length, local header offset.
      const field = rng.pick([10, 20, 24, 28, 30, 42]);
      if (field === 10 || field === 28 || field === 30) setU16(out, cd + field, rng.pick([0, 1, 8, 9, 12, 14, 0xffff, rng.below(0x10000)]));
      else setU32(out, cd + field, fieldValue(rng, u32At(out, cd + field), n));
      return out;
    }
    default: {
      // The local header: its method, sizes and name/extra lengths.
      const local = u32At(out, cd + 42);
      const field = rng.pick([8, 18, 22, 26, 28]);
      if (field === 8 || field === 26 || field === 28) setU16(out, local + field, rng.pick([0, 8, 0xffff, rng.below(0x10000)]));
      else setU32(out, local + field, fieldValue(rng, u32At(out, local + field), n));
      return out;
    }
  }
}

/** The structure-aware mutator of a kind of input. */
export const STRUCTURED: Record<Structure, (input: Uint8Array, rng: Rng) => Uint8Array> = {
  bytes: mutateBytes,
  minidump: mutateMinidump,
  json: mutateJson,
  etl: mutateEtl,
  zip: mutateZip,
  text: mutateText,
};

/**
 * The input for one iteration: the seed, changed by 1 to 8 stacked mutations (structure-aware
 * ones for the target's structure, byte-level ones, and now and then a splice with another seed
 * of the same target). Iteration 0 of each seed is the seed itself.
 */
export function makeInput(seed: Uint8Array, others: readonly Uint8Array[], structure: Structure, rng: Rng, iteration: number): Uint8Array {
  if (iteration < 1) return seed;
  let bytes = seed;
  const rounds = rng.chance(0.5) ? 1 : rng.between(2, 8);
  for (let i = 0; i < rounds; i++) {
    const r = rng.below(10);
    if (r < 5) bytes = STRUCTURED[structure](bytes, rng);
    else if (r < 9 || others.length === 0) bytes = mutateBytes(bytes, rng);
    else bytes = splice(bytes, rng.pick(others), rng);
  }
  return bytes;
}
