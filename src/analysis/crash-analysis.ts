/**
 * The crash analysis rust-minidump's JSON carries in `crash_info` (its minidump-processor,
 * op_analysis.rs and processor.rs; minidump-processor/json-schema.md), one small function per field:
 *
 * - {@link memoryAccesses}: the memory each operand of the crashing instruction touches, from the
 *   crashing thread's registers (and the stack the instruction pushes to or pops from);
 * - {@link instructionPointerUpdate}: where a `call`, `jmp` or `ret` through a register or memory
 *   was going;
 * - {@link adjustedAddress}: the offset from a null base register, or the non-canonical x86-64
 *   address a general-protection fault hides;
 * - {@link possibleBitFlips}: addresses one bit away from the crash address (and from the
 *   instruction's address registers) that were valid, each with rust-minidump's confidence;
 * - {@link crashInconsistencies}: what in the report the instruction and the memory map
 *   contradict.
 *
 * The instruction is analysed on x86-64 only, as rust-minidump does; bit flips are looked for on
 * every 64-bit machine. Where this differs from rust-minidump, it follows the CPU: a `push` or
 * `call` writes the 8 bytes below the stack pointer, a RIP-relative operand is relative to the
 * next instruction, an address register of 32 bits is read as such.
 */
import type { Machine } from "../model/machine.js";
import type { Registers } from "../model/snapshot.js";
import type { MemoryReader } from "../memory/reader.js";
import { readU64 } from "../memory/reader.js";
import type { CrashKind, AccessKind } from "./crash-kind.js";
import type { Instruction, MemoryOperand } from "./instruction.js";
import { isLikelyGuardPage, regionAt, type MemoryRegion } from "./memory-regions.js";

/** How an operand's memory is used. */
export type AccessType = "read" | "write" | "readwrite";

/** One memory access of the crashing instruction. */
export interface MemoryAccess {
  address: bigint;
  /** Bytes accessed; null when the instruction does not say. */
  size: number | null;
  /** Read, written or both; undefined for an instruction whose use of the operand is not known. */
  access?: AccessType;
  /** The address came from a base register holding 0 (or is 0 itself): a null pointer plus an offset. */
  nullBase: boolean;
}

const MASK64 = (1n << 64n) - 1n;

/** The 32-bit names of the 64-bit registers (an address-size prefix makes `[eax]`). */
const LOW32: Readonly<Record<string, string>> = {
  eax: "rax", ebx: "rbx", ecx: "rcx", edx: "rdx", esi: "rsi", edi: "rdi", ebp: "rbp", esp: "rsp", eip: "rip",
  r8d: "r8", r9d: "r9", r10d: "r10", r11d: "r11", r12d: "r12", r13d: "r13", r14d: "r14", r15d: "r15",
};

/**
 * A register's value as an address register: RIP is the next instruction's address (what a
 * RIP-relative operand is relative to), a 32-bit name the low half of its 64-bit register.
 */
export function addressRegister(name: string, registers: Registers, instruction: Instruction): bigint | undefined {
  const wide = LOW32[name] ?? name;
  let value = registers[wide];
  if (value === undefined) return undefined;
  if (wide === "rip") value = (value + BigInt(instruction.length)) & MASK64;
  return wide === name ? value : value & 0xffff_ffffn;
}

/** The address a memory operand names; undefined when a register is unknown or a segment base (fs, gs) is needed. */
export function operandAddress(op: MemoryOperand, registers: Registers, instruction: Instruction): bigint | undefined {
  if (op.segment === "fs" || op.segment === "gs") return undefined;
  let address = op.disp;
  if (op.base !== undefined) {
    const base = addressRegister(op.base, registers, instruction);
    if (base === undefined) return undefined;
    address += base;
  }
  if (op.index !== undefined) {
    const index = addressRegister(op.index, registers, instruction);
    if (index === undefined) return undefined;
    address += index * BigInt(op.scale);
  }
  return address & MASK64;
}

/** Mnemonics whose memory operands are not accessed. */
const NO_ACCESS = new Set(["lea", "nop", "prefetch", "prefetchw", "prefetcht0", "prefetcht1", "prefetcht2", "prefetchnta", "bndcl", "bndcu", "bndcn", "bndmk"]);
/** Mnemonics that write their first operand without reading it. */
const WRITES_FIRST = /^(mov|movs[bwq]|movabs|movzx|movsx|movsxd|movaps|movapd|movups|movupd|movdqa|movdqu|movq|movd|movss|movsd|movnti|movntdq|movntps|movntpd|movbe|stos[bwdq]?|set[a-z]+|pop|vmov[a-z0-9]*|cvt[a-z0-9]+|pextr[bwdq]|extractps)$/;
/** Mnemonics that read and write their first operand. */
const UPDATES_FIRST = /^(add|adc|sub|sbb|and|or|xor|inc|dec|neg|not|shl|shr|sal|sar|rol|ror|rcl|rcr|shld|shrd|bts|btr|btc|cmpxchg|cmpxchg8b|cmpxchg16b)$/;
/** Mnemonics that read and write every operand. */
const UPDATES_ALL = new Set(["xchg", "xadd"]);
/** Mnemonics that only read their operands. */
const READS_ALL = /^(cmp|test|bt|push|call|jmp|div|idiv|mul|imul|cmps[bwdq]?|scas[bwdq]?|lods[bwdq]?|ucomiss|ucomisd|comiss|comisd)$/;

/** How `instruction` uses its operand at `index`; undefined when not known. */
export function operandAccess(instruction: Instruction, index: number): AccessType | undefined {
  const m = instruction.mnemonic;
  if (UPDATES_ALL.has(m)) return "readwrite";
  if (READS_ALL.test(m)) return "read";
  if (index > 0) return WRITES_FIRST.test(m) || UPDATES_FIRST.test(m) ? "read" : undefined;
  if (WRITES_FIRST.test(m)) return "write";
  if (UPDATES_FIRST.test(m)) return "readwrite";
  return undefined;
}

/** Whether every memory access of the instruction is known: its mnemonic's use of its operands is. */
export function accessesKnown(instruction: Instruction): boolean {
  const m = instruction.mnemonic;
  return NO_ACCESS.has(m) || UPDATES_ALL.has(m) || READS_ALL.test(m) || WRITES_FIRST.test(m) || UPDATES_FIRST.test(m) || STACK_READ[m] !== undefined || m === "ret";
}

/** The bytes a stack-popping instruction reads at the stack pointer. */
const STACK_READ: Readonly<Record<string, number>> = { pop: 8, ret: 8, retf: 16, iretq: 40, iretd: 20, iret: 20 };

/**
 * The memory the crashing instruction accesses, in operand order, then the stack it pushes to
 * (8 bytes below the stack pointer) or pops from; undefined when an address cannot be worked
 * out (an operand not understood, an unknown register, an fs/gs base), [] when it accesses none.
 */
export function memoryAccesses(instruction: Instruction, registers: Registers): MemoryAccess[] | undefined {
  const operands = instruction.operands;
  if (operands === undefined) return undefined;
  const out: MemoryAccess[] = [];
  const m = instruction.mnemonic;
  if (!NO_ACCESS.has(m)) {
    for (let i = 0; i < operands.length; i++) {
      const op = operands[i]!;
      if (op.kind !== "memory") continue;
      const address = operandAddress(op, registers, instruction);
      if (address === undefined) return undefined;
      const base = op.base === undefined ? undefined : addressRegister(op.base, registers, instruction);
      const access: MemoryAccess = { address, size: op.size ?? null, nullBase: base === 0n };
      const use = operandAccess(instruction, i);
      if (use !== undefined) access.access = use;
      out.push(access);
    }
  }
  const sp = registers["rsp"];
  const stack = (address: bigint, size: number, access: AccessType): void => {
    out.push({ address, size, access, nullBase: address === 0n });
  };
  if (sp !== undefined) {
    if (m === "push" || m === "call" || m === "pushfq") stack((sp - 8n) & MASK64, 8, "write");
    else if (STACK_READ[m] !== undefined) stack(sp, STACK_READ[m], "read");
    else if (m === "leave" && registers["rbp"] !== undefined) stack(registers["rbp"], 8, "read");
  }
  return out;
}

/** Where the instruction sends the instruction pointer, with whether it is a likely guard page. */
export interface InstructionPointerUpdate {
  address: bigint;
}

/**
 * Where a `call` or `jmp` through a register or memory, or a `ret`, was taking the instruction
 * pointer (the pointer in memory read from the dump); undefined for a direct branch (its target
 * is part of the code) and every other instruction, or when the pointer is not in the dump.
 */
export function instructionPointerUpdate(instruction: Instruction, registers: Registers, memory: MemoryReader): bigint | undefined {
  const m = instruction.mnemonic;
  if (m === "call" || m === "jmp") {
    const [op] = instruction.operands ?? [];
    if (instruction.operands?.length !== 1 || op === undefined) return undefined;
    if (op.kind === "register") return registers[op.name];
    if (op.kind !== "memory") return undefined;
    const at = operandAddress(op, registers, instruction);
    return at === undefined ? undefined : readU64(memory, at);
  }
  if (m === "ret" || m === "retf" || m.startsWith("iret")) {
    const sp = registers["rsp"];
    return sp === undefined ? undefined : readU64(memory, sp);
  }
  return undefined;
}

/** rust-minidump's adjusted address. */
export type AdjustedAddress = { kind: "null-pointer"; offset: bigint } | { kind: "non-canonical"; address: bigint };

/** The non-canonical addresses of 48-bit x86-64: bits 48–63 not copies of bit 47. */
export function isNonCanonical(address: bigint): boolean {
  return address >= 0x0000_8000_0000_0000n && address <= 0xffff_7fff_ffff_ffffn;
}

/**
 * A more helpful address than the reported one: the offset from a null base register, when an
 * access has one; else, for a general-protection fault on x86-64, the non-canonical address an
 * access used.
 */
export function adjustedAddress(accesses: readonly MemoryAccess[] | undefined, kind: CrashKind | undefined, machine: Machine): AdjustedAddress | undefined {
  if (accesses === undefined) return undefined;
  const nullBased = accesses.find((a) => a.nullBase);
  if (nullBased !== undefined) return { kind: "null-pointer", offset: nullBased.address };
  if (machine !== "x64" || kind?.generalProtection !== true) return undefined;
  const hidden = accesses.find((a) => isNonCanonical(a.address));
  return hidden === undefined ? undefined : { kind: "non-canonical", address: hidden.address };
}

/** One possible bit flip, as rust-minidump's JSON gives it. */
export interface PossibleBitFlip {
  address: bigint;
  sourceRegister: string | null;
  details: { was_non_canonical: boolean; is_null: boolean; was_low: boolean; nearby_registers: number; poison_registers: boolean };
  confidence: number;
}

/** Registers closer than this to a corrected address count as nearby (rust-minidump's 4 KiB). */
const NEARBY = 1n << 12n;
/** Addresses up to this are low (8 KiB). */
const LOW = NEARBY * 2n;
/** The byte values allocators and Firefox poison freed memory with (rust-minidump's list). */
const POISON_BYTES = new Set([0x2b, 0x2d, 0x2f, 0x49, 0x4b, 0x4d, 0x4f, 0x6b, 0x8b, 0x9b, 0x9f, 0xa5, 0xbb, 0xcc, 0xcd, 0xce, 0xdb, 0xe5]);
/** The general-purpose registers rust-minidump compares with (its context's), by machine. */
const GENERAL_REGISTERS: Readonly<Partial<Record<Machine, readonly string[]>>> = {
  x64: ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"],
  arm64: [...Array.from({ length: 29 }, (_, i) => `x${i}`), "fp", "lr", "sp", "pc"],
};

const f32 = Math.fround;
/** rust-minidump's confidence figures, as f32. */
const HIGH = f32(0.9);
const MEDIUM = f32(0.5);
const LOW_CONFIDENCE = f32(0.25);
const NEARBY_CONFIDENCE = [MEDIUM, f32(MEDIUM + f32(0.05)), f32(MEDIUM + f32(0.1)), f32(MEDIUM + f32(0.15))];

/** rust-minidump's confidence in a bit flip, computed in f32 as it does: 1 − Π(1 − v) over its evidence, halved by poison. */
export function bitFlipConfidence(d: PossibleBitFlip["details"]): number {
  const values = [LOW_CONFIDENCE];
  if (d.was_non_canonical) values.push(HIGH);
  if (d.is_null) values.push(d.was_low ? f32(MEDIUM * MEDIUM) : MEDIUM);
  if (d.nearby_registers > 0) values.push(NEARBY_CONFIDENCE[Math.min(d.nearby_registers, 4) - 1]!);
  let product = f32(1);
  for (const v of values) product = f32(product * f32(1 - v));
  let c = f32(1 - product);
  if (d.poison_registers) c = f32(c * MEDIUM);
  return c;
}

/** An f32 written as the shortest decimal that reads back as the same f32 (how rust-minidump's JSON writes it). */
export function f32Decimal(value: number): number {
  for (let digits = 1; digits <= 9; digits++) {
    const shortest = Number(value.toPrecision(digits));
    if (f32(shortest) === value) return shortest;
  }
  return value;
}

/** Whether a value is one byte repeated (0xe5e5e5e5e5e5e5e5) and that byte a poison pattern. */
function isPoison(value: bigint, width: number): boolean {
  const low = Number(value & 0xffn);
  let repeated = 0n;
  for (let i = 0; i < width; i++) repeated = (repeated << 8n) | BigInt(low);
  return value === repeated && POISON_BYTES.has(low);
}

/** Whether `op` may be done in `region` (an unknown operation is allowed anywhere mapped). */
function allowed(region: MemoryRegion, op: AccessKind | undefined): boolean {
  return op === undefined || (op === "read" ? region.read : op === "write" ? region.write : region.exec);
}

/** The bits searched: x86-64's canonical bits 0–47 (or, for a non-canonical address, 48–63); all 64 elsewhere. */
type BitRange = readonly [number, number];

/**
 * The addresses one flipped bit away from `address` that were valid for the access (or are
 * null), when `address` itself was not; with rust-minidump's evidence and confidence.
 */
export function bitFlipsOf(address: bigint, source: string | null, bits: BitRange, nonCanonical: boolean, regions: readonly MemoryRegion[], op: AccessKind | undefined, registers: Registers, machine: Machine): PossibleBitFlip[] {
  const here = regionAt(regions, address);
  if (here !== undefined && allowed(here, op)) return [];
  const names = GENERAL_REGISTERS[machine] ?? [];
  const values = names.map((n) => registers[n]).filter((v): v is bigint => v !== undefined);
  const out: PossibleBitFlip[] = [];
  const add = (candidate: bigint): void => {
    const isNull = candidate === 0n;
    const details = {
      was_non_canonical: nonCanonical,
      is_null: isNull,
      was_low: isNull && address <= LOW,
      nearby_registers: candidate > LOW ? values.filter((v) => (v > candidate ? v - candidate : candidate - v) <= NEARBY).length : 0,
      poison_registers: values.some((v) => isPoison(v, 8)),
    };
    out.push({ address: candidate, sourceRegister: source, details, confidence: f32Decimal(bitFlipConfidence(details)) });
  };
  for (let bit = bits[0]; bit < bits[1]; bit++) {
    const candidate = address ^ (1n << BigInt(bit));
    if (candidate === 0n) add(candidate);
    const r = regionAt(regions, candidate);
    if (r !== undefined && allowed(r, op)) add(candidate);
  }
  return out;
}

/** The registers an instruction's memory operands address through, sorted by name. */
export function addressRegisters(instruction: Instruction | undefined): string[] {
  const names = new Set<string>();
  for (const op of instruction?.operands ?? []) if (op.kind === "memory") for (const r of [op.base, op.index]) if (r !== undefined) names.add(r);
  return [...names].sort();
}

/**
 * rust-minidump's bit-flip search, on 64-bit machines only: the crash address (its non-canonical
 * bits when the adjusted address is one; none when it is a null-pointer offset), then each
 * register the instruction addresses through, each judged against the access the OS reported.
 */
export function possibleBitFlips(
  machine: Machine,
  address: bigint,
  adjusted: AdjustedAddress | undefined,
  kind: CrashKind | undefined,
  instruction: Instruction | undefined,
  registers: Registers,
  regions: readonly MemoryRegion[],
): PossibleBitFlip[] {
  if (machine !== "x64" && machine !== "arm64") return [];
  if (adjusted?.kind === "null-pointer") return [];
  const nonCanonical = adjusted?.kind === "non-canonical";
  const start = nonCanonical ? adjusted.address : address;
  const bits: BitRange = machine !== "x64" ? [0, 64] : nonCanonical ? [48, 64] : [0, 48];
  const op = kind?.access;
  const flips = bitFlipsOf(start, null, bits, nonCanonical, regions, op, registers, machine);
  for (const name of addressRegisters(instruction)) {
    const value = instruction === undefined ? undefined : addressRegister(name, registers, instruction);
    if (value !== undefined) flips.push(...bitFlipsOf(value, name, bits, nonCanonical, regions, op, registers, machine));
  }
  return flips;
}

/** rust-minidump's crash inconsistencies. */
export type CrashInconsistency =
  | "int_div_by_zero_not_possible"
  | "priv_instruction_crash_without_priv_instruction"
  | "non_canonical_address_falsely_reported"
  | "access_violation_when_access_allowed"
  | "crashing_access_not_found_in_memory_accesses";

/** Instructions that fault outside ring 0 (or when the OS forbids them). */
const PRIVILEGED = /^(cli|sti|clts|hlt|in|ins[bwd]?|out|outs[bwd]?|int|into|invd|invept|invlpg|invpcid|invvpid|iret[dq]?|lgdt|lidt|lldt|lmsw|ltr|monitor|mwait|rdmsr|wrmsr|rdpmc|rdtsc|rdtscp|retf|swapgs|sysexit|sysret|vm[a-z]+|wbinvd|xsetbv)$/;

/** Whether a `mov` moves to or from a control or debug register (the privileged `mov`). */
function movesSystemRegister(instruction: Instruction): boolean {
  return instruction.mnemonic === "mov" && (instruction.operands ?? []).some((o) => o.kind === "register" && /^(cr|dr)[0-9]+$/.test(o.name));
}

/** SSE forms that also fault on a misaligned 16-byte operand (so a fault is not only a non-canonical address). */
const ALIGNED = /^(movaps|movapd|movdqa|movntps|movntpd|movntdq)$/;

/** The facts the inconsistency checks compare. */
export interface InconsistencyInput {
  kind: CrashKind;
  /** The reported crash address. */
  address: bigint;
  /** The crashing instruction's address. */
  pc: bigint;
  instruction: Instruction;
  accesses: readonly MemoryAccess[] | undefined;
  regions: readonly MemoryRegion[] | undefined;
}

/**
 * What the report, the instruction and the memory map contradict: a division by zero at an
 * instruction that does not divide; a privileged-instruction fault at one that is not; a
 * general-protection report with no non-canonical access; an access fault at an address whose
 * region allows the access; an access fault at an address none of the instruction's accesses
 * touches.
 */
export function crashInconsistencies(input: InconsistencyInput): CrashInconsistency[] {
  const { kind, address, pc, instruction, accesses, regions } = input;
  const out: CrashInconsistency[] = [];
  const m = instruction.mnemonic;
  if (kind.intDivideByZero && m !== "div" && m !== "idiv") out.push("int_div_by_zero_not_possible");
  if (kind.privilegedInstruction && !PRIVILEGED.test(m) && !movesSystemRegister(instruction)) out.push("priv_instruction_crash_without_priv_instruction");
  const derivable = accesses !== undefined && accessesKnown(instruction) && !ALIGNED.test(m);
  if (kind.generalProtection) {
    if (derivable && !accesses.some((a) => isNonCanonical(a.address))) out.push("non_canonical_address_falsely_reported");
    return out;
  }
  if (!kind.memory) return out;
  const touching = accesses?.find((a) => address >= a.address && address - a.address < BigInt(a.size ?? 1));
  if (regions !== undefined) {
    const region = regionAt(regions, address);
    const op: AccessKind | undefined = kind.access ?? (touching?.access === undefined ? undefined : touching.access === "read" ? "read" : "write");
    const allowedHere = region !== undefined && (op === undefined ? region.read && region.write && region.exec : allowed(region, op));
    if (allowedHere) out.push("access_violation_when_access_allowed");
  }
  if (derivable && kind.access !== "exec" && address !== pc && touching === undefined) out.push("crashing_access_not_found_in_memory_accesses");
  return out;
}

/** A memory access with whether it falls in a likely guard page. */
export function withGuardPages(accesses: readonly MemoryAccess[], regions: readonly MemoryRegion[] | undefined): (MemoryAccess & { guard: boolean })[] {
  return accesses.map((a) => ({ ...a, guard: regions !== undefined && isLikelyGuardPage(regions, a.address) }));
}

