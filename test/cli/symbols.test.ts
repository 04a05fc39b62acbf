/**
 * `--symbols`: a sweep of a real clang-14 FPO program with its unwind records removed walks
 * exactly once the records come back from the real PDB (flat or in a symbol store), or from a
 * Breakpad .sym file made from that PDB's records; a PDB of another build is refused by its
 * debug id; a damaged PDB is an input error naming the file.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { parsePdb } from "../../src/formats/pdb.js";
import { attachSymbolFile, parseSymbolFile } from "../../src/formats/symbol-file.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import { le, optionalHeaderAt, streamsOf, writeMsf } from "../support/msf.js";
import { parseWalkJson } from "../support/walk-schema.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const SWEEP = "vectors/x86/c-fpo/recursion-callbacks.sweep.json";
const PDB = "vectors/programs/c/build/x86-fpo/recursion-callbacks.pdb";
const OTHER_PDB = "vectors/programs/c/build/x86-fp/recursion-callbacks.pdb";

/** A copy of the sweep without unwind records, in a fresh directory. */
function strippedSweep(): { dir: string; file: string } {
  const doc = JSON.parse(readFileSync(SWEEP, "utf8")) as { modules: Record<string, unknown>[] };
  for (const m of doc.modules) {
    delete m["frameData"];
    delete m["fpo"];
  }
  const dir = mkdtempSync(join(tmpdir(), "sw-symbols-"));
  const file = join(dir, "input", "rc.sweep.json");
  mkdirSync(join(dir, "input"));
  writeFileSync(file, JSON.stringify(doc));
  return { dir, file };
}

const passed = (out: string): [number, number] => {
  const m = /(\d+) passed, (\d+) failed\s*$/.exec(out);
  return [Number(m![1]), Number(m![2])];
};

describe("walk and check --symbols", () => {
  it("without records the FPO build mostly fails; with the PDB in a flat directory every snapshot is exact", async () => {
    const { dir, file } = strippedSweep();
    const without = await cli("check", file, "--walker", "fpo");
    expect(passed(without.out)[1]).toBeGreaterThan(500);
    copyFileSync(PDB, join(dir, "recursion-callbacks.pdb"));
    const withPdb = await cli("check", file, "--walker", "fpo", "--symbols", dir);
    expect(withPdb.err).toContain(`unwind records from ${join(dir, "recursion-callbacks.pdb")}`);
    expect(passed(withPdb.out)).toEqual([725, 0]);
  });

  it("finds the PDB in a symbol store by the image's debug id, and passes over one of another build", async () => {
    const { dir, file } = strippedSweep();
    const id = parsePdb(readFileSync(PDB)).info.debugId;
    mkdirSync(join(dir, "store", "recursion-callbacks.pdb", id), { recursive: true });
    copyFileSync(PDB, join(dir, "store", "recursion-callbacks.pdb", id, "recursion-callbacks.pdb"));
    copyFileSync(OTHER_PDB, join(dir, "recursion-callbacks.pdb"));
    const r = await cli("check", file, "--walker", "fpo", "--symbols", dir, "--symbols", join(dir, "store"));
    expect(r.err).toMatch(/unwind records from .*store/);
    expect(passed(r.out)).toEqual([725, 0]);
    const only = await cli("check", file, "--walker", "fpo", "--symbols", dir);
    expect(only.err).toMatch(/is for debug id [0-9A-F]+, not [0-9A-F]+/);
    expect(passed(only.out)[1]).toBeGreaterThan(500);
  });

  it("reads STACK WIN records from a Breakpad .sym file in the symbol-store layout", async () => {
    const { dir, file } = strippedSweep();
    const pdb = parsePdb(readFileSync(PDB));
    const hex = (n: number): string => n.toString(16);
    const lines = [`MODULE windows x86 ${pdb.info.debugId} recursion-callbacks.pdb`];
    for (const r of pdb.frameData) {
      lines.push(`STACK WIN 4 ${hex(r.rvaStart)} ${hex(r.codeSize)} ${hex(r.prologSize)} 0 ${hex(r.paramsSize)} ${hex(r.savedRegsSize)} ${hex(r.localSize)} 0 1 ${r.program}`);
    }
    const symDir = join(dir, "recursion-callbacks.pdb", pdb.info.debugId);
    mkdirSync(symDir, { recursive: true });
    writeFileSync(join(symDir, "recursion-callbacks.sym"), lines.join("\n") + "\n");
    const r = await cli("walk", file, "--walker", "fpo", "--step", "200", "--symbols", dir, "--format", "json");
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/unwind records from .*recursion-callbacks\.sym/);
    const frames = parseWalkJson(r.out).threads[0].frames as { foundBy: string; rule: string }[];
    expect(frames.length).toBeGreaterThan(2);
    expect(frames[1]!.foundBy).toBe("frame-data");
    const check = await cli("check", file, "--walker", "fpo", "--symbols", dir);
    expect(passed(check.out)).toEqual([725, 0]);
  });

  it("a PDB without a section header stream takes the section table of the image in memory; without one, its names are left out with a warning", async () => {
    const { dir, file } = strippedSweep();
    const streams = streamsOf(new Uint8Array(readFileSync(PDB)));
    const dbi = streams[3]!;
    le(dbi).setUint16(optionalHeaderAt(dbi) + 2 * 5, 0xffff, true);
    writeFileSync(join(dir, "recursion-callbacks.pdb"), writeMsf(streams));
    // Names come only from the PDB.
    const doc = JSON.parse(readFileSync(file, "utf8")) as { memory: { base: string; hex: string }[]; modules: { base: string; symbols?: unknown }[] };
    delete doc.modules[0]!.symbols;
    writeFileSync(file, JSON.stringify(doc));
    const full = await cli("walk", SWEEP, "--step", "200", "--format", "json");
    const r = await cli("walk", file, "--step", "200", "--symbols", dir, "--format", "json");
    expect(r.code).toBe(0);
    const names = (out: string): string[] => (parseWalkJson(out).threads[0].frames as { function?: string }[]).map((f) => f.function ?? "");
    expect(names(r.out)).toEqual(names(full.out));
    expect(names(r.out).filter((n) => n !== "").length).toBeGreaterThan(1);
    // The same PDB for a module whose image is not in memory (a minidump's usual case): the unwind
    // records are used, the names cannot be placed, and a warning says why.
    const target = { modules: [{ name: "recursion-callbacks.exe", base: 0x400000n, size: 0x4000n, symbols: [], debugFile: "recursion-callbacks.pdb", debugId: parsePdb(readFileSync(PDB)).info.debugId }], memory: new RegionMemory([]) };
    const [attached] = attachSymbolFile(target, parseSymbolFile(writeMsf(streams), { name: "headless.pdb" }));
    expect(attached!.module.unwind?.frameData?.length).toBeGreaterThan(0);
    expect(attached!.module.symbols).toEqual([]);
    expect(attached!.warnings).toEqual([expect.stringMatching(/^headless\.pdb: no function names: offset 0x[0-9a-f]+: the PDB has no section header stream/)]);
  });

  it("a damaged PDB is an input error naming the file (exit 2)", async () => {
    const { dir, file } = strippedSweep();
    const bytes = new Uint8Array(readFileSync(PDB));
    bytes.fill(0xff, 32, 64);
    writeFileSync(join(dir, "recursion-callbacks.pdb"), bytes);
    const r = await cli("walk", file, "--step", "200", "--symbols", dir);
    expect(r.code).toBe(2);
    expect(r.err).toContain("recursion-callbacks.pdb");
  });
});
