/**
 * The IA-64 model executor (emulator/ia64, ia64.md §5): its backing-store addressing, the unwind
 * data it writes (checked with the walker's decoder, which shares no code with its encoder), the
 * snapshot it takes, the checks on chain specs, and that each corpus chain really shows the edge
 * case it is named after (§5.4).
 */
import { describe, expect, it } from "vitest";
import { IA64_CORPUS, ia64CorpusFiles, rbsAt, RBS_GROUP } from "../../emulator/ia64/corpus.js";
import { layoutFunction, runChain, type Ia64ChainSpec, type Ia64FunctionSpec } from "../../emulator/ia64/executor.js";
import { frameMarker, stepRegisters } from "../../emulator/ia64/rse-model.js";
import { encodeRecords } from "../../emulator/ia64/unwind-encode.js";
import { InputError } from "../../src/errors.js";
import { readMappedImage, readMappedRuntimeFunctions } from "../../src/formats/pe-mapped.js";
import { parseVector } from "../../src/formats/vector.js";
import { readU64 } from "../../src/memory/reader.js";
import { decodeDescriptors, decodeUnwindInfo, encodeDescriptors } from "../../src/formats/unwind-data/ia64.js";
import { skipRegs } from "../../src/arch/ia64/rse.js";

const chain = (name: string): Ia64ChainSpec => IA64_CORPUS.find((c) => c.name === name)!;
const run = (name: string): ReturnType<typeof runChain> => runChain(chain(name));
const slot = (bsp: bigint): number => Number((bsp >> 3n) & 0x3fn);

describe("the model's register stack", () => {
  it("steps over collection slots one register at a time, as skip_regs computes", () => {
    for (let s = 0; s < 63; s++) for (let n = -130; n <= 130; n++) expect(stepRegisters(RBS_GROUP + 0x4000n + BigInt(8 * s), n)).toBe(skipRegs(RBS_GROUP + 0x4000n + BigInt(8 * s), n));
  });

  it("writes frame markers in the CFM layout", () => {
    expect(frameMarker(96, 40)).toBe(96n | (40n << 7n));
  });
});

describe("the unwind data it writes (§3)", () => {
  it("lays out a GCC-shaped function as the worked example: alloc, mov r33 = b0, adds sp; B2 at the sp restore", () => {
    const f: Ia64FunctionSpec = { name: "f", ins: 0, locals: 3, outs: 1, frameBytes: 32, rp: { gr: 33 }, pfs: { gr: 34 } };
    const l = layoutFunction(f, false);
    expect(l.prologue).toEqual([{ step: "alloc", slot: 0 }, { step: "rp", slot: 1 }, { step: "sp", slot: 2 }]);
    expect(l.body.map((b) => b.step)).toEqual(["call", "restore-rp", "restore-pfs", "restore-sp", "ret"]);
    const records = decodeDescriptors(Uint8Array.from(encodeRecords(l.records))).map((r) => r.record);
    expect(records).toEqual([
      { format: "R1", body: false, rlen: 3 },
      { format: "P7", kind: "pfs_when", value: 0 },
      { format: "P3", kind: "pfs_gr", reg: 34 },
      { format: "P7", kind: "rp_when", value: 1 },
      { format: "P3", kind: "rp_gr", reg: 33 },
      { format: "P7", kind: "mem_stack_f", value: 2, size: 2 },
      { format: "R1", body: true, rlen: l.slots - 3 },
      { format: "B2", ecount: 0, t: l.slots - 1 - l.body.find((b) => b.step === "restore-sp")!.slot },
    ]);
    // The walker's encoder writes the same bytes for the same records.
    expect([...encodeDescriptors(records)]).toEqual(encodeRecords(l.records));
  });

  it("maps an IA-64 image whose exception directory holds sorted, bundle-aligned entries with decodable unwind info", () => {
    const v = run("mixed-8").vector;
    const m = v.modules[0]!;
    const image = readMappedImage(v.memory, m.base)!;
    expect(image.machine).toBe(0x0200);
    expect(BigInt(image.sizeOfImage)).toBe(m.size);
    const table = readMappedRuntimeFunctions(v.memory, m.base, image) as Uint32Array;
    expect(table.length / 3).toBe(8);
    for (let i = 0; i < table.length; i += 3) {
      expect(table[i]! % 16).toBe(0);
      expect(table[i + 1]! % 16).toBe(0);
      if (i > 0) expect(table[i]).toBe(table[i - 2]);
      const at = m.base + BigInt(table[i + 2]!);
      const words = Number(readU64(v.memory, at)! & 0xffff_ffffn);
      expect(() => decodeUnwindInfo(v.memory.read(at, 8 + 8 * words)!)).not.toThrow();
    }
  });
});

describe("the snapshot (§5.2 step 5)", () => {
  it("holds the CONTEXT subset, truth with bsp for every frame, and says it is synthetic", () => {
    const [file] = ia64CorpusFiles().filter((f) => f.file.endsWith("/sprel-saves.json"));
    const v = parseVector(file!.text);
    expect(Object.keys(v.threads[0]!.registers)).toEqual(["stiip", "stipsr", "stifs", "intsp", "rsbsp", "rsbspstore", "rsrnat", "rspfs", "brrp"]);
    expect(v.threads[0]!.truth!.every((t) => t.bsp !== undefined && t.function !== undefined)).toBe(true);
    expect(v.provenance).toMatch(/^synthetic: IA-64 model executor/);
  });

  it("covers and flushes the innermost frame: RsBSPSTORE = skip(RsBSP, sof), the partial collection in RsRNAT", () => {
    const r = run("nat-crossing");
    const ctx = r.vector.threads[0]!.registers;
    const inner = r.frames.at(-1)!;
    expect(ctx["rsbspstore"]).toBe(skipRegs(inner.bsp, inner.sof));
    expect(ctx["stifs"]).toBe((1n << 63n) | frameMarker(inner.sof, inner.sol));
    // A collection word below BSPSTORE is in memory: main's group (slot 60) has its collection at 0x1f8.
    expect(readU64(r.vector.memory, rbsAt(63))).toBeDefined();
  });

  it("converts to the Linux/gdb view: bsp = the end of the covered frame, bof = skip(bsp, −sof) (§5.2)", () => {
    for (const c of IA64_CORPUS) {
      const r = runChain(c);
      const ctx = r.vector.threads[0]!.registers;
      const sof = Number(ctx["stifs"]! & 0x7fn);
      const end = skipRegs(ctx["rsbsp"]!, sof);
      expect(skipRegs(end, -sof), c.name).toBe(ctx["rsbsp"]);
      if (!c.bspstoreOnCollection) expect(end, c.name).toBe(ctx["rsbspstore"]);
    }
  });

  it("fills words it never wrote with a poison value that is not a code address", () => {
    const r = run("frame-96-innermost");
    const inner = r.frames.at(-1)!;
    const past = skipRegs(inner.bsp, inner.sof);
    const stale = readU64(r.vector.memory, past)!;
    expect(stale >> 48n).toBe(0xdeadn);
    expect(stale & 0xfn).not.toBe(0n);
  });
});

describe("chain specs it refuses", () => {
  const base: Ia64FunctionSpec = { name: "a", ins: 0, locals: 2, outs: 1, frameBytes: 32, rp: { gr: 32 }, pfs: { gr: 33 } };
  const chainOf = (fs: Ia64FunctionSpec[], extra: Partial<Ia64ChainSpec> = {}): Ia64ChainSpec => ({ name: "x", description: "x", functions: fs, stop: 0, ...extra });
  it.each<[string, Ia64ChainSpec, RegExp]>([
    ["sof > 96", chainOf([{ ...base, outs: 95 }]), /more than 96/],
    ["inputs the caller does not have", chainOf([base, { ...base, name: "b", ins: 2, rp: { gr: 34 }, pfs: { gr: 35 } }]), /caller has 1 outputs/],
    ["a save GR that is an input", chainOf([base, { ...base, name: "b", ins: 1, rp: { gr: 32 }, pfs: { gr: 33 } }]), /not a local/],
    ["an sp-relative save before the sp adjust", chainOf([{ ...base, rp: { sprel: 4 }, prologue: ["alloc", "rp", "sp"] }]), /must follow the sp adjust/],
    ["two saves at one address", chainOf([{ ...base, frameBytes: 48, rp: { sprel: 4 }, pfs: { psprel: 12 } }]), /same address/],
    ["a psp-relative save in the callee scratch area", chainOf([{ ...base, frameBytes: 32, rp: { psprel: 10 } }]), /not an aligned slot/],
    ["rp in a branch register above the innermost frame", chainOf([{ ...base, rp: { br: 1 } }, { ...base, name: "b", ins: 0 }]), /only the innermost/],
    ["a stop past the function", chainOf([base], { stop: 99 }), /not one of its/],
    ["BSPSTORE on a collection slot the frame does not end at", chainOf([base], { bspstoreOnCollection: true, stop: 1 }), /512-byte boundary/],
    ["a misaligned backing store", chainOf([base], { rbsBase: RBS_GROUP + 4n }), /8-aligned register slot/],
  ])("%s", (_what, spec, message) => {
    expect(() => runChain(spec)).toThrow(InputError);
    expect(() => runChain(spec)).toThrow(message);
  });
});

describe("each corpus chain shows its edge case (§5.4)", () => {
  it("has at least ten chains, all distinct names", () => {
    expect(IA64_CORPUS.length).toBeGreaterThanOrEqual(10);
    expect(new Set(IA64_CORPUS.map((c) => c.name)).size).toBe(IA64_CORPUS.length);
  });

  it("nat-crossing: a caller at slot 62 with sol ≥ 1 puts its callee at +0x10, slot 0 of the next group", () => {
    const f = run("nat-crossing").frames;
    const at62 = f.findIndex((x) => slot(x.bsp) === 62 && x.sol >= 1);
    expect(at62).toBeGreaterThanOrEqual(0);
    expect(f[at62 + 1]!.bsp).toBe(f[at62]!.bsp + 0x10n);
    expect(slot(f[at62 + 1]!.bsp)).toBe(0);
  });

  it("frame-63: sol 63 from slot 0 of a group B (B+0x200) and sol = sof = 63 from slot 1 (B+0x208)", () => {
    const f = run("frame-63").frames;
    expect(f.some((x, i) => x.sol === 63 && slot(x.bsp) === 0 && f[i + 1]!.bsp === x.bsp + 0x200n)).toBe(true);
    expect(f.some((x, i) => x.sol === 63 && x.sof === 63 && slot(x.bsp) === 1 && f[i + 1]!.bsp === (x.bsp & ~0x1ffn) + 0x208n)).toBe(true);
  });

  it("frame-96: 96-register frames from slot 30 (B+0xf0, end B+0x400) and slot 34; the innermost one from slot 30", () => {
    const callers = run("frame-96-callers").frames;
    expect(callers.filter((x) => x.sof === 96).map((x) => slot(x.bsp))).toEqual([30, 34]);
    expect(skipRegs(callers[0]!.bsp, 96)).toBe(callers[0]!.bsp - 0xf0n + 0x400n);
    const inner = run("frame-96-innermost");
    const last = inner.frames.at(-1)!;
    expect([last.sof, slot(last.bsp)]).toEqual([96, 30]);
    expect(inner.vector.threads[0]!.registers["rsbspstore"]).toBe(last.bsp - 0xf0n + 0x400n);
  });

  it("nat-at-bspstore: RsBSPSTORE is a collection slot and rp's collection address equals it", () => {
    const r = run("nat-at-bspstore");
    const bspstore = r.vector.threads[0]!.registers["rsbspstore"]!;
    expect(bspstore & 0x1f8n).toBe(0x1f8n);
    const inner = r.frames.at(-1)!;
    expect(skipRegs(inner.bsp, 2) | 0x1f8n).toBe(bspstore);
    // The word in memory there is stale (all ones); the real collection is RsRNAT.
    expect(readU64(r.vector.memory, bspstore)).toBe(0xffff_ffff_ffff_ffffn);
    expect(r.vector.threads[0]!.registers["rsrnat"]).not.toBe(0n);
  });

  it("degenerate-frames: a sol = 0 caller keeps its callee's BSP; the innermost starts with sof 0", () => {
    const r = run("degenerate-frames");
    const a = r.frames.find((x) => x.name === "a")!;
    const b = r.frames.find((x) => x.name === "b")!;
    expect([a.sol, b.bsp]).toEqual([0, a.bsp]);
    expect(b.sof).toBe(b.sol);
    expect(r.vector.threads[0]!.registers["stifs"]! & 0x3fffn).toBe(0n);
  });

  it("timing pairs stop exactly at a save point and one slot after it", () => {
    for (const [at, after, step] of [["rp-at-save", "rp-after-save", "rp"], ["sp-at-adjust", "sp-after-adjust", "sp"]] as const) {
      const l = layoutFunction(chain(at).functions.at(-1)!, true);
      const s = l.prologue.find((x) => x.step === step)!.slot;
      expect(chain(at).stop).toEqual({ step });
      expect(layoutFunction(chain(after).functions.at(-1)!, true).prologue.find((x) => x.step === step)!.slot).toBe(s);
      expect(chain(after).stop).toEqual({ step, offset: 1 });
    }
  });

  it("epilogue pair: at the sp restore, and at the br.ret after it (slot 2 of the last bundle)", () => {
    const l = layoutFunction(chain("epilogue-after-restore").functions.at(-1)!, true);
    const ret = l.body.find((b) => b.step === "ret")!.slot;
    expect([ret % 3, ret]).toEqual([2, l.slots - 1]);
    expect(run("epilogue-after-restore").vector.threads[0]!.truth![0]!.pc & 0xfn).toBe(8n);
    expect(chain("epilogue-at-restore").stop).toEqual({ step: "restore-sp" });
  });

  it("high-addresses: everything at or above 2^63", () => {
    const v = run("high-addresses").vector;
    for (const t of v.threads[0]!.truth!) {
      expect(t.pc >= 1n << 63n && t.sp >= 1n << 63n && t.bsp! >= 1n << 63n).toBe(true);
    }
  });

  it("call-last-bundle: a return address equal to its function's end", () => {
    const v = run("call-last-bundle").vector;
    const a = v.modules[0]!.symbols.find((s) => s.name === "a")!;
    expect(v.threads[0]!.truth![1]!.pc).toBe(v.modules[0]!.base + a.rva + a.size!);
  });

  it("recursion-1000: 1002 frames", () => {
    expect(run("recursion-1000").vector.threads[0]!.truth).toHaveLength(1002);
  });
});
