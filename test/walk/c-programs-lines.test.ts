/**
 * The source of every frame of every snapshot of the C programs' sweeps (vectors/programs/c,
 * clang-14 -O2 for x86 with and without frame pointers, x64 and ARM64), each walked with its
 * program's PDB, against llvm-symbolizer-14 --inlining on the same image
 * (test/fixtures/c-programs-symbolizer): at each frame's lookup address (the PC, return address
 * − 1 for callers) the function, file and line the walk shows — and any inline frames before it —
 * are the symbolizer's, frame for frame. The same for inline-deep (test/fixtures/pdb-inline, inline
 * chains one to four deep), swept here on the emulated CPU. With the PDB's names in place of the
 * sweep's (as a dump gets them), each module looks them up through the PDB's index, and the
 * frames are the symbolizer's all the same.
 */
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runImageFile } from "../../emulator/run.js";
import { locate } from "../../src/analysis/location.js";
import { parseSweep, replaySweep, type Sweep } from "../../src/formats/sweep.js";
import { attachSymbolFile, parseSymbolFile, type SymbolFile } from "../../src/formats/symbol-file.js";
import { walkThread } from "../../src/walk/walk.js";
import { FIXTURES } from "../support/fixtures.js";
import { symbolizer, symbolizerAnswers } from "../support/symbolizer.js";

const SWEEPS: [folder: string, target: string][] = [
  ["vectors/x86/c-fpo", "x86-fpo"],
  ["vectors/x86/c-fp", "x86-fp"],
  ["vectors/x64/c", "x64"],
  ["vectors/arm64/c", "arm64"],
  ["vectors/arm64/c-fp", "arm64-fp"],
];
const PROGRAMS = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved", "noreturn-longjmp"];

/** The frames the walk shows for one physical frame, innermost first, as the symbolizer prints them. */
function shown(loc: ReturnType<typeof locate>): string[] {
  const at = (f: { file?: string; line?: number } | undefined): string => `${f?.file ?? "??"}:${f?.line ?? 0}`;
  return [...(loc.inlines ?? []).map((f) => `${f.function} ${at(f)}`), `${loc.function} ${at(loc.callSite ?? loc.line)}`];
}

/** Totals over every case, printed at the end. */
const totals = { snapshots: 0, frames: 0, inlineFrames: 0, agree: 0 };

/**
 * Walks every snapshot of `sweep` with the PDB at `pdbPath` attached and compares each frame
 * with the symbolizer's answers `truth`; returns the first differences.
 */
function compareSweep(sweep: Sweep, pdbPath: string, truth: Map<bigint, string[]>, names: "keep" | "replace" = "keep"): string[] {
  const pdb: SymbolFile = parseSymbolFile(readFileSync(pdbPath), { name: basename(pdbPath) });
  const differ: string[] = [];
  for (const snapshot of replaySweep(sweep)) {
    attachSymbolFile(snapshot, pdb, { names });
    // In place of the sweep's names, the PDB's are looked up through its index, never all made.
    if (names === "replace") expect(snapshot.modules.every((m) => m.symbolIndex !== undefined)).toBe(true);
    totals.snapshots++;
    const walk = walkThread(snapshot, snapshot.threads[0]!);
    expect(walk.frames.map((f) => f.addrPC), `step ${snapshot.step}`).toEqual(snapshot.threads[0]!.truth!.map((t) => t.pc));
    for (const frame of walk.frames) {
      const lookup = frame.index === 0 ? frame.addrPC : frame.addrPC - 1n;
      const ours = shown(locate(snapshot.modules, frame));
      const theirs = truth.get(lookup);
      totals.frames++;
      totals.inlineFrames += ours.length - 1;
      if (JSON.stringify(ours) === JSON.stringify(theirs)) totals.agree++;
      else if (differ.length < 5) differ.push(`step ${snapshot.step} frame ${frame.index} at 0x${lookup.toString(16)}: ${JSON.stringify(ours)} ≠ ${JSON.stringify(theirs)}`);
    }
  }
  return differ;
}

afterAll(() => {
  console.log(`${totals.frames} frames (${totals.inlineFrames} inline frames) of ${totals.snapshots} snapshots, ${totals.agree} as llvm-symbolizer-14 gives them`);
});

describe("C programs: every frame's function, file and line are llvm-symbolizer's", () => {
  for (const [folder, target] of SWEEPS) {
    for (const program of PROGRAMS) {
      if (target.startsWith("arm64") && program === "noreturn-longjmp") continue;
      it(`${target}/${program}`, () => {
        const sweep = parseSweep(readFileSync(`${folder}/${program}.sweep.json`, "utf8"));
        const differ = compareSweep(sweep, `vectors/programs/c/build/${target}/${program}.pdb`, symbolizerAnswers(`c-programs-symbolizer/${target}/${program}.txt`));
        expect(differ).toEqual([]);
      });
    }
  }
});

describe("the PDB's names in place of the sweep's, looked up by address: every frame still llvm-symbolizer's", () => {
  for (const [folder, target] of SWEEPS) {
    it(`${target}/recursion-callbacks`, () => {
      const sweep = parseSweep(readFileSync(`${folder}/recursion-callbacks.sweep.json`, "utf8"));
      const differ = compareSweep(sweep, `vectors/programs/c/build/${target}/recursion-callbacks.pdb`, symbolizerAnswers(`c-programs-symbolizer/${target}/recursion-callbacks.txt`), "replace");
      expect(differ).toEqual([]);
    });
  }
});

describe("inline-deep: every frame of every snapshot, with its inline frames, is llvm-symbolizer's", () => {
  for (const target of ["x86", "x64"]) {
    it(`${target}: the program swept on the emulated CPU`, async () => {
      const image = join(FIXTURES, "pdb-inline", target, "inline-deep.exe");
      const { sweep } = await runImageFile(image, { sweep: true });
      const before = totals.inlineFrames;
      expect(compareSweep(sweep, image.replace(/\.exe$/, ".pdb"), symbolizer(target))).toEqual([]);
      // The same with the PDB's names looked up through its index.
      expect(compareSweep(sweep, image.replace(/\.exe$/, ".pdb"), symbolizer(target), "replace")).toEqual([]);
      expect(totals.inlineFrames - before).toBeGreaterThan(sweep.steps.length);
    });
  }
});
