/**
 * A dump's thread is walked through its own stack memory only (minidump.md §4), as Breakpad's and
 * rust-minidump's walkers see it: the snapshot names each thread's stack region
 * (ThreadSnapshot.stackRanges), and the walk reads the stack through it, so a frame chain that
 * leaves the stack for another captured range ends there. A Stack descriptor without bytes falls
 * back to the MemoryList range holding the stack's start.
 */
import { describe, expect, it } from "vitest";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { breakpadReport } from "../../src/analysis/breakpad-report.js";
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
  it("the chain does not follow a saved EBP into another captured range, in the walk and in the Breakpad report", () => {
    const dump = readMinidump(bytesSource(chainLeavingTheStack().bytes));
    const snapshot = minidumpSnapshot(dump);
    // The range is in the snapshot, for everything but the stack walk.
    expect(snapshot.memory.read(ELSEWHERE + 4n, 4)).toEqual(words(RET2));
    const [own] = walkSnapshot(snapshot, { walker: "frame-pointer" });
    expect(own!.walk.frames.map((f) => f.addrPC)).toEqual([0x0040_1000n, RET1]);
    const report = breakpadReport(dump, snapshot, { walk: { walker: "frame-pointer" } });
    const walk = report.threads[0]!.walk;
    expect(walk.frames.map((f) => f.addrPC)).toEqual([0x0040_1000n, RET1]);
    expect(walk.stop).toMatchObject({ reason: "read-fault" });
  });

  it("the thread's stack region is its Stack descriptor's range", () => {
    const snapshot = minidumpSnapshot(readMinidump(bytesSource(chainLeavingTheStack().bytes)));
    expect(snapshot.threads[0]!.stackRanges).toEqual([{ start: STACK, end: STACK + 0x100n }]);
  });

  it("a Stack descriptor without bytes: the MemoryList range that holds the stack's start", () => {
    const written = chainLeavingTheStack();
    const bytes = written.bytes.slice();
    const dv = new DataView(bytes.buffer);
    const entry = written.threadEntries[0]!;
    dv.setUint32(entry + 32, 0, true); // Stack.DataSize
    dv.setUint32(entry + 36, 0, true); // Stack.Rva
    const dump = readMinidump(bytesSource(bytes));
    const held = dump.memory.find((r) => STACK >= r.start && STACK - r.start < r.size);
    expect(held).toBeDefined();
    const snapshot = minidumpSnapshot(dump);
    expect(snapshot.threads[0]!.stackRanges).toEqual([{ start: held!.start, end: held!.start + held!.size }]);
    const [walked] = walkSnapshot(snapshot, { walker: "frame-pointer" });
    expect(walked!.walk.frames.map((f) => f.addrPC)).toEqual([0x0040_1000n, RET1]);
    // A start address no listed range holds: no stack memory at all.
    dv.setUint32(entry + 24, 0x7000_0000, true);
    const lost = minidumpSnapshot(readMinidump(bytesSource(bytes)));
    expect(lost.threads[0]!.stackRanges).toEqual([]);
  });
});
