/**
 * Walking the real Breakpad minidump (test/fixtures/breakpad): thread 0 crashed in
 * test_app.exe; Breakpad's own output gives its four frames. With the fixture's symbol store the
 * caller frames come from the STACK WIN records (FrameData programs); without symbols the EBP
 * chain finds the same frames (fixtures/README.md).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { parseWalkJson } from "../support/walk-schema.js";

const DUMP = "test/fixtures/breakpad/minidump2.dmp";
const SYMBOLS = "test/fixtures/breakpad/symbols";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

interface JsonFrame {
  addrPC: string;
  addrStack: string;
  addrFrame: string;
  foundBy: string;
  rule: string;
  function: string | null;
}

/** From fixtures/README.md (Breakpad's minidump2.stackwalk.out): eip, esp, ebp of thread 0's frames. */
const EXPECTED = [
  ["0x0040429e", "0x0012fe84", "0x0012fe88"],
  ["0x00404200", "0x0012fe90", "0x0012ff70"],
  ["0x004053ec", "0x0012ff78", "0x0012ffc0"],
  ["0x7c816fd7", "0x0012ffc8", "0x0012fff0"],
];

async function crashedThread(...extra: string[]): Promise<{ frames: JsonFrame[]; stop: { reason: string }; err: string }> {
  const r = await cli("walk", DUMP, "--format", "json", ...extra);
  expect(r.code).toBe(0);
  const doc = parseWalkJson(r.out) as { machine: string; threads: { thread_id: number; crashed: boolean; frames: JsonFrame[]; stop: { reason: string } }[] };
  expect(doc.machine).toBe("x86");
  expect(doc.threads.length).toBe(2);
  const t = doc.threads[0]!;
  expect(t.crashed).toBe(true);
  expect(t.thread_id).toBe(0xbf4);
  return { frames: t.frames, stop: t.stop, err: r.err };
}

describe("walk minidump2.dmp", () => {
  it("with the symbol store: the four frames, frames 1-3 from FrameData records", async () => {
    const { frames, stop, err } = await crashedThread("--symbols", SYMBOLS);
    expect(frames.map((f) => [f.addrPC, f.addrStack, f.addrFrame])).toEqual(EXPECTED);
    expect(frames.map((f) => f.foundBy)).toEqual(["context", "frame-data", "frame-data", "frame-data"]);
    expect(frames[1]!.rule).toMatch(/^frame-data rva=0x4290 /);
    expect(frames.map((f) => f.function)).toEqual(["`anonymous namespace'::CrashFunction", "main", "__tmainCRTStartup", "BaseProcessStart"]);
    expect(stop.reason).toBe("end-of-stack");
    expect(err).toContain("test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym");
  });

  it("without symbols: the EBP chain finds the same four frames", async () => {
    const { frames } = await crashedThread("--walker", "frame-pointer");
    expect(frames.map((f) => [f.addrPC, f.addrStack, f.addrFrame])).toEqual(EXPECTED);
    expect(frames.slice(1).map((f) => f.foundBy)).toEqual(["frame-pointer", "frame-pointer", "frame-pointer"]);
  });

  it("check refuses a dump (no ground truth): exit 2", async () => {
    const r = await cli("check", DUMP);
    expect(r.code).toBe(2);
    expect(r.err).toContain("no ground truth");
  });

  it("a .sym with malformed lines still walks: the lines are left out, counted, and reported once", async () => {
    const store = join(mkdtempSync(join(tmpdir(), "sw-corrupt-")), "symbols");
    cpSync(SYMBOLS, store, { recursive: true });
    const sym = join(store, "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym");
    const lines = readFileSync(sym, "utf8").split("\n");
    // Damage two FUNC lines far from the frames on the stack.
    let damaged = 0;
    for (let i = lines.length - 1; i >= 0 && damaged < 2; i--) {
      if (lines[i]!.startsWith("FUNC ") && !lines[i]!.includes("main") && !lines[i]!.includes("CrashFunction")) {
        lines[i] = "FUNC not-hex";
        damaged++;
      }
    }
    writeFileSync(sym, lines.join("\n"));
    const { frames, err } = await crashedThread("--symbols", store);
    expect(frames.map((f) => [f.addrPC, f.addrStack, f.addrFrame])).toEqual(EXPECTED);
    expect(frames.map((f) => f.foundBy)).toEqual(["context", "frame-data", "frame-data", "frame-data"]);
    const warnings = err.split("\n").filter((l) => l.includes("corrupt symbols"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/2 malformed line\(s\)/);
  });
});
