/**
 * Parts of Breakpad's report that the test dumps do not show (minidump_processor.cc,
 * stackwalk_common.cc): the `Assertion:` line of Breakpad's assertion stream and its place in
 * `-m`, a thread without a usable context listed with no frames, a module listed twice printed
 * once, and a Windows x86 dump whose MemoryList ranges overlap, reported with a note.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { assertionText, breakpadReport } from "../../src/analysis/breakpad-report.js";
import { renderBreakpad, renderBreakpadMachineReadable } from "../../src/render/breakpad.js";
import { writeMinidump, type MinidumpSpec } from "../support/minidump-writer.js";

const BREAKPAD_INFO = 0x47670001;
const ASSERTION_INFO = 0x47670002;

/** Breakpad's info stream: validity bits, dump thread, requesting thread. */
function breakpadInfo(dumpThread: number | undefined, requesting: number | undefined): Uint8Array {
  const b = new Uint8Array(12);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, (dumpThread !== undefined ? 1 : 0) | (requesting !== undefined ? 2 : 0), true);
  dv.setUint32(4, dumpThread ?? 0, true);
  dv.setUint32(8, requesting ?? 0, true);
  return b;
}

/** MDRawAssertionInfo: expression, function and file as 128 UTF-16 units each, then line and type. */
function assertionInfo(expression: string, fn: string, file: string, line: number, type: number): Uint8Array {
  const b = new Uint8Array(776);
  const dv = new DataView(b.buffer);
  [expression, fn, file].forEach((text, i) => {
    for (let k = 0; k < text.length; k++) dv.setUint16(256 * i + 2 * k, text.charCodeAt(k), true);
  });
  dv.setUint32(768, line, true);
  dv.setUint32(772, type, true);
  return b;
}

const X86 = { eip: 0x0040_1000n, esp: 0x0012_f000n, ebp: 0n };
const STACK = { base: 0x0012_f000n, bytes: new Uint8Array(0x40) };

function report(spec: MinidumpSpec) {
  const dump = readMinidump(bytesSource(writeMinidump(spec).bytes));
  const r = breakpadReport(dump, minidumpSnapshot(dump));
  return { dump, human: renderBreakpad(r), machine: renderBreakpadMachineReadable(r) };
}

describe("Breakpad's assertion stream", () => {
  const spec: MinidumpSpec = {
    machine: "x86",
    threads: [{ id: 5, registers: X86, stack: STACK }],
    modules: [{ path: "C:\\app\\app.exe", base: 0x0040_0000n, size: 0x10000 }],
    extraStreams: [
      { type: BREAKPAD_INFO, data: breakpadInfo(undefined, 5) },
      { type: ASSERTION_INFO, data: assertionInfo("buffer != nullptr", "Parse", "c:\\src\\parse.cc", 42, 1) },
    ],
  };

  it("human: `Assertion:` after the crash block; the requesting thread did not crash", () => {
    const { human } = report(spec);
    expect(human).toContain(
      "\n\nNo crash\nAssertion: Invalid parameter passed to library function buffer != nullptr in function Parse, in file c:\\src\\parse.cc at line 42\nProcess uptime: not available\n\nThread 0 (requested dump, did not crash)\n",
    );
  });

  it("-m: the assertion takes the place of `No crash`", () => {
    expect(report(spec).machine.split("\n")[3]).toBe("Crash|Invalid parameter passed to library function buffer != nullptr in function Parse, in file c:\\src\\parse.cc at line 42||0");
  });

  it("the kinds, and the parts left out when empty", () => {
    expect(assertionText({ expression: "", function: "", file: "", line: 0, type: 2 })).toBe("Pure virtual function called");
    expect(assertionText({ expression: "x", function: "", file: "a.cc", line: 0, type: 7 })).toBe("Unknown assertion type 0x00000007 x, in file a.cc");
  });

  it("a stream of another size is passed over with a note, as Breakpad ignores it", () => {
    const { dump, human } = report({ ...spec, extraStreams: [{ type: ASSERTION_INFO, data: new Uint8Array(100) }] });
    expect(human).not.toContain("Assertion:");
    expect(dump.notes.some((n) => /Breakpad assertion stream is 100 bytes, not 776/.test(n))).toBe(true);
  });
});

describe("threads and modules", () => {
  it("a thread whose context cannot be used is listed with no frames; the others are walked", () => {
    const { dump, human } = report({
      machine: "x86",
      threads: [
        { id: 1, registers: X86, stack: STACK },
        { id: 2, registers: X86, contextFlags: 0x00100000 | 0x1f },
      ],
      exception: { threadId: 1, code: 0xc0000005, address: 0x0040_1000n, parameters: [0n, 0n] },
    });
    expect(human).toContain("\nThread 1\n <no frames>\n");
    expect(dump.notes.some((n) => /thread 2 is not walked/.test(n))).toBe(true);
  });

  it("a module listed twice with the same base, size, file and code id is printed once", () => {
    const twice = { path: "C:\\app\\app.exe", base: 0x0040_0000n, size: 0x10000, timeDateStamp: 0x5000_0000 };
    const { human, machine } = report({
      machine: "x86",
      threads: [{ id: 1, registers: X86, stack: STACK }],
      modules: [twice, { path: "C:\\w\\k32.dll", base: 0x7c80_0000n, size: 0x1000 }, twice],
    });
    expect(human.split("Loaded modules:\n")[1]).toBe("0x00400000 - 0x0040ffff  app.exe  ???  (main)\n0x7c800000 - 0x7c800fff  k32.dll  ???\n");
    expect(machine.split("\n").filter((l) => l.startsWith("Module|"))).toHaveLength(2);
  });
});

describe("a Windows x86 dump whose MemoryList ranges overlap", () => {
  it("is walked and reported, with a note naming the descriptor", async () => {
    const stack = new Uint8Array(0x100);
    const dv = new DataView(stack.buffer);
    dv.setUint32(0x80, 0x0012_f0c0, true); // saved EBP
    dv.setUint32(0x84, 0x0040_2000, true); // return address
    const written = writeMinidump({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x0040_1000n, esp: 0x0012_f040n, ebp: 0x0012_f080n }, stack: { base: 0x0012_f000n, bytes: stack } }],
      modules: [{ path: "C:\\app\\app.exe", base: 0x0040_0000n, size: 0x10000 }],
      // A heap range reaching into the stack, as a real dump's MemoryList has.
      memory: [{ base: 0x0012_e000n, bytes: new Uint8Array(0x1040) }],
      exception: { threadId: 1, code: 0xc0000005, address: 0x0040_1000n, parameters: [1n, 0x10n] },
    });
    const file = join(mkdtempSync(join(tmpdir(), "overlap-")), "overlap.dmp");
    writeFileSync(file, written.bytes);
    let out = "";
    let err = "";
    const code = await run(["walk", file, "--format", "breakpad", "--walker", "frame-pointer"], { out: (t) => (out += t), err: (t) => (err += t) });
    expect(code).toBe(0);
    expect(out).toContain("Crash reason:  EXCEPTION_ACCESS_VIOLATION_WRITE\nCrash address: 0x10\n");
    expect(out).toContain(" 0  app.exe + 0x1000\n");
    expect(out).toContain(" 1  app.exe + 0x2000\n");
    expect(err).toBe(
      `note: ${file}: offset 0x${written.memoryDescriptors[0]!.toString(16)}: MemoryList range 0x12f000..0x12f100 overlaps the MemoryList range 0x12e000..0x12f040 (descriptor at 0x${written.memoryDescriptors[1]!.toString(16)}): the shared bytes are read from the range that starts lower\n`,
    );
  });
});
