/**
 * Breakpad's walker sees only a thread's own stack memory (minidump.md §4): the Breakpad formats
 * walk each thread through threadStackMemory, while the project's own walk reads every captured
 * range, as dbghelp reads a dump. A frame chain that leaves the stack shows the difference; a
 * Stack descriptor without bytes falls back to the MemoryList range holding the stack's start.
 */
import { describe, expect, it } from "vitest";
import { bytesSource, minidumpSnapshot, readMinidump, threadStackMemory } from "../../src/formats/minidump.js";
import { breakpadReport } from "../../src/render/breakpad.js";
import { walkSnapshot } from "../../src/walk/walk.js";
import { writeMinidump } from "../support/minidump-writer.js";

const STACK = 0x0012_f000n;
const ELSEWHERE = 0x0050_0000n;
const RET1 = 0x0040_1234n;
const RET2 = 0x0040_2345n;

function words(...values: bigint[]): Uint8Array {
  const b = new Uint8Array(values.length * 4);
  const dv = new DataView(b.buffer);
  values.forEach((v, i) => dv.setUint32(4 * i, Number(v), true));
  return b;
}

/**
 * One x86 thread whose EBP chain runs from the stack into a captured heap range: [ebp] points
 * at ELSEWHERE, where the next saved EBP and return address lie.
 */
function chainLeavingTheStack() {
  const stack = new Uint8Array(0x100);
  stack.set(words(ELSEWHERE, RET1), 0x80); // at STACK+0x80: saved EBP, return address
  return writeMinidump({
    machine: "x86",
    threads: [{ id: 1, registers: { eip: 0x0040_1000n, esp: STACK + 0x40n, ebp: STACK + 0x80n }, stack: { base: STACK, bytes: stack } }],
    modules: [{ path: "C:\\app\\app.exe", base: 0x0040_0000n, size: 0x10000 }],
    memory: [{ base: ELSEWHERE, bytes: words(0n, RET2, 0n, 0n) }],
    exception: { threadId: 1, code: 0xc0000005, address: 0x0040_1000n, parameters: [0n, 0n] },
  });
}

describe("each thread walked with its own stack memory", () => {
  it("the project's walk follows the chain into the heap range; the Breakpad report does not", () => {
    const dump = readMinidump(bytesSource(chainLeavingTheStack().bytes));
    const snapshot = minidumpSnapshot(dump);
    const [own] = walkSnapshot(snapshot, { walker: "frame-pointer" });
    expect(own!.walk.frames.map((f) => f.addrPC)).toEqual([0x0040_1000n, RET1, RET2]);
    const report = breakpadReport(dump, snapshot, { walk: { walker: "frame-pointer" } });
    const walk = report.threads[0]!.walk;
    expect(walk.frames.map((f) => f.addrPC)).toEqual([0x0040_1000n, RET1]);
    expect(walk.stop).toMatchObject({ reason: "read-fault" });
  });

  it("reads inside the stack work, reads of other captured ranges fail", () => {
    const dump = readMinidump(bytesSource(chainLeavingTheStack().bytes));
    const memory = threadStackMemory(dump, dump.threads[0]!);
    expect(memory.u32(STACK + 0x84n)).toBe(Number(RET1));
    expect(memory.read(STACK + 0xfcn, 4)).toBeDefined();
    expect(memory.read(STACK + 0xfcn, 8)).toBeUndefined();
    expect(memory.u32(ELSEWHERE + 4n)).toBeUndefined();
    expect(minidumpSnapshot(dump).memory.read(ELSEWHERE + 4n, 4)).toEqual(words(RET2));
  });

  it("a Stack descriptor without bytes: the MemoryList range that holds the stack's start", () => {
    const written = chainLeavingTheStack();
    const bytes = written.bytes.slice();
    const dv = new DataView(bytes.buffer);
    const entry = written.threadEntries[0]!;
    dv.setUint32(entry + 32, 0, true); // Stack.DataSize
    dv.setUint32(entry + 36, 0, true); // Stack.Rva
    const dump = readMinidump(bytesSource(bytes));
    const memory = threadStackMemory(dump, dump.threads[0]!);
    expect(memory.u32(STACK + 0x84n)).toBe(Number(RET1));
    expect(memory.u32(ELSEWHERE + 4n)).toBeUndefined();
    // A start address no listed range holds: no memory at all.
    dv.setUint32(entry + 24, 0x7000_0000, true);
    const lost = readMinidump(bytesSource(bytes));
    expect(threadStackMemory(lost, lost.threads[0]!).read(STACK, 4)).toBeUndefined();
  });
});
