/**
 * ARM64_NT_CONTEXT byte for byte (arm64.md §2.1, the SDK winnt.h offset comments), its
 * ContextFlags (§2.2), and the machine table's ARM64 entry.
 */
import { describe, expect, it } from "vitest";
import {
  ARM64_CONTEXT_LAYOUT,
  ARM64_CONTEXT_SIZE,
  CONTEXT_ARM64,
  CONTEXT_ARM64_ALL,
  CONTEXT_ARM64_CONTROL,
  CONTEXT_ARM64_DEBUG_REGISTERS,
  CONTEXT_ARM64_FLOATING_POINT,
  CONTEXT_ARM64_FULL,
  CONTEXT_ARM64_INTEGER,
  CONTEXT_ARM64_X18,
  CONTEXT_CPU_BIT,
  CONTEXT_UNWOUND_TO_CALL,
  contextRegisterField,
  decodeContext,
  encodeContext,
} from "../../src/model/context.js";
import { fieldOf } from "../../src/model/record.js";
import { IMAGE_FILE_MACHINE, machineFromImageFileMachine, machineInfo } from "../../src/model/machine.js";

describe("ARM64_NT_CONTEXT layout (arm64.md §2.1)", () => {
  it("is 0x390 bytes", () => {
    expect(ARM64_CONTEXT_SIZE).toBe(0x390);
    expect(ARM64_CONTEXT_LAYOUT.size).toBe(912);
  });

  it("puts every field at the offset winnt.h gives", () => {
    const at = (name: string): [number, number] => {
      const f = fieldOf(ARM64_CONTEXT_LAYOUT, name);
      return [f.offset, f.size];
    };
    expect(at("ContextFlags")).toEqual([0x000, 4]);
    expect(at("Cpsr")).toEqual([0x004, 4]);
    expect(at("X0")).toEqual([0x008, 8]);
    expect(at("X18")).toEqual([0x098, 8]);
    expect(at("X28")).toEqual([0x0e8, 8]);
    expect(at("Fp")).toEqual([0x0f0, 8]);
    expect(at("Lr")).toEqual([0x0f8, 8]);
    expect(at("Sp")).toEqual([0x100, 8]);
    expect(at("Pc")).toEqual([0x108, 8]);
    expect(at("V[0].Low")).toEqual([0x110, 8]);
    expect(at("V[0].High")).toEqual([0x118, 8]);
    expect(at("V[8].Low")).toEqual([0x190, 8]);
    expect(at("V[31].High")).toEqual([0x308, 8]);
    expect(at("Fpcr")).toEqual([0x310, 4]);
    expect(at("Fpsr")).toEqual([0x314, 4]);
    expect(at("Bcr[0]")).toEqual([0x318, 4]);
    expect(at("Bcr[7]")).toEqual([0x334, 4]);
    expect(at("Bvr[0]")).toEqual([0x338, 8]);
    expect(at("Bvr[7]")).toEqual([0x370, 8]);
    expect(at("Wcr[0]")).toEqual([0x378, 4]);
    expect(at("Wcr[1]")).toEqual([0x37c, 4]);
    expect(at("Wvr[0]")).toEqual([0x380, 8]);
    expect(at("Wvr[1]")).toEqual([0x388, 8]);
    // Every byte of the record belongs to a field: no padding in ARM64_NT_CONTEXT.
    expect(ARM64_CONTEXT_LAYOUT.fields.reduce((n, f) => n + f.size, 0)).toBe(0x390);
  });

  it("names the registers the walker uses: X[29] is Fp, X[30] Lr, d8-d15 the low halves of v8-v15", () => {
    expect(contextRegisterField("arm64", "fp").offset).toBe(0x0f0);
    expect(contextRegisterField("arm64", "lr").offset).toBe(0x0f8);
    expect(contextRegisterField("arm64", "x19").offset).toBe(0x008 + 8 * 19);
    expect(contextRegisterField("arm64", "d8").offset).toBe(0x110 + 16 * 8);
    expect(contextRegisterField("arm64", "d15").offset).toBe(0x110 + 16 * 15);
  });

  it("round-trips through encode and decode, leaving unnamed bytes (the other V halves) as the base has them", () => {
    const base = new Uint8Array(ARM64_CONTEXT_SIZE).fill(0xaa);
    const bytes = encodeContext({ machine: "arm64", contextFlags: CONTEXT_ARM64_FULL, registers: { pc: 0x1_4000_1000n, sp: 0x20_0000n, fp: 0x20_0010n, lr: 0x1_4000_2004n, x0: 1n, x28: 28n, d8: 0x3ff0_0000_0000_0000n } }, base);
    const view = new DataView(bytes.buffer);
    expect(view.getUint32(0, true)).toBe(0x0040_0007);
    expect(view.getBigUint64(0x108, true)).toBe(0x1_4000_1000n);
    expect(view.getBigUint64(0x118, true)).toBe(0xaaaa_aaaa_aaaa_aaaan);
    const back = decodeContext("arm64", bytes);
    expect(back.contextFlags).toBe(CONTEXT_ARM64_FULL);
    expect(back.registers).toMatchObject({ pc: 0x1_4000_1000n, sp: 0x20_0000n, fp: 0x20_0010n, lr: 0x1_4000_2004n, x0: 1n, x28: 28n, d8: 0x3ff0_0000_0000_0000n });
  });
});

describe("ARM64 ContextFlags (arm64.md §2.2)", () => {
  it("has the CPU bit 0x00400000 and the classes of the SDK", () => {
    expect(CONTEXT_ARM64).toBe(0x0040_0000);
    expect(CONTEXT_CPU_BIT.arm64).toBe(0x0040_0000);
    expect(CONTEXT_ARM64_CONTROL).toBe(0x0040_0001);
    expect(CONTEXT_ARM64_INTEGER).toBe(0x0040_0002);
    expect(CONTEXT_ARM64_FLOATING_POINT).toBe(0x0040_0004);
    expect(CONTEXT_ARM64_DEBUG_REGISTERS).toBe(0x0040_0008);
    expect(CONTEXT_ARM64_X18).toBe(0x0040_0010);
    expect(CONTEXT_ARM64_FULL).toBe(0x0040_0007);
    expect(CONTEXT_ARM64_ALL).toBe(0x0040_001f);
    expect(CONTEXT_UNWOUND_TO_CALL).toBe(0x2000_0000);
  });
});

describe("the machine table's ARM64 entry", () => {
  it("is IMAGE_FILE_MACHINE_ARM64 with 8-byte pointers and the roles of arm64.md §3.1", () => {
    const m = machineInfo("arm64");
    expect(m.imageFileMachine).toBe(0xaa64);
    expect(machineFromImageFileMachine(IMAGE_FILE_MACHINE.ARM64)).toBe("arm64");
    expect(m.pointerSize).toBe(8);
    expect([m.pc, m.sp, m.fp, m.bstore]).toEqual(["pc", "sp", "fp", null]);
    expect(Object.fromEntries(m.roles.map((r) => [r.role, r.register]))).toEqual({
      AddrPC: "pc",
      AddrReturn: "lr",
      AddrFrame: "fp",
      AddrStack: "sp",
      AddrBStore: null,
      FuncTableEntry: null,
      Params: null,
    });
    expect(m.general[29]).toBe("fp");
    expect(m.general[30]).toBe("lr");
    expect(m.calleeSaved).toEqual(["fp", "lr", "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15"]);
    expect(m.returnValue).toBe("x0");
  });
});
