/**
 * `npm run bench`: emulator speed (instructions per second with and without the shadow-stack
 * hook, snapshots per second in sweep mode), the time to regenerate the whole vector corpus
 * (target: 60 s on 2 cores), the walker's speed on a deep frame chain, and the other benches of
 * this folder, last this project against Breakpad's `minidump_stackwalk` (bench-breakpad.ts).
 */
import { fileURLToPath } from "node:url";
import { compareWithTruth, RegionMemory, UnwindCache, walkThread, type Snapshot } from "../../src/index.js";
import { formatSweep, readMappedImage, replaySweep, type FrameData } from "../../src/entry/formats.js";
import { FRAME_NONFPO } from "../../src/entry/dbghelp.js";
import { bestRate, rateText } from "./bench-rate.js";
import { corpusFiles } from "../../emulator/corpus.js";
import { buildSpec } from "../../emulator/programs/program-file.js";
import { RECURSION_1000 } from "../../emulator/programs/x86-corpus.js";
import type { X86ProgramSpec } from "../../emulator/programs/x86-chain.js";
import { loadAssembler } from "../../emulator/assemble.js";
import type { CpuMode } from "../../emulator/cpu-mode.js";
import { loadDisassembler } from "../../emulator/disassemble.js";
import { runRealPrograms } from "../../emulator/real-programs.js";
import { DEFAULT_STACKS, emulate, mapStack, runImage, type RunOptions, type RunResult } from "../../emulator/run.js";
import { UC_PROT, Unicorn } from "../../emulator/unicorn.js";

/** The measured rates. */
export interface EmulatorBench {
  /** Instructions in the loop program. */
  loopInstructions: number;
  /** Instructions per second with no hook at all. */
  plainPerSecond: number;
  /** Instructions per second with the shadow-stack code hook. */
  tracedPerSecond: number;
  /** Snapshots per second when every instruction is snapshotted (the real programs). */
  snapshotsPerSecond: number;
  /** Snapshots in all real-program sweeps. */
  snapshots: number;
  /** Milliseconds to run all real programs and format their sweeps. */
  regenerationMs: number;
}

const CODE = 0x0040_1000n;

/**
 * A call-heavy loop: `iterations` calls of a frame-pointer function, 7 instructions each
 * (call, push, mov, pop, ret, dec, jnz), plus the first `mov` and the final `ret`.
 */
function loopSource(mode: CpuMode, iterations: number): string {
  const [sp, bp, cx] = mode === 64 ? ["rsp", "rbp", "rcx"] : ["esp", "ebp", "ecx"];
  return [`mov ${cx}, ${iterations}`, "again:", "call work", `dec ${cx}`, "jnz again", "ret", "work:", `push ${bp}`, `mov ${bp}, ${sp}`, `pop ${bp}`, "ret"].join("\n");
}

/** Runs the loop once and returns the seconds it took. */
async function timeLoop(mode: CpuMode, iterations: number, options: RunOptions): Promise<{ seconds: number; result: RunResult }> {
  const asm = await loadAssembler();
  const disassembler = await loadDisassembler();
  const bytes = asm.assemble(loopSource(mode, iterations), { mode, address: CODE });
  const uc = Unicorn.open(mode);
  try {
    uc.memMap(CODE, 0x1000, UC_PROT.READ | UC_PROT.EXEC);
    uc.memWrite(CODE, bytes);
    const stack = DEFAULT_STACKS[mode];
    mapStack(uc, stack);
    const setup = { uc, entry: CODE, modules: [], regions: [{ base: stack.base, size: stack.size, name: "stack" }], stack };
    const started = performance.now();
    const result = emulate(setup, { maxInstructions: 100_000_000, ...options }, (b, a, m) => disassembler.describe(b, a, m));
    return { seconds: (performance.now() - started) / 1000, result };
  } finally {
    uc.close();
  }
}

/** Measures the emulator (about two seconds). */
export async function benchEmulator(iterations = 100_000): Promise<EmulatorBench> {
  const loopInstructions = iterations * 7 + 2;
  await timeLoop(32, 1000, {});
  const plain = await timeLoop(32, iterations * 20, { trace: false });
  const traced = await timeLoop(32, iterations, {});
  if (traced.result.instructions !== loopInstructions) throw new Error(`the loop ran ${String(traced.result.instructions)} instructions, not ${loopInstructions}`);
  const started = performance.now();
  const runs = await runRealPrograms();
  const ran = performance.now();
  for (const r of runs) formatSweep(r.result.sweep);
  const regenerationMs = performance.now() - started;
  const snapshots = runs.reduce((n, r) => n + r.result.sweep.steps.length, 0);
  return {
    loopInstructions,
    plainPerSecond: ((iterations * 20 * 7 + 2) / plain.seconds),
    tracedPerSecond: loopInstructions / traced.seconds,
    snapshotsPerSecond: snapshots / ((ran - started) / 1000),
    snapshots,
    regenerationMs,
  };
}

/** The measurements as text, one per line. */
export function formatBench(b: EmulatorBench): string {
  const rate = (n: number): string => `${Math.round(n).toLocaleString("en-US")}/s`;
  return [
    `emulator, no hook:              ${rate(b.plainPerSecond)} instructions`,
    `emulator, shadow-stack hook:    ${rate(b.tracedPerSecond)} instructions`,
    `sweep (every instruction):      ${rate(b.snapshotsPerSecond)} snapshots`,
    `real-program sweeps regenerated: ${b.snapshots} snapshots in ${Math.round(b.regenerationMs)} ms`,
  ].join("\n") + "\n";
}

/** The corpus regeneration target (the emulator issue): the whole corpus in at most 60 s. */
export const CORPUS_TARGET_MS = 60_000;

/** Times a full regeneration of the corpus (in memory; nothing is written). */
export async function benchCorpus(): Promise<{ files: number; bytes: number; ms: number }> {
  const started = performance.now();
  const files = await corpusFiles();
  return { files: files.length, bytes: files.reduce((n, f) => n + f.text.length, 0), ms: performance.now() - started };
}

/** An x86 EBP chain of `depth` frames in a snapshot of its own (no modules: the `frame-pointer` walker's). */
export function framePointerBenchStack(depth = 10_000): Snapshot {
  const base = 0x0010_0000n;
  const bytes = new Uint8Array(depth * 16 + 16);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < depth; i++) {
    const at = i * 16;
    view.setUint32(at, i === depth - 1 ? 0 : Number(base) + at + 16, true);
    view.setUint32(at + 4, i === depth - 1 ? 0 : 0x00401000 + (i % 64), true);
  }
  return {
    machine: "x86",
    threads: [{ id: 0, crashed: true, registers: { eip: 0x00401000n, esp: base - 16n, ebp: base } }],
    memory: new RegionMemory([{ base: base - 16n, bytes: new Uint8Array(16) }, { base, bytes }]),
    modules: [],
  };
}

/**
 * Walks an x86 EBP chain of `depth` frames, warm, and returns frames per second: the
 * frame-pointer strategy, the progress rules and the per-frame parameter reads, one core.
 */
export function benchFramePointerWalk(depth = 10_000, rounds = 10): { frames: number; perSecond: number } {
  const snapshot = framePointerBenchStack(depth);
  const thread = snapshot.threads[0]!;
  const frames = walkThread(snapshot, thread, { walker: "frame-pointer" }).frames.length;
  if (frames !== depth) throw new Error(`the bench chain walked to ${frames} frames, not ${depth}`);
  return { frames, perSecond: bestRate(() => walkThread(snapshot, thread, { walker: "frame-pointer" }).frames.length, rounds) };
}

/**
 * A real emulated stack of `depth` FPO frames (recursion-1000's shape, deeper), twice: with the
 * image's FPO_DATA, and with the same frames described by FrameData programs instead (both for
 * the `fpo` walker).
 */
export async function fpoBenchStacks(depth = 10_000): Promise<{ fpo: Snapshot; frameData: Snapshot }> {
  const spec: X86ProgramSpec = {
    ...RECURSION_1000,
    name: "recursion-bench",
    functions: RECURSION_1000.functions.map((f) => (f.recursion === undefined ? f : { ...f, recursion: depth })),
  };
  const program = await buildSpec({ machine: "x86", spec });
  // A 1 MiB stack below the default one: room for `depth` 16-byte frames.
  const stack = { base: 0x0002_0000n, size: 0x10_0000n, initialSp: 0x0011_ffecn };
  const result = await runImage(
    { name: `${program.name}.exe`, image: program.image, symbols: program.symbols },
    { breaks: program.captures, labels: program.labels, stack, maxInstructions: 10_000_000 },
  );
  const vector = replaySweep(result.sweep).next().value;
  if (vector === undefined) throw new Error("the bench program took no snapshot");
  const module = vector.modules[0]!;
  const records = readMappedImage(vector.memory, module.base)?.fpo ?? [];
  const frameData: FrameData[] = records.map((r) => ({
    rvaStart: r.ulOffStart, codeSize: r.cbProcSize, localSize: r.cdwLocals * 4, paramsSize: r.cdwParams * 4, maxStackSize: 0, frameFunc: 0,
    prologSize: r.cbProlog, savedRegsSize: r.cbRegs * 4, flags: 0, hasSEH: false, hasEH: false, isFunctionStart: true,
    program: r.cbFrame === FRAME_NONFPO ? "$T0 $ebp 4 + = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ =" : "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =",
  }));
  return { fpo: vector, frameData: { ...vector, modules: [{ ...module, unwind: { fpo: [], frameData, origin: "bench" } }] } };
}

/**
 * Walks the stacks of {@link fpoBenchStacks} with the `fpo` walker: once with the image's
 * FPO_DATA, once with the FrameData programs. Returns frames per second for each, warm, one core.
 */
export async function benchFpoWalks(depth = 10_000, rounds = 10): Promise<{ frames: number; fpoPerSecond: number; frameDataPerSecond: number }> {
  const stacks = await fpoBenchStacks(depth);
  const time = (snapshot: Snapshot): { frames: number; perSecond: number } => {
    const thread = snapshot.threads[0]!;
    // Warm: the walks of one snapshot share what they learn (tables, rules, return addresses).
    const options = { walker: "fpo" as const, cache: new UnwindCache() };
    const walk = walkThread(snapshot, thread, options);
    const c = compareWithTruth("x86", walk, thread.truth!);
    if (!c.exact) throw new Error(`the bench stack does not walk exactly: ${c.difference?.text ?? ""}`);
    return { frames: walk.frames.length, perSecond: bestRate(() => walkThread(snapshot, thread, options).frames.length, rounds) };
  };
  const fpo = time(stacks.fpo);
  const fd = time(stacks.frameData);
  return { frames: fpo.frames, fpoPerSecond: fpo.perSecond, frameDataPerSecond: fd.perSecond };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(formatBench(await benchEmulator()));
  const corpus = await benchCorpus();
  const verdict = corpus.ms <= CORPUS_TARGET_MS ? "within" : "OVER";
  process.stdout.write(
    `corpus regenerated:             ${corpus.files} files, ${(corpus.bytes / 1e6).toFixed(2)} MB in ${Math.round(corpus.ms)} ms (${verdict} the ${CORPUS_TARGET_MS / 1000} s target)\n`,
  );
  const walk = benchFramePointerWalk();
  process.stdout.write(`x86 frame-pointer walk:         ${Math.round(walk.perSecond).toLocaleString("en-US")} frames/s (${walk.frames}-frame chain, warm)\n`);
  const fpo = await benchFpoWalks();
  process.stdout.write(`x86 fpo walk, FPO_DATA:         ${rateText(fpo.fpoPerSecond)}, ${fpo.frames} frames\n`);
  process.stdout.write(`x86 fpo walk, FrameData:        ${rateText(fpo.frameDataPerSecond)}, ${fpo.frames} frames\n`);
  await (await import("./bench-x64.js")).printX64Bench();
  await (await import("./bench-arm64.js")).printArm64Bench();
  (await import("./bench-arm.js")).printArmBench();
  process.stdout.write((await import("./bench-dump-walks.js")).formatDumpWalkBench());
  (await import("./bench-ia64.js")).printIa64Bench();
  (await import("./bench-dump.js")).printDumpBench();
  (await import("./bench-hostile.js")).printHostileBench();
  await (await import("./bench-deep.js")).printDeepBench();
  await (await import("./bench-inline.js")).printInlineBench();
  await (await import("./bench-package.js")).printPackageBench();
  process.stdout.write((await import("./bench-batch.js")).formatBatchBench((await import("./bench-batch.js")).benchBatch()));
  await (await import("./bench-breakpad.js")).printBreakpadBench();
}
