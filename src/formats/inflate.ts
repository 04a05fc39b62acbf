/**
 * Raw DEFLATE (RFC 1951) decoding into a caller's buffer, for the MSZIP blocks of a cabinet
 * (cab.ts). The buffer's bytes before `start` are the history a block's distances may reach back
 * into (MSZIP keeps the window from one block to the next); decoding writes from `start` and must
 * end exactly at `end`: a stream that would write past it is refused before a byte is written
 * there, so the output never exceeds what the caller sized. Malformed input (a reserved block
 * type, a stored block whose length check fails, an over-subscribed Huffman code, a code the
 * tables do not have, a distance before the buffer, input that ends early) is an
 * {@link InputError} naming the byte offset. The core runs in browsers, so this is its own
 * decoder rather than Node's zlib.
 */
import { InputError } from "../errors.js";

/** RFC 1951 §3.2.5: the base length and extra bits of length codes 257..285. */
const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
/** The base distance and extra bits of distance codes 0..29. */
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
/** §3.2.7: the order the code length code lengths are stored in. */
const CLEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
const MAX_BITS = 15;

/**
 * A canonical Huffman code as a lookup table: indexed by the next `bits` bits of the stream (the
 * first bit lowest), each entry is the symbol << 4 | its code's length, or −1 where no code of the
 * table's lengths begins with those bits.
 */
interface Huffman {
  bits: number;
  table: Int32Array;
}

/** The code of `lengths` (0 = symbol unused); an over-subscribed set of lengths is an error. */
function huffman(lengths: ArrayLike<number>, what: string, offset: number): Huffman {
  const counts = new Uint16Array(MAX_BITS + 1);
  for (let i = 0; i < lengths.length; i++) counts[lengths[i]!]!++;
  counts[0] = 0;
  let left = 1;
  let longest = 1;
  for (let len = 1; len <= MAX_BITS; len++) {
    left = left * 2 - counts[len]!;
    if (left < 0) throw new InputError("bad-value", `deflate: the ${what} code is over-subscribed`, { offset });
    if (counts[len]! > 0) longest = len;
  }
  // The first code of each length (RFC 1951 §3.2.2), then every code's entries: its bits reversed
  // (codes are sent from their most significant bit) and every value of the bits after it.
  const next = new Uint16Array(MAX_BITS + 2);
  for (let len = 1, code = 0; len <= MAX_BITS; len++) {
    code = (code + counts[len - 1]!) << 1;
    next[len] = code;
  }
  const table = new Int32Array(1 << longest).fill(-1);
  for (let s = 0; s < lengths.length; s++) {
    const len = lengths[s]!;
    if (len === 0) continue;
    const code = next[len]!++;
    let reversed = 0;
    for (let i = 0; i < len; i++) reversed |= ((code >> i) & 1) << (len - 1 - i);
    for (let i = reversed; i < table.length; i += 1 << len) table[i] = (s << 4) | len;
  }
  return { bits: longest, table };
}

/** The fixed codes of §3.2.6, made once. */
let fixed: { lit: Huffman; dist: Huffman } | undefined;
function fixedCodes(): { lit: Huffman; dist: Huffman } {
  if (fixed === undefined) {
    const lit = new Uint8Array(288);
    lit.fill(8, 0, 144);
    lit.fill(9, 144, 256);
    lit.fill(7, 256, 280);
    lit.fill(8, 280, 288);
    fixed = { lit: huffman(lit, "fixed literal/length", 0), dist: huffman(new Uint8Array(30).fill(5), "fixed distance", 0) };
  }
  return fixed;
}

/**
 * Decodes the raw DEFLATE stream `input` into `out[start..end)`; `out[0..start)` is the history.
 * `base` is the absolute offset of `input[0]`, for error offsets. Returns when the final block
 * ends (or, for a stream whose last block is not marked final, when its input is used up at a
 * block's end with the output full).
 */
export function inflateRaw(input: Uint8Array, out: Uint8Array, start: number, end: number, base = 0): void {
  inflateRawInto(input, out, start, end, base, true);
}

/**
 * {@link inflateRaw} for a stream that may give fewer bytes than `end − start`: the end of what it
 * wrote, or −1 when it would write past `end` (nothing is written there). `exact` makes both an
 * error naming where the stream was, as {@link inflateRaw} reports them.
 */
export function inflateRawInto(input: Uint8Array, out: Uint8Array, start: number, end: number, base = 0, exact = false): number {
  let pos = 0;
  let bitBuf = 0;
  let bitCount = 0;
  let at = start;
  // A decode may load whole bytes ahead of the bits it takes; errors name the byte of the next bit.
  const where = (): { offset: number } => ({ offset: base + Math.min(pos - (bitCount >> 3), Math.max(0, input.length - 1)) });
  const bits = (n: number): number => {
    while (bitCount < n) {
      if (pos >= input.length) throw new InputError("truncated", "deflate: the compressed data ends inside a block", { offset: base + input.length });
      bitBuf |= input[pos++]! << bitCount;
      bitCount += 8;
    }
    const v = bitBuf & ((1 << n) - 1);
    bitBuf >>>= n;
    bitCount -= n;
    return v;
  };
  const decode = (h: Huffman): number => {
    while (bitCount < h.bits && pos < input.length) {
      bitBuf |= input[pos++]! << bitCount;
      bitCount += 8;
    }
    const entry = h.table[bitBuf & ((1 << h.bits) - 1)]!;
    const len = entry & 15;
    if (entry >= 0 && len <= bitCount) {
      bitBuf >>>= len;
      bitCount -= len;
      return entry >> 4;
    }
    // A code longer than the bits left, or bits no code begins with: read as the bit-by-bit
    // decoder would, which gives up after the longest code there can be.
    bits(entry >= 0 ? len : MAX_BITS);
    throw new InputError("bad-value", "deflate: a Huffman code the block's tables do not have", where());
  };
  for (;;) {
    const final = bits(1);
    const type = bits(2);
    if (type === 0) {
      // A stored block starts at the next byte: the bits loaded ahead are given back.
      pos -= bitCount >> 3;
      bitBuf = 0;
      bitCount = 0;
      if (pos + 4 > input.length) throw new InputError("truncated", "deflate: a stored block's header is cut off", { offset: base + input.length });
      const len = input[pos]! | (input[pos + 1]! << 8);
      const nlen = input[pos + 2]! | (input[pos + 3]! << 8);
      if ((len ^ 0xffff) !== nlen) throw new InputError("bad-value", `deflate: a stored block's LEN ${len} and NLEN ${nlen} disagree`, { offset: base + pos });
      pos += 4;
      if (pos + len > input.length) throw new InputError("truncated", `deflate: a stored block of ${len} bytes is cut off`, { offset: base + input.length });
      if (at + len > end) return overrun(exact, end - start, where());
      out.set(input.subarray(pos, pos + len), at);
      at += len;
      pos += len;
    } else if (type === 1 || type === 2) {
      const { lit, dist } = type === 1 ? fixedCodes() : dynamicCodes(bits, decode, where);
      for (;;) {
        const sym = decode(lit);
        if (sym < 256) {
          if (at >= end) return overrun(exact, end - start, where());
          out[at++] = sym;
          continue;
        }
        if (sym === 256) break;
        const li = sym - 257;
        if (li >= 29) throw new InputError("bad-value", `deflate: length code ${sym} does not exist`, where());
        const length = LENGTH_BASE[li]! + bits(LENGTH_EXTRA[li]!);
        const di = decode(dist);
        if (di >= 30) throw new InputError("bad-value", `deflate: distance code ${di} does not exist`, where());
        const distance = DIST_BASE[di]! + bits(DIST_EXTRA[di]!);
        if (distance > at) throw new InputError("bad-value", `deflate: a distance of ${distance} reaches before the start of the window`, where());
        if (at + length > end) return overrun(exact, end - start, where());
        for (let i = 0; i < length; i++, at++) out[at] = out[at - distance]!;
      }
    } else {
      throw new InputError("bad-value", "deflate: block type 3 is reserved", where());
    }
    if (final === 1 || (at === end && pos - (bitCount >> 3) >= input.length)) break;
  }
  if (exact && at !== end) throw new InputError("bad-value", `deflate: the data inflates to ${at - start} bytes, not ${end - start}`, where());
  return at;
}

function overrun(throwIt: boolean, size: number, where: { offset: number }): -1 {
  if (throwIt) throw new InputError("bad-value", `deflate: the data inflates to more than ${size} bytes`, where);
  return -1;
}

/** Reads a dynamic block's code tables (§3.2.7). */
function dynamicCodes(bits: (n: number) => number, decode: (h: Huffman) => number, where: () => { offset: number }): { lit: Huffman; dist: Huffman } {
  const nlen = bits(5) + 257;
  const ndist = bits(5) + 1;
  const ncode = bits(4) + 4;
  if (nlen > 286 || ndist > 30) throw new InputError("bad-value", `deflate: a dynamic block declares ${nlen} literal/length and ${ndist} distance codes (at most 286 and 30)`, where());
  const clen = new Uint8Array(19);
  for (let i = 0; i < ncode; i++) clen[CLEN_ORDER[i]!] = bits(3);
  const lencode = huffman(clen, "code length", where().offset);
  const lengths = new Uint8Array(nlen + ndist);
  for (let i = 0; i < nlen + ndist; ) {
    const sym = decode(lencode);
    if (sym < 16) {
      lengths[i++] = sym;
      continue;
    }
    let repeat: number;
    let value = 0;
    if (sym === 16) {
      if (i === 0) throw new InputError("bad-value", "deflate: a repeat of the previous code length with none before it", where());
      value = lengths[i - 1]!;
      repeat = 3 + bits(2);
    } else if (sym === 17) repeat = 3 + bits(3);
    else repeat = 11 + bits(7);
    if (i + repeat > nlen + ndist) throw new InputError("bad-value", "deflate: code lengths repeat past the end of the tables", where());
    lengths.fill(value, i, i + repeat);
    i += repeat;
  }
  if (lengths[256] === 0) throw new InputError("bad-value", "deflate: a dynamic block without an end-of-block code", where());
  return { lit: huffman(lengths.subarray(0, nlen), "literal/length", where().offset), dist: huffman(lengths.subarray(nlen), "distance", where().offset) };
}
