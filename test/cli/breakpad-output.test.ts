/**
 * `stackwalk walk <dump> --format breakpad|breakpad-m` reproduces Breakpad's minidump_stackwalk
 * output byte for byte on the real dump of test/fixtures/breakpad (minidump.md §6): the
 * human report (minidump2.stackwalk.out) and `-m` (minidump2.stackwalk.machine_readable.out),
 * both made by `minidump_stackwalk minidump2.dmp symbols`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { x64Dump } from "../render/x64-dump.js";
import { writeMinidump } from "../support/minidump-writer.js";
import { spawnStackwalk } from "../support/spawn-cli.js";
import { parseWalkJson } from "../support/walk-schema.js";

const FIXTURES = "test/fixtures/breakpad";
const DUMP = `${FIXTURES}/minidump2.dmp`;
const SYMBOLS = `${FIXTURES}/symbols`;
const HUMAN = readFileSync(`${FIXTURES}/minidump2.stackwalk.out`, "utf8");
const MACHINE = readFileSync(`${FIXTURES}/minidump2.stackwalk.machine_readable.out`, "utf8");

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("minidump2.dmp with the fixture's symbol store", () => {
  it("--format breakpad-m is minidump2.stackwalk.machine_readable.out", async () => {
    const r = await cli("walk", DUMP, "--symbols", SYMBOLS, "--format", "breakpad-m");
    expect(r.code).toBe(0);
    expect(r.out).toBe(MACHINE);
  });

  it("--format breakpad is minidump2.stackwalk.out", async () => {
    const r = await cli("walk", DUMP, "--symbols", SYMBOLS, "--format", "breakpad");
    expect(r.code).toBe(0);
    expect(r.out).toBe(HUMAN);
  });

  it("the same bytes on stdout of the stackwalk command itself", () => {
    for (const [format, expected] of [["breakpad-m", MACHINE], ["breakpad", HUMAN]] as const) {
      const r = spawnStackwalk(["walk", DUMP, "--symbols", SYMBOLS, "--format", format]);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(expected);
    }
  });
});

describe("minidump2.dmp without the symbols", () => {
  it("with an empty symbol path: module offsets, frame-pointer frames, warnings for the modules on the stack", async () => {
    const empty = mkdtempSync(join(tmpdir(), "stackwalk-syms-"));
    const r = await cli("walk", DUMP, "--symbols", empty, "--format", "breakpad");
    expect(r.code).toBe(0);
    const frames = r.out.split("\n").filter((l) => /^ \d  /.test(l));
    expect(frames).toEqual([" 0  test_app.exe + 0x429e", " 1  test_app.exe + 0x4200", " 2  test_app.exe + 0x53ec", " 3  kernel32.dll + 0x16fd7"]);
    expect(r.out.match(/Found by: .*/g)).toEqual([
      "Found by: given as instruction pointer in context",
      "Found by: previous frame's frame pointer",
      "Found by: previous frame's frame pointer",
      "Found by: previous frame's frame pointer",
    ]);
    expect(r.out).toContain("0x00400000 - 0x0042cfff  test_app.exe  ???  (main)  (WARNING: No symbols, test_app.pdb, 5A9832E5287241C1838ED98914E9B7FF1)\n");
    expect(r.out).toContain("0x7c800000 - 0x7c8f3fff  kernel32.dll  5.1.2600.2945  (WARNING: No symbols, kernel32.pdb, BCE8785C57B44245A669896B6A19B9542)\n");
    // ntdll.dll is only on the stack of the dump-writer thread, which Breakpad does not walk.
    expect(r.out).toContain("0x7c900000 - 0x7c9affff  ntdll.dll  5.1.2600.2180\n");
  });

  it("-m without symbols", async () => {
    const r = await cli("walk", DUMP, "--format", "breakpad-m", "--walker", "frame-pointer");
    expect(r.out.split("\n").slice(-5)).toEqual([
      "0|0|test_app.exe||||0x429e",
      "0|1|test_app.exe||||0x4200",
      "0|2|test_app.exe||||0x53ec",
      "0|3|kernel32.dll||||0x16fd7",
      "",
    ]);
  });
});

describe("an AMD64 dump with a dump-writer thread", () => {
  it("-m numbers the threads Breakpad walks and lists the crashed one first", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "stackwalk-x64-")), "x64.dmp");
    writeFileSync(file, x64Dump());
    const r = await cli("walk", file, "--format", "breakpad-m");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Crash|EXCEPTION_INT_DIVIDE_BY_ZERO|0x140001234|1\n");
    expect(r.out.endsWith("\n1|0|app.exe||||0x1234\n0|0|ntdll.dll||||0x2000\n")).toBe(true);
    const human = await cli("walk", file, "--format", "breakpad");
    expect(human.out).toContain("Thread 1 (crashed)\n 0  app.exe + 0x1234\n    rax = 0x11110000000000a0   rdx = 0x11110000000000d0\n");
  });
});

describe("usage", () => {
  it.each([
    ["breakpad", "vectors/x86/ebp-chain-4.json", "vector"],
    ["breakpad-m", "vectors/x86/ebp-chain-4.json", "vector"],
    ["breakpad", "vectors/x64/c/recursion-callbacks.sweep.json", "sweep"],
  ])("--format %s of %s is a usage error (exit 2)", async (format, file, kind) => {
    const r = await cli("walk", file, "--format", format);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err.split("\n")[0]).toBe(`stackwalk walk: --format ${format} reproduces Breakpad's report of a minidump; ${file} is a ${kind}, not a .dmp`);
  });

  it("an IA-64 dump is refused: Breakpad has no IA-64 walker (exit 2)", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "stackwalk-ia64-")), "ia64.dmp");
    writeFileSync(
      file,
      writeMinidump({
        machine: "ia64",
        threadList: "ThreadExList",
        threads: [{ id: 7, registers: { stiip: 0xe0000000_00001230n, intsp: 0x9ffff000n, rsbsp: 0x9fff8000n }, stack: { base: 0x9ffff000n, bytes: new Uint8Array(32) } }],
      }).bytes,
    );
    const r = await cli("walk", file, "--format", "breakpad-m");
    expect(r.code).toBe(2);
    expect(r.err).toContain("Breakpad's processor has no IA-64 stack walker");
  });

  it("--format text and json of a dump are unchanged", async () => {
    const json = await cli("walk", DUMP, "--symbols", SYMBOLS, "--format", "json");
    expect(parseWalkJson(json.out).threads[0].frames.map((f: { function: string }) => f.function)).toEqual([
      "`anonymous namespace'::CrashFunction", "main", "__tmainCRTStartup", "BaseProcessStart",
    ]);
    const text = await cli("walk", DUMP, "--symbols", SYMBOLS);
    expect(text.out).toContain("test_app.exe!main+0x50");
  });
});
