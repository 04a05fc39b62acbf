import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { InputError } from "../../../src/errors.js";
import { encodeDiskItems, encodeStackTrace } from "../../../src/formats/etw/extended-data.js";
import { decompressLz77, etlInZip, looksLikeEtl, readEtl, type EtlFile } from "../../../src/formats/etw/etl.js";
import { stitchStacks } from "../../../src/formats/etw/stitch.js";
import { inputError } from "../../support/input-error.js";

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);
const u16 = (v: number): number[] => [v & 0xff, v >>> 8];
const u32 = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];

describe("plain LZ77 (MS-XCA §2.4, etw.md §5.2)", () => {
  it("copies literals while the flag bits are 0", () => {
    expect(text(decompressLz77(Uint8Array.of(...u32(0), ...ascii("abc")), 3))).toBe("abc");
  });

  it("allocates no output larger than an ETW buffer can be: a lying size is an error at the input", () => {
    const err = inputError(() => decompressLz77(Uint8Array.of(...u32(0), ...ascii("abc")), 2 ** 31, 0x48));
    expect(err.code).toBe("bad-value");
    expect(err.offset).toBe(0x48);
    expect(err.message).toBe("offset 0x48: LZ77: an output of 2147483648 bytes is not a size from 0 to 67108864");
  });

  it("copies a match byte by byte, so that it may overlap what it produces", () => {
    // Flags: literal, literal, match (bits 31, 30, 29); the match is offset 2, length 6: ((2 − 1) << 3) | (6 − 3).
    expect(text(decompressLz77(Uint8Array.of(...u32(0x2000_0000), ...ascii("ab"), ...u16((1 << 3) | 3)), 8))).toBe("abababab");
  });

  it("reads long lengths from a shared half byte: the low nibble first, the high nibble next", () => {
    // 'a', then two matches of offset 1 with length field 7: 7 + 2 + 3 = 12, then 7 + 5 + 3 = 15.
    const input = Uint8Array.of(...u32(0x6000_0000), 0x61, ...u16(7), 0x52, ...u16(7));
    expect(text(decompressLz77(input, 28))).toBe("a".repeat(28));
  });

  it.each([
    ["a nibble of 15 adds a byte", [15, 5], 15 + 5 + 7 + 3],
    ["a byte of 255 adds a u16, less 22", [15, 255, ...u16(300)], 300 - 22 + 15 + 7 + 3],
    ["a u16 of 0 adds a u32", [15, 255, ...u16(0), ...u32(70_000)], 70_000 - 22 + 15 + 7 + 3],
  ])("%s", (_what, extra, length) => {
    const input = Uint8Array.of(...u32(0x4000_0000), 0x78, ...u16(7), ...extra);
    const out = decompressLz77(input, 1 + length);
    expect(out).toHaveLength(1 + length);
    expect(out.every((b) => b === 0x78)).toBe(true);
  });

  it.each([
    ["a match before the start of the output", Uint8Array.of(...u32(0x8000_0000), ...u16(0)), 4, "bad-value", 0x104],
    ["input that ends early", Uint8Array.of(...u32(0), 0x61), 4, "truncated", 0x105],
    ["an extended length below 22", Uint8Array.of(...u32(0x4000_0000), 0x61, ...u16(7), 15, 255, ...u16(21)), 200, "bad-value", 0x105],
    ["a match past the expected length", Uint8Array.of(...u32(0x4000_0000), 0x61, ...u16(5)), 4, "bad-value", 0x105],
  ] as const)("rejects %s, naming the offset", (_what, input, length, code, offset) => {
    const e = inputError(() => decompressLz77(input, length, 0x100));
    expect([e.code, e.offset]).toEqual([code, offset]);
  });
});

/** A small uncompressed ETL file built from the spec's layouts (etw.md §5.1, §5.3). */
class EtlWriter {
  private readonly buffers: Uint8Array[] = [];

  /** A buffer holding `records`, each placed 8-aligned after the 0x48-byte header. */
  buffer(records: readonly Uint8Array[], size = 0x400, state = 0): this {
    const out = new Uint8Array(size);
    const v = new DataView(out.buffer);
    let at = 0x48;
    for (const r of records) {
      out.set(r, at);
      at += (r.length + 7) & ~7;
    }
    v.setUint32(0, size, true);
    v.setUint32(4, at, true);
    v.setBigUint64(0x18, BigInt(this.buffers.length), true);
    v.setUint32(0x2c, state, true);
    v.setUint32(0x30, at, true);
    this.buffers.push(out);
    return this;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.buffers.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of this.buffers) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  }
}

/** The SYSTEM64 header with HookId 0 and a TRACE_LOGFILE_HEADER after it. */
function logHeader(pointerSize: number, logFileMode = 0): Uint8Array {
  const r = new Uint8Array(0x60);
  const v = new DataView(r.buffer);
  v.setUint16(0, 2, true);
  r[2] = 0x02;
  r[3] = 0xc0;
  v.setUint16(4, r.length, true);
  v.setUint32(0x20, 0x400, true);
  v.setUint32(0x2c, 3, true);
  v.setUint32(0x40, logFileMode, true);
  v.setUint32(0x20 + 0x2c, pointerSize, true);
  return r;
}

/** An EVENT_HEADER64 record with an extended item chain. */
function eventRecord(items: Uint8Array, tid: number, pid: number, ts: bigint): Uint8Array {
  const r = new Uint8Array(0x50 + items.length + 4);
  const v = new DataView(r.buffer);
  v.setUint16(0, r.length, true);
  v.setUint16(2, 0xc013, true);
  v.setUint16(4, 1, true);
  v.setUint32(8, tid, true);
  v.setUint32(0xc, pid, true);
  v.setBigUint64(0x10, ts, true);
  r.set([0x37, 0xec, 0x75, 0xb6, 0xb6, 0xbd, 0x48, 0x46, 0xbc, 0x92, 0xf3, 0xfd, 0xc7, 0x4d, 0x3c, 0xa2], 0x18);
  v.setUint16(0x28, 14, true);
  r[0x2d] = 18;
  r.set(items, 0x50);
  return r;
}

/** A PERFINFO64 record of the StackWalk group; `version` may carry the PEBS and PMC bits. */
function stackWalkRecord(opcode: number, ts: bigint, payload: readonly bigint[], version = 2): Uint8Array {
  const extra = ((version & 0x8000) !== 0 ? 8 : 0) + ((version & 0x700) >>> 8) * 8;
  const r = new Uint8Array(0x10 + extra + 8 * payload.length);
  const v = new DataView(r.buffer);
  v.setUint16(0, version, true);
  r[2] = 0x11;
  r[3] = 0xc0;
  v.setUint16(4, r.length, true);
  v.setUint16(6, 0x1800 | opcode, true);
  v.setBigUint64(8, ts, true);
  payload.forEach((p, i) => v.setBigUint64(0x10 + extra + 8 * i, p, true));
  return r;
}

/** The StackWalk and key-reference payloads start with EventTimeStamp, then pid and tid in one u64. */
const pidTid = (pid: number, tid: number): bigint => BigInt(pid) | (BigInt(tid) << 32n);
const KERNEL = 0xfffff800_0000_1000n;

describe("a small ETL file, offset for offset (etw.md §5)", () => {
  const file = new EtlWriter()
    .buffer([logHeader(8)])
    .buffer([
      stackWalkRecord(38, 10n, [9n, pidTid(4, 44), 0xaaaan]),
      stackWalkRecord(32, 12n, [11n, pidTid(4, 44), KERNEL, 0x7ff6_0000_1000n], 0x8102),
      eventRecord(encodeDiskItems([encodeStackTrace({ matchId: 0n, addressSize: 8, addresses: [KERNEL + 8n, 0x7ff6_0000_2000n] })]), 44, 4, 13n),
      stackWalkRecord(35, 20n, [0xaaaan, 0x7ff6_0000_3000n, 0x7ff6_0000_3100n]),
      stackWalkRecord(37, 21n, [21n, pidTid(4, 44), 0xaaaan]),
    ])
    .buffer([stackWalkRecord(36, 30n, [0xaaaan, KERNEL + 0x30n])])
    .bytes();

  it("is recognised as ETL", () => {
    expect(looksLikeEtl(file)).toBe(true);
    expect(looksLikeEtl(ascii("not an etl file at all, just words and more words to fill a header of 0x48 bytes"))).toBe(false);
  });

  it("reads the log file header, the buffers and every stack", () => {
    const etl = readEtl(file);
    expect(etl.log).toMatchObject({ pointerSize: 8, numberOfProcessors: 3, logFileMode: 0 });
    expect(etl.log.compressionFormat).toBeUndefined();
    expect(etl.buffers.map((b) => [b.offset, b.records, b.compressed])).toEqual([
      [0, 1, false],
      [0x400, 5, false],
      [0x800, 1, false],
    ]);
    expect(etl.stacks.map((s) => [s.carrier, s.keyKind ?? null, s.eventTimeStamp, s.addresses])).toEqual([
      ["stackwalk", null, 11n, [KERNEL, 0x7ff6_0000_1000n]],
      ["extended-item", null, 13n, [KERNEL + 8n, 0x7ff6_0000_2000n]],
      // A reference binds to the next definition of its key in time order (etw.md §2.2).
      ["stack-key", "user", 9n, [0x7ff6_0000_3000n, 0x7ff6_0000_3100n]],
      ["stack-key", "kernel", 21n, [KERNEL + 0x30n]],
    ]);
    expect(etl.stacks.map((s) => [s.pid, s.tid])).toEqual([
      [4, 44],
      [4, 44],
      [4, 44],
      [4, 44],
    ]);
    expect(etl.stacks[1]).toMatchObject({ provider: "b675ec37-bdb6-4648-bc92-f3fdc74d3ca2", eventId: 14, opcode: 18, matchId: 0n, bufferOffset: 0x400 });
    expect(etl.counts).toMatchObject({ stackWalk: 1, stackWalkKernelOnly: 0, keyReferencesKernel: 1, keyReferencesUser: 1, keyDefinitions: { create: 0, delete: 1, rundown: 1 }, distinctKeys: 1, unresolvedReferences: 0 });
  });

  it("places records 8-aligned and names the record offset of a bad one", () => {
    const bad = file.slice();
    // The second record of buffer 1 (after a 0x28-byte record at 0x48): make its size run past FilledBytes.
    new DataView(bad.buffer).setUint16(0x400 + 0x70 + 4, 0x3f0, true);
    const e = inputError(() => readEtl(bad));
    expect([e.code, e.offset]).toEqual(["truncated", 0x470]);
    expect(e.reason).toMatch(/^record at 0x470: a PERFINFO64 record of 1008 bytes runs past the end of the buffer's data/);
  });

  it("leaves an unresolved reference without addresses, with a note", () => {
    const etl = readEtl(new EtlWriter().buffer([logHeader(4)]).buffer([stackWalkRecord(37, 5n, [5n, pidTid(1, 2), 0x77n])]).bytes());
    expect(etl.stacks).toHaveLength(1);
    expect(etl.stacks[0]!.addresses).toEqual([]);
    expect(etl.notes[0]).toMatch(/1 stack-key reference\(s\) found no later definition/);
  });

  it("never crashes on a damaged file: every failure is an InputError", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: file.length - 1 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: file.length }), (at, value, cut) => {
        const damaged = file.slice(0, Math.max(cut, 0x50));
        if (at < damaged.length) damaged[at] = value;
        try {
          readEtl(damaged);
        } catch (e) {
          expect(e).toBeInstanceOf(InputError);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("the public sample trace (etw.md §6: net.4.5.2.x64.etl, XPRESS-compressed)", () => {
  let bytes: Uint8Array;
  let etl: EtlFile;
  beforeAll(() => {
    bytes = etlInZip(readFileSync("test/fixtures/etw/net.4.5.2.x64.etl.zip")).bytes;
    etl = readEtl(bytes);
  });

  it("is the documented file", () => {
    expect(bytes).toHaveLength(4_879_401);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe("50da7f725f80f88a7622b37f9826844a790cb0c4f64e351fa1f38cf24916889a");
  });

  it("has the documented log header and buffers", () => {
    expect(etl.log).toMatchObject({ pointerSize: 8, numberOfProcessors: 8, logFileMode: 0x0401_0001, compressionFormat: 3 });
    expect([etl.counts.buffers, etl.counts.compressedBuffers]).toEqual([360, 359]);
    expect(etl.buffers[0]!.bufferSize).toBe(512);
  });

  it("has the documented stack counts", () => {
    const c = etl.counts;
    expect([c.stackTrace64, c.stackTrace32, c.stackKeyItems]).toEqual([655, 0, 0]);
    expect([c.stackWalk, c.stackWalkKernelOnly]).toEqual([252, 129]);
    expect([c.keyReferencesKernel, c.keyReferencesUser]).toEqual([2061, 7046]);
    expect(c.keyDefinitions).toEqual({ create: 0, delete: 1909, rundown: 1012 });
    expect([c.distinctKeys, c.unresolvedReferences]).toEqual([1077, 0]);
    expect(etl.notes).toEqual([]);
  });

  it("its STACK_TRACE64 items all have MatchId 0, and 634 of 655 go from the kernel into user mode", () => {
    const items = etl.stacks.filter((s) => s.carrier === "extended-item");
    expect(items.every((s) => s.matchId === 0n)).toBe(true);
    const kernel = (a: bigint): boolean => a >= 0xffff_0000_0000_0000n;
    expect(items.filter((s) => kernel(s.addresses[0]!) && !kernel(s.addresses[s.addresses.length - 1]!))).toHaveLength(634);
    const stitched = stitchStacks(items.map((s, i) => ({ trace: { matchId: s.matchId!, addressSize: 8, addresses: s.addresses }, source: `item ${i}` })));
    expect(stitched.every((s) => s.status === "complete")).toBe(true);
    expect(stitched).toHaveLength(655);
  });

  it("has about 33,000 EVENT_HEADER32 records, from the WOW64 process 3988", () => {
    expect(etl.counts.headerTypes["EVENT_HEADER32"]).toBe(33_378);
    expect(etl.stacks.filter((s) => s.headerType === 0x12).every((s) => s.pid === 3988)).toBe(true);
  });

  it("a damaged compressed buffer is a typed error naming the buffer, never a crash", () => {
    const damaged = bytes.slice();
    const second = etl.buffers[1]!;
    expect(second.compressed).toBe(true);
    damaged.fill(0xff, second.offset + 0x48, second.offset + 0x80);
    const e = inputError(() => readEtl(damaged));
    expect(e.offset).toBeGreaterThanOrEqual(second.offset);
    expect(e.offset).toBeLessThan(second.offset + second.bufferSize);
  });

  it("a file cut in the middle of a buffer is a truncated-input error", () => {
    const e = inputError(() => readEtl(bytes.subarray(0, etl.buffers[5]!.offset + 100)));
    expect([e.code, e.offset]).toEqual(["truncated", etl.buffers[5]!.offset]);
  });
});
