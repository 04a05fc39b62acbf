/**
 * Test-only MSF (PDB container) helpers, written independently of src/formats/pdb.ts: read a
 * file's streams, change them, and write a new MSF.
 */
import { MSF_MAGIC } from "../../src/formats/pdb.js";

export const le = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** Where the superblock says things are, for files whose directory fits one block (all fixtures). */
export function layout(bytes: Uint8Array) {
  const v = le(bytes);
  const bs = v.getUint32(32, true);
  const mapAt = v.getUint32(52, true) * bs;
  const dirAt = v.getUint32(mapAt, true) * bs;
  const n = v.getUint32(dirAt, true);
  const sizes: number[] = [];
  const blockEntryAt: number[][] = [];
  let at = dirAt + 4 + 4 * n;
  for (let i = 0; i < n; i++) {
    const raw = v.getUint32(dirAt + 4 + 4 * i, true);
    const size = raw === 0xffffffff ? 0 : raw;
    sizes.push(size);
    const entries: number[] = [];
    for (let k = 0; k < Math.ceil(size / bs); k++, at += 4) entries.push(at);
    blockEntryAt.push(entries);
  }
  const blockOf = (i: number, k = 0): number => v.getUint32(blockEntryAt[i]![k]!, true);
  /** File offset of byte `pos` of stream i. */
  const fileOffset = (i: number, pos: number): number => blockOf(i, Math.floor(pos / bs)) * bs + (pos % bs);
  const stream = (i: number): Uint8Array => {
    const out = new Uint8Array(sizes[i]!);
    for (let p = 0; p < out.length; p += bs) out.set(bytes.subarray(blockOf(i, p / bs) * bs, blockOf(i, p / bs) * bs + Math.min(bs, out.length - p)), p);
    return out;
  };
  return { bs, mapAt, dirAt, n, sizes, sizeAt: (i: number) => dirAt + 4 + 4 * i, blockEntryAt, fileOffset, stream };
}

/** Writes streams into a fresh MSF with 512-byte blocks: superblock, two free-map blocks, data, directory, block map. */
export function writeMsf(streams: readonly (Uint8Array | null)[]): Uint8Array {
  const bs = 512;
  const blocks: Uint8Array[] = [new Uint8Array(bs), new Uint8Array(bs), new Uint8Array(bs)];
  const place = (data: Uint8Array): number[] => {
    const ids: number[] = [];
    for (let o = 0; o < data.length; o += bs) {
      const b = new Uint8Array(bs);
      b.set(data.subarray(o, o + bs));
      ids.push(blocks.length);
      blocks.push(b);
    }
    return ids;
  };
  const lists = streams.map((s) => (s === null ? [] : place(s)));
  const words = [streams.length, ...streams.map((s) => (s === null ? 0xffffffff : s.length)), ...lists.flat()];
  const dir = new Uint8Array(words.length * 4);
  words.forEach((w, i) => le(dir).setUint32(i * 4, w, true));
  const dirIds = place(dir);
  const map = new Uint8Array(bs);
  dirIds.forEach((id, i) => le(map).setUint32(i * 4, id, true));
  const mapId = blocks.length;
  blocks.push(map);
  const sb = blocks[0]!;
  for (let i = 0; i < 32; i++) sb[i] = MSF_MAGIC.charCodeAt(i);
  [bs, 1, blocks.length, dir.length, 0, mapId].forEach((w, i) => le(sb).setUint32(32 + 4 * i, w, true));
  const out = new Uint8Array(blocks.length * bs);
  blocks.forEach((b, i) => out.set(b, i * bs));
  return out;
}

/** All streams of a fixture, so a test can change some and write a new MSF. */
export function streamsOf(bytes: Uint8Array): Uint8Array[] {
  const l = layout(bytes);
  return Array.from({ length: l.n }, (_, i) => l.stream(i));
}

/** Byte offset of the DBI optional debug header (x86-fpo.md §4.4). */
export function optionalHeaderAt(dbi: Uint8Array): number {
  const v = le(dbi);
  return 64 + [24, 28, 32, 36, 40, 52].reduce((sum, at) => sum + v.getInt32(at, true), 0);
}
