/**
 * A PDB's inline sites (S_INLINESITE with binary annotations, the IPI stream's LF_FUNC_ID names,
 * the C13 inlinee lines, line table and file checksums) against llvm-symbolizer-14 --inlining:
 * test/fixtures/pdb-inline holds inline-deep.c built by clang-14 -O2 for x86 and x64 (chains one to
 * four deep, inlined calls in loops, one function inlined at several sites) and the symbolizer's
 * answer for every byte of each image's code. For every address, the chain the project reads
 * from the PDB (each inline frame's function, file and line, innermost first, then the
 * procedure's own name and the line of the outermost call) is the symbolizer's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePdb } from "../../src/formats/pdb.js";
import { inlineChain } from "../../src/model/inline.js";
import { FIXTURES } from "../support/fixtures.js";

const DIR = join(FIXTURES, "pdb-inline");
const TARGETS: [string, bigint][] = [
  ["x86", 0x400000n],
  ["x64", 0x140000000n],
];

/** The symbolizer's answers: address → frames as `function file:line`, innermost first. */
function symbolizer(target: string): Map<bigint, string[]> {
  const out = new Map<bigint, string[]>();
  for (const block of readFileSync(join(DIR, target, "symbolizer.txt"), "utf8").split("\n\n")) {
    const lines = block.split("\n").filter((l) => l !== "");
    if (lines.length === 0) continue;
    const frames: string[] = [];
    for (let i = 1; i + 1 < lines.length; i += 2) frames.push(`${lines[i]} ${lines[i + 1]!.replace(/:\d+$/, "")}`);
    out.set(BigInt(lines[0]!), frames);
  }
  return out;
}

describe("PDB inline sites against llvm-symbolizer-14 --inlining", () => {
  for (const [target, base] of TARGETS) {
    it(`${target}: every byte of the code`, () => {
      const pdb = parsePdb(new Uint8Array(readFileSync(join(DIR, target, "inline-deep.pdb"))));
      const procedures = pdb.symbols().filter((s) => s.kind === "procedure");
      const truth = symbolizer(target);
      let addresses = 0;
      let inlineFrames = 0;
      let agree = 0;
      const differ: string[] = [];
      for (const [address, frames] of truth) {
        const rva = address - base;
        const proc = procedures.find((p) => BigInt(p.rva) <= rva && rva < BigInt(p.rva + (p.size ?? 0)));
        if (proc === undefined) continue;
        addresses++;
        const chain = proc.inlines === undefined ? undefined : inlineChain(proc.inlines.at(rva), rva, undefined);
        const ours = chain === undefined ? [proc.name] : [...chain.frames.map((f) => `${f.function} ${f.file}:${f.line}`), `${proc.name} ${chain.file}:${chain.line}`];
        // Without inline frames only the procedure's name is compared (the PDB's line table is read for inline frames).
        const theirs = chain === undefined && frames.length === 1 ? [frames[0]!.split(" ")[0]!] : frames;
        inlineFrames += frames.length - 1;
        if (JSON.stringify(ours) === JSON.stringify(theirs)) agree++;
        else if (differ.length < 5) differ.push(`${address.toString(16)}: ${JSON.stringify(ours)} ≠ ${JSON.stringify(theirs)}`);
      }
      expect(differ).toEqual([]);
      expect(agree).toBe(addresses);
      expect(addresses).toBeGreaterThan(500);
      expect(inlineFrames).toBeGreaterThan(1000);
    });
  }
});
