/**
 * The crash analysis of `crash_info`, part by part, on the examples rust-minidump's schema
 * (minidump-processor/json-schema.md) and its instruction analysis describe: each memory operand's address and size
 * from the registers (the addressing forms of x86-64, each in byte, word, dword and qword), the
 * stack a `push`, `call` or `ret` touches, the target of an indirect branch, a null base's
 * offset, the non-canonical address a general-protection fault hides, bit flips with their
 * confidence, the inconsistencies, guard pages and a thread's last error. Instructions are
 * decoded by Capstone (the decoder the command line hands in), and the addresses checked are
 * worked out by hand from the registers.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadInstructionDecoder } from "../../src/node/disassembler.js";
import { parseInstruction, type Instruction, type InstructionDecoder } from "../../src/analysis/instruction.js";
import {
  adjustedAddress,
  bitFlipConfidence,
  crashInconsistencies,
  f32Decimal,
  instructionPointerUpdate,
  memoryAccesses,
  possibleBitFlips,
  type MemoryAccess,
} from "../../src/analysis/crash-analysis.js";
import type { CrashKind } from "../../src/analysis/crash-kind.js";
import { isLikelyGuardPage, regionsFromMaps, regionsFromMemoryInfo, type MemoryRegion } from "../../src/analysis/memory-regions.js";
import { tebLastError } from "../../src/analysis/last-error.js";
import { windowsErrorName } from "../../src/analysis/windows-errors.js";
import type { Registers } from "../../src/model/snapshot.js";
import type { MemoryReader } from "../../src/memory/reader.js";

let decoder: InstructionDecoder;
beforeAll(async () => {
  const load = await loadInstructionDecoder();
  if (!("decoder" in load)) throw new Error(load.missing);
  decoder = load.decoder;
});

const PC = 0x1000n;

/** The instruction `bytes` decode to at PC. */
function decode(bytes: number[]): Instruction {
  const d = decoder.decode(Uint8Array.from(bytes), PC, "x64");
  if (d === undefined) throw new Error(`not an instruction: ${bytes}`);
  return parseInstruction(d);
}

/** The (address, size) pairs of the accesses. */
function pairs(accesses: readonly MemoryAccess[] | undefined): [bigint, number | null][] | undefined {
  return accesses?.map((a) => [a.address, a.size]);
}

/** One memory page of bytes at `base`. */
function memoryAt(base: bigint, bytes: Uint8Array): MemoryReader {
  return { read: (address, size) => (address >= base && address + BigInt(size) <= base + BigInt(bytes.length) ? bytes.slice(Number(address - base), Number(address - base) + size) : undefined) };
}

function u64le(v: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, v, true);
  return b;
}

const NO_FAULT: CrashKind = { memory: false, generalProtection: false, intDivideByZero: false, privilegedInstruction: false };

describe("memory accesses of the crashing instruction", () => {
  // Each addressing form in its four sizes: al, ax, eax, rax loaded from the same operand.
  const forms: { form: string; bytes: number[][]; regs: Registers; address: bigint }[] = [
    { form: "[rbx]", bytes: [[0x8a, 0x03], [0x66, 0x8b, 0x03], [0x8b, 0x03], [0x48, 0x8b, 0x03]], regs: { rbx: 0xbadc0ffebadc0ffen }, address: 0xbadc0ffebadc0ffen },
    { form: "[rbp + 0x800]", bytes: [[0x8a, 0x85, 0, 8, 0, 0], [0x66, 0x8b, 0x85, 0, 8, 0, 0], [0x8b, 0x85, 0, 8, 0, 0], [0x48, 0x8b, 0x85, 0, 8, 0, 0]], regs: { rbp: 0x1000n }, address: 0x1800n },
    { form: "[rsi*4]", bytes: [[0x8a, 0x04, 0xb5, 0, 0, 0, 0], [0x66, 0x8b, 0x04, 0xb5, 0, 0, 0, 0], [0x8b, 0x04, 0xb5, 0, 0, 0, 0], [0x48, 0x8b, 0x04, 0xb5, 0, 0, 0, 0]], regs: { rsi: 0x1000n }, address: 0x4000n },
    { form: "[rbx + rcx]", bytes: [[0x8a, 0x04, 0x0b], [0x66, 0x8b, 0x04, 0x0b], [0x8b, 0x04, 0x0b], [0x48, 0x8b, 0x04, 0x0b]], regs: { rbx: 0x1000n, rcx: 0x234n }, address: 0x1234n },
    { form: "[rcx + r9 + 16]", bytes: [[0x42, 0x8a, 0x44, 0x09, 0x10], [0x66, 0x42, 0x8b, 0x44, 0x09, 0x10], [0x42, 0x8b, 0x44, 0x09, 0x10], [0x4a, 0x8b, 0x44, 0x09, 0x10]], regs: { rcx: 0x4000n, r9: 0x2000n }, address: 0x6010n },
    { form: "[r12 + r14*2]", bytes: [[0x43, 0x8a, 0x04, 0x74], [0x66, 0x43, 0x8b, 0x04, 0x74], [0x43, 0x8b, 0x04, 0x74], [0x4b, 0x8b, 0x04, 0x74]], regs: { r12: 0x8000n, r14: 0x10000n }, address: 0x28000n },
    {
      form: "[r9 + rbx*8 + 0x7fffffff]",
      bytes: [[0x41, 0x8a, 0x84, 0xd9, 0xff, 0xff, 0xff, 0x7f], [0x66, 0x41, 0x8b, 0x84, 0xd9, 0xff, 0xff, 0xff, 0x7f], [0x41, 0x8b, 0x84, 0xd9, 0xff, 0xff, 0xff, 0x7f], [0x49, 0x8b, 0x84, 0xd9, 0xff, 0xff, 0xff, 0x7f]],
      regs: { r9: 0x100001n, rbx: 0x1000n },
      address: 0x80108000n,
    },
  ];
  it.each(forms)("reads $form in each size", ({ bytes, regs, address }) => {
    bytes.forEach((b, i) => {
      const accesses = memoryAccesses(decode(b), regs);
      expect(pairs(accesses)).toEqual([[address, [1, 2, 4, 8][i]]]);
      expect(accesses![0]!.access).toBe("read");
    });
  });

  it("wraps a negative displacement around the 64-bit space", () => {
    expect(pairs(memoryAccesses(decode([0x48, 0x8b, 0x85, 0x00, 0xf8, 0xff, 0xff]), { rbp: 0x1000n }))).toEqual([[0x800n, 8]]);
    expect(pairs(memoryAccesses(decode([0x4a, 0x8b, 0x04, 0xed, 0x00, 0x00, 0xf0, 0xff]), { r13: 0x1000n }))).toEqual([[0xfffffffffff08000n, 8]]);
    expect(pairs(memoryAccesses(decode([0x49, 0x8b, 0x84, 0xd9, 0x01, 0x00, 0x00, 0x80]), { r9: 0x100001n, rbx: 0x1000n }))).toEqual([[0xffffffff80108002n, 8]]);
  });

  it("gives a string move both of its operands, destination first", () => {
    const regs = { rsi: 0x1000n, rdi: 0x2000n, rcx: 10n };
    for (const [bytes, size] of [[[0xa4], 1], [[0x66, 0xa5], 2], [[0xa5], 4], [[0x48, 0xa5], 8], [[0xf3, 0xa4], 1]] as const) {
      const accesses = memoryAccesses(decode([...bytes]), regs);
      expect(pairs(accesses)).toEqual([[0x2000n, size], [0x1000n, size]]);
      expect(accesses!.map((a) => a.access)).toEqual(["write", "read"]);
    }
  });

  it("says how each operand is used: written by mov, read and written by add, read by cmp", () => {
    expect(memoryAccesses(decode([0xc7, 0x00, 0x05, 0, 0, 0]), { rax: 0x10n })![0]!.access).toBe("write");
    expect(memoryAccesses(decode([0x00, 0x40, 0x00]), { rax: 0x10n })![0]!.access).toBe("readwrite");
    expect(memoryAccesses(decode([0x39, 0x03]), { rbx: 0x10n })![0]!.access).toBe("read");
  });

  it("adds the stack a push or call writes and a pop or ret reads; lea and nop touch nothing", () => {
    const regs = { rsp: 0x7000n, rax: 0x1234n };
    expect(pairs(memoryAccesses(decode([0x50]), regs))).toEqual([[0x6ff8n, 8]]);
    expect(pairs(memoryAccesses(decode([0xff, 0xd0]), regs))).toEqual([[0x6ff8n, 8]]);
    expect(pairs(memoryAccesses(decode([0xc3]), regs))).toEqual([[0x7000n, 8]]);
    expect(pairs(memoryAccesses(decode([0x58]), regs))).toEqual([[0x7000n, 8]]);
    expect(memoryAccesses(decode([0x48, 0x8d, 0x04, 0x08]), { rax: 0n, rcx: 0n })).toEqual([]);
    expect(memoryAccesses(decode([0x0f, 0x1f, 0x00]), { rax: 0n })).toEqual([]);
  });

  it("reads RIP-relative operands from the next instruction, 32-bit address registers as 32 bits", () => {
    // mov rax, [rip + 0x10]: 7 bytes long.
    expect(pairs(memoryAccesses(decode([0x48, 0x8b, 0x05, 0x10, 0, 0, 0]), { rip: PC }))).toEqual([[PC + 7n + 0x10n, 8]]);
    // mov eax, [ecx] (address-size prefix): ecx is rcx's low half.
    expect(pairs(memoryAccesses(decode([0x67, 0x8b, 0x01]), { rcx: 0xffff_ffff_0000_1000n }))).toEqual([[0x1000n, 4]]);
  });

  it("is unknown when an address register is, or when the operand is relative to fs or gs", () => {
    expect(memoryAccesses(decode([0x8b, 0x03]), {})).toBeUndefined();
    expect(memoryAccesses(decode([0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0]), {})).toBeUndefined();
  });

  it("writes the instruction as rust-minidump does: sizes without ptr, numbers in hex", () => {
    expect(decode([0x48, 0x8b, 0x80, 0xd0, 0, 0, 0]).text).toBe("mov rax, qword [rax + 0xd0]");
    expect(decode([0xc7, 0x00, 0x05, 0, 0, 0]).text).toBe("mov dword [rax], 0x5");
    expect(decode([0x43, 0x8a, 0x04, 0x74]).text).toBe("mov al, byte [r12 + r14 * 2]");
  });
});

describe("the instruction pointer update", () => {
  it("is the register or the pointer in memory a call or jmp goes through, or the return address", () => {
    const stack = memoryAt(0x7000n, u64le(0x401234n));
    expect(instructionPointerUpdate(decode([0xff, 0xd0]), { rax: 0xdeadn }, stack)).toBe(0xdeadn);
    expect(instructionPointerUpdate(decode([0xff, 0x20]), { rax: 0x7000n }, stack)).toBe(0x401234n);
    expect(instructionPointerUpdate(decode([0xc3]), { rsp: 0x7000n }, stack)).toBe(0x401234n);
  });
  it("is not given for a direct branch or an instruction that does not branch", () => {
    const none = memoryAt(0n, new Uint8Array(0));
    expect(instructionPointerUpdate(decode([0xe8, 1, 0, 0, 0]), {}, none)).toBeUndefined();
    expect(instructionPointerUpdate(decode([0x8b, 0x03]), { rbx: 0n }, none)).toBeUndefined();
    expect(instructionPointerUpdate(decode([0xc3]), { rsp: 0x9000n }, none)).toBeUndefined();
  });
});

describe("the adjusted address", () => {
  it("is the offset from a null base (schema: the base pointer was null; offset from base)", () => {
    const insn = decode([0x48, 0x8b, 0x80, 0xd0, 0, 0, 0]);
    expect(adjustedAddress(memoryAccesses(insn, { rax: 0n }), NO_FAULT, "x64")).toEqual({ kind: "null-pointer", offset: 0xd0n });
    expect(adjustedAddress(memoryAccesses(insn, { rax: 0x1000n }), NO_FAULT, "x64")).toBeUndefined();
  });
  it("is the non-canonical address an access used when a general-protection fault hid it", () => {
    const gp: CrashKind = { ...NO_FAULT, memory: true, access: "read", generalProtection: true };
    const accesses = memoryAccesses(decode([0x48, 0x8b, 0x03]), { rbx: 0x0000_8000_0000_1234n });
    expect(adjustedAddress(accesses, gp, "x64")).toEqual({ kind: "non-canonical", address: 0x0000_8000_0000_1234n });
    expect(adjustedAddress(accesses, NO_FAULT, "x64")).toBeUndefined();
  });
});

describe("possible bit flips", () => {
  it("finds the null pointer a flipped bit made of the base register (a real report's example)", () => {
    // A report processed by rust-minidump: SIGSEGV at 0x1000000d0 in `mov rax, qword [rax + 0xd0]`.
    const insn = decode([0x48, 0x8b, 0x80, 0xd0, 0, 0, 0]);
    const flips = possibleBitFlips("x64", 0x1000000d0n, undefined, { ...NO_FAULT, memory: true }, insn, { rax: 0x1_0000_0000n }, []);
    expect(flips).toEqual([
      {
        address: 0n,
        sourceRegister: "rax",
        details: { was_non_canonical: false, is_null: true, was_low: false, nearby_registers: 0, poison_registers: false },
        confidence: 0.625,
      },
    ]);
  });
  it("keeps flipped addresses valid for the access, not those valid for another, and none when the address itself was", () => {
    const regions: MemoryRegion[] = [{ start: 0x400000n, end: 0x401000n, read: true, write: false, exec: true }];
    const read: CrashKind = { ...NO_FAULT, memory: true, access: "read" };
    expect(possibleBitFlips("x64", 0x400010n ^ (1n << 30n), undefined, read, undefined, {}, regions).map((f) => f.address)).toEqual([0x400010n]);
    expect(possibleBitFlips("x64", 0x400010n ^ (1n << 30n), undefined, { ...read, access: "write" }, undefined, {}, regions)).toEqual([]);
    expect(possibleBitFlips("x64", 0x400010n, undefined, read, undefined, {}, regions)).toEqual([]);
    expect(possibleBitFlips("x86", 0x0n, undefined, read, undefined, {}, regions)).toEqual([]);
  });
  it("counts nearby registers and poisoned ones as rust-minidump weighs them, in f32 arithmetic (0.9 and 0.25 give 0.92499995)", () => {
    const base = { was_non_canonical: false, is_null: false, was_low: false, nearby_registers: 0, poison_registers: false };
    expect(f32Decimal(bitFlipConfidence(base))).toBe(0.25);
    expect(f32Decimal(bitFlipConfidence({ ...base, was_non_canonical: true }))).toBe(0.92499995);
    expect(f32Decimal(bitFlipConfidence({ ...base, is_null: true, was_low: true }))).toBe(0.4375);
    expect(f32Decimal(bitFlipConfidence({ ...base, nearby_registers: 2 }))).toBe(0.6625);
    expect(f32Decimal(bitFlipConfidence({ ...base, nearby_registers: 9, poison_registers: true }))).toBe(0.36874998);
    const regions: MemoryRegion[] = [{ start: 0x7f00_0000_0000n, end: 0x7f00_0001_0000n, read: true, write: true, exec: false }];
    const [flip] = possibleBitFlips("x64", 0x7f00_0000_0100n ^ (1n << 40n), undefined, NO_FAULT, undefined, { rax: 0x7f00_0000_0180n, rbx: 0xe5e5e5e5e5e5e5e5n }, regions);
    expect(flip!.details).toEqual({ was_non_canonical: false, is_null: false, was_low: false, nearby_registers: 1, poison_registers: true });
  });
});

describe("crash inconsistencies", () => {
  const regions: MemoryRegion[] = [{ start: 0x10000n, end: 0x20000n, read: true, write: true, exec: false }];
  const check = (kind: Partial<CrashKind>, bytes: number[], regs: Registers, address: bigint): string[] => {
    const instruction = decode(bytes);
    return crashInconsistencies({ kind: { ...NO_FAULT, ...kind }, address, pc: PC, instruction, accesses: memoryAccesses(instruction, regs), regions });
  };
  it("a division by zero at an instruction that does not divide", () => {
    expect(check({ intDivideByZero: true }, [0x8b, 0x03], { rbx: 0x10n }, PC)).toEqual(["int_div_by_zero_not_possible"]);
    expect(check({ intDivideByZero: true }, [0xf7, 0x7d, 0xfc], { rbp: 0x10100n }, PC)).toEqual([]);
  });
  it("a privileged-instruction fault at an instruction that is not privileged", () => {
    expect(check({ privilegedInstruction: true }, [0x8b, 0x03], { rbx: 0x10n }, PC)).toEqual(["priv_instruction_crash_without_priv_instruction"]);
    expect(check({ privilegedInstruction: true }, [0xfa], {}, PC)).toEqual([]);
  });
  it("a general-protection report where no access is non-canonical", () => {
    expect(check({ memory: true, access: "read", generalProtection: true }, [0x8b, 0x03], { rbx: 0x10n }, 0xffff_ffff_ffff_ffffn)).toEqual(["non_canonical_address_falsely_reported"]);
    expect(check({ memory: true, access: "read", generalProtection: true }, [0x8b, 0x03], { rbx: 0x8000_0000_0000_0000n }, 0xffff_ffff_ffff_ffffn)).toEqual([]);
  });
  it("an access fault where the region allows the access, or that no access touches", () => {
    expect(check({ memory: true, access: "read" }, [0x8b, 0x03], { rbx: 0x10100n }, 0x10100n)).toEqual(["access_violation_when_access_allowed"]);
    expect(check({ memory: true, access: "read" }, [0x8b, 0x03], { rbx: 0x30000n }, 0x30002n)).toEqual([]);
    expect(check({ memory: true, access: "read" }, [0x8b, 0x03], { rbx: 0x30000n }, 0x40000n)).toEqual(["crashing_access_not_found_in_memory_accesses"]);
    // An execute fault is at the instruction itself.
    expect(check({ memory: true, access: "exec" }, [0x8b, 0x03], { rbx: 0x30000n }, PC)).toEqual([]);
  });
});

describe("memory regions", () => {
  it("reads /proc/self/maps permissions and MemoryInfoList protections, and finds likely guard pages", () => {
    const maps = regionsFromMaps("7f00-8000 rw-p 0 00:00 0\n8000-9000 ---p 0 00:00 0\n9000-a000 r-xp 0 00:00 0 /lib/x.so\n");
    expect(maps.map((r) => [r.start, r.end, r.read, r.write, r.exec])).toEqual([
      [0x7f00n, 0x8000n, true, true, false],
      [0x8000n, 0x9000n, false, false, false],
      [0x9000n, 0xa000n, true, false, true],
    ]);
    expect(isLikelyGuardPage(maps, 0x8010n)).toBe(true);
    expect(isLikelyGuardPage(maps, 0x7f10n)).toBe(false);
    const info = regionsFromMemoryInfo([
      { base: 0x1000n, allocationBase: 0x1000n, allocationProtect: 4, size: 0x1000n, state: 0x1000, protect: 0x04, type: 0x20000 },
      { base: 0x2000n, allocationBase: 0x2000n, allocationProtect: 1, size: 0x1000n, state: 0x1000, protect: 0x01, type: 0x20000 },
      { base: 0x3000n, allocationBase: 0x3000n, allocationProtect: 0x20, size: 0x1000n, state: 0x1000, protect: 0x20, type: 0x1000000 },
    ]);
    expect(info.map((r) => [r.read, r.write, r.exec])).toEqual([[true, true, false], [false, false, false], [true, false, true]]);
    expect(isLikelyGuardPage(info, 0x2000n)).toBe(true);
  });
});

describe("a thread's last error", () => {
  it("is the TEB's LastErrorValue (x86 +0x34, x64 +0x68), by its winerror.h or NTSTATUS name, else rust-minidump's `unknown 0x%08x`", () => {
    const teb = new Uint8Array(0x100);
    new DataView(teb.buffer).setUint32(0x34, 2, true);
    new DataView(teb.buffer).setUint32(0x68, 0xc0000001, true);
    const memory = memoryAt(0x7ffd0000n, teb);
    expect(windowsErrorName(tebLastError("x86", 0x7ffd0000n, memory)!)).toBe("ERROR_FILE_NOT_FOUND");
    expect(windowsErrorName(tebLastError("x64", 0x7ffd0000n, memory)!)).toBe("STATUS_UNSUCCESSFUL");
    expect(windowsErrorName(0x12345)).toBe("unknown 0x00012345");
    expect(tebLastError("x64", 0x1000n, memory)).toBeUndefined();
  });
});
