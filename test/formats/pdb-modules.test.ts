/**
 * A PDB of three modules, each with its own line table (test/fixtures/pdb-modules: three C files
 * built by clang-14 -O2 for x64 and linked by lld-link-14, with identical code folding off and on),
 * against llvm-symbolizer-14: at every byte of the code, the function, file and line the project
 * reads from the PDB are the symbolizer's; where the linker folded two modules' identical
 * functions into one body, its lines are those of the module whose piece it kept (the DBI's
 * section contributions say which). A procedure's lines are read from that one module's line
 * table: looking up one reads no other module's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePdb, type Pdb } from "../../src/formats/pdb.js";
import { bytesSource, type ByteSource } from "../../src/memory/byte-source.js";
import { FIXTURES } from "../support/fixtures.js";
import { layout, le, streamsOf, writeMsf } from "../support/msf.js";
import { symbolizerAnswers } from "../support/symbolizer.js";

const DIR = join(FIXTURES, "pdb-modules");
const BASE = 0x140000000n;

/** The lines at every address of the symbolizer's answers that differ from them (the first few), and how many addresses were compared. */
function differences(pdb: Pdb, truth: Map<bigint, string[]>): [string[], number] {
  const index = pdb.symbolIndex();
  const differ: string[] = [];
  let addresses = 0;
  for (const [address, frames] of truth) {
    const rva = Number(address - BASE);
    const sym = index.at(rva);
    if (sym === undefined) continue;
    addresses++;
    const line = sym.kind === "procedure" ? sym.lines?.find((l) => l.rva <= BigInt(rva) && BigInt(rva) - l.rva < l.size) : undefined;
    const ours = [`${sym.name} ${line?.file ?? "??"}:${line?.line ?? 0}`];
    if (JSON.stringify(ours) !== JSON.stringify(frames) && differ.length < 8) differ.push(`${address.toString(16)}: ${ours} ≠ ${frames}`);
  }
  return [differ, addresses];
}

const fixture = (build: string): Uint8Array => new Uint8Array(readFileSync(join(DIR, build, "modules.pdb")));

describe("a PDB of several modules against llvm-symbolizer-14", () => {
  for (const build of ["noicf", "icf"]) {
    it(`${build}: every byte of the code`, () => {
      const [differ, addresses] = differences(parsePdb(fixture(build)), symbolizerAnswers(`pdb-modules/${build}/symbolizer.txt`));
      expect(differ).toEqual([]);
      expect(addresses).toBe(build === "icf" ? 283 : 296);
    });
  }

  it("icf: the folded body's lines are those of the module whose piece the linker kept, the procedure's own module's when the section contributions do not say", () => {
    // util.obj is linked before parse.obj: its scale_checked is the body kept, named scale_parsed.
    const truth = symbolizerAnswers("pdb-modules/icf/symbolizer.txt");
    const folded = [...truth].filter(([, frames]) => frames[0]!.startsWith("scale_parsed ") && !frames[0]!.endsWith(" ??:0"));
    expect(folded.length).toBe(13);
    expect(folded.every(([, frames]) => frames[0]!.endsWith("/util.c:19"))).toBe(true);
    // The same PDB with a section contribution substream of an unknown version.
    const streams = streamsOf(fixture("icf"));
    const dbi = streams[3]!;
    le(dbi).setUint32(64 + le(dbi).getInt32(24, true), 0, true);
    const [differ] = differences(parsePdb(writeMsf(streams)), truth);
    expect(differ).toHaveLength(8);
    expect(differ.every((d) => /: scale_parsed \S*\/parse\.c:23 ≠ scale_parsed \S*\/util\.c:19$/.test(d))).toBe(true);
  });
});

/** The module symbol streams the DBI stream (3) lists, in module order (x86-fpo.md §4.4: 64-byte header, then ModInfo records). */
function moduleStreams(bytes: Uint8Array): number[] {
  const dbi = layout(bytes).stream(3);
  const end = 64 + le(dbi).getInt32(24, true);
  const out: number[] = [];
  for (let at = 64; at < end; ) {
    out.push(le(dbi).getUint16(at + 34, true));
    // Two NUL-terminated names after the 64-byte fixed part, then padding to 4.
    let p = dbi.indexOf(0, at + 64) + 1;
    p = dbi.indexOf(0, p) + 1;
    at = (p + 3) & ~3;
  }
  return out;
}

describe("a procedure's lines are read from one module", () => {
  it("asking one procedure of each module for its lines reads no block of the other modules' streams", () => {
    const bytes = new Uint8Array(readFileSync(join(DIR, "icf", "modules.pdb")));
    const l = layout(bytes);
    const blocksOf = (stream: number): number[] => l.blockEntryAt[stream]!.map((at) => le(bytes).getUint32(at, true));
    const read = new Set<number>();
    const inner = bytesSource(bytes);
    const note = (offset: number, length: number): void => {
      for (let b = Math.floor(offset / l.bs); b * l.bs < offset + length; b++) read.add(b);
    };
    const source: ByteSource = {
      size: inner.size,
      read: (offset, length) => (note(offset, length), inner.read(offset, length)),
      readInto: (offset, into) => (note(offset, into.length), inner.readInto!(offset, into)),
    };
    const index = parsePdb(source).symbolIndex();
    // app.c, util.c and parse.c, and the linker's module without lines.
    const streams = moduleStreams(bytes);
    expect(streams).toHaveLength(4);
    const byModule: [name: string, module: number][] = [
      ["combine", 0],
      ["checksum", 1],
      ["parse_number", 2],
    ];
    const all = index.all();
    for (const [name, module] of byModule) {
      const procedure = all.find((s) => s.name === name)!;
      read.clear();
      const lines = index.at(procedure.rva)!.lines!;
      expect(lines.length).toBeGreaterThan(0);
      const others = streams.filter((_, k) => k !== module).flatMap(blocksOf);
      expect(others.filter((b) => read.has(b)), name).toEqual([]);
      expect(blocksOf(streams[module]!).some((b) => read.has(b)), name).toBe(true);
    }
  });
});
