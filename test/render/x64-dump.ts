/** A small synthetic AMD64 minidump for the Breakpad-format tests (test/support/minidump-writer.ts). */
import { writeMinidump } from "../support/minidump-writer.js";

/** Breakpad Info stream type (minidump.md §1.3). */
const BREAKPAD_INFO = 0x47670001;

/** Distinct register values: the low byte says which register it is. */
export const X64_REGISTERS: Record<string, bigint> = {
  rax: 0x1111_0000_0000_00a0n, rcx: 0x1111_0000_0000_00c0n, rdx: 0x1111_0000_0000_00d0n, rbx: 0x1111_0000_0000_00b0n,
  rsp: 0x0000_0000_0014_ff00n, rbp: 0x0000_0000_0014_ff80n, rsi: 0x1111_0000_0000_0051n, rdi: 0x1111_0000_0000_00e1n,
  r8: 0x08n, r9: 0x09n, r10: 0x10n, r11: 0x11n, r12: 0x12n, r13: 0x13n, r14: 0x14n, r15: 0x15n,
  rip: 0x0000_0001_4000_1234n, eflags: 0x246n,
};

/**
 * Three threads in dump order: 7 (in ntdll.dll), 3 (Breakpad's dump-writer thread, in
 * writer.dll) and 5 (crashed with an integer divide by zero in app.exe). The stacks hold zeros, so
 * each walk is one frame. Modules are listed out of address order: app.exe (main), writer.dll,
 * ntdll.dll.
 */
export function x64Dump(): Uint8Array {
  const info = new Uint8Array(12);
  const dv = new DataView(info.buffer);
  dv.setUint32(0, 3, true);
  dv.setUint32(4, 3, true);
  dv.setUint32(8, 5, true);
  return writeMinidump({
    machine: "x64",
    threads: [
      { id: 7, registers: { ...X64_REGISTERS, rip: 0x7ff8_0000_2000n, rsp: 0x0000_0000_0024_ff00n }, stack: { base: 0x24f000n, bytes: new Uint8Array(0x1000) } },
      { id: 3, registers: { ...X64_REGISTERS, rip: 0x7ff9_0000_3000n, rsp: 0x0000_0000_0034_ff00n }, stack: { base: 0x34f000n, bytes: new Uint8Array(0x1000) } },
      { id: 5, registers: { ...X64_REGISTERS, rax: 0n }, stack: { base: 0x14f000n, bytes: new Uint8Array(0x1000) } },
    ],
    modules: [
      { path: "C:\\app\\app.exe", base: 0x1_4000_0000n, size: 0x5000, version: [1, 2, 3, 4], codeView: { rsds: { guid: "00112233-4455-6677-8899-aabbccddeeff", age: 1, pdb: "C:\\build\\app.pdb" } } },
      { path: "C:\\app\\writer.dll", base: 0x7ff9_0000_0000n, size: 0x8000, codeView: { rsds: { guid: "00000000-0000-0000-0000-000000000001", age: 1, pdb: "writer.pdb" } } },
      { path: "C:\\Windows\\System32\\ntdll.dll", base: 0x7ff8_0000_0000n, size: 0x10000, codeView: { rsds: { guid: "5A9832E5-2872-41C1-838E-D98914E9B7FF", age: 2, pdb: "ntdll.pdb" } } },
    ],
    exception: { threadId: 5, code: 0xc0000094, address: 0x1_4000_1234n, registers: X64_REGISTERS },
    miscInfo: { processId: 42, processCreateTime: 0x65000000 - 42 },
    extraStreams: [{ type: BREAKPAD_INFO, data: info }],
  }).bytes;
}
