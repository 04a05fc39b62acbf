/**
 * The IA-64 walker (ia64.md §2, §5.3, §5.4) against the model executor: every corpus vector is
 * exact, random chains are exact and their AddrBStores equal a naive slot walker's, and every
 * way a walk can go wrong — ip 0, a misaligned return address, a BSP that leaves the backing
 * store, an unchanged (ip, sp, bsp), a misaligned BSP, unreadable memory, a NaT return address, a
 * bad frame marker, a descriptor stream cut short — ends in a stop reason naming the address.
 */
import { ia64Label, ruleText } from "../../../src/arch/rule-text.js";
import { UnwindCache } from "../../../src/unwind/cache.js";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { layoutFunction, runChain, type Ia64ChainSpec, type Ia64FunctionSpec, type Ia64Save } from "../../../emulator/ia64/executor.js";
import { IA64_CORPUS, rbsAt, RBS_GROUP } from "../../../emulator/ia64/corpus.js";
import { parseVector, type Vector } from "../../../src/formats/vector.js";
import { RegionMemory } from "../../../src/memory/region-memory.js";
import type { Registers, Snapshot } from "../../../src/model/snapshot.js";
import { compareWithTruth } from "../../../src/walk/compare.js";
import type { Walk } from "../../../src/walk/frame.js";
import { walkThread } from "../../../src/walk/walk.js";
import { skipRegs } from "../../../src/arch/ia64/rse.js";
import { ia64Unwind } from "../../../src/arch/ia64/walker.js";
import { readU64 } from "../../../src/memory/reader.js";

const DIR = new URL("../../../vectors/ia64/synthetic/", import.meta.url).pathname;
const chain = (name: string): Ia64ChainSpec => IA64_CORPUS.find((c) => c.name === name)!;

/** A copy of `v` with 64-bit words overwritten, registers replaced, and regions dropped. */
function patched(v: Vector, opts: { words?: [bigint, bigint][]; registers?: Registers; drop?: (base: bigint) => boolean } = {}): Snapshot {
  const regions = v.memory.regions.filter((r) => !(opts.drop?.(r.base) ?? false)).map((r) => ({ base: r.base, bytes: r.bytes.slice() }));
  for (const [at, value] of opts.words ?? []) {
    const r = regions.find((x) => at >= x.base && at + 8n <= x.base + BigInt(x.bytes.length))!;
    new DataView(r.bytes.buffer).setBigUint64(Number(at - r.base), value, true);
  }
  const thread = { ...v.threads[0]!, registers: { ...v.threads[0]!.registers, ...opts.registers } };
  return { machine: "ia64", threads: [thread], memory: new RegionMemory(regions), modules: v.modules };
}

const walk = (s: Snapshot, maxFrames?: number): Walk => walkThread(s, s.threads[0]!, maxFrames === undefined ? { walker: "ia64" } : { walker: "ia64", maxFrames });

describe("the corpus (vectors/ia64/synthetic)", () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith(".json")).sort();

  it("has a vector for every edge case, each exact with --walker ia64 and with auto", () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const f of files) {
      const v = parseVector(readFileSync(join(DIR, f), "utf8"), f);
      for (const walker of ["ia64", "auto"] as const) {
        const w = walkThread(v, v.threads[0]!, { walker });
        const c = compareWithTruth("ia64", w, v.threads[0]!.truth!);
        expect(c.exact, `${f} (${walker}): ${c.difference?.text ?? ""}`).toBe(true);
        expect(w.stop.reason, f).toBe("end-of-stack");
      }
    }
  });

  it("stamps caller frames ia64-unwind with the IA-64 function-table entry of the frame unwound", () => {
    const v = runChain(chain("mixed-8")).vector;
    const w = walk(v);
    expect(w.frames.slice(1).every((f) => f.trust === "ia64-unwind")).toBe(true);
    for (const f of w.frames) expect(f.funcTableEntry?.kind).toBe("ia64-function");
    // Frame 2's rule unwound f6 (frame 1): rp and ar.pfs in GRs, a 16-byte frame.
    expect(ruleText(w.frames[2]!.rule)).toMatch(/^ia64 mixed-8\.exe\+0x[0-9a-f]+ t=\d+ rp=r37 pfs=r38 psp=sp\+0x10; rp@\[0x[0-9a-f]+\] bsp=skip\(/);
  });

  it("reads rp just past a collection word when a frame starts at slot 62 (§5.4 item 2)", () => {
    const run = runChain(chain("rp-after-collection"));
    expect(run.frames[1]!.bsp).toBe(rbsAt(62));
    const w = walk(run.vector);
    expect(w.frames[1]!.addrBStore).toBe(rbsAt(62));
    // a's rp (r33) is at bsp + 0x10: bsp + 0x8 is the collection word.
    expect(ruleText(w.frames[2]!.rule)).toContain(`rp@[0x${(rbsAt(62) + 0x10n).toString(16)}]`);
    expect(readU64(run.vector.memory, rbsAt(62) + 0x10n)).toBe(w.frames[2]!.addrPC);
  });
});

/** The shape of one random function before it is made consistent with its caller. */
interface RandomFunction {
  ins: number;
  locals: number;
  outs: number;
  frame: number;
  rp: "gr" | "psprel" | "sprel";
  pfs: "gr" | "psprel" | "sprel";
  variable: "none" | "gr" | "sprel";
  header: "R1" | "R3";
}

/** A valid chain from random shapes: inputs ≤ the caller's outputs, GR saves in locals, frames big enough for the memory saves. */
function chainOf(shapes: RandomFunction[], slot: number, stopAt: number): Ia64ChainSpec {
  let callerOuts = 0;
  const functions = shapes.map((s, i): Ia64FunctionSpec => {
    const ins = Math.min(s.ins, callerOuts);
    let next = 32 + ins;
    const rp: Ia64Save = s.rp === "gr" ? { gr: next++ } : s.rp === "psprel" ? { psprel: 6 } : { sprel: 4 };
    const pfs: Ia64Save = s.pfs === "gr" ? { gr: next++ } : s.pfs === "psprel" ? { psprel: 8 } : { sprel: 6 };
    const variable = s.variable === "gr" ? { gr: next++ } : s.variable === "sprel" ? { sprel: 8 } : undefined;
    const locals = Math.max(s.locals, next - 32 - ins);
    const outs = Math.min(s.outs, 96 - ins - locals);
    // sp-relative saves at sp+0x10..0x20, psp-relative ones at psp−0x8 and psp−0x10: apart when both are used.
    const sprel = s.rp === "sprel" || s.pfs === "sprel" || s.variable === "sprel";
    const psprel = s.rp === "psprel" || s.pfs === "psprel";
    const needs = sprel && psprel ? 64 : sprel ? 48 : psprel ? 32 : 16;
    callerOuts = outs;
    const f: Ia64FunctionSpec = { name: `f${i}`, ins, locals, outs, frameBytes: Math.max(16 * s.frame, needs), rp, pfs, header: s.header };
    if (variable !== undefined) f.variable = variable;
    return f;
  });
  const last = layoutFunction(functions.at(-1)!, true);
  return { name: "random", description: "random chain", functions, rbsBase: RBS_GROUP + 0x2000n + BigInt(8 * slot), stop: Math.floor(stopAt * last.slots) };
}

const shapeArb: fc.Arbitrary<RandomFunction> = fc.record({
  ins: fc.integer({ min: 0, max: 8 }),
  locals: fc.integer({ min: 0, max: 70 }),
  outs: fc.integer({ min: 0, max: 30 }),
  frame: fc.integer({ min: 1, max: 8 }),
  rp: fc.constantFrom("gr" as const, "psprel" as const, "sprel" as const),
  pfs: fc.constantFrom("gr" as const, "psprel" as const, "sprel" as const),
  variable: fc.constantFrom("none" as const, "gr" as const, "sprel" as const),
  header: fc.constantFrom("R1" as const, "R3" as const),
});

describe("random chains (§5.4 item 5, property)", () => {
  it("walk exactly, every AddrBStore equal to the naive slot walker's, no register on a collection slot", () => {
    fc.assert(
      fc.property(fc.array(shapeArb, { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 62 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (shapes, slot, stopAt) => {
        const spec = chainOf(shapes, slot, stopAt);
        const run = runChain(spec);
        const w = walk(run.vector);
        const c = compareWithTruth("ia64", w, run.vector.threads[0]!.truth!);
        expect(c.exact, c.difference?.text).toBe(true);
        // The executor finds every BSP by stepping one register at a time.
        expect(w.frames.map((f) => f.addrBStore)).toEqual(run.frames.map((f) => f.bsp).reverse());
        // Collection words hold NaT bits (or stale ones), never a register's tag.
        const rbs = run.vector.memory.regions.find((r) => r.base === spec.rbsBase)!;
        for (let at = (spec.rbsBase! | 0x1f8n); at + 8n <= rbs.base + BigInt(rbs.bytes.length); at += 0x200n) {
          const word = readU64(run.vector.memory, at)!;
          expect(word >> 60n === 0xfn && word !== 0xffff_ffff_ffff_ffffn).toBe(false);
          expect(word >> 60n).not.toBe(0xan);
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("termination and bad input (§2 step 8, §5.4 item 12)", () => {
  it("ip = 0: a context leaf whose b0 is 0 is the whole stack", () => {
    const v = runChain(chain("leaf-last-slot")).vector;
    const w = walk(patched(v, { registers: { brrp: 0n } }));
    expect(w.frames).toHaveLength(1);
    expect(w.stop.reason).toBe("end-of-stack");
  });

  it("a return address that is not bundle-aligned is bad-pc, naming it and where it was read", () => {
    const run = runChain(chain("nat-crossing"));
    // b (frame 0) keeps rp in r33 at skip(bsp, 1).
    const at = skipRegs(run.frames[2]!.bsp, 1);
    const w = walk(patched(run.vector, { words: [[at, 0x1_0000_1064n]] }));
    expect(w.frames).toHaveLength(1);
    expect(w.stop).toMatchObject({ reason: "bad-pc", address: 0x1_0000_1064n });
    expect(w.stop.detail).toContain(`read from 0x${at.toString(16)}`);
  });

  it("a caller BSP below the backing store (bsp leaves its region) is a read fault naming it", () => {
    const run = runChain(chain("nat-crossing"));
    // a keeps ar.pfs in r32; claim its caller had 10 locals: main's BSP would be below rbsBase.
    const a = run.frames[1]!;
    const w = walk(patched(run.vector, { words: [[a.bsp, 0xc000_0000_0000_0000n | (10n << 7n) | 12n]] }));
    const callerBsp = skipRegs(a.bsp, -10);
    expect(callerBsp < rbsAt(60)).toBe(true);
    expect(w.frames).toHaveLength(2);
    expect(w.stop).toMatchObject({ reason: "read-fault", address: callerBsp });
  });

  it("an unchanged (ip, sp, bsp) is no-progress", () => {
    const v = runChain(chain("before-alloc")).vector;
    const r = v.threads[0]!.registers;
    const w = walk(patched(v, { registers: { brrp: r["stiip"]!, rspfs: 0n } }));
    expect(w.frames).toHaveLength(1);
    expect(w.stop.reason).toBe("no-progress");
  });

  it("a BSP that is not 8-byte aligned, or on a collection slot, stops with the address", () => {
    const v = runChain(chain("rp-after-save")).vector;
    const bsp = v.threads[0]!.registers["rsbsp"]!;
    expect(walk(patched(v, { registers: { rsbsp: bsp + 4n } })).stop).toMatchObject({ reason: "unsupported", address: bsp + 4n });
    expect(walk(patched(v, { registers: { rsbsp: bsp | 0x1f8n } })).stop).toMatchObject({ reason: "unsupported", address: bsp | 0x1f8n });
  });

  it("an unreadable backing store is a read fault naming the register's address", () => {
    const run = runChain(chain("rp-after-save"));
    const w = walk(patched(run.vector, { drop: (base) => base === RBS_GROUP }));
    expect(w.frames).toHaveLength(1);
    expect(w.stop).toMatchObject({ reason: "read-fault", address: skipRegs(run.frames[2]!.bsp, 1) });
  });

  it("a return address whose NaT bit is set is refused: from RsRNAT, and from a collection word in memory", () => {
    const run = runChain(chain("rp-after-save"));
    const rpAt = skipRegs(run.frames[2]!.bsp, 1);
    const bit = 1n << ((rpAt >> 3n) & 0x3fn);
    const w = walk(patched(run.vector, { registers: { rsrnat: bit } }));
    expect(w.stop).toMatchObject({ reason: "unsupported", address: rpAt });
    expect(w.stop.detail).toMatch(/NaT/);
    const deep = runChain(chain("recursion-1000"));
    const mainRp = deep.frames[0]!.bsp;
    const w2 = walk(patched(deep.vector, { words: [[mainRp | 0x1f8n, 1n << ((mainRp >> 3n) & 0x3fn)]] }));
    expect(w2.frames).toHaveLength(1002);
    expect(w2.stop).toMatchObject({ reason: "unsupported", address: mainRp });
  });

  it("a saved ar.pfs with sof < sol is not a frame marker: the stop names where it was saved", () => {
    const run = runChain(chain("nat-crossing"));
    const a = run.frames[1]!;
    const w = walk(patched(run.vector, { words: [[a.bsp, (5n << 7n) | 3n]] }));
    expect(w.stop).toMatchObject({ reason: "unsupported", address: a.bsp });
    expect(w.stop.detail).toMatch(/sol 5 is more than sof 3/);
  });

  it("a descriptor stream cut inside a record stops with the record's address", () => {
    const v = runChain(chain("rp-after-save")).vector;
    const module = v.modules[0]!;
    const b = module.symbols.find((s) => s.name === "b")!;
    // The third .pdata entry (b's) names its unwind info; replace it with one word cut inside a P3.
    const pdata = v.memory.regions.find((r) => r.base === module.base + 0x2000n)!;
    const info = module.base + BigInt(new DataView(pdata.bytes.buffer, pdata.bytes.byteOffset).getUint32(2 * 12 + 8, true));
    expect(new DataView(pdata.bytes.buffer, pdata.bytes.byteOffset).getUint32(2 * 12, true)).toBe(Number(b.rva));
    const cut = Uint8Array.of(0x06, 0xe6, 0x00, 0xb1, 0x22, 0xe4, 0x01, 0xb0);
    const w = walk(patched(v, { words: [[info, 0x0001_0000_0000_0001n], [info + 8n, new DataView(cut.buffer).getBigUint64(0, true)]] }));
    expect(w.frames).toHaveLength(1);
    expect(w.stop).toMatchObject({ reason: "unsupported", address: info + 8n + 7n });
    expect(w.stop.detail).toMatch(/runs past the end/);
  });

  it("a context IP that is not a slot is bad-pc", () => {
    const v = runChain(chain("rp-after-save")).vector;
    const w = walk(patched(v, { registers: { stiip: v.threads[0]!.registers["stiip"]! | 3n } }));
    expect(w.stop.reason).toBe("bad-pc");
  });

  it("a caller frame outside every unwind entry stops: only the context frame may be a leaf", () => {
    const run = runChain(chain("nat-crossing"));
    // a keeps rp at psp − 8; point it into the image headers (a module, no entry).
    const a = run.frames[1]!;
    const aPsp = run.frames[0]!.sp;
    const w = walk(patched(run.vector, { words: [[aPsp - 8n, 0x1_0000_0100n]] }));
    expect(w.frames).toHaveLength(3);
    expect(w.stop).toMatchObject({ reason: "unsupported", address: 0x1_0000_0100n });
    expect(w.stop.detail).toMatch(/only the context frame may be a leaf/);
    void a;
  });

  it("random corruption of the two stacks always ends in a stop reason, never a throw or a hang (property)", () => {
    const v = runChain(chain("mixed-8")).vector;
    const stacks = v.memory.regions.filter((r) => r.base >= 0x7ff_0000_0000n);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: stacks.length - 1 }), fc.nat(), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })), { minLength: 1, maxLength: 12 }), (writes) => {
        const words: [bigint, bigint][] = writes.map(([i, off, value]) => {
          const r = stacks[i]!;
          return [r.base + BigInt((off % (r.bytes.length / 8)) * 8), value];
        });
        const w = walk(patched(v, { words }), 64);
        expect(w.frames.length).toBeGreaterThanOrEqual(1);
        expect(w.frames.length).toBeLessThanOrEqual(64);
        expect(w.stop.detail.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it("the fast path (snapshot memory, numbers) and the exact path (any reader, bigints) agree, frame for frame and stop for stop (property)", () => {
    const v = runChain(chain("mixed-8")).vector;
    const stacks = v.memory.regions.filter((r) => r.base >= 0x7ff_0000_0000n);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: stacks.length - 1 }), fc.nat(), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })), { maxLength: 6 }), (writes) => {
        const words: [bigint, bigint][] = writes.map(([i, off, value]) => {
          const r = stacks[i]!;
          return [r.base + BigInt((off % (r.bytes.length / 8)) * 8), value];
        });
        const s = patched(v, { words });
        const memory = s.memory;
        const plain: Snapshot = { ...s, memory: { read: (a: bigint, n: number) => memory.read(a, n) } };
        const fast = walk(s, 64);
        const exact = walk(plain, 64);
        expect(exact.frames.map((f) => [f.addrPC, f.addrStack, f.addrBStore, f.rule])).toEqual(fast.frames.map((f) => [f.addrPC, f.addrStack, f.addrBStore, f.rule]));
        expect(exact.stop).toEqual(fast.stop);
      }),
      { numRuns: 200 },
    );
  });

  it("a context frame in no module is a leaf: rp = b0, psp = sp", () => {
    const v = runChain(chain("leaf-last-slot")).vector;
    const rule = ia64Unwind.ruleFor({ machine: "ia64", index: 0, interrupted: false, registers: v.threads[0]!.registers, pc: 0x5000n, lookupPc: 0x5000n, modules: v.modules, images: v.memory, calleeParams: 0, cache: new UnwindCache() });
    expect(rule?.kind === "ia64" && ia64Label({ function: rule.function, ...rule.locations })).toMatch(/leaf \(no module contains it\): rp=b0 pfs=ar.pfs psp=sp/);
  });
});

describe("progress on two stacks (walk.ts checkProgress)", () => {
  it("accepts a caller with the same SP when its BSP is lower: a non-leaf function without a memory frame", () => {
    const chain: Ia64ChainSpec = {
      name: "no-memory-frame",
      description: "mid calls leaf without allocating on the memory stack",
      functions: [
        { name: "main", ins: 0, locals: 2, outs: 1, frameBytes: 16, pfs: { gr: 32 }, rp: { gr: 33 } },
        { name: "mid", ins: 1, locals: 2, outs: 1, frameBytes: 0, pfs: { gr: 33 }, rp: { gr: 34 } },
        { name: "leaf", ins: 1, locals: 2, outs: 0, frameBytes: 0, pfs: { gr: 33 }, rp: { gr: 34 }, leaf: true },
      ],
      stop: { step: "restore-rp" },
    };
    const v = runChain(chain).vector;
    const truth = v.threads[0]!.truth!;
    // The truth itself: mid and leaf share main's SP, only BSP moves.
    expect(truth[0]!.sp).toBe(truth[1]!.sp);
    expect(truth[1]!.bsp! < truth[0]!.bsp!).toBe(true);
    const walk = walkThread(v, v.threads[0]!, { walker: "ia64" });
    expect(compareWithTruth("ia64", walk, truth).exact).toBe(true);
  });
});
