/**
 * `--format windbg` on x86: WinDbg `kv`'s FPO note after each call site, from the FPO_DATA record
 * of the frame's function. Checked on vectors/x86/synthetic/mixed-8.json against the FPO_DATA
 * values quoted in vectors/programs/x86/mixed-8.asm: `(FPO: [params,locals,registers])`,
 * `(FPO: [EBP 0x…] [p,l,r])` for the fUseBP functions (with the EBP they saved: the caller's),
 * `(FPO: [Non-Fpo])` for FRAME_NONFPO records and functions without a record.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { FRAME_FPO, FRAME_NONFPO, FRAME_TRAP, type FpoData } from "../../src/model/fpo-data.js";
import type { Module } from "../../src/model/snapshot.js";
import { fpoNote, renderWindbg, windbgThreadLine } from "../../src/render/windbg.js";
import type { Frame } from "../../src/walk/frame.js";
import type { ThreadWalk } from "../../src/walk/walk.js";

const VECTOR = "vectors/x86/synthetic/mixed-8.json";
const ASM = "vectors/programs/x86/mixed-8.asm";

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await run(argv, { out: (t) => (out += t), err: () => {} });
  return { code, out };
}

/** FPO_DATA fields per function, from the `# FPO_DATA:` comment above each function in the .asm. */
function quotedRecords(): Map<string, Record<string, string>> {
  const records = new Map<string, Record<string, string>>();
  let name: string | undefined;
  for (const line of readFileSync(ASM, "utf8").split("\n")) {
    const fn = /^# (?!FPO_DATA:)(\w+): /.exec(line);
    if (fn !== null) name = fn[1];
    const fpo = /^# FPO_DATA: (.*)$/.exec(line);
    if (fpo !== null && name !== undefined) records.set(name, Object.fromEntries(fpo[1]!.split(" ").map((kv) => kv.split("=") as [string, string])));
  }
  return records;
}

describe("windbg kv FPO notes on mixed-8", () => {
  it("every frame's note follows its function's FPO_DATA record", async () => {
    const { code, out } = await cli("walk", VECTOR, "--format", "windbg");
    expect(code).toBe(0);
    const rows = out.split("\n").slice(1).filter((l) => l !== "");
    expect(rows).toHaveLength(8);
    const records = quotedRecords();
    expect(records.size).toBe(8);
    rows.forEach((row, i) => {
      const m = /^([0-9a-f]{8}) [0-9a-f]{8}(?: [0-9a-f]{8}){3} mixed-8!(\w+)\+0x[0-9a-f]+ \(FPO: (.*)\)$/.exec(row);
      expect(m, row).not.toBeNull();
      const r = records.get(m![2]!)!;
      const counts = `[${r["cdwParams"]},${r["cdwLocals"]},${r["cbRegs"]}]`;
      let expected: string;
      if (r["cbFrame"] === "FRAME_NONFPO") expected = "[Non-Fpo]";
      else if (r["fUseBP"] === "1") expected = `[EBP 0x${rows[i + 1]!.slice(0, 8)}] ${counts}`; // the caller's EBP, which the function saved
      else expected = counts;
      expect(m![3], `${m![2]}: ${row}`).toBe(expected);
    });
  });

  it("the exact lines of the fUseBP and FPO frames", async () => {
    const rows = (await cli("walk", VECTOR, "--format", "windbg")).out.split("\n");
    expect(rows[1]).toMatch(/ mixed-8!eta\+0x0 \(FPO: \[1,0,0\]\)$/);
    expect(rows[2]).toMatch(/ mixed-8!zeta\+0x1e \(FPO: \[EBP 0x0012ff84\] \[2,1,4\]\)$/);
    expect(rows[5]).toMatch(/ mixed-8!gamma\+0x12 \(FPO: \[EBP 0x0012ffc0\] \[3,0,3\]\)$/);
    expect(rows[6]).toMatch(/ mixed-8!beta\+0x2a \(FPO: \[Non-Fpo\]\)$/);
  });

  it("x64 stacks get no FPO notes", async () => {
    const { out } = await cli("walk", "vectors/x64/rbp-chain-3.json", "--format", "windbg");
    expect(out).not.toContain("FPO");
  });
});

describe("fpoNote", () => {
  const record = (cbFrame: number, fUseBP = false): FpoData => ({
    ulOffStart: 0x1000, cbProcSize: 0x100, cdwLocals: 2, cdwParams: 3, cbProlog: 0, cbRegs: 1, fHasSEH: false, fUseBP, reserved: 0, cbFrame,
  });
  const moduleWith = (fpo: FpoData[]): Module => ({ name: "k.dll", base: 0x10000000n, size: 0x10000n, symbols: [], unwind: { fpo, frameData: [], origin: "test" } });
  const frame = (index: number, pc: bigint, ebp: bigint): Frame => ({
    index, addrPC: pc, addrReturn: 0n, addrFrame: ebp, addrStack: 0n, addrBStore: 0n, params: [], far: false, virtual: false, trust: "fpo", rule: { kind: "custom", text: "" }, registers: { eip: pc, ebp },
  });

  it("trap frames: params and locals, then the trap frame at the frame's EBP", () => {
    expect(fpoNote([moduleWith([record(FRAME_TRAP)])], frame(0, 0x10001010n, 0x8013eee8n), undefined)).toBe(" (FPO: [3,2] TrapFrame @ 8013eee8)");
  });

  it("the record is looked up at return address − 1 for caller frames", () => {
    const m = moduleWith([record(FRAME_FPO)]);
    // 0x10001100 is one past the function: only a caller frame (a return address) is inside it.
    expect(fpoNote([m], frame(1, 0x10001100n, 0n), undefined)).toBe(" (FPO: [3,2,1])");
    expect(fpoNote([m], frame(0, 0x10001100n, 0n), undefined)).toBe(" (FPO: [Non-Fpo])");
  });

  it("fUseBP: the saved EBP is the caller's; FRAME_NONFPO: Non-Fpo; no module: nothing", () => {
    expect(fpoNote([moduleWith([record(FRAME_FPO, true)])], frame(0, 0x10001010n, 0xbadn), frame(1, 0x401000n, 0x12ff80n))).toBe(" (FPO: [EBP 0x0012ff80] [3,2,1])");
    expect(fpoNote([moduleWith([record(FRAME_NONFPO)])], frame(0, 0x10001010n, 0n), undefined)).toBe(" (FPO: [Non-Fpo])");
    expect(fpoNote([moduleWith([record(FRAME_FPO)])], frame(0, 0x401000n, 0n), undefined)).toBe("");
  });
});

/** The threads and process id Breakpad's minidump_dump printed for minidump2 (fixtures/breakpad/minidump2.dump.out). */
function dumpedThreads(): { processId: number; threads: { id: number; suspendCount: number; teb: bigint }[] } {
  const text = readFileSync("test/fixtures/breakpad/minidump2.dump.out", "utf8");
  const threads = [...text.matchAll(/^MDRawThread\n {2}thread_id += (0x[0-9a-f]+)\n {2}suspend_count += (\d+)\n(?:.*\n)*? {2}teb += (0x[0-9a-f]+)$/gm)].map((m) => ({
    id: Number(m[1]),
    suspendCount: Number(m[2]),
    teb: BigInt(m[3]!),
  }));
  const pid = /^ {2}process_id += (\d+)$/m.exec(text);
  return { processId: Number(pid![1]), threads };
}

describe("windbg ~*k thread lines", () => {
  it("minidump2: each stack under its ~ line, numbered in the dump's thread order, with MiscInfo's process id in hex", async () => {
    const { processId, threads } = dumpedThreads();
    expect(threads).toHaveLength(2);
    const { code, out } = await cli("walk", "test/fixtures/breakpad/minidump2.dmp", "--format", "windbg");
    expect(code).toBe(0);
    const heads = out.split("\n").filter((l) => l.includes("  Id: "));
    // The exception thread (0xbf4, the dump's first) is the debugger's current one.
    expect(heads).toEqual(
      threads.map((t, i) => `${i === 0 ? "." : " "}  ${i}  Id: ${processId.toString(16)}.${t.id.toString(16)} Suspend: ${t.suspendCount} Teb: ${t.teb.toString(16).padStart(8, "0")} Unfrozen`),
    );
    expect(heads[0]).toBe(".  0  Id: f5c.bf4 Suspend: 0 Teb: 7ffdf000 Unfrozen");
    // Each line is followed by that thread's kb header.
    const lines = out.split("\n");
    for (const h of heads) expect(lines[lines.indexOf(h) + 1]).toBe("ChildEBP RetAddr  Args to Child              ");
  });

  it("one thread gets no ~ line, as k prints it", async () => {
    const { out } = await cli("walk", "test/fixtures/breakpad/minidump2.dmp", "--format", "windbg", "--thread", "crashed");
    expect(out.startsWith("ChildEBP RetAddr")).toBe(true);
  });

  it("the number takes three columns, 64-bit TEBs are written as WinDbg writes addresses, and an unknown process id is 0", () => {
    const threads = Array.from({ length: 12 }, (_, i) => ({ id: 0x100 + i, suspendCount: 1, teb: 0x000000d16b3b5000n + BigInt(i) * 0x2000n }));
    const thread = (id: number) => ({ id, crashed: false, registers: {} });
    expect(windbgThreadLine("x64", { processId: 0x1a64, threads }, thread(0x10b), false)).toBe("  11  Id: 1a64.10b Suspend: 1 Teb: 000000d1`6b3cb000 Unfrozen");
    expect(windbgThreadLine("x64", { processId: 0x1a64, threads }, thread(0x100), true)).toBe(".  0  Id: 1a64.100 Suspend: 1 Teb: 000000d1`6b3b5000 Unfrozen");
    expect(windbgThreadLine("x86", { threads: [{ id: 7 }, { id: 9 }] }, thread(9), false)).toBe("   1  Id: 0.9");
  });

  it("without an exception thread the first thread of the process is the current one", () => {
    const walk = (id: number, crashed: boolean): ThreadWalk => ({ thread: { id, crashed, registers: {} }, walk: { frames: [], stop: { reason: "end-of-stack", detail: "" } } });
    const heads = (walks: ThreadWalk[]) => renderWindbg("x86", [], walks, undefined, { processId: 4, threads: [{ id: 20 }, { id: 10 }] }).split("\n").filter((l) => l.includes("Id:"));
    expect(heads([walk(10, false), walk(20, false)])).toEqual([".  0  Id: 4.14", "   1  Id: 4.a"]);
    // In the debugger's thread order, whichever thread crashed.
    expect(heads([walk(10, true), walk(20, false)])).toEqual(["   0  Id: 4.14", ".  1  Id: 4.a"]);
  });
});
