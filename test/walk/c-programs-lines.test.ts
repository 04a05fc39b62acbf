/**
 * The source of every frame of every snapshot of the C programs' sweeps (vectors/programs/c,
 * clang-14 -O2 for x86 with and without frame pointers, x64 and ARM64), each walked with its
 * program's PDB, against llvm-symbolizer-14 --inlining on the same image
 * (test/fixtures/c-programs-symbolizer): at each frame's lookup address (the PC, return address
 * − 1 for callers) the function, file and line the walk shows — and any inline frames before it —
 * are the symbolizer's, frame for frame.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { locate } from "../../src/analysis/location.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import { attachSymbolFile, parseSymbolFile, type SymbolFile } from "../../src/formats/symbol-file.js";
import { walkThread } from "../../src/walk/walk.js";
import { symbolizerAnswers } from "../support/symbolizer.js";

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

describe("C programs: every frame's function, file and line are llvm-symbolizer's", () => {
  const totals = { snapshots: 0, frames: 0, inlineFrames: 0, agree: 0 };
  afterAll(() => {
    console.log(`C programs: ${totals.frames} frames (${totals.inlineFrames} inline) of ${totals.snapshots} snapshots, ${totals.agree} as llvm-symbolizer-14 gives them`);
  });
  for (const [folder, target] of SWEEPS) {
    for (const program of PROGRAMS) {
      if (target.startsWith("arm64") && program === "noreturn-longjmp") continue;
      it(`${target}/${program}`, () => {
        const sweep = parseSweep(readFileSync(`${folder}/${program}.sweep.json`, "utf8"));
        const pdb: SymbolFile = parseSymbolFile(readFileSync(`vectors/programs/c/build/${target}/${program}.pdb`), { name: `${program}.pdb` });
        const truth = symbolizerAnswers(`c-programs-symbolizer/${target}/${program}.txt`);
        let frames = 0;
        const differ: string[] = [];
        for (const snapshot of replaySweep(sweep)) {
          attachSymbolFile(snapshot, pdb, { names: "keep" });
          totals.snapshots++;
          const walk = walkThread(snapshot, snapshot.threads[0]!);
          expect(walk.frames.map((f) => f.addrPC), `step ${snapshot.step}`).toEqual(snapshot.threads[0]!.truth!.map((t) => t.pc));
          for (const frame of walk.frames) {
            const lookup = frame.index === 0 ? frame.addrPC : frame.addrPC - 1n;
            const ours = shown(locate(snapshot.modules, frame));
            const theirs = truth.get(lookup);
            frames++;
            totals.frames++;
            totals.inlineFrames += ours.length - 1;
            if (JSON.stringify(ours) === JSON.stringify(theirs)) totals.agree++;
            else if (differ.length < 5) differ.push(`step ${snapshot.step} frame ${frame.index} at 0x${lookup.toString(16)}: ${JSON.stringify(ours)} ≠ ${JSON.stringify(theirs)}`);
          }
        }
        expect(differ).toEqual([]);
        expect(frames).toBeGreaterThan(sweep.steps.length);
      });
    }
  }
});
