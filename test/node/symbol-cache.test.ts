/**
 * Symbol files read once for many dumps (src/node/symbol-store.ts): a SymbolFileCache passed to
 * every attachment reads each file once, however many dumps load its module, and the reports are
 * Breakpad's own for each dump; a file changed on disk is read again. A `.sym` file is read by
 * position through a handle that may be closed at any time and opens again when read
 * (reopeningFileSource). Work is counted (files read), never timed.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { breakpadReport, renderBreakpad } from "../../src/index.js";
import { attachSymbolDirectories, openDump, reopeningFileSource, SymbolFileCache } from "../../src/node/index.js";
import { fixtureDir } from "../support/fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "symbol-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const breakpad = fixtureDir("breakpad");
const EXPECTED = readFileSync(join(breakpad, "minidump2.stackwalk.out"), "utf8");

/** minidump2.dmp opened, its symbols attached from `store` through `cache`, and Breakpad's report of it. */
function walkOnce(store: string, cache: SymbolFileCache | undefined): string {
  const opened = openDump(join(breakpad, "minidump2.dmp"));
  try {
    const notes = attachSymbolDirectories(opened.snapshot, [store], undefined, cache === undefined ? {} : { cache });
    expect(notes.filter((n) => n.file !== undefined).map((n) => n.module)).toEqual(["test_app.exe", "kernel32.dll"]);
    return renderBreakpad(breakpadReport(opened.dump, opened.snapshot, { symbolPathGiven: true }));
  } finally {
    opened.close();
  }
}

describe("SymbolFileCache", () => {
  it("reads each .sym file once for three dumps, each of whose reports is Breakpad's", () => {
    const cache = new SymbolFileCache();
    try {
      for (let i = 0; i < 3; i++) expect(walkOnce(join(breakpad, "symbols"), cache)).toBe(EXPECTED);
      expect([cache.reads, cache.hits]).toEqual([2, 4]);
    } finally {
      cache.close();
    }
  });

  it("reads a file again when it changed on disk, and keeps the most recently used files within its size", () => {
    const store = join(dir, "store");
    cpSync(join(breakpad, "symbols"), store, { recursive: true });
    const cache = new SymbolFileCache(1);
    try {
      expect(walkOnce(store, cache)).toBe(EXPECTED);
      // Two files, room for one: each dump reads both again.
      expect(walkOnce(store, cache)).toBe(EXPECTED);
      expect([cache.reads, cache.hits]).toEqual([4, 0]);
      const big = new SymbolFileCache();
      walkOnce(store, big);
      const sym = join(store, "kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym");
      utimesSync(sym, new Date(2001, 1, 1), new Date(2001, 1, 1));
      walkOnce(store, big);
      expect([big.reads, big.hits]).toEqual([3, 1]);
      big.close();
    } finally {
      cache.close();
    }
  });
});

describe("SymbolFileCache: where it looked", () => {
  it("searches the symbol folders once per module for its life, and again once a file it found is gone", () => {
    const store = join(dir, "located");
    cpSync(join(breakpad, "symbols"), store, { recursive: true });
    const cache = new SymbolFileCache();
    const attach = (): { found: string[]; report: string } => {
      const opened = openDump(join(breakpad, "minidump2.dmp"));
      try {
        const notes = attachSymbolDirectories(opened.snapshot, [store], undefined, { cache });
        expect(notes.every((n) => n.passedOver === undefined)).toBe(true);
        return { found: notes.filter((n) => n.file !== undefined).map((n) => n.module), report: renderBreakpad(breakpadReport(opened.dump, opened.snapshot, { symbolPathGiven: true })) };
      } finally {
        opened.close();
      }
    };
    try {
      expect(attach()).toEqual({ found: ["test_app.exe", "kernel32.dll"], report: EXPECTED });
      // A file that would be tried first (ROOT/<pdb>/<id>/<pdb>, here not a PDB at all), put there
      // after the first search: the next dump uses what the first search found.
      writeFileSync(join(store, "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.pdb"), "not a PDB");
      expect(attach()).toEqual({ found: ["test_app.exe", "kernel32.dll"], report: EXPECTED });
      // A file found before and gone now: the module is looked for again, and has none.
      rmSync(join(store, "kernel32.pdb"), { recursive: true });
      expect(attach().found).toEqual(["test_app.exe"]);
      expect([cache.reads, cache.hits]).toEqual([2, 3]);
    } finally {
      cache.close();
    }
  });
});

describe("reopeningFileSource", () => {
  it("opens the file again when read after close, and reads nothing once the file has changed", () => {
    const path = join(dir, "bytes.bin");
    writeFileSync(path, Uint8Array.from({ length: 100 }, (_, i) => i));
    const source = reopeningFileSource(path);
    expect(source.size).toBe(100);
    expect([...source.read(10, 3)!]).toEqual([10, 11, 12]);
    source.close();
    expect([...source.read(97, 3)!]).toEqual([97, 98, 99]);
    const into = new Uint8Array(4);
    expect(source.readInto!(50, into)).toBe(true);
    expect([...into]).toEqual([50, 51, 52, 53]);
    expect(source.read(98, 3)).toBeUndefined();
    source.close();
    writeFileSync(path, new Uint8Array(200));
    expect(source.read(0, 1)).toBeUndefined();
  });
});
