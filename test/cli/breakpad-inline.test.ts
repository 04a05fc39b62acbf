/**
 * Breakpad's inline frames (test/fixtures/real-dumps/breakpad-linux-inline, google/breakpad's
 * linux_inline test dump): with its symbols, in the current INLINE form and in the older one,
 * `stackwalk walk --format breakpad|breakpad-m` and `stackwalk minidump-stackwalk [-m]` print
 * Breakpad's own reports: the "Found by: inline record" frames numbered with the others, the
 * innermost showing the line record, each outer one its inner neighbour's call site, the physical
 * frame the outermost call site. With a symbol file written for the test
 * (crafted-symbols/ld-linux…, Breakpad's reports of it made with its minidump_stackwalk), caller
 * frames show the same: offsets from the return address − 1, an origin without a record
 * (`<name omitted>`), sites without line records (function offsets from the range start), equal
 * ranges nested in file order, a call file of −1, a record deeper than its parent left out.
 * The reports are compared whole: the walk is Breakpad's (`--walker breakpad`), whose scan refuses
 * the addresses of a module with symbols that no FUNC covers, as Breakpad's does.
 */
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { FIXTURES } from "../support/fixtures.js";

const DIR = join(FIXTURES, "real-dumps/breakpad-linux-inline");
const DUMP = join(DIR, "linux_inline.dmp");
const SYMBOLS = join(DIR, "symbols");
const CRAFTED = join(DIR, "crafted-symbols");
const read = (name: string): Promise<string> => import("node:fs/promises").then((fs) => fs.readFile(join(DIR, name), "utf8"));

/** A human report cut into the text before the first thread, each frame's text, and the text from "Loaded modules:". */
function humanParts(report: string): { head: string; frames: string[]; modules: string } {
  const at = report.indexOf("\nThread 0");
  const end = report.indexOf("\nLoaded modules:");
  const frames = report.slice(report.indexOf("\n", at + 1) + 1, end).split(/^(?=[ \d]\d {2})/m);
  return { head: report.slice(0, at), frames, modules: report.slice(end) };
}


let oldFormatStore = "";
beforeAll(() => {
  // The older-form file in a symbol-store layout of its own.
  oldFormatStore = mkdtempSync(join(tmpdir(), "inline-old-format-"));
  cpSync(join(DIR, "linux_inline.old-format.sym"), join(oldFormatStore, "linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.sym"));
});

describe("Breakpad's inline frames, byte for byte", () => {
  const cases: [string, () => string[], string][] = [
    ["current INLINE records", () => [SYMBOLS], "linux_inline"],
    ["older INLINE records", () => [oldFormatStore], "linux_inline.old-format"],
    ["crafted caller-frame records", () => [SYMBOLS, CRAFTED], "linux_inline.crafted"],
  ];
  for (const [what, symbols, expected] of cases) {
    it(`${what}: walk --format breakpad and breakpad-m`, async () => {
      const dirs = symbols().flatMap((d) => ["--symbols", d]);
      const human = await cli("walk", DUMP, ...dirs, "--format", "breakpad");
      expect(human.code, human.err).toBe(0);
      expect(human.out).toBe(await read(`${expected}.stackwalk.out`));
      const machine = await cli("walk", DUMP, ...dirs, "--format", "breakpad-m");
      expect(machine.out).toBe(await read(`${expected}.stackwalk.machine_readable.out`));
    });

    it(`${what}: minidump-stackwalk and minidump-stackwalk -m`, async () => {
      const human = await cli("minidump-stackwalk", DUMP, ...symbols());
      expect(human.code, human.err).toBe(0);
      expect(human.out).toBe(await read(`${expected}.stackwalk.out`));
      const machine = await cli("minidump-stackwalk", "-m", DUMP, ...symbols());
      expect(machine.out).toBe(await read(`${expected}.stackwalk.machine_readable.out`));
    });
  }

  it("minidump-stackwalk -b: the crashed thread's frame lines of Breakpad's reports, inline frames included", async () => {
    for (const [symbols, expected] of [
      [[SYMBOLS], "linux_inline"],
      [[SYMBOLS, CRAFTED], "linux_inline.crafted"],
    ] as const) {
      const r = await cli("minidump-stackwalk", "-b", DUMP, ...symbols);
      expect(r.code, r.err).toBe(0);
      const lines = (text: string): string[] => text.split("\n").filter((l) => /^[ \d]\d {2}/.test(l));
      expect(lines(r.out)).toEqual(lines(humanParts(await read(`${expected}.stackwalk.out`)).frames.join("")));
      expect(r.out.startsWith("Thread 0 (crashed)\n")).toBe(true);
    }
  });

  it("the example of docs/cli.md is what the command prints", async () => {
    const readme = (await import("node:fs/promises").then((fs) => fs.readFile(join(FIXTURES, "../../docs/cli.md"), "utf8"))).split("## Inline frames")[1]!;
    const block = readme.split("```")[1]!.replace(/^\n/, "");
    const r = await cli("walk", DUMP, "--symbols", SYMBOLS, "--format", "breakpad");
    expect(block.split("\n").length).toBe(11);
    expect(r.out).toContain(block);
    const json = await cli("walk", DUMP, "--symbols", SYMBOLS, "--format", "json");
    expect(json.out.replace(/\s+/g, " ")).toContain(`"file": "a.cpp", "line": 42, "missing_symbols": false, "inlines": [ { "function": "func()", "file": "linux_inline.cpp", "line": 27 }, {`);
    expect((await cli("walk", DUMP, "--symbols", SYMBOLS, "--format", "windbg")).out).toContain("\n(Inline Function) --------`-------- linux_inline!func()+0x633\n");
  });

  it("the reports compared hold the inline frames", async () => {
    const p = humanParts(await read("linux_inline.stackwalk.out"));
    expect(p.frames.slice(0, 4).map((f) => f.split("\n")[0])).toEqual([
      " 0  linux_inline!func() [linux_inline.cpp : 27 + 0x0]",
      " 1  linux_inline!bar() [c.cpp : 32 + 0x0]",
      " 2  linux_inline!foo() [b.cpp : 39 + 0x0]",
      " 3  linux_inline!main [a.cpp : 42 + 0x0]",
    ]);
    expect((await read("linux_inline.crafted.stackwalk.out")).match(/Found by: inline record/g)).toHaveLength(10);
  });
});
