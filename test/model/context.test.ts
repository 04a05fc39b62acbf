import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { InputError } from "../../src/errors.js";
import {
  AMD64_CONTEXT_LAYOUT,
  AMD64_CONTEXT_SIZE,
  CONTEXT_AMD64,
  CONTEXT_AMD64_ALL,
  CONTEXT_AMD64_CONTROL,
  CONTEXT_AMD64_FULL,
  CONTEXT_AMD64_INTEGER,
  CONTEXT_AMD64_SEGMENTS,
  CONTEXT_CPU_BIT,
  CONTEXT_IA64,
  CONTEXT_IA64_ALL,
  CONTEXT_IA64_CONTROL,
  CONTEXT_IA64_FULL,
  CONTEXT_IA64_INTEGER,
  CONTEXT_X86_ALL,
  CONTEXT_X86_CONTROL,
  CONTEXT_X86_FULL,
  CONTEXT_X86_INTEGER,
  CONTEXT_X86_SEGMENTS,
  CONTEXT_i386,
  IA64_CONTEXT_LAYOUT,
  IA64_CONTEXT_SIZE,
  X86_CONTEXT_LAYOUT,
  X86_CONTEXT_SIZE,
  contextLayout,
  contextRegisterField,
  contextRegisterNames,
  contextSize,
  decodeContext,
  encodeContext,
} from "../../src/model/context.js";
import type { ContextMachine, CpuContext } from "../../src/model/context.js";
import { flattenLayout } from "../../src/model/record.js";
import type { RecordLayout } from "../../src/model/record.js";

const rows = (l: RecordLayout): [string, number, number][] => l.fields.map((f) => [f.name, f.offset, f.size]);
const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

function expectTruncatedAt(fn: () => unknown, offset: number): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(InputError);
  expect((caught as InputError).code).toBe("truncated");
  expect((caught as InputError).offset).toBe(offset);
}

/** [register, offset, size] as minidump.md §3.1 gives them for x86. */
const X86_REGS: [string, number, number][] = [
  ["eip", 184, 4],
  ["esp", 196, 4],
  ["ebp", 180, 4],
  ["eax", 176, 4],
  ["ebx", 164, 4],
  ["ecx", 172, 4],
  ["edx", 168, 4],
  ["esi", 160, 4],
  ["edi", 156, 4],
  ["eflags", 192, 4],
  ["cs", 188, 4],
  ["ds", 152, 4],
  ["es", 148, 4],
  ["fs", 144, 4],
  ["gs", 140, 4],
  ["ss", 200, 4],
  ["dr0", 4, 4],
  ["dr1", 8, 4],
  ["dr2", 12, 4],
  ["dr3", 16, 4],
  ["dr6", 20, 4],
  ["dr7", 24, 4],
];

/** [register, offset, size] as minidump.md §3.2 gives them for AMD64. */
const X64_REGS: [string, number, number][] = [
  ["rip", 248, 8],
  ["rsp", 152, 8],
  ["rbp", 160, 8],
  ["rax", 120, 8],
  ["rbx", 144, 8],
  ["rcx", 128, 8],
  ["rdx", 136, 8],
  ["rsi", 168, 8],
  ["rdi", 176, 8],
  ["r8", 184, 8],
  ["r9", 192, 8],
  ["r10", 200, 8],
  ["r11", 208, 8],
  ["r12", 216, 8],
  ["r13", 224, 8],
  ["r14", 232, 8],
  ["r15", 240, 8],
  ["eflags", 68, 4],
  ["mxcsr", 52, 4],
  ["cs", 56, 2],
  ["ds", 58, 2],
  ["es", 60, 2],
  ["fs", 62, 2],
  ["gs", 64, 2],
  ["ss", 66, 2],
  ["dr0", 72, 8],
  ["dr1", 80, 8],
  ["dr2", 88, 8],
  ["dr3", 96, 8],
  ["dr6", 104, 8],
  ["dr7", 112, 8],
  ["p1home", 0, 8],
  ["p2home", 8, 8],
  ["p3home", 16, 8],
  ["p4home", 24, 8],
  ["p5home", 32, 8],
  ["p6home", 40, 8],
];

/** [register, offset, size] as ia64.md §4.1 gives them. */
const IA64_REGS: [string, number, number][] = [
  ["stiip", 0xa18, 8],
  ["stipsr", 0xa10, 8],
  ["stifs", 0xa20, 8],
  ["intsp", 0x8d0, 8],
  ["rsbsp", 0x9f0, 8],
  ["rsbspstore", 0x9f8, 8],
  ["rsrnat", 0xa08, 8],
  ["rspfs", 0x9e8, 8],
  ["brrp", 0x980, 8],
  ["intgp", 0x878, 8],
  ["ints0", 0x890, 8],
  ["ints1", 0x898, 8],
  ["ints2", 0x8a0, 8],
  ["ints3", 0x8a8, 8],
  ["intv0", 0x8b0, 8],
  ["intteb", 0x8d8, 8],
  ["intnats", 0x970, 8],
  ["preds", 0x978, 8],
  ["brs0", 0x988, 8],
  ["brs1", 0x990, 8],
  ["brs2", 0x998, 8],
  ["brs3", 0x9a0, 8],
  ["brs4", 0x9a8, 8],
  ["brt0", 0x9b0, 8],
  ["brt1", 0x9b8, 8],
  ["apunat", 0x9c0, 8],
  ["aplc", 0x9c8, 8],
  ["apec", 0x9d0, 8],
  ["apccv", 0x9d8, 8],
  ["apdcr", 0x9e0, 8],
  ["rsrsc", 0xa00, 8],
  ["stfpsr", 0x870, 8],
];

const CASES: [ContextMachine, [string, number, number][], number, number][] = [
  ["x86", X86_REGS, 716, 0],
  ["x64", X64_REGS, 1232, 48],
  ["ia64", IA64_REGS, 0xa70, 0],
];

/** A marker that fills `size` bytes and differs per register index. */
function marker(size: number, i: number): bigint {
  const byte = BigInt(0x11 + i);
  let v = 0n;
  for (let k = 0; k < size; k++) v = (v << 8n) | ((byte + BigInt(k)) & 0xffn);
  return v;
}

function writeLE(b: Uint8Array, at: number, size: number, value: bigint): void {
  for (let k = 0; k < size; k++) b[at + k] = Number((value >> BigInt(8 * k)) & 0xffn);
}

function readLE(b: Uint8Array, at: number, size: number): bigint {
  let v = 0n;
  for (let k = size - 1; k >= 0; k--) v = (v << 8n) | BigInt(b[at + k]!);
  return v;
}

describe("x86 CONTEXT layout (minidump.md §3.1)", () => {
  it("is 716 = 0x2CC bytes with every field at its offset", () => {
    expect(X86_CONTEXT_SIZE).toBe(716);
    expect(X86_CONTEXT_LAYOUT.size).toBe(0x2cc);
    expect(rows(X86_CONTEXT_LAYOUT)).toEqual([
      ["ContextFlags", 0, 4],
      ["Dr0", 4, 4],
      ["Dr1", 8, 4],
      ["Dr2", 12, 4],
      ["Dr3", 16, 4],
      ["Dr6", 20, 4],
      ["Dr7", 24, 4],
      ["FloatSave", 28, 112],
      ["SegGs", 140, 4],
      ["SegFs", 144, 4],
      ["SegEs", 148, 4],
      ["SegDs", 152, 4],
      ["Edi", 156, 4],
      ["Esi", 160, 4],
      ["Ebx", 164, 4],
      ["Edx", 168, 4],
      ["Ecx", 172, 4],
      ["Eax", 176, 4],
      ["Ebp", 180, 4],
      ["Eip", 184, 4],
      ["SegCs", 188, 4],
      ["EFlags", 192, 4],
      ["Esp", 196, 4],
      ["SegSs", 200, 4],
      ["ExtendedRegisters", 204, 512],
    ]);
  });

  it("nests FLOATING_SAVE_AREA: seven DWORDs, RegisterArea[80], Cr0NpxState", () => {
    const flat = rows({ name: "flat", size: 716, fields: flattenLayout(X86_CONTEXT_LAYOUT) }).filter(([n]) => n.startsWith("FloatSave."));
    expect(flat).toEqual([
      ["FloatSave.ControlWord", 28, 4],
      ["FloatSave.StatusWord", 32, 4],
      ["FloatSave.TagWord", 36, 4],
      ["FloatSave.ErrorOffset", 40, 4],
      ["FloatSave.ErrorSelector", 44, 4],
      ["FloatSave.DataOffset", 48, 4],
      ["FloatSave.DataSelector", 52, 4],
      ["FloatSave.RegisterArea", 56, 80],
      ["FloatSave.Cr0NpxState", 136, 4],
    ]);
  });
});

describe("AMD64 CONTEXT layout (minidump.md §3.2)", () => {
  it("is 1232 = 0x4D0 bytes with every field at its offset", () => {
    expect(AMD64_CONTEXT_SIZE).toBe(1232);
    expect(AMD64_CONTEXT_LAYOUT.size).toBe(0x4d0);
    expect(rows(AMD64_CONTEXT_LAYOUT)).toEqual([
      ["P1Home", 0, 8],
      ["P2Home", 8, 8],
      ["P3Home", 16, 8],
      ["P4Home", 24, 8],
      ["P5Home", 32, 8],
      ["P6Home", 40, 8],
      ["ContextFlags", 48, 4],
      ["MxCsr", 52, 4],
      ["SegCs", 56, 2],
      ["SegDs", 58, 2],
      ["SegEs", 60, 2],
      ["SegFs", 62, 2],
      ["SegGs", 64, 2],
      ["SegSs", 66, 2],
      ["EFlags", 68, 4],
      ["Dr0", 72, 8],
      ["Dr1", 80, 8],
      ["Dr2", 88, 8],
      ["Dr3", 96, 8],
      ["Dr6", 104, 8],
      ["Dr7", 112, 8],
      ["Rax", 120, 8],
      ["Rcx", 128, 8],
      ["Rdx", 136, 8],
      ["Rbx", 144, 8],
      ["Rsp", 152, 8],
      ["Rbp", 160, 8],
      ["Rsi", 168, 8],
      ["Rdi", 176, 8],
      ["R8", 184, 8],
      ["R9", 192, 8],
      ["R10", 200, 8],
      ["R11", 208, 8],
      ["R12", 216, 8],
      ["R13", 224, 8],
      ["R14", 232, 8],
      ["R15", 240, 8],
      ["Rip", 248, 8],
      ["FltSave", 256, 512],
      ["VectorRegister", 768, 416],
      ["VectorControl", 1184, 8],
      ["DebugControl", 1192, 8],
      ["LastBranchToRip", 1200, 8],
      ["LastBranchFromRip", 1208, 8],
      ["LastExceptionToRip", 1216, 8],
      ["LastExceptionFromRip", 1224, 8],
    ]);
  });
});

describe("IA-64 CONTEXT layout (ia64.md §4.1)", () => {
  it("is 0xA70 bytes with the spec's fields at their offsets", () => {
    expect(IA64_CONTEXT_SIZE).toBe(0xa70);
    expect(IA64_CONTEXT_LAYOUT.size).toBe(2672);
    expect(rows(IA64_CONTEXT_LAYOUT)).toEqual([
      ["ContextFlags", 0x000, 4],
      ["StFPSR", 0x870, 8],
      ["IntGp", 0x878, 8],
      ["IntS0", 0x890, 8],
      ["IntS1", 0x898, 8],
      ["IntS2", 0x8a0, 8],
      ["IntS3", 0x8a8, 8],
      ["IntV0", 0x8b0, 8],
      ["IntSp", 0x8d0, 8],
      ["IntTeb", 0x8d8, 8],
      ["IntNats", 0x970, 8],
      ["Preds", 0x978, 8],
      ["BrRp", 0x980, 8],
      ["BrS0", 0x988, 8],
      ["BrS1", 0x990, 8],
      ["BrS2", 0x998, 8],
      ["BrS3", 0x9a0, 8],
      ["BrS4", 0x9a8, 8],
      ["BrT0", 0x9b0, 8],
      ["BrT1", 0x9b8, 8],
      ["ApUNAT", 0x9c0, 8],
      ["ApLC", 0x9c8, 8],
      ["ApEC", 0x9d0, 8],
      ["ApCCV", 0x9d8, 8],
      ["ApDCR", 0x9e0, 8],
      ["RsPFS", 0x9e8, 8],
      ["RsBSP", 0x9f0, 8],
      ["RsBSPSTORE", 0x9f8, 8],
      ["RsRSC", 0xa00, 8],
      ["RsRNAT", 0xa08, 8],
      ["StIPSR", 0xa10, 8],
      ["StIIP", 0xa18, 8],
      ["StIFS", 0xa20, 8],
    ]);
  });
});

describe("ContextFlags constants (minidump.md §3.1-3.2, ia64.md §4.1)", () => {
  it("x86", () => {
    expect(CONTEXT_i386).toBe(0x10000);
    expect(CONTEXT_X86_CONTROL).toBe(0x10001);
    expect(CONTEXT_X86_INTEGER).toBe(0x10002);
    expect(CONTEXT_X86_SEGMENTS).toBe(0x10004);
    expect(CONTEXT_X86_FULL).toBe(0x10007);
    expect(CONTEXT_X86_ALL).toBe(0x1003f);
  });

  it("AMD64 (FULL per winnt.h is CONTROL|INTEGER|FLOATING_POINT)", () => {
    expect(CONTEXT_AMD64).toBe(0x100000);
    expect(CONTEXT_AMD64_CONTROL).toBe(0x100001);
    expect(CONTEXT_AMD64_INTEGER).toBe(0x100002);
    expect(CONTEXT_AMD64_SEGMENTS).toBe(0x100004);
    expect(CONTEXT_AMD64_FULL).toBe(0x10000b);
    expect(CONTEXT_AMD64_ALL).toBe(0x10001f);
  });

  it("IA-64", () => {
    expect(CONTEXT_IA64).toBe(0x80000);
    expect(CONTEXT_IA64_CONTROL).toBe(0x80001);
    expect(CONTEXT_IA64_INTEGER).toBe(0x80008);
    expect(CONTEXT_IA64_FULL).toBe(0x8002f);
    expect(CONTEXT_IA64_ALL).toBe(0x8003f);
  });

  it("CPU bit per machine", () => {
    expect(CONTEXT_CPU_BIT).toEqual({ x86: 0x10000, x64: 0x100000, ia64: 0x80000, arm64: 0x400000, arm: 0x200000 });
  });
});

describe.each(CASES)("%s CONTEXT registers", (machine, regs, size, flagsAt) => {
  it("has the expected register names and size", () => {
    expect(contextSize(machine)).toBe(size);
    expect(contextLayout(machine).size).toBe(size);
    expect(contextRegisterNames(machine)).toEqual(regs.map(([r]) => r));
  });

  it("finds a marker written at each register's spec offset under its name", () => {
    regs.forEach(([reg, offset, width], i) => {
      const raw = new Uint8Array(size);
      const m = marker(width, i);
      writeLE(raw, offset, width, m);
      const ctx = decodeContext(machine, raw);
      expect(ctx.registers[reg]).toBe(m);
      for (const [other] of regs) if (other !== reg) expect(ctx.registers[other]).toBe(0n);
      expect(contextRegisterField(machine, reg).offset).toBe(offset);
      expect(contextRegisterField(machine, reg).size).toBe(width);
    });
  });

  it("writes each register at its spec offset", () => {
    regs.forEach(([reg, offset, width], i) => {
      const m = marker(width, i);
      const b = encodeContext({ machine, contextFlags: 0, registers: { [reg]: m } });
      expect(b.length).toBe(size);
      expect(readLE(b, offset, width)).toBe(m);
      expect(b.reduce((n, x) => n + (x === 0 ? 0 : 1), 0)).toBe(width);
    });
  });

  it(`reads and writes ContextFlags at offset ${flagsAt}`, () => {
    const raw = new Uint8Array(size);
    view(raw).setUint32(flagsAt, CONTEXT_CPU_BIT[machine] | 0x7, true);
    expect(decodeContext(machine, raw).contextFlags).toBe(CONTEXT_CPU_BIT[machine] | 0x7);
    const b = encodeContext({ machine, contextFlags: 0x1234_5678, registers: {} });
    expect(view(b).getUint32(flagsAt, true)).toBe(0x1234_5678);
  });

  it("round-trips contexts: decode(encode(ctx)) == ctx", () => {
    const arbRegs = fc.tuple(...regs.map(([, , w]) => fc.bigInt({ min: 0n, max: (1n << BigInt(8 * w)) - 1n })));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff_ffff }), arbRegs, (flags, values) => {
        const ctx: CpuContext = { machine, contextFlags: flags, registers: Object.fromEntries(regs.map(([r], i) => [r, values[i]!])) };
        expect(decodeContext(machine, encodeContext(ctx))).toEqual(ctx);
      }),
      { numRuns: 50 },
    );
  });

  it("round-trips arbitrary bytes through a base: encode(decode(b), b) == b", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: size, maxLength: size }), (b) => {
        const copy = b.slice();
        expect(encodeContext(decodeContext(machine, b), b)).toEqual(b);
        expect(b).toEqual(copy);
      }),
      { numRuns: 30 },
    );
  });

  it("without a base, unnamed bytes come out zero and named registers survive", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: size, maxLength: size }), (b) => {
        const ctx = decodeContext(machine, b);
        const out = encodeContext(ctx);
        expect(decodeContext(machine, out)).toEqual(ctx);
        const named = new Set<number>();
        for (const [, offset, width] of regs) for (let k = 0; k < width; k++) named.add(offset + k);
        for (let k = 0; k < 4; k++) named.add(flagsAt + k);
        for (let k = 0; k < size; k++) if (!named.has(k)) expect(out[k]).toBe(0);
      }),
      { numRuns: 10 },
    );
  });

  it("decodes at an offset inside a view of a larger buffer", () => {
    const backing = new Uint8Array(size + 64).fill(0xaa);
    const sub = backing.subarray(3, 3 + size + 32);
    const [reg, offset, width] = regs[0]!;
    sub.fill(0, 16, 16 + size);
    writeLE(sub, 16 + offset, width, 0x42n);
    expect(decodeContext(machine, sub, 16).registers[reg]).toBe(0x42n);
  });

  it("rejects an unknown register and a value wider than its field", () => {
    expect(() => encodeContext({ machine, contextFlags: 0, registers: { nosuchreg: 1n } })).toThrow(/nosuchreg/);
    const [reg, , width] = regs[0]!;
    expect(() => encodeContext({ machine, contextFlags: 0, registers: { [reg]: 1n << BigInt(8 * width) } })).toThrow(RangeError);
    expect(() => contextRegisterField(machine, "nosuchreg")).toThrow(RangeError);
  });

  it("rejects a base shorter than one record", () => {
    expect(() => encodeContext({ machine, contextFlags: 0, registers: {} }, new Uint8Array(size - 1))).toThrow(InputError);
  });
});

describe("CONTEXT edge cases", () => {
  it("keeps the FloatSave/XMM areas and trailing XSAVE bytes of a base (AMD64, 1407 bytes)", () => {
    const base = new Uint8Array(1407);
    for (let i = 0; i < base.length; i++) base[i] = (i * 7 + 3) & 0xff;
    const ctx = decodeContext("x64", base);
    ctx.registers["rip"] = 0x7ff6_1234_5678n;
    const out = encodeContext(ctx, base);
    expect(out.length).toBe(1407);
    expect(readLE(out, 248, 8)).toBe(0x7ff6_1234_5678n);
    expect(out.subarray(256, 1232)).toEqual(base.subarray(256, 1232));
    expect(out.subarray(1232)).toEqual(base.subarray(1232));
    expect(out.subarray(0, 248)).toEqual(base.subarray(0, 248));
  });

  it("an x86 register above 2^32-1 and an AMD64 segment above 0xFFFF are rejected", () => {
    expect(() => encodeContext({ machine: "x86", contextFlags: 0, registers: { eip: 1n << 32n } })).toThrow(/Eip/);
    expect(() => encodeContext({ machine: "x64", contextFlags: 0, registers: { cs: 0x10000n } })).toThrow(/SegCs/);
  });

  it("throws InputError(truncated) at the first cut field", () => {
    expectTruncatedAt(() => decodeContext("x86", new Uint8Array(200)), 200);
    expectTruncatedAt(() => decodeContext("x86", new Uint8Array(715)), 204);
    expectTruncatedAt(() => decodeContext("x64", new Uint8Array(250)), 248);
    expectTruncatedAt(() => decodeContext("x64", new Uint8Array(1231)), 1224);
    expectTruncatedAt(() => decodeContext("x64", new Uint8Array(40)), 40);
    expectTruncatedAt(() => decodeContext("ia64", new Uint8Array(0xa20)), 0xa20);
    expectTruncatedAt(() => decodeContext("ia64", new Uint8Array(0xa40)), 0xa40);
    expectTruncatedAt(() => decodeContext("x86", new Uint8Array(716), 4), 4 + 204);
  });

  it("an unknown machine is an InputError", () => {
    let caught: unknown;
    try {
      decodeContext("mips" as ContextMachine, new Uint8Array(2000));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InputError);
    expect((caught as InputError).code).toBe("unknown-machine");
  });
});
