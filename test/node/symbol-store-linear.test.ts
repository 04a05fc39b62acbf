/**
 * Symbol directories on a dump of many modules, linear in the modules (issue 33): a dump of
 * 60,000 overlapping modules and 20 threads took 12-13 s in text and Breakpad formats, nearly all
 * of it looking each module up again in the module list by its base before looking for its
 * files (60,000 searches of 60,000 entries), even with no symbol directory given (the dump's own
 * directory is searched). The tests count the reads of the module list's entries, never time.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Module } from "../../src/model/snapshot.js";
import { attachSymbolDirectories } from "../../src/node/symbol-store.js";
import { countModuleReads } from "../support/module-reads.js";

/** `n` modules with distinct debug ids, 16 bytes apart and 1 MiB long (overlapping, as in the finding). */
function modules(n: number): Module[] {
  return Array.from({ length: n }, (_, i): Module => ({
    name: `m${i}.dll`,
    base: 0x1000_0000n + BigInt(i) * 0x10n,
    size: 0x10_0000n,
    symbols: [],
    debugFile: `C:\\build\\m${i}.pdb`,
    debugId: `${i.toString(16).toUpperCase().padStart(32, "0")}1`,
  }));
}

describe("symbol directories on many modules", () => {
  it("20,000 modules and no symbol files (the finding had 60,000): each module's entry is read a few times, not once per module", () => {
    const n = 20_000;
    const target = { modules: modules(n), memory: new RegionMemory([]) };
    const counter = countModuleReads(target);
    const notes = attachSymbolDirectories(target, [mkdtempSync(join(tmpdir(), "sw-nosyms-"))]);
    expect(notes).toHaveLength(n);
    expect(notes[n - 1]!.detail).toMatch(/^no m19999\.pdb or \.sym for debug id 0+4E1F1 under /);
    expect(counter.reads).toBeLessThanOrEqual(3 * n);
  });

  it("3,000 modules, each with its own .sym file: every file is attached to its module, and the list is read a few times per module, not once per file", () => {
    const n = 3_000;
    const store = mkdtempSync(join(tmpdir(), "sw-manysyms-"));
    for (let i = 0; i < n; i++) {
      const id = `${i.toString(16).toUpperCase().padStart(32, "0")}1`;
      const dir = join(store, `m${i}.pdb`, id);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `m${i}.sym`), `MODULE windows x86 ${id} m${i}.pdb\nFUNC 100 10 0 f${i}\n`);
    }
    const target = { modules: modules(n), memory: new RegionMemory([]) };
    const counter = countModuleReads(target);
    const notes = attachSymbolDirectories(target, [store]);
    expect(notes.filter((note) => note.file !== undefined)).toHaveLength(n);
    expect(notes[1234]!.detail).toBe(`unwind records from ${join(store, "m1234.pdb", `${(1234).toString(16).toUpperCase().padStart(32, "0")}1`, "m1234.sym")}`);
    expect(target.modules.every((m, i) => m.symbols[0]?.name === `f${i}` && m.unwind !== undefined)).toBe(true);
    // The list is looked through to find the modules, once to index them by debug id and once
    // to put the new modules in: about 3n reads. A search per module or per file reads n² / 2.
    expect(counter.reads).toBeLessThanOrEqual(4 * n);
  });

  it("two modules of one debug id: the file found for the first is attached to both, and the second is not looked for again", () => {
    const store = mkdtempSync(join(tmpdir(), "sw-samesyms-"));
    const [a] = modules(1);
    const twice = [a!, { ...a!, name: "again.dll", base: 0x2000_0000n }];
    const dir = join(store, "m0.pdb", a!.debugId!);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "m0.sym"), `MODULE windows x86 ${a!.debugId} m0.pdb\nFUNC 100 10 0 f0\n`);
    const target = { modules: twice, memory: new RegionMemory([]) };
    const notes = attachSymbolDirectories(target, [store]);
    expect(notes.map((note) => note.module)).toEqual(["m0.dll"]);
    expect(target.modules.map((m) => m.symbols[0]?.name)).toEqual(["f0", "f0"]);
  });
});
