/**
 * The playground's work without the page (src/site/session.ts), in Node on the files' bytes: the
 * files told apart, symbols attached from dropped files, and each output what the command line
 * writes. Breakpad's own report of minidump2.dmp is the truth for the dump; the committed
 * `stackwalk compare` text for the chain examples.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { hex } from "../../src/hex.js";
import { bytesSource, type ByteSource } from "../../src/memory/byte-source.js";
import { compareText, Session, type CompareExample, type SiteFile } from "../../src/site/session.js";
import { ROOT } from "../support/corpus.js";
import { stackOnlyDump } from "../support/stack-only-dump.js";

const BREAKPAD = "test/fixtures/breakpad";
const TEST_APP_SYM = `${BREAKPAD}/symbols/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym`;
const KERNEL32_SYM = `${BREAKPAD}/symbols/kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym`;

/** A file as the page gives it to the worker (its bytes, with `padding` zero bytes after them), counting the bytes read from it. */
function siteFile(path: string, counter?: { bytes: number }, padding = 0): SiteFile {
  const bytes = new Uint8Array(readFileSync(path));
  const padded = new Uint8Array(bytes.length + padding);
  padded.set(bytes);
  const inner = bytesSource(padded);
  const source: ByteSource = {
    size: inner.size,
    read(offset, length) {
      if (counter !== undefined) counter.bytes += length;
      return inner.read(offset, length);
    },
  };
  return { name: path.split("/").pop()!, source };
}

async function cli(...argv: string[]): Promise<string> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  expect(code, err).toBe(0);
  return out;
}

describe("the playground's session", () => {
  it("minidump2.dmp with its two .sym files: Breakpad's report byte for byte, for all threads and for the crashed one", async () => {
    const session = Session.open([siteFile(`${BREAKPAD}/minidump2.dmp`), siteFile(TEST_APP_SYM), siteFile(KERNEL32_SYM)]);
    expect(session.summary.kind).toBe("dump");
    expect(session.summary.threads.map((t) => t.label)).toEqual(["thread 3060 (crashed)", "thread 4544"]);
    expect(session.summary.notes).toEqual(["test_app.exe: unwind records from test_app.sym", "kernel32.dll: unwind records from kernel32.sym"]);
    const expected = readFileSync(`${BREAKPAD}/minidump2.stackwalk.out`, "utf8");
    expect(await session.output("breakpad", { thread: "all" })).toBe(expected);
    expect(await session.output("breakpad", { thread: 3060 })).toBe(expected);
  });

  it("the text, JSON and WinDbg outputs are what stackwalk walk writes with the same symbols, but for the file's name", async () => {
    const session = Session.open([siteFile(`${BREAKPAD}/minidump2.dmp`), siteFile(TEST_APP_SYM), siteFile(KERNEL32_SYM)]);
    for (const format of ["text", "windbg"] as const) {
      const expected = await cli("walk", `${BREAKPAD}/minidump2.dmp`, "--symbols", `${BREAKPAD}/symbols`, "--format", format, "--thread", "3060");
      expect(await session.output(format, { thread: 3060 })).toBe(expected.replaceAll(`${BREAKPAD}/minidump2.dmp`, "minidump2.dmp"));
    }
    // JSON says where each module's symbols came from: the file dropped, not a path.
    const json = JSON.parse(await session.output("json", { thread: "all" }));
    const cliJson = JSON.parse(await cli("walk", `${BREAKPAD}/minidump2.dmp`, "--symbols", `${BREAKPAD}/symbols`, "--format", "json"));
    expect(json.threads).toEqual(cliJson.threads);
    expect(json.crashing_thread).toEqual(cliJson.crashing_thread);
  });

  it("a vector, a sweep and the walkers: the view and the text output", async () => {
    const vector = Session.open([siteFile("vectors/ia64/synthetic/frame-63.json")]);
    expect(vector.summary.machine).toBe("Itanium (IA64)");
    expect(vector.summary.walkers).toContain("ia64");
    expect(vector.summary.breakpadRefusal).toMatch(/is a vector/);
    const text = await cli("walk", "vectors/ia64/synthetic/frame-63.json");
    expect(await vector.output("text", { thread: "all" })).toBe(text.replaceAll("vectors/ia64/synthetic/frame-63.json", "frame-63.json"));
    const view = vector.view({ thread: "all" });
    expect(view.frames).toBe(4);
    expect(view.html).toContain(`<section class="walk" id="walk-0"`);

    const sweep = Session.open([siteFile("vectors/arm64/synthetic/arm64-chain.sweep.json")]);
    expect(sweep.summary.kind).toBe("sweep");
    const step = sweep.summary.steps![3]!;
    const fromCli = await cli("walk", "vectors/arm64/synthetic/arm64-chain.sweep.json", "--step", String(step), "--walker", "frame-pointer");
    expect(await sweep.output("text", { thread: "all", step, walker: "frame-pointer" })).toBe(fromCli.replaceAll("vectors/arm64/synthetic/arm64-chain.sweep.json", "arm64-chain.sweep.json"));
  });

  it("reads a minidump where the reader asks: opening it, walking the crashed thread and writing Breakpad's report read a few KiB of a 16 MiB file", async () => {
    const counter = { bytes: 0 };
    const dump = siteFile(`${BREAKPAD}/minidump2.dmp`, counter, 16 << 20);
    const session = Session.open([dump, siteFile(TEST_APP_SYM), siteFile(KERNEL32_SYM)]);
    session.view({ thread: 3060 });
    expect(await session.output("breakpad", { thread: "all" })).toBe(readFileSync(`${BREAKPAD}/minidump2.stackwalk.out`, "utf8"));
    expect(counter.bytes).toBeGreaterThan(0);
    expect(counter.bytes).toBeLessThan(64 << 10);
  });

  it("says what it cannot use: a file of no kind, two inputs, a symbol file of another module", () => {
    const readme: SiteFile = { name: "README.md", source: bytesSource(new TextEncoder().encode("# hello")) };
    expect(() => Session.open([readme])).toThrow(/README\.md: .*not a minidump/);
    expect(() => Session.open([siteFile("vectors/x86/ebp-chain-4.json"), siteFile("vectors/x86/thread-start.json")])).toThrow(/one input at a time: ebp-chain-4\.json, thread-start\.json/);
    expect(() => Session.open([siteFile(TEST_APP_SYM)])).toThrow(/no minidump, vector or sweep/);
    const other = Session.open([siteFile("vectors/x86/ebp-chain-4.json"), siteFile(TEST_APP_SYM)]);
    expect(other.summary.notes).toEqual([expect.stringMatching(/^test_app\.sym: belongs to no module of the input/)]);
  });

  it("an image dropped with a stack-only x64 dump gives the walk its unwind tables; a PDB of a module that has records is passed over, said so", async () => {
    const { bytes: dumpBytes, truth: frames } = stackOnlyDump("vectors/x64/c/recursion-callbacks.sweep.json");
    const truth = frames.map((t) => hex(t.pc));
    const dump: SiteFile = { name: "stack-only.dmp", source: bytesSource(dumpBytes) };
    const pcs = (text: string): string[] => [...text.matchAll(/^ +\d+ +(0x[0-9a-f]+) /gm)].map((m) => hex(BigInt(m[1]!)));
    expect(pcs(await Session.open([dump]).output("text", { thread: "all" }))).not.toEqual(truth);
    const withImage = Session.open([dump, siteFile("vectors/programs/c/build/x64/recursion-callbacks.exe")]);
    expect(withImage.summary.notes).toEqual(["recursion-callbacks.exe: image from recursion-callbacks.exe"]);
    expect(pcs(await withImage.output("text", { thread: "all" }))).toEqual(truth);

    const withPdb = Session.open([siteFile("vectors/x86/c-fpo/recursion-callbacks.sweep.json"), siteFile("vectors/programs/c/build/x86-fpo/recursion-callbacks.pdb")]);
    expect(withPdb.summary.notes).toEqual(["recursion-callbacks.pdb: recursion-callbacks.exe already has unwind records; not used"]);
  });

  it("the chain examples compare side by side as stackwalk compare prints them", () => {
    const example = JSON.parse(readFileSync(join(ROOT, "vectors/compare/config-parser.json"), "utf8")) as CompareExample;
    const files = new Map(example.targets.map((t) => [t.vector, readFileSync(join(ROOT, "vectors/compare", t.vector), "utf8")]));
    expect(compareText(example, files)).toBe(readFileSync(join(ROOT, "test/render/compare/config-parser.txt"), "utf8"));
  });
});
