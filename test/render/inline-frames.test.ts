/**
 * Inline frames in every output but Breakpad's (those are test/cli/breakpad-inline.test.ts), for
 * google/breakpad's linux_inline dump with its symbols and the crafted caller-frame symbols
 * (test/fixtures/real-dumps/breakpad-linux-inline): JSON's `inlines` hold the functions, files
 * and lines of Breakpad's own "inline record" frames (its -m report), the physical frame's `file`
 * and `line` Breakpad's for it; text, WinDbg, explain, SVG and HTML show each inline frame before
 * its frame, without registers or a stack band of its own. The walk itself is physical: the
 * frame count and the frames are the same with and without the inline records.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { FIXTURES } from "../support/fixtures.js";
import { parseWalkJson } from "../support/walk-schema.js";

const DIR = join(FIXTURES, "real-dumps/breakpad-linux-inline");
const DUMP = join(DIR, "linux_inline.dmp");
const SYMBOLS = ["--symbols", join(DIR, "symbols"), "--symbols", join(DIR, "crafted-symbols")];

/** Breakpad's -m frame lines of thread 0 as [module, function, file, line], the inline ones marked by the "inline record" of its human report. */
function breakpadFrames(): { inline: boolean; fields: string[] }[] {
  const machine = readFileSync(join(DIR, "linux_inline.crafted.stackwalk.machine_readable.out"), "utf8");
  const human = readFileSync(join(DIR, "linux_inline.crafted.stackwalk.out"), "utf8");
  const inline = new Set<number>();
  for (const m of human.matchAll(/^ ?(\d+) {2}[^\n]*\n \n {4}Found by: inline record$/gm)) inline.add(Number(m[1]));
  return machine
    .split("\n")
    .filter((l) => l.startsWith("0|"))
    .map((l) => l.split("|"))
    .map((f) => ({ inline: inline.has(Number(f[1])), fields: [f[2]!, f[3]!, f[4]!, f[5]!] }));
}

/** A copy of symbol store `from` whose .sym files lack their INLINE and INLINE_ORIGIN records. */
function withoutInlineRecords(from: string, to: string): string {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.isDirectory()) withoutInlineRecords(join(from, e.name), join(to, e.name));
    else writeFileSync(join(to, e.name), readFileSync(join(from, e.name), "utf8").split("\n").filter((l) => !l.startsWith("INLINE")).join("\n"));
  }
  return to;
}

describe("inline frames in the other outputs", () => {
  it("JSON: each frame's inlines and source are Breakpad's inline-record frames and frame (its first 14 frames)", async () => {
    const r = await cli("walk", DUMP, ...SYMBOLS, "--format", "json");
    expect(r.code, r.err).toBe(0);
    const doc = parseWalkJson(r.out);
    // rust-minidump's order: each frame's inlines, then the frame.
    const ours: { inline: boolean; fields: string[] }[] = [];
    for (const f of doc.threads[0].frames) {
      const fields = (fn: string | null, file: string | null, line: number | null): string[] => [f.module ?? "", fn ?? "", file ?? "", line === null || file === null ? "" : String(line)];
      for (const i of f.inlines ?? []) ours.push({ inline: true, fields: fields(i.function, i.file, i.line) });
      ours.push({ inline: false, fields: fields(f.function, f.file, f.line) });
    }
    const theirs = breakpadFrames();
    expect(theirs.filter((f) => f.inline)).toHaveLength(10);
    expect(ours.slice(0, 14)).toEqual(theirs.slice(0, 14));
    expect(doc.threads[0].frames[4].inlines).toBeNull();
  });

  it("the walk is physical: the same frames with and without the inline records", async () => {
    const plain = mkdtempSync(join(tmpdir(), "no-inline-records-"));
    const stripped = ["--symbols", withoutInlineRecords(join(DIR, "symbols"), join(plain, "symbols")), "--symbols", withoutInlineRecords(join(DIR, "crafted-symbols"), join(plain, "crafted"))];
    const a = parseWalkJson((await cli("walk", DUMP, ...stripped, "--format", "json")).out);
    const b = parseWalkJson((await cli("walk", DUMP, ...SYMBOLS, "--format", "json")).out);
    const physical = (d: typeof a): unknown[] => d.threads[0].frames.map((f: Record<string, unknown>) => [f["addrPC"], f["addrStack"], f["trust"], f["rule"]]);
    expect(physical(b)).toEqual(physical(a));
    expect(b.threads[0].frame_count).toBe(a.threads[0].frame_count);
  });

  it("text: an inline row before its frame, the frame showing the outermost call site", async () => {
    const r = await cli("walk", DUMP, ...SYMBOLS);
    const lines = r.out.split("\n");
    const at = lines.findIndex((l) => l.includes("linux_inline!func()"));
    expect(lines.slice(at, at + 4).map((l) => l.replace(/ +/g, " ").trim())).toEqual([
      "- 0x00000000002161b6 inline linux_inline!func()+0x633 [linux_inline.cpp:27]",
      "- 0x00000000002161b6 inline linux_inline!bar()+0x644 [c.cpp:32]",
      "- 0x00000000002161b6 inline linux_inline!foo()+0x671 [b.cpp:39]",
      "0 0x00000000002161b6 0x00007f75578dff0a 0x00007fff1669e480 0x00007fff1669d1a0 context linux_inline!main+0x686 [a.cpp:42]",
    ]);
    expect(r.out).toContain("ld-linux-x86-64.so.2!strlen_inline+0x7");
  });

  it("WinDbg: (Inline Function) rows with dashes for the stack columns", async () => {
    const r = await cli("walk", DUMP, ...SYMBOLS, "--format", "windbg");
    expect(r.out.split("\n").slice(0, 5)).toEqual([
      "Child-SP          RetAddr           Call Site",
      "(Inline Function) --------`-------- linux_inline!func()+0x633",
      "(Inline Function) --------`-------- linux_inline!bar()+0x644",
      "(Inline Function) --------`-------- linux_inline!foo()+0x671",
      "00007fff`1669d1a0 00007f75`578dff0a linux_inline!main+0x686",
    ]);
  });

  it("explain, SVG and HTML: inline frames named inside the frame whose stack area they share", async () => {
    const explain = await cli("explain", DUMP, ...SYMBOLS);
    expect(explain.out).toContain("inline  linux_inline!foo()+0x671  [inline]  source: b.cpp:39\n  inlined into frame 0: no registers or stack of its own; it runs in frame 0's stack area\nframe 0  linux_inline!main+0x686  [context]\n  source: a.cpp:42");
    const out = mkdtempSync(join(tmpdir(), "inline-view-"));
    expect((await cli("render", DUMP, ...SYMBOLS, "-o", join(out, "a.svg"))).code).toBe(0);
    const svg = readFileSync(join(out, "a.svg"), "utf8");
    expect(svg).toContain("↳ inlined func()");
    expect(svg).toContain("↳ inlined in #0: linux_inline!func()+0x633 linux_inline.cpp:27");
    expect((await cli("view", DUMP, ...SYMBOLS, "-o", join(out, "a.html"))).code).toBe(0);
    const html = readFileSync(join(out, "a.html"), "utf8");
    expect(html).toContain(`<li><span class="loc">linux_inline!func()+0x633</span> <span class="badge trust">inline</span> <span class="src">linux_inline.cpp:27</span></li>`);
  });
});
