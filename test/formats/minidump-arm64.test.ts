/**
 * ARM64 minidumps (arm64.md §2.3): the Windows 912-byte CONTEXT (u32 flags, CPU bits 0x00400000,
 * SystemInfo 12) and Breakpad's 796-byte MDRawContextARM64_Old (u64 flags, CPU bits 0x80000000,
 * SystemInfo 0x8003), written by the test writer, which shares no code with the reader; the
 * walks of the clang-14 chain (test/arch/arm64/chain.ts) from them; and Breakpad's output for an
 * ARM64 dump: its register names, its "Found by" words and its walk order (arm64.md Part 5).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { walkSnapshot } from "../../src/walk/walk.js";
import { writeMinidump, type MinidumpSpec, type WriterMachine } from "../support/minidump-writer.js";
import { inputError } from "../support/input-error.js";
import { cli } from "../support/cli.js";
import { assertWalkDocument } from "../support/walk-schema.js";
import { BASE, IMAGE_SIZE } from "../arch/arm64/fixture.js";
import { chainImage, chainImageFile, chainStop, insn } from "../arch/arm64/chain.js";
import { formatVector } from "../../src/formats/vector.js";
import { hex } from "../../src/hex.js";
import { formatAddress } from "../../src/model/machine.js";
import type { RegionMemory } from "../../src/memory/region-memory.js";

const GUID = "5A9832E5-2872-41C1-838E-D98914E9B7FF";
const SYM_ID = "5A9832E5287241C1838ED98914E9B7FF1";

/**
 * STACK CFI for the chain as Breakpad writes it for arm64 (register names x0-x30, sp, pc; .cfa the
 * caller's sp, .ra its pc), from each function's prolog: leaf_locals `sub sp, sp, #32`; bigframe
 * `stp x29, x30, [sp, #-16]!` then 8000 bytes; fregs `str x30, [sp, #-48]!` and the d-register
 * pairs; main `stp x29, x30, [sp, #-16]!; mov x29, sp`.
 */
const CHAIN_SYM = [
  `MODULE windows arm64 ${SYM_ID} chain.pdb`,
  "STACK CFI INIT 3300 24 .cfa: sp 0 + .ra: x30",
  "STACK CFI 3304 .cfa: sp 32 +",
  "STACK CFI 3320 .cfa: sp 0 +",
  "STACK CFI INIT 3200 34 .cfa: sp 0 + .ra: x30",
  "STACK CFI 3204 .cfa: sp 16 + .ra: .cfa -8 + ^ x29: .cfa -16 + ^",
  "STACK CFI 3210 .cfa: sp 8016 +",
  "STACK CFI INIT 3100 70 .cfa: sp 0 + .ra: x30",
  "STACK CFI 3104 .cfa: sp 48 + .ra: .cfa -48 + ^",
  "STACK CFI INIT 3000 40 .cfa: sp 0 + .ra: x30",
  "STACK CFI 3004 .cfa: sp 16 + .ra: .cfa -8 + ^ x29: .cfa -16 + ^",
  "STACK CFI 3008 .cfa: x29 16 + .ra: .cfa -8 + ^ x29: .cfa -16 + ^",
  "",
].join("\n");

/** The chain stopped in leaf_locals' body as a dump: its stack, and the image unless withheld. */
function chainDump(machine: WriterMachine, options: { image?: boolean; contextSize?: number; contextFlags?: number; processorArchitecture?: number; lr?: bigint; pac?: bigint } = {}): Uint8Array {
  const c = chainStop({ leaf: 4 }, options.pac);
  const stackBase = c.labels["sp0"]!;
  const stack = (c.snapshot.memory as { read(a: bigint, n: number): Uint8Array | undefined }).read(stackBase, Number(c.labels["M"]! + 32n - stackBase))!;
  // The writer's CONTEXT table has the X registers, fp, lr, sp and pc (not the d registers).
  const named = Object.fromEntries(Object.entries(c.registers).filter(([k]) => !k.startsWith("d")));
  if (options.lr !== undefined) named["lr"] = options.lr;
  const spec: MinidumpSpec = {
    machine,
    threads: [{ id: 7, registers: { ...named, x0: 0n }, stack: { base: stackBase, bytes: stack }, ...(options.contextSize === undefined ? {} : { contextSize: options.contextSize }), ...(options.contextFlags === undefined ? {} : { contextFlags: options.contextFlags }) }],
    modules: [{ path: "C:\\app\\chain.exe", base: BASE, size: IMAGE_SIZE, codeView: { rsds: { guid: GUID, age: 1, pdb: "chain.pdb" } } }],
    memory: options.image === false ? [] : [{ base: BASE, bytes: chainImage() }],
  };
  if (options.processorArchitecture !== undefined) spec.processorArchitecture = options.processorArchitecture;
  return writeMinidump(spec).bytes;
}

const frames = (bytes: Uint8Array): [bigint, bigint][] => {
  const snap = minidumpSnapshot(readMinidump(bytesSource(bytes)));
  return walkSnapshot(snap)[0]!.walk.frames.map((f) => [f.addrPC, f.addrStack]);
};

describe("ARM64 minidump contexts", () => {
  const truth = chainStop().truth.map((t): [bigint, bigint] => [t.pc, t.sp]);

  it("the Windows 912-byte CONTEXT: machine arm64, its registers at winnt.h's offsets, and the walk exact", () => {
    const dump = readMinidump(bytesSource(chainDump("arm64")));
    expect(dump.machine).toBe("arm64");
    const snap = minidumpSnapshot(dump);
    expect(snap.threads[0]!.registers).toMatchObject({ pc: insn("leaf_locals", 4), lr: insn("bigframe", 6), sp: chainStop().labels["sp0"] });
    expect(frames(chainDump("arm64"))).toEqual(truth);
  });

  it("ContextFlags ALL (0x0040001F) and CPU bits 0 (taken from SystemInfo 12) read the same", () => {
    expect(frames(chainDump("arm64", { contextFlags: 0x0040_001f }))).toEqual(truth);
    expect(frames(chainDump("arm64", { contextFlags: 0x0000_0003 }))).toEqual(truth);
  });

  it("Breakpad's 796-byte MDRawContextARM64_Old with u64 flags and SystemInfo 0x8003", () => {
    const dump = readMinidump(bytesSource(chainDump("arm64-old")));
    expect(dump.machine).toBe("arm64");
    expect(frames(chainDump("arm64-old"))).toEqual(truth);
  });

  it("a CONTEXT with the ARM64 CPU bits and a size other than 912 leaves nothing to walk", () => {
    const bytes = chainDump("arm64", { contextSize: 800 });
    expect(() => minidumpSnapshot(readMinidump(bytesSource(bytes)))).toThrow(/912|context|CONTEXT/);
    const e = inputError(() => minidumpSnapshot(readMinidump(bytesSource(bytes))));
    expect(e.offset).toBeGreaterThan(0);
  });
});

describe("Breakpad's output for an ARM64 dump (arm64.md Part 5)", () => {
  const dir = mkdtempSync(join(tmpdir(), "arm64-breakpad-"));

  it("with the image in the dump and --walker unwind, the unwind tables give every frame; registers x0-x28, fp, lr, sp, pc for the context, the recovered ones after", async () => {
    const file = join(dir, "with-image.dmp");
    writeFileSync(file, chainDump("arm64"));
    const r = await cli("walk", file, "--format", "breakpad", "--walker", "unwind");
    expect(r.code).toBe(0);
    expect(r.out).toContain("CPU: arm64");
    const t0 = r.out.slice(r.out.indexOf("Thread 0"));
    // Breakpad's PrintRegister64: " %5s = 0x%016x", a new line before a register that would pass column 80 (two a line).
    expect(t0).toContain(" 0  chain.exe + 0x3310\n     x0 = 0x0000000000000000    x1 = 0x0000000000000000\n");
    expect(t0).toContain(
      "    x28 = 0x0bad000000000009    fp = 0x0000000000201fa0\n     lr = 0x0000000140003218    sp = 0x0000000000200000\n     pc = 0x0000000140003310\n    Found by: given as instruction pointer in context\n",
    );
    // The leaf's unwind recovered pc and sp only; bigframe's, fp and lr from its record too.
    expect(t0).toContain(" 1  chain.exe + 0x3214\n     sp = 0x0000000000200020    pc = 0x0000000140003218\n    Found by: call frame info\n");
    expect(t0).toContain(" 2  chain.exe + 0x3118\n     fp = 0x0000000000201fa0    lr = 0x003500014000311c\n     sp = 0x0000000000201f70    pc = 0x000000014000311c\n");
    // -s: the stack between a frame's sp and its caller's, in 8-byte words with 16-digit addresses, as Breakpad prints arm64.
    const s = await cli("minidump-stackwalk", "-s", file);
    expect(s.out).toContain("    Stack contents:\n     0000000000200000 00 00 af 1e 00 00 00 00 00 00 af 1e 00 00 00 00  ................\n");
    expect(t0).toContain(" 3  chain.exe + 0x3008\n");
    // Breakpad's own walker reads no unwind tables: its report is the one of the dump without the image.
    const bare = join(dir, "without-image.dmp");
    writeFileSync(bare, chainDump("arm64", { image: false }));
    expect((await cli("walk", file, "--format", "breakpad")).out).toBe((await cli("walk", bare, "--format", "breakpad")).out);
  });

  it("without the image and without CFI, Breakpad's frame-pointer step: the context's lr first, then the record at x29", async () => {
    const file = join(dir, "no-image.dmp");
    writeFileSync(file, chainDump("arm64", { image: false }));
    const r = await cli("walk", file, "--format", "breakpad");
    expect(r.code).toBe(0);
    const t0 = r.out.slice(r.out.indexOf("Thread 0"));
    const L = chainStop().labels;
    // Frame 1: pc = the context's lr; fp and lr from main's record at x29 (both 0); sp = x29 + 16.
    expect(t0).toContain(
      ` 1  chain.exe + 0x3214\n     fp = 0x0000000000000000    lr = 0x0000000000000000\n     sp = 0x${(L["F"]! + 16n).toString(16).padStart(16, "0")}    pc = 0x0000000140003218\n    Found by: previous frame's frame pointer\n`,
    );
    // Frame 2 would have pc = lr = 0: Breakpad's TerminateWalk ends the walk there.
    expect(t0).not.toContain("\n 2  ");
    // A signed lr in the context: Breakpad strips it (PtrauthStrip) before it prints or follows it.
    const signed = join(dir, "no-image-signed.dmp");
    writeFileSync(signed, chainDump("arm64", { image: false, lr: insn("bigframe", 6) | 0x0035_0000_0000_0000n }));
    expect((await cli("walk", signed, "--format", "breakpad")).out).toBe(r.out);
  });

  it("without the image, a .sym's STACK CFI in Breakpad's arm64 register names walks every frame, the signed return address stripped", async () => {
    const file = join(dir, "cfi.dmp");
    writeFileSync(file, chainDump("arm64", { image: false }));
    const store = join(dir, "symbols");
    mkdirSync(join(store, "chain.pdb", SYM_ID), { recursive: true });
    writeFileSync(join(store, "chain.pdb", SYM_ID, "chain.sym"), CHAIN_SYM);
    const json = await cli("walk", file, "--symbols", store, "--format", "json");
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.out) as { machine: string; threads: { frames: { addrPC: string; addrStack: string; foundBy: string }[] }[] };
    assertWalkDocument(doc);
    expect(doc.machine).toBe("arm64");
    const walked = doc.threads[0]!.frames.map((f): [bigint, bigint] => [BigInt(f.addrPC), BigInt(f.addrStack)]);
    expect(walked).toEqual(chainStop().truth.map((t): [bigint, bigint] => [t.pc, t.sp]));
    expect(doc.threads[0]!.frames.map((f) => f.foundBy)).toEqual(["context", "cfi", "cfi", "cfi"]);
    const r = await cli("walk", file, "--symbols", store, "--format", "breakpad");
    expect(r.out).toContain(" 2  chain.exe + 0x3118\n");
    expect(r.out.match(/Found by: call frame info/g)).toHaveLength(3);
  });

  it("without the image in the dump, the image file given with --images brings its .pdata/.xdata back", async () => {
    const file = join(dir, "images.dmp");
    writeFileSync(file, chainDump("arm64", { image: false }));
    const images = join(dir, "images");
    mkdirSync(images, { recursive: true });
    writeFileSync(join(images, "chain.exe"), chainImageFile());
    const r = await cli("walk", file, "--images", images, "--format", "json");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { threads: { frames: { addrPC: string; addrStack: string; foundBy: string }[] }[] };
    expect(doc.threads[0]!.frames.map((f): [bigint, bigint] => [BigInt(f.addrPC), BigInt(f.addrStack)])).toEqual(chainStop().truth.map((t): [bigint, bigint] => [t.pc, t.sp]));
    expect(doc.threads[0]!.frames.map((f) => f.foundBy)).toEqual(["context", "unwind-info", "unwind-info", "unwind-info"]);
  });
});

describe("walk --pac-va-bits: the virtual-address size pointer authentication codes are stripped at", () => {
  const dir = mkdtempSync(join(tmpdir(), "arm64-pac-"));
  const file = join(dir, "chain.dmp");
  writeFileSync(file, chainDump("arm64"));
  const truth = chainStop().truth.map((t): [bigint, bigint] => [t.pc, t.sp]);
  const walked = async (...args: string[]): Promise<[bigint, bigint][]> => {
    const r = await cli("walk", file, "--format", "json", ...args);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { threads: { frames: { addrPC: string; addrStack: string }[] }[] };
    return doc.threads[0]!.frames.map((f): [bigint, bigint] => [BigInt(f.addrPC), BigInt(f.addrStack)]);
  };

  it("48 by default; a smaller size that still holds every address walks the same; 52 leaves bits 48-51 of the code in the address", async () => {
    // bigframe's saved return address carries 0x35 in bits 48-55 (chain.ts PAC_BITS): bits 48, 50, 52 and 53.
    expect(await walked()).toEqual(truth);
    expect(await walked("--pac-va-bits", "48")).toEqual(truth);
    // Every address of the dump lies below 2^40.
    expect(await walked("--pac-va-bits", "40")).toEqual(truth);
    const wide = await walked("--pac-va-bits", "52");
    expect(wide[2]![0]).toBe(truth[2]![0] | 0x0005_0000_0000_0000n);
    expect(wide).not.toEqual(truth);
  });

  it("a size outside 16-52 is a usage error", async () => {
    for (const bad of ["15", "53", "4x"]) {
      const r = await cli("walk", file, "--pac-va-bits", bad);
      expect(r.code).toBe(2);
      expect(r.err).toContain("--pac-va-bits takes a whole number from 16 to 52");
    }
  });
});

describe("--pac-va-bits on every command that walks, with a code in bits 40-47", () => {
  // bigframe's saved return address signed with a code in bits 41, 43 and 45: stripping at 48 keeps it.
  const pac = 0x0000_2a00_0000_0000n;
  const dir = mkdtempSync(join(tmpdir(), "arm64-pac40-"));
  const dump = join(dir, "chain.dmp");
  writeFileSync(dump, chainDump("arm64", { pac }));
  const c = chainStop({ leaf: 4 }, pac);
  const vector = join(dir, "chain.json");
  writeFileSync(vector, formatVector({ ...c.snapshot, memory: c.snapshot.memory as RegionMemory, threads: [{ ...c.snapshot.threads[0]!, truth: c.truth }] }));
  const signed = formatAddress("arm64", c.truth[2]!.pc | pac);
  const stripped = `chain.exe+${hex(c.truth[2]!.pc - BASE)}`;

  it("explain strips the code only at the size given, and says so of the read", async () => {
    const plain = await cli("explain", dump);
    expect(plain.code).toBe(0);
    expect(plain.out).toContain(`frame 2  ${signed}`);
    const r = await cli("explain", dump, "--pac-va-bits", "40");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`frame 2  ${stripped}`);
    expect(r.out).toContain(`= ${signed} → return address: Pc ← ${formatAddress("arm64", c.truth[2]!.pc)}, its pointer authentication code stripped`);
  });

  it("render and view draw the caller's frame only at the size given", async () => {
    for (const command of ["render", "view"]) {
      const plain = await cli(command, dump, "-o", "-");
      expect(plain.code).toBe(0);
      expect(plain.out).not.toContain(stripped);
      const r = await cli(command, dump, "-o", "-", "--pac-va-bits", "40");
      expect(r.code).toBe(0);
      expect(r.out).toContain(stripped);
    }
  });

  it("check is exact against the truth only at the size given", async () => {
    expect((await cli("check", vector, "--walker", "unwind")).code).toBe(1);
    const r = await cli("check", vector, "--walker", "unwind", "--pac-va-bits", "40");
    expect(r.code).toBe(0);
    expect(r.out).toContain("1 passed, 0 failed");
  });

  it("a size outside 16-52 is a usage error for each of them", async () => {
    for (const args of [["explain", dump], ["render", dump, "-o", "-"], ["view", dump, "-o", "-"], ["check", vector], ["crosscheck", vector]]) {
      const r = await cli(...args, "--pac-va-bits", "12");
      expect(r.code).toBe(2);
      expect(r.err).toContain("--pac-va-bits takes a whole number from 16 to 52");
    }
  });
});
