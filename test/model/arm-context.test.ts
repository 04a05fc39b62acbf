/**
 * The ARM CONTEXT (ARM_NT_CONTEXT, winnt.h under `_M_ARM`) byte for byte, Breakpad's 368-byte
 * MDRawContextARM (minidump_cpu_arm.h), the machine table's ARM entry, and ARM minidumps read and
 * written: SystemInfo ProcessorArchitecture 5 with either context.
 */
import { describe, expect, it } from "vitest";
import { ARM_CONTEXT_LAYOUT, ARM_CONTEXT_SIZE, CONTEXT_ARM, CONTEXT_ARM_CONTROL, CONTEXT_ARM_DEBUG_REGISTERS, CONTEXT_ARM_FLOATING_POINT, CONTEXT_ARM_FULL, CONTEXT_ARM_INTEGER, decodeContext, encodeContext } from "../../src/model/context.js";
import { fieldOf } from "../../src/model/record.js";
import { IMAGE_FILE_MACHINE, machineFromImageFileMachine, machineInfo } from "../../src/model/machine.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { bytesSink, writeMinidump } from "../../src/formats/minidump-write.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { writeMinidump as writeTestMinidump } from "../support/minidump-writer.js";
import { inputError } from "../support/input-error.js";

const REGISTERS = {
  ...Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`r${i}`, 0x1000_0000n + BigInt(i)])),
  sp: 0x0010_7f00n,
  lr: 0x0040_1235n,
  pc: 0x0040_2000n,
  cpsr: 0x6000_0030n,
  ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`d${i + 8}`, 0x4000_0000_0000_0000n + BigInt(i)])),
};

describe("ARM_NT_CONTEXT layout (winnt.h)", () => {
  it("is 0x1A0 bytes", () => {
    expect(ARM_CONTEXT_SIZE).toBe(0x1a0);
    expect(ARM_CONTEXT_LAYOUT.size).toBe(0x1a0);
  });

  it("puts every field at the offset winnt.h gives", () => {
    const at = (name: string): [number, number] => {
      const f = fieldOf(ARM_CONTEXT_LAYOUT, name);
      return [f.offset, f.size];
    };
    expect(at("ContextFlags")).toEqual([0x000, 4]);
    for (let i = 0; i <= 12; i++) expect(at(`R${i}`), `R${i}`).toEqual([0x004 + 4 * i, 4]);
    expect(at("Sp")).toEqual([0x038, 4]);
    expect(at("Lr")).toEqual([0x03c, 4]);
    expect(at("Pc")).toEqual([0x040, 4]);
    expect(at("Cpsr")).toEqual([0x044, 4]);
    expect(at("Fpscr")).toEqual([0x048, 4]);
    expect(at("Padding")).toEqual([0x04c, 4]);
    // The union of Q[16], D[32] and S[32]: D[n] at 0x50 + 8n.
    for (let i = 0; i < 32; i++) expect(at(`D[${i}]`), `D[${i}]`).toEqual([0x050 + 8 * i, 8]);
    for (let i = 0; i < 8; i++) expect(at(`Bvr[${i}]`)).toEqual([0x150 + 4 * i, 4]);
    for (let i = 0; i < 8; i++) expect(at(`Bcr[${i}]`)).toEqual([0x170 + 4 * i, 4]);
    expect(at("Wvr[0]")).toEqual([0x190, 4]);
    expect(at("Wcr[0]")).toEqual([0x194, 4]);
    expect(at("Padding2[0]")).toEqual([0x198, 4]);
    expect(at("Padding2[1]")).toEqual([0x19c, 4]);
  });

  it("ContextFlags: CONTEXT_ARM 0x200000 with CONTROL 1, INTEGER 2, FLOATING_POINT 4, DEBUG_REGISTERS 8", () => {
    expect([CONTEXT_ARM, CONTEXT_ARM_CONTROL, CONTEXT_ARM_INTEGER, CONTEXT_ARM_FLOATING_POINT, CONTEXT_ARM_DEBUG_REGISTERS, CONTEXT_ARM_FULL]).toEqual([0x200000, 0x200001, 0x200002, 0x200004, 0x200008, 0x200007]);
  });

  it("encodes and decodes every register", () => {
    const bytes = encodeContext({ machine: "arm", contextFlags: CONTEXT_ARM_FULL, registers: REGISTERS });
    const view = new DataView(bytes.buffer);
    expect(view.getUint32(0x40, true)).toBe(0x0040_2000);
    expect(view.getUint32(0x38, true)).toBe(0x0010_7f00);
    expect(view.getBigUint64(0x50 + 8 * 8, true)).toBe(0x4000_0000_0000_0000n);
    const back = decodeContext("arm", bytes);
    expect(back.contextFlags).toBe(CONTEXT_ARM_FULL);
    for (const [k, v] of Object.entries(REGISTERS)) expect(back.registers[k], k).toBe(v);
  });

  it("the machine table: IMAGE_FILE_MACHINE_ARMNT, 4-byte pointers, pc − 2 for return addresses, r11 the frame pointer", () => {
    const m = machineInfo("arm");
    expect(m.imageFileMachine).toBe(IMAGE_FILE_MACHINE.ARMNT);
    expect(machineFromImageFileMachine(0x01c4)).toBe("arm");
    expect([m.pointerSize, m.returnLookBack, m.pc, m.sp, m.fp, m.bstore]).toEqual([4, 2n, "pc", "sp", "r11", null]);
    expect(m.calleeSaved).toEqual(["r11", "lr", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15"]);
    expect(m.roles.map((r) => [r.role, r.register])).toEqual([
      ["AddrPC", "pc"],
      ["AddrReturn", "lr"],
      ["AddrFrame", "r11"],
      ["AddrStack", "sp"],
      ["AddrBStore", null],
      ["FuncTableEntry", null],
      ["Params", null],
    ]);
  });
});

function armSnapshot(): Snapshot {
  const stack = new Uint8Array(0x100).map((_, i) => i);
  return { machine: "arm", threads: [{ id: 7, crashed: true, registers: REGISTERS }], memory: new RegionMemory([{ base: 0x0010_7f00n, bytes: stack }]), modules: [] };
}

describe("ARM minidumps", () => {
  it("the writer writes Breakpad's 368-byte MDRawContextARM (flags 0x40000006) with ProcessorArchitecture 5, and reads it back", () => {
    const sink = bytesSink();
    writeMinidump(armSnapshot(), sink);
    const bytes = sink.bytes();
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.systemInfo!.processorArchitecture).toBe(5);
    expect(dump.machine).toBe("arm");
    const t = dump.threads[0]!;
    expect(t.contextLocation.dataSize).toBe(368);
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(t.contextLocation.rva, true)).toBe(0x4000_0006);
    const snap = minidumpSnapshot(dump);
    for (const [k, v] of Object.entries(REGISTERS)) expect(snap.threads[0]!.registers[k], k).toBe(v);
  });

  it("a Windows 0x1A0-byte CONTEXT with CONTEXT_ARM is read too, and one with no CPU bits by SystemInfo 5", () => {
    for (const flags of [CONTEXT_ARM_FULL, 0x7]) {
      const { bytes } = writeTestMinidump({ machine: "arm", threads: [{ id: 1, registers: REGISTERS, contextFlags: flags }] });
      const snap = minidumpSnapshot(readMinidump(bytesSource(bytes)));
      expect(snap.machine).toBe("arm");
      expect(snap.threads[0]!.registers["pc"]).toBe(0x0040_2000n);
      expect(snap.threads[0]!.registers["r11"]).toBe(0x1000_000bn);
    }
  });

  it("Breakpad's old ARM flag (0x40) with SystemInfo 5 is read as its ARM context; a 368-byte one under another architecture is refused", () => {
    const { bytes } = writeTestMinidump({ machine: "arm-breakpad", threads: [{ id: 1, registers: REGISTERS, contextFlags: 0x40 }] });
    expect(minidumpSnapshot(readMinidump(bytesSource(bytes))).threads[0]!.registers["lr"]).toBe(0x0040_1235n);
    const wrong = writeTestMinidump({ machine: "arm-breakpad", processorArchitecture: 9, threads: [{ id: 1, registers: REGISTERS }] });
    const dump = readMinidump(bytesSource(wrong.bytes));
    expect(dump.threads[0]!.contextError?.message).toMatch(/needs SystemInfo ProcessorArchitecture 5/);
  });

  it("an unmodelled architecture's message names every modelled one", () => {
    const { bytes } = writeTestMinidump({ machine: "x86", processorArchitecture: 3, threads: [] });
    expect(inputError(() => minidumpSnapshot(readMinidump(bytesSource(bytes)))).message).toMatch(/ProcessorArchitecture 3 is not a machine the walker models \(x86, x64, IA-64, ARM64, ARM\)/);
  });
});
