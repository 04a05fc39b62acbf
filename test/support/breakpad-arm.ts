/**
 * Breakpad's own reports of ARM (Thumb-2) dumps (test/fixtures/breakpad-arm): the three-function
 * chain of test/arch/arm/chain.ts stopped at every position of its leaf, of `middle` and of
 * `outer` (prolog, body and epilog instructions), each written by the product's minidump writer
 * (Breakpad's 368-byte ARM context, SystemInfo 5) with and without the module image, and walked
 * with and without the `.sym` store whose STACK CFI is generated from the image's unwind data;
 * and the emulator's own dumps of the real clang-16 ARM programs (vectors/arm/c): every
 * {@link EMULATED_EVERY}th snapshot of each sweep, written as `stackwalk emulate --dmp` writes it
 * (the module with the identity the emulator gives an image without a CodeView record), with and
 * without the images and the `.sym` store. `armCases()` makes the dumps and stores again (the same bytes every time); the reports come
 * from Breakpad's `minidump_stackwalk`, run by this file as a script:
 *
 *   npx tsx test/support/breakpad-arm.ts path/to/minidump_stackwalk
 *
 * (or the path in BREAKPAD_MINIDUMP_STACKWALK), which rewrites the fixture.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { armModuleCfi } from "../../src/arch/arm/index.js";
import { formatBreakpadSym, symFileInput, symFileStorePath } from "../../src/formats/breakpad-sym-write.js";
import { bytesSink, writeMinidump } from "../../src/formats/minidump-write.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Module, Snapshot } from "../../src/model/snapshot.js";
import { BASE, callerAt, IMAGE_SIZE, Machine, positions, stackBytes, STACK_TOP, type Insn } from "../arch/arm/fixture.js";
import { bytesSource, readMinidump } from "../../src/formats/minidump.js";
import { writeMinidump as writeTestMinidump } from "./minidump-writer.js";
import { chainImage, LEAF, MIDDLE, MIDDLE_PROLOG, OUTER, OUTER_PROLOG } from "../arch/arm/chain.js";
import { caseFiles, type EmulatedCase } from "./breakpad-emulated.js";
import { dumpSnapshot } from "../../src/cli/emulate.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import { ARM_C_FOLDER, ARM_PROGRAMS } from "../../emulator/arm/programs.js";
import { REPO_ROOT } from "../../emulator/real-programs.js";

/** The chain's module, named and identified so that a store can hold its symbols. */
const MODULE: Module = {
  name: "chain.exe",
  path: "C:\\arm\\chain.exe",
  base: BASE,
  size: BigInt(IMAGE_SIZE),
  debugFile: "chain.pdb",
  debugId: "6F6D4D2A1B2C4D5E8F9011223344556601",
  symbols: [
    { name: "start", rva: 0x1000n, size: 0x100n, kind: "func" },
    { name: "outer", rva: BigInt(OUTER), size: 0x40n, kind: "func" },
    { name: "middle", rva: BigInt(MIDDLE), size: 0x60n, kind: "func" },
    { name: "leaf", rva: BigInt(LEAF), size: 0x10n, kind: "func" },
  ],
};

/** outer's packed epilog (Ret 0): add sp, sp, #16; pop {r4-r7, r11, pc}. */
const OUTER_EPILOG: Insn[] = [
  { op: "add-sp", n: 16, size: 2 },
  { op: "pop", regs: ["r4", "r5", "r6", "r7", "r11", "pc"], size: 4 },
];

function snapshotOf(m: Machine): Snapshot {
  return {
    machine: "arm",
    threads: [{ id: 0x51, crashed: true, registers: { ...m.regs, cpsr: 0x20n } }],
    memory: new RegionMemory([{ base: BASE, bytes: chainImage() }, stackBytes(m, STACK_TOP - 0x400n)]),
    modules: [{ ...MODULE }],
  };
}

/** Every stop of the chain, by name: the leaf's, middle's and outer's positions. */
function stops(): [string, Snapshot][] {
  const out: [string, Snapshot][] = [];
  const outerCaller = callerAt(0);
  // outer at every position (it calls nothing yet).
  for (const { where, machine } of positions(OUTER, OUTER_PROLOG, 0x40 - 12 - 6, OUTER_EPILOG, outerCaller)) out.push([`outer/${where}`, snapshotOf(machine)]);
  // middle at every position of its prolog and body, called from outer.
  const atOuterCall = new Machine(outerCaller);
  OUTER_PROLOG.forEach((i) => atOuterCall.run(i));
  atOuterCall.regs["lr"] = BASE + BigInt(OUTER + 0x24) + 1n;
  for (const { where, machine } of positions(MIDDLE, MIDDLE_PROLOG, 0x40, undefined, atOuterCall.regs)) {
    // The words outer stored are on the stack too.
    for (const [a, v] of atOuterCall.words) if (!machine.words.has(a)) machine.words.set(a, v);
    out.push([`middle/${where}`, snapshotOf(machine)]);
  }
  // The leaf, at three offsets.
  const atMiddleCall = new Machine(atOuterCall.regs);
  for (const [a, v] of atOuterCall.words) atMiddleCall.words.set(a, v);
  MIDDLE_PROLOG.forEach((i) => atMiddleCall.run(i));
  atMiddleCall.regs["lr"] = BASE + BigInt(MIDDLE + 0x34) + 1n;
  for (const k of [0, 2, 6]) {
    const m = new Machine(atMiddleCall.regs);
    for (const [a, v] of atMiddleCall.words) m.words.set(a, v);
    m.regs["pc"] = BASE + BigInt(LEAF + k);
    out.push([`leaf/+${k}`, snapshotOf(m)]);
  }
  return out;
}

/**
 * An Android-style dump of Thumb code that keeps its frame chain in r7, as Breakpad's Android
 * client writes one (Breakpad's ARM context, platform Android, the CPU's CPUID and ELF hwcaps, an
 * ELF module identified by its build id, only the stack in memory): `outer` (push {r4-r7, lr};
 * add r7, sp, #12; sub sp, sp, #16) calls `middle` (push {r7, lr}; mov r7, sp; sub sp, sp, #8),
 * which calls `crasher` (push {r4, r5, r7, lr}; add r7, sp, #8), stopped at `crasher`'s every
 * position. Its store's STACK CFI is what a DWARF CFI table says after each prolog instruction
 * (`.cfa` from sp, then from r7 once it is set), written here from the instructions.
 */
const ANDROID_BASE = 0x7000_0000n;
const ANDROID_FNS: { name: string; rva: number; prolog: Insn[]; size: number }[] = [
  { name: "outer", rva: 0x1000, size: 0x40, prolog: [{ op: "push", regs: ["r4", "r5", "r6", "r7", "lr"], size: 2 }, { op: "set-fp", reg: "r7", n: 12, size: 2 }, { op: "sub-sp", n: 16, size: 2 }] },
  { name: "middle", rva: 0x1100, size: 0x30, prolog: [{ op: "push", regs: ["r7", "lr"], size: 2 }, { op: "set-fp", reg: "r7", n: 0, size: 2 }, { op: "sub-sp", n: 8, size: 2 }] },
  { name: "crasher", rva: 0x1200, size: 0x20, prolog: [{ op: "push", regs: ["r4", "r5", "r7", "lr"], size: 2 }, { op: "set-fp", reg: "r7", n: 8, size: 2 }] },
];
/** Where each function calls the next (its return address is 4 bytes on, Thumb bit set). */
const ANDROID_CALL = 0x10;

/**
 * The DWARF-style CFI rows of a prolog: after each instruction, `.cfa` (the entry sp) from sp, or
 * from r7 once it is set, and each saved register at its offset from `.cfa` (lr as `.ra`).
 */
function dwarfCfi(f: (typeof ANDROID_FNS)[number]): string[] {
  // Addresses relative to the entry sp, which is the CFA.
  let sp = 0;
  let cfa: { reg: string; off: number } = { reg: "sp", off: 0 };
  const saved = new Map<string, number>();
  const rows = [`STACK CFI INIT ${f.rva.toString(16)} ${f.size.toString(16)} .cfa: sp 0 + .ra: lr`];
  let at = f.rva;
  for (const i of f.prolog) {
    at += "size" in i ? i.size : 4;
    if (i.op === "push") {
      sp -= 4 * i.regs.length;
      i.regs.forEach((r, k) => saved.set(r, sp + 4 * k));
    } else if (i.op === "sub-sp") sp -= i.n;
    if (i.op === "set-fp") cfa = { reg: i.reg, off: -(sp + i.n) };
    else if (cfa.reg === "sp") cfa = { reg: "sp", off: -sp };
    const parts = [`.cfa: ${cfa.reg} ${cfa.off} +`, ...[...saved].map(([r, a]) => `${r === "lr" ? ".ra" : r}: .cfa ${a} + ^`)];
    rows.push(`STACK CFI ${at.toString(16)} ${parts.join(" ")}`);
  }
  return rows;
}

function androidCases(): EmulatedCase[] {
  return thumbChainCases("android", 0x8203, "Linux 3.4.0-perf armv7l");
}

/** The same chain under iOS, where Breakpad ignores STACK CFI and follows r7, then scans. */
function iosCases(): EmulatedCase[] {
  return thumbChainCases("ios", 0x8102, "iOS 9.3.5");
}

function thumbChainCases(os: "android" | "ios", platformId: number, csd: string): EmulatedCase[] {
  const out: EmulatedCase[] = [];
  const buildId = Uint8Array.from({ length: 20 }, (_, i) => 0x30 + i);
  const caller = callerAt(0);
  const m = new Machine(caller);
  m.regs["lr"] = ANDROID_BASE + 0x0f01n;
  // outer and middle run to their calls.
  for (const f of ANDROID_FNS.slice(0, 2)) {
    f.prolog.forEach((i) => m.run(i));
    m.regs["lr"] = ANDROID_BASE + BigInt(f.rva + ANDROID_CALL + 4) + 1n;
  }
  const crasher = ANDROID_FNS[2]!;
  const moduleSize = 0x10000;
  const sym = (debugId: string, withCfi: boolean): string =>
    [
      `MODULE Linux arm ${debugId} libapp.so`,
      ...ANDROID_FNS.map((f) => `FUNC ${f.rva.toString(16)} ${f.size.toString(16)} 0 ${f.name}`),
      ...(withCfi ? ANDROID_FNS.flatMap(dwarfCfi) : []),
      "",
    ].join("\n");
  for (const { where, machine } of positions(crasher.rva, crasher.prolog, 8, undefined, m.regs)) {
    for (const [a, v] of m.words) if (!machine.words.has(a)) machine.words.set(a, v);
    const regs = { ...machine.regs, pc: ANDROID_BASE + (machine.regs["pc"]! - BASE), cpsr: 0x20n };
    const stack = stackBytes(machine, STACK_TOP - 0x400n);
    const dumpWith = (armCpu: { level: number; cpuid: number; elfHwcaps: number }): Uint8Array =>
      writeTestMinidump({
        machine: "arm-breakpad",
        platformId,
        osVersion: { major: 0, minor: 0, build: 0, csd },
        armCpu,
        threads: [{ id: 0x1234, registers: regs, stack }],
        modules: [{ path: "/data/app/com.example/lib/arm/libapp.so", base: ANDROID_BASE, size: moduleSize, codeView: { elf: { buildId } } }],
        exception: { threadId: 0x1234, code: 11, address: regs["pc"]! },
      }).bytes;
    const { bytes } = writeTestMinidump({
      machine: "arm-breakpad",
      platformId,
      osVersion: { major: 0, minor: 0, build: 0, csd },
      armCpu: { level: 7, cpuid: 0x511f06f0, elfHwcaps: 0x0001b0d7 },
      threads: [{ id: 0x1234, registers: regs, stack }],
      modules: [{ path: "/data/app/com.example/lib/arm/libapp.so", base: ANDROID_BASE, size: moduleSize, codeView: { elf: { buildId } } }],
      exception: { threadId: 0x1234, code: 11, address: regs["pc"]! },
    });
    const dump = readMinidump(bytesSource(bytes));
    const debugId = dump.modules[0]!.debugId!;
    const path = `libapp.so/${debugId}/libapp.so.sym`;
    out.push({ key: `${os}/crasher/${where}/cfi`, dump: bytes, syms: new Map([[path, sym(debugId, true)]]) });
    if (where === "body" && os === "android") {
      // Other CPUs: a Cortex-A15 with every hwcap Breakpad names, and an implementer and part it does not know, without hwcaps.
      out.push({ key: "android/cpu/cortex-a15", dump: dumpWith({ level: 7, cpuid: 0x412fc0f2, elfHwcaps: 0x7ffff }), syms: new Map() });
      out.push({ key: "android/cpu/unknown", dump: dumpWith({ level: 8, cpuid: 0x12345678, elfHwcaps: 0 }), syms: new Map() });
    }
    out.push({ key: `${os}/crasher/${where}/funcs`, dump: bytes, syms: new Map([[path, sym(debugId, false)]]) });
    out.push({ key: `${os}/crasher/${where}/no-syms`, dump: bytes, syms: new Map() });
  }
  return out;
}

/**
 * A Windows ARM CONTEXT (0x1A0 bytes, CPU bit 0x00200000), as MiniDumpWriteDump writes it, in a
 * dump without a ModuleList stream: Breakpad reads only its own ARM context, so it lists the
 * thread with no frames, and without a module list it prints no module section.
 */
function windowsContextCase(): EmulatedCase {
  const registers = { ...Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`r${i}`, BigInt(0x1000 + i)])), sp: 0x107f00n, lr: 0x401235n, pc: 0x402000n, cpsr: 0x20n };
  const { bytes } = writeTestMinidump({ machine: "arm", threads: [{ id: 1, registers, stack: { base: 0x107f00n, bytes: new Uint8Array(0x100) } }], exception: { threadId: 1, code: 0xc0000005, address: 0x402000n } });
  return { key: "arm/windows-context", dump: bytes, syms: new Map() };
}

/** Every how many snapshots of an emulator sweep one is dumped. */
export const EMULATED_EVERY = 60;

/**
 * The emulator's dumps of the clang-16 ARM programs: snapshot 30, 90, 150, ... of each sweep in
 * vectors/arm/c, as `stackwalk emulate --dmp` writes it, with and without the module image (the
 * stack alone, as a Windows dump holds it) and with and without the `.sym` store `--dmp` writes.
 */
function emulatorCases(): EmulatedCase[] {
  const out: EmulatedCase[] = [];
  for (const program of ARM_PROGRAMS) {
    const file = join(REPO_ROOT, ARM_C_FOLDER, `${program}.sweep.json`);
    const identities = new Map<Module, Module>();
    for (const v of replaySweep(parseSweep(readFileSync(file, "utf8"), file))) {
      if (v.step % EMULATED_EVERY !== EMULATED_EVERY / 2) continue;
      const snap = dumpSnapshot(v, identities);
      const m = snap.modules[0]!;
      const input = symFileInput(m, "arm", snap.memory)!;
      input.stackCfi = armModuleCfi(m, snap.memory);
      const store = new Map([[symFileStorePath(input), formatBreakpadSym(input)]]);
      const stack = (snap.memory as unknown as { regions: { base: bigint; bytes: Uint8Array }[] }).regions.find((r) => r.base < m.base)!;
      for (const images of [true, false]) {
        const sink = bytesSink();
        writeMinidump(snap, sink, images ? {} : { ranges: [{ start: stack.base, size: BigInt(stack.bytes.length) }] });
        const dump = sink.bytes();
        for (const syms of [true, false]) out.push({ key: `emulated/${program}/${v.step}/${images ? "images" : "no-images"}/${syms ? "syms" : "no-syms"}`, dump, syms: syms ? store : new Map() });
      }
    }
  }
  return out;
}

/** Every case, in a fixed order. */
export function* armCases(): Generator<EmulatedCase> {
  yield windowsContextCase();
  yield* androidCases();
  yield* iosCases();
  for (const [name, snap] of stops()) {
    const m = snap.modules[0]!;
    const input = symFileInput(m, "arm", snap.memory)!;
    input.stackCfi = armModuleCfi(m, snap.memory);
    const store = new Map([[symFileStorePath(input), formatBreakpadSym(input)]]);
    for (const images of [true, false]) {
      const sink = bytesSink();
      const stack = (snap.memory as unknown as { regions: { base: bigint; bytes: Uint8Array }[] }).regions.find((r) => r.base < BASE)!;
      writeMinidump(snap, sink, images ? {} : { ranges: [{ start: stack.base, size: BigInt(stack.bytes.length) }] });
      const dump = sink.bytes();
      for (const syms of [true, false]) yield { key: `arm/${name}/${images ? "images" : "no-images"}/${syms ? "syms" : "no-syms"}`, dump, syms: syms ? store : new Map() };
    }
  }
  yield* emulatorCases();
}

if (process.argv[1]?.endsWith("breakpad-arm.ts")) {
  const tool = process.argv[2] ?? process.env["BREAKPAD_MINIDUMP_STACKWALK"];
  if (tool === undefined) throw new Error("give the path of Breakpad's minidump_stackwalk (or set BREAKPAD_MINIDUMP_STACKWALK)");
  const work = mkdtempSync(join(tmpdir(), "breakpad-arm-"));
  const reports: Record<string, string> = {};
  let n = 0;
  for (const c of armCases()) {
    const args = caseFiles(c, join(work, String(n++)));
    reports[c.key] = execFileSync(tool, args, { stdio: ["ignore", "pipe", "ignore"], maxBuffer: 1 << 26 }).toString();
    reports[`${c.key}/-m`] = execFileSync(tool, ["-m", ...args], { stdio: ["ignore", "pipe", "ignore"], maxBuffer: 1 << 26 }).toString();
    reports[`${c.key}/-s`] = execFileSync(tool, ["-s", ...args], { stdio: ["ignore", "pipe", "ignore"], maxBuffer: 1 << 26 }).toString();
  }
  writeFileSync("test/fixtures/breakpad-arm/reports.json", `${JSON.stringify(reports, null, 1)}\n`);
  console.log(`${n} dumps, ${Object.keys(reports).length} reports written to test/fixtures/breakpad-arm/reports.json`);
}
