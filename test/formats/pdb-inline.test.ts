/**
 * A PDB's inline sites (S_INLINESITE with binary annotations, the IPI stream's LF_FUNC_ID names,
 * the C13 inlinee lines, line table and file checksums) against llvm-symbolizer-14 --inlining:
 * test/fixtures/pdb-inline holds inline-deep.c built by clang-14 -O2 for x86 and x64 (chains one to
 * four deep, inlined calls in loops, one function inlined at several sites) and the symbolizer's
 * answer for every byte of each image's code. For every address, the chain the project reads
 * from the PDB (each inline frame's function, file and line, innermost first, then the
 * procedure's own name and the line of the outermost call) is the symbolizer's; and so is the
 * chain read back from the `.sym` file the project writes from the PDB (INLINE, INLINE_ORIGIN,
 * FILE and line records, as the emulator's `--dmp` symbol store writes them).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { breakpadSymbols, parseBreakpadSym } from "../../src/formats/breakpad-sym.js";
import { formatBreakpadSym } from "../../src/formats/breakpad-sym-write.js";
import { parsePdb } from "../../src/formats/pdb.js";
import { inlineChain } from "../../src/model/inline.js";
import type { ModuleSymbol } from "../../src/model/snapshot.js";
import { FIXTURES } from "../support/fixtures.js";
import { symbolizer } from "../support/symbolizer.js";

const DIR = join(FIXTURES, "pdb-inline");
const TARGETS: [string, bigint][] = [
  ["x86", 0x400000n],
  ["x64", 0x140000000n],
];

/** A procedure-like symbol: a name, an rva and size, maybe inline sites and line records. */
type Proc = Pick<ModuleSymbol, "name" | "rva" | "size" | "inlines" | "lines">;

/** Compares the chain of `procs` at every address of the truth with the symbolizer's; returns [addresses, inline frames, agreeing, first differences]. */
function compare(procs: readonly Proc[], truth: Map<bigint, string[]>, base: bigint): [number, number, number, string[]] {
  let addresses = 0;
  let inlineFrames = 0;
  let agree = 0;
  const differ: string[] = [];
  for (const [address, frames] of truth) {
    const rva = address - base;
    const proc = procs.find((p) => p.rva <= rva && rva - p.rva < (p.size ?? 0n));
    if (proc === undefined) continue;
    addresses++;
    const line = proc.lines?.find((l) => l.rva <= rva && rva - l.rva < l.size);
    const chain = proc.inlines === undefined ? undefined : inlineChain(proc.inlines.at(rva), rva, line);
    const outer = chain ?? line;
    const ours = [...(chain?.frames ?? []).map((f) => `${f.function} ${f.file}:${f.line}`), `${proc.name} ${outer?.file ?? "??"}:${outer?.line ?? 0}`];
    inlineFrames += frames.length - 1;
    if (JSON.stringify(ours) === JSON.stringify(frames)) agree++;
    else if (differ.length < 5) differ.push(`${address.toString(16)}: ${JSON.stringify(ours)} ≠ ${JSON.stringify(frames)}`);
  }
  return [addresses, inlineFrames, agree, differ];
}

describe("PDB inline sites against llvm-symbolizer-14 --inlining", () => {
  for (const [target, base] of TARGETS) {
    const pdb = parsePdb(new Uint8Array(readFileSync(join(DIR, target, "inline-deep.pdb"))));
    const procedures = pdb.symbols().filter((s) => s.kind === "procedure");
    const symbols = procedures.map((p): ModuleSymbol => ({ name: p.name, rva: BigInt(p.rva), size: BigInt(p.size ?? 0), ...(p.inlines === undefined ? {} : { inlines: p.inlines }), ...(p.lines === undefined ? {} : { lines: p.lines }) }));

    it(`${target}: every byte of the code, from the PDB`, () => {
      const [addresses, inlineFrames, agree, differ] = compare(symbols, symbolizer(target), base);
      expect(differ).toEqual([]);
      expect(agree).toBe(addresses);
      expect(addresses).toBe(target === "x86" ? 710 : 728);
      expect(inlineFrames).toBe(target === "x86" ? 1537 : 1607);
    });

    it(`${target}: every byte of the code, from the .sym written from the PDB`, () => {
      const text = formatBreakpadSym({ arch: target === "x86" ? "x86" : "x86_64", debugId: `${pdb.info.debugId}`, debugFile: "inline-deep.pdb", symbols });
      expect(text).toMatch(/^INLINE_ORIGIN 0 /m);
      expect(text).toMatch(/^INLINE 3 /m);
      const read = breakpadSymbols(parseBreakpadSym(text)).filter((s) => s.kind === "func");
      const [addresses, , agree, differ] = compare(read, symbolizer(target), base);
      expect(differ).toEqual([]);
      expect(agree).toBe(addresses);
      expect(addresses).toBe(target === "x86" ? 710 : 728);
    });
  }
});

describe("damaged inline data", () => {
  it("is a typed error where it is read, which parsePdb turns into no inline frames; annotations never throw", async () => {
    const { readIpiNames, readModuleLines, readProcedureSites, decodeAnnotations } = await import("../../src/formats/pdb/inline.js");
    const { InputError } = await import("../../src/errors.js");
    expect(() => readIpiNames(new Uint8Array(10))).toThrow(InputError);
    expect(() => readProcedureSites(new Uint8Array([8, 0, 0x4d, 0x11]), 0, 4)).toThrow(InputError);
    expect(() => readModuleLines(new Uint8Array([0xf2, 0, 0, 0, 0xff, 0, 0, 0]), 0, 8)).toThrow(InputError);
    for (let seed = 0; seed < 200; seed++) {
      const bytes = Uint8Array.from({ length: 24 }, (_, i) => (seed * 131 + i * 197) & 0xff);
      expect(() => decodeAnnotations(bytes)).not.toThrow();
    }
  });
});
