/**
 * Minidumps of the emulator's snapshots at function breaks, as `stackwalk emulate --dmp --break
 * NAME` writes them for every function of a program: the committed sweeps of the real C programs
 * hold a snapshot before every instruction, and the snapshots whose PC is the first instruction
 * of a function are exactly the break hits. Each becomes a dump in memory (the product writer,
 * read back by the product reader), optionally with the module images withheld (stack and
 * context only, as a real Windows dump holds), and with or without the .sym files the emulator's
 * symbol store would hold for it. Used by test/walk/dump-walks.test.ts and `npm run bench`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseBreakpadSym, stackWinToFpoData, stackWinToFrameData } from "../../src/formats/breakpad-sym.js";
import { formatBreakpadSym, symFileInput } from "../../src/formats/breakpad-sym-write.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { bytesSink, writeMinidump, type MemoryExtent } from "../../src/formats/minidump-write.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import { parseVector, type Vector } from "../../src/formats/vector.js";
import { compareWithTruth } from "../../src/walk/compare.js";
import { walkThread, type WalkOptions } from "../../src/walk/walk.js";
import type { Module, ModuleSymbol, Snapshot, TruthFrame } from "../../src/model/snapshot.js";
import { dumpSnapshot } from "../../src/cli/emulate.js";
import { UnwindCache } from "../../src/index.js";
import { arm64ModuleCfi, armModuleCfi } from "../../src/entry/arch.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import { x64ModuleCfi } from "../../src/arch/x64/cfi-from-unwind.js";

/** A break hit: the snapshot, the function it broke in and its ground truth. */
export interface BreakHit {
  program: string;
  function: string;
  step: number;
  vector: Vector;
  truth: TruthFrame[];
}

/** The snapshots of a sweep file whose PC is the first instruction of a function of its modules. */
export function breakHits(file: string): BreakHit[] {
  const sweep = parseSweep(readFileSync(file, "utf8"), file);
  const program = file.replace(/^.*\//, "").replace(/\.sweep\.json$/, "");
  const hits: BreakHit[] = [];
  for (const v of replaySweep(sweep)) {
    const thread = v.threads[0]!;
    const pc = thread.registers["eip"] ?? thread.registers["rip"] ?? thread.registers["pc"]!;
    for (const m of v.modules) {
      if (pc < m.base || pc - m.base >= m.size) continue;
      const fn = m.symbols.find((s) => s.size !== undefined && m.base + s.rva === pc);
      if (fn === undefined) continue;
      // The replay moves one memory image forward: a hit keeps a copy of it.
      const memory = new RegionMemory(v.memory.regions.map((r) => ({ base: r.base, bytes: r.bytes.slice() })));
      hits.push({ program, function: fn.name, step: v.step, vector: { ...v, memory }, truth: thread.truth! });
    }
  }
  return hits;
}

/** Every break hit of the sweeps in `folder` (one per program). */
export function folderBreakHits(folder: string, programs: readonly string[]): BreakHit[] {
  return programs.flatMap((p) => breakHits(join(folder, `${p}.sweep.json`)));
}

/** The memory ranges of a snapshot outside its modules' images: the stack (and anything else the emulator recorded). */
function rangesWithoutImages(snapshot: Snapshot): MemoryExtent[] {
  const regions = (snapshot.memory as unknown as { regions: { base: bigint; bytes: Uint8Array }[] }).regions;
  return regions
    .filter((r) => !snapshot.modules.some((m) => r.base >= m.base && r.base < m.base + m.size))
    .map((r) => ({ start: r.base, size: BigInt(r.bytes.length) }));
}

/**
 * The dump of a snapshot as the emulator writes it (an EXCEPTION_BREAKPOINT in its thread, the
 * modules with CodeView identities), read back: images withheld when asked, and the modules'
 * .sym files (as the emulator's store holds them, STACK CFI for x64 included) attached when asked.
 */
export function dumpOf(snapshot: Snapshot, options: { withholdImages: boolean; symbols: boolean }, cache = new UnwindCache()): Snapshot {
  const sink = bytesSink();
  writeMinidump(snapshot, sink, options.withholdImages ? { ranges: rangesWithoutImages(snapshot) } : {});
  const back = minidumpSnapshot(readMinidump(bytesSource(sink.bytes())));
  if (options.symbols) {
    back.modules.forEach((m, i) => {
      const original = snapshot.modules[i]!;
      const input = symFileInput(original, snapshot.machine, snapshot.memory);
      if (input === undefined) return;
      if (snapshot.machine === "x64") input.stackCfi = x64ModuleCfi(original, snapshot.memory, cache);
      if (snapshot.machine === "arm64") input.stackCfi = arm64ModuleCfi(original, snapshot.memory, cache);
      if (snapshot.machine === "arm") input.stackCfi = armModuleCfi(original, snapshot.memory, cache);
      const sym = parseBreakpadSym(formatBreakpadSym(input));
      m.unwind = { fpo: stackWinToFpoData(sym.stackWin), frameData: stackWinToFrameData(sym.stackWin), stackCfi: sym.stackCfi, origin: "Breakpad .sym" };
      m.symbols = [
        ...sym.functions.map((f): ModuleSymbol => ({ name: f.name, rva: BigInt(f.address), size: BigInt(f.size), kind: "func", paramSize: f.paramSize })),
        ...sym.publics.map((p): ModuleSymbol => ({ name: p.name, rva: BigInt(p.address), kind: "public", paramSize: p.paramSize })),
      ].sort((a, b) => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0));
    });
  }
  return back;
}

/** The real C programs (vectors/programs/c). */
export const C_PROGRAMS = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved", "noreturn-longjmp"] as const;

/** The x64 break hits: every function of the x64 C programs, and every capture of the synthetic x64 chains. */
export function x64DumpHits(root = "."): BreakHit[] {
  const hits = folderBreakHits(join(root, "vectors/x64/c"), C_PROGRAMS);
  const dir = join(root, "vectors/x64/synthetic");
  for (const f of readdirSync(dir).sort()) {
    const v = parseVector(readFileSync(join(dir, f), "utf8"));
    hits.push({ program: f, function: "capture", step: 0, vector: v, truth: v.threads[0]!.truth! });
  }
  return hits;
}

/** The ARM64 break hits: every function of the arm64 and arm64-fp C programs and of the swept synthetic ARM64 chains, and every capture of the others. */
export function arm64DumpHits(root = "."): BreakHit[] {
  const programs = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved"];
  const synthetic = join(root, "vectors/arm64/synthetic");
  return [
    ...folderBreakHits(join(root, "vectors/arm64/c"), programs),
    ...folderBreakHits(join(root, "vectors/arm64/c-fp"), programs),
    ...readdirSync(synthetic)
      .sort()
      .flatMap((f): BreakHit[] => {
        if (f.endsWith(".sweep.json")) return breakHits(join(synthetic, f));
        const v = parseVector(readFileSync(join(synthetic, f), "utf8"));
        return [{ program: f, function: "capture", step: 0, vector: v, truth: v.threads[0]!.truth! }];
      }),
  ];
}

/**
 * The ARM dumps: every snapshot of the clang-16 ARM programs' sweeps (vectors/arm/c), with the
 * identity `stackwalk emulate --dmp` gives their modules (the images have no CodeView record), so
 * that the symbol store can hold their .sym files. The images have no symbols, so no function
 * breaks can be found: every instruction is a hit, `function` is its address.
 */
export function armDumpHits(root = "."): BreakHit[] {
  const hits: BreakHit[] = [];
  for (const program of ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved"]) {
    const file = join(root, "vectors/arm/c", `${program}.sweep.json`);
    const identities = new Map<Module, Module>();
    for (const v of replaySweep(parseSweep(readFileSync(file, "utf8"), file))) {
      const memory = new RegionMemory(v.memory.regions.map((r) => ({ base: r.base, bytes: r.bytes.slice() })));
      const vector: Vector = { ...v, memory, modules: dumpSnapshot({ ...v, memory }, identities).modules };
      const thread = v.threads[0]!;
      hits.push({ program, function: `0x${thread.registers["pc"]!.toString(16)}`, step: v.step, vector, truth: thread.truth! });
    }
  }
  return hits;
}

/** The x86 break hits: every function of the C programs built without frame pointers. */
export function x86FpoDumpHits(root = "."): BreakHit[] {
  return folderBreakHits(join(root, "vectors/x86/c-fpo"), C_PROGRAMS);
}

/** The x86 break hits of the C programs built with frame pointers. */
export function x86FpDumpHits(root = "."): BreakHit[] {
  return folderBreakHits(join(root, "vectors/x86/c-fp"), C_PROGRAMS);
}

/** One class of dump of the truth table: which break hits, written how. */
export interface DumpClass {
  name: string;
  hits: () => BreakHit[];
  dump: { withholdImages: boolean; symbols: boolean };
}

/**
 * The classes of dump `auto` and Breakpad's walker are compared on (`npm run bench`, the README's
 * table): each machine's programs with the code in the dump or not, with their symbol files or
 * not.
 */
export const DUMP_CLASSES: readonly DumpClass[] = [
  { name: "x86 FPO, code in the dump, no symbols", hits: x86FpoDumpHits, dump: { withholdImages: false, symbols: false } },
  { name: "x86 FPO, no code, no symbols", hits: x86FpoDumpHits, dump: { withholdImages: true, symbols: false } },
  { name: "x86 FPO, no code, STACK WIN", hits: x86FpoDumpHits, dump: { withholdImages: true, symbols: true } },
  { name: "x86 EBP frames, code in the dump, no symbols", hits: x86FpDumpHits, dump: { withholdImages: false, symbols: false } },
  { name: "x86 EBP frames, no code, no symbols", hits: x86FpDumpHits, dump: { withholdImages: true, symbols: false } },
  { name: "x64, no code, STACK CFI", hits: x64DumpHits, dump: { withholdImages: true, symbols: true } },
  { name: "x64, no code, no symbols", hits: x64DumpHits, dump: { withholdImages: true, symbols: false } },
  { name: "x64, code in the dump, no symbols", hits: x64DumpHits, dump: { withholdImages: false, symbols: false } },
  { name: "ARM64, no code, STACK CFI", hits: arm64DumpHits, dump: { withholdImages: true, symbols: true } },
  { name: "ARM64, no code, no symbols", hits: arm64DumpHits, dump: { withholdImages: true, symbols: false } },
  { name: "ARM64, code in the dump, no symbols", hits: arm64DumpHits, dump: { withholdImages: false, symbols: false } },
];

/** One row of the truth table: the exact stacks of `auto` and of Breakpad's walker on a class. */
export interface TruthRow {
  name: string;
  total: number;
  auto: DumpScore;
  breakpad: DumpScore;
}

/** Scores `auto` and `--walker breakpad` on every class of {@link DUMP_CLASSES}. */
export function truthTable(classes: readonly DumpClass[] = DUMP_CLASSES): TruthRow[] {
  return classes.map((c) => {
    const hits = c.hits();
    return { name: c.name, total: hits.length, auto: scoreDumps(hits, c.dump, { walker: "auto" }), breakpad: scoreDumps(hits, c.dump, { walker: "breakpad" }) };
  });
}

/** How walks of break dumps fare against the truth. */
export interface DumpScore {
  /** Stacks walked exactly. */
  stacks: number;
  /** Frames that match the truth, frame for frame up to a walk's first difference. */
  frames: number;
  /** Every truth frame. */
  totalFrames: number;
  /** The hits walked exactly. */
  exact: Set<BreakHit>;
}

/** Walks the dump of every hit with `options` and scores it against the truth. */
export function scoreDumps(hits: readonly BreakHit[], dump: { withholdImages: boolean; symbols: boolean }, options: WalkOptions): DumpScore {
  const out: DumpScore = { stacks: 0, frames: 0, totalFrames: 0, exact: new Set() };
  // The hits of one sweep share their modules: their symbol files' STACK CFI is worked out once.
  const cache = new UnwindCache();
  for (const h of hits) {
    const d = dumpOf(h.vector, dump, cache);
    const walk = walkThread(d, d.threads[0]!, options);
    let k = 0;
    while (k < walk.frames.length && k < h.truth.length && walk.frames[k]!.addrPC === h.truth[k]!.pc && walk.frames[k]!.addrStack === h.truth[k]!.sp) k++;
    out.frames += k;
    out.totalFrames += h.truth.length;
    if (compareWithTruth(h.vector.machine, walk, h.truth).exact) {
      out.stacks++;
      out.exact.add(h);
    }
  }
  return out;
}
