/**
 * Inline frames of emulated break dumps (test/fixtures/pdb-inline: inline-deep.c by clang-14 -O2
 * for x86 and x64, and llvm-symbolizer-14 --inlining's answer for every byte of its code):
 * `stackwalk emulate X.exe --break ADDR... --dmp` writes the module's .sym with INLINE records
 * from the PDB; `stackwalk walk` of each dump (its symbols from that store) finds the emulator's
 * ground-truth frames and prints for each the symbolizer's inline frames and frame (function, file
 * and line) at its lookup address (the PC, return address − 1 for callers); and so does the written .sym read directly.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { emulateCommand } from "../../src/cli/emulate.js";
import { breakpadSymbols, parseBreakpadSym } from "../../src/formats/breakpad-sym.js";
import { parseVector } from "../../src/formats/vector.js";
import { inlineChain } from "../../src/model/inline.js";
import { cli } from "../support/cli.js";
import { FIXTURES } from "../support/fixtures.js";
import { symbolizer } from "../support/symbolizer.js";
import { parseWalkJson } from "../support/walk-schema.js";

const DIR = join(FIXTURES, "pdb-inline");
const CASES: [string, bigint, string[]][] = [
  ["x86", 0x400000n, ["0x401070", "0x40108c", "0x4010b6"]],
  ["x64", 0x140000000n, ["0x140001020", "0x140001070", "0x14000108a"]],
];

/** Every file under `dir`, as paths relative to it. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe("inline frames of emulated break dumps", () => {
  for (const [target, base, breaks] of CASES) {
    it(`${target}: every frame of every break dump is the symbolizer's chain`, async () => {
      const out = mkdtempSync(join(tmpdir(), "emulate-inline-"));
      let err = "";
      const code = await emulateCommand([join(DIR, target, "inline-deep.exe"), ...breaks.flatMap((b) => ["--break", b]), "--dmp", "-o", `${out}/`], { out: () => {}, err: (t) => (err += t) });
      expect(code, err).toBe(0);
      const all = files(out);
      const sym = parseBreakpadSym(readFileSync(all.find((f) => f.endsWith(".sym"))!));
      expect(sym.inlineCount).toBeGreaterThan(10);
      const funcs = breakpadSymbols(sym).filter((s) => s.kind === "func");
      const truth = symbolizer(target);
      const dumps = all.filter((f) => f.endsWith(".dmp")).sort();
      expect(dumps.length).toBeGreaterThanOrEqual(3);
      let frames = 0;
      let inlineFrames = 0;
      for (const dump of dumps) {
        const vector = parseVector(readFileSync(dump.replace(/\.dmp$/, ".json"), "utf8"));
        const truthFrames = vector.threads[0]!.truth!;
        // Every frame the walk prints (its symbols from the store beside the dump), at its lookup address.
        const walked = parseWalkJson((await cli("walk", dump, "--format", "json")).out).threads[0].frames;
        expect(walked.map((f: { addrPC: string }) => BigInt(f.addrPC)), dump).toEqual(truthFrames.map((t) => t.pc));
        walked.forEach((w: { addrPC: string; function: string; file: string | null; line: number | null; inlines: { function: string; file: string; line: number }[] | null }, k: number) => {
          const lookup = k === 0 ? BigInt(w.addrPC) : BigInt(w.addrPC) - 1n;
          const expected = truth.get(lookup)!;
          const printed = [...(w.inlines ?? []).map((i) => `${i.function} ${i.file}:${i.line}`), `${w.function} ${w.file}:${w.line}`];
          expect(printed, `${dump} frame ${k}`).toEqual(expected);
        });
        // The same from the written .sym, at every frame of the emulator's truth.
        truthFrames.forEach((t, k) => {
          const lookup = k === 0 ? t.pc : t.pc - 1n;
          const rva = lookup - base;
          const func = funcs.find((f) => f.rva <= rva && rva - f.rva < f.size!)!;
          const line = func.lines?.find((l) => l.rva <= rva && rva - l.rva < l.size);
          const chain = func.inlines === undefined ? undefined : inlineChain(func.inlines.at(rva), rva, line);
          const expected = truth.get(lookup)!;
          const outer = chain ?? line;
          const ours = [...(chain?.frames ?? []).map((f) => `${f.function} ${f.file}:${f.line}`), `${func.name} ${outer?.file}:${outer?.line}`];
          expect(ours, `${dump} frame ${k}`).toEqual(expected);
          frames++;
          inlineFrames += expected.length - 1;
        });
      }
      expect(frames).toBeGreaterThanOrEqual(2 * dumps.length);
      expect(inlineFrames).toBeGreaterThanOrEqual(2 * dumps.length);
      console.log(`inline-deep ${target}: ${dumps.length} break dumps, ${frames} frames and ${inlineFrames} inline frames, each as llvm-symbolizer-14 gives it (the walk's and the written .sym's)`);
    });
  }
});
