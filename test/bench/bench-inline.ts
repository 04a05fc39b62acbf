/**
 * What inline frames cost, run by `npm run bench` (test/bench/bench.ts) or alone with
 * `tsx test/bench/bench-inline.ts`: deep-recursion (vectors/programs/c, x86-fpo) emulated to
 * its break at 10,000 levels, its module's `.sym` written as the emulator's `--dmp` store writes
 * it, once as it is and once with every FUNC given three nested INLINE records over its whole
 * code. Each symbol file is read back and attached, and the thread is walked with every frame
 * located (function, line, and its inline chain worked out); the bench prints the time of each
 * (warm, the fastest of several runs) and what inline expansion adds. Beside it, the same with
 * the text written, where each inline frame is a line of its own; and the whole command a user
 * runs, `stackwalk walk X.dmp` (the package's bin, its symbols from the store beside the dump),
 * with each store.
 *
 * Target: inline expansion adds at most 10% to the walk of a 10,000-frame dump with symbols
 * (the command).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { attachSymbolFile, locate, parseSymbolFile, walkThread, type ModuleSymbol, type Snapshot } from "../../src/index.js";
import { formatBreakpadSym, symFileInput, symFileStorePath } from "../../src/entry/formats.js";
import { writeMinidumpFile } from "../../src/node/index.js";
import type { InlineSite } from "../../src/model/inline.js";
import { writeText } from "../../src/render/text.js";
import { runDeepRecursion, writeDeepRecursion } from "../../emulator/real-programs.js";
import { check, runChild } from "./bench-dump.js";
import { fastest, stackwalkBin } from "./bench-deep.js";

/** The most inline expansion may add to the walk and its text, as a fraction. */
export const INLINE_OVERHEAD_TARGET = 0.1;

/** One measured case. */
export interface InlineBench {
  frames: number;
  /** Inline frames printed with the INLINE records. */
  inlineFrames: number;
  /** Walk and locate every frame, without and with the INLINE records. */
  plainMs: number;
  inlineMs: number;
  /** Walk and write the text, without and with them. */
  plainTextMs: number;
  inlineTextMs: number;
  /** `stackwalk walk X.dmp`, without and with them: the fastest of the runs. */
  plainCommandMs: number;
  inlineCommandMs: number;
}

/** Three nested sites over the whole of `symbol`'s code, outermost first. */
function nestedSites(symbol: ModuleSymbol): InlineSite[] {
  const ranges = [[symbol.rva, symbol.size!] as const];
  return [0, 1, 2].map((depth) => ({ function: `inlined_${depth}`, depth, callLine: 10 + depth, callFile: "inlined.h", ranges }));
}

/** Walks `snapshot`'s thread and locates every frame; returns the inline frames found. */
function walkAndLocate(snapshot: Snapshot): number {
  let inline = 0;
  for (const frame of walkThread(snapshot, snapshot.threads[0]!).frames) inline += locate(snapshot.modules, frame).inlines?.length ?? 0;
  return inline;
}

/** Walks `snapshot`'s thread and writes it as text; returns the inline frames printed. */
function walkAndPrint(snapshot: Snapshot): number {
  const walk = walkThread(snapshot, snapshot.threads[0]!);
  let inline = 0;
  writeText(snapshot.machine, snapshot.modules, [{ thread: snapshot.threads[0]!, walk }], (t) => {
    inline += t.match(/^ {2}- {2}0x/gm)?.length ?? 0;
  });
  return inline;
}

/** Makes the dump's snapshot twice (with and without INLINE records) and times walk + text of each. */
export async function benchInline(depth = 10_000, runs = 7): Promise<InlineBench> {
  const dir = mkdtempSync(join(tmpdir(), "bench-inline-"));
  try {
    const { vector } = await runDeepRecursion(writeDeepRecursion(dir, "x86-fpo", depth), "x86-fpo", depth);
    const module = vector.modules[0]!;
    const input = symFileInput(module, vector.machine, vector.memory)!;
    const withSites = { ...input, symbols: input.symbols!.map((s) => (s.size === undefined ? s : { ...s, inlines: { at: (rva: bigint) => (rva >= s.rva && rva < s.rva + s.size! ? [...nestedSites(s)].reverse() : []) } })) };
    const snapshotWith = (text: string): Snapshot => {
      const snapshot: Snapshot = { ...vector, modules: vector.modules.map((m) => ({ ...m, symbols: [] })) };
      attachSymbolFile(snapshot, parseSymbolFile(new TextEncoder().encode(text), { name: "deep-recursion.sym" }));
      return snapshot;
    };
    const plain = snapshotWith(formatBreakpadSym(input));
    const inlined = snapshotWith(formatBreakpadSym(withSites));
    const frames = walkThread(plain, plain.threads[0]!).frames.length;
    const inlineFrames = walkAndLocate(inlined);
    if (walkAndLocate(plain) !== 0 || walkAndPrint(plain) !== 0 || inlineFrames < 3 * (frames - 2) || walkAndPrint(inlined) !== inlineFrames) {
      throw new Error(`bench-inline: ${inlineFrames} inline frames found for ${frames} frames`);
    }
    // Alternate the two so that the machine's load falls on both alike.
    // The command, with the dump and each store in a folder of its own.
    const command = (text: string, name: string): (() => number) => {
      const folder = join(dir, name);
      const sym = join(folder, symFileStorePath(input));
      mkdirSync(dirname(sym), { recursive: true });
      writeFileSync(sym, text);
      writeMinidumpFile(join(folder, "deep.dmp"), vector);
      const expected = name === "inline" ? inlineFrames : 0;
      return () => {
        const run = check(runChild([], [stackwalkBin(), "walk", join(folder, "deep.dmp")]), `walk ${name}`);
        const printed = run.stdout.match(/^ {2}- {2}0x/gm)?.length ?? 0;
        if (printed !== expected) throw new Error(`bench-inline: stackwalk walk printed ${printed} inline frames, not ${expected}`);
        return run.ms;
      };
    };
    const plainCommand = command(formatBreakpadSym(input), "plain");
    const inlineCommand = command(formatBreakpadSym(withSites), "inline");
    const best = { plainMs: Infinity, inlineMs: Infinity, plainTextMs: Infinity, inlineTextMs: Infinity, plainCommandMs: Infinity, inlineCommandMs: Infinity };
    for (let r = 0; r < runs; r++) {
      if (r < 5) {
        best.plainCommandMs = Math.min(best.plainCommandMs, plainCommand());
        best.inlineCommandMs = Math.min(best.inlineCommandMs, inlineCommand());
      }
      best.plainMs = Math.min(best.plainMs, fastest(1, () => walkAndLocate(plain)));
      best.inlineMs = Math.min(best.inlineMs, fastest(1, () => walkAndLocate(inlined)));
      best.plainTextMs = Math.min(best.plainTextMs, fastest(1, () => walkAndPrint(plain)));
      best.inlineTextMs = Math.min(best.inlineTextMs, fastest(1, () => walkAndPrint(inlined)));
    }
    return { frames, inlineFrames, ...best };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const percent = (more: number, less: number): string => `${more >= less ? "+" : ""}${((more / less - 1) * 100).toFixed(1)}%`;

/** The bench lines. */
export function formatInlineBench(b: InlineBench): string {
  const added = b.inlineCommandMs / b.plainCommandMs - 1;
  return (
    `inline frames, ${b.frames.toLocaleString("en-US")}-frame x86 dump, stackwalk walk X.dmp:`.padEnd(40) +
    ` ${b.plainCommandMs.toFixed(0)} ms without INLINE records, ${b.inlineCommandMs.toFixed(0)} ms with them (${b.inlineFrames.toLocaleString("en-US")} inline frames): ` +
    `${percent(b.inlineCommandMs, b.plainCommandMs)} (${added <= INLINE_OVERHEAD_TARGET ? "within" : "OVER"} the ${INLINE_OVERHEAD_TARGET * 100}% target)\n` +
    `  in-process walk + locate:`.padEnd(40) + ` ${b.plainMs.toFixed(1)} ms without, ${b.inlineMs.toFixed(1)} ms with: ${percent(b.inlineMs, b.plainMs)}\n` +
    `  in-process walk + text (an inline frame is a line):`.padEnd(40) +
    ` ${b.plainTextMs.toFixed(1)} ms without, ${b.inlineTextMs.toFixed(1)} ms with: ${percent(b.inlineTextMs, b.plainTextMs)}\n`
  );
}

/** Runs and prints the inline bench (called from test/bench/bench.ts). */
export async function printInlineBench(): Promise<void> {
  process.stdout.write(formatInlineBench(await benchInline()));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await printInlineBench();
