/**
 * CONTEXT records of threads and of the Exception stream (minidump.md §3.3): which CPU's layout
 * a record has, chosen as Breakpad chooses it, and its registers.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import {
  AMD64_CONTEXT_LAYOUT,
  AMD64_CONTEXT_SIZE,
  CONTEXT_AMD64,
  CONTEXT_ARM64,
  CONTEXT_ARM64_CONTROL,
  CONTEXT_ARM64_FLOATING_POINT,
  CONTEXT_ARM64_INTEGER,
  contextSize,
  decodeContext,
} from "../../model/context.js";
import { machineInfo, MACHINES, type Machine } from "../../model/machine.js";
import { fieldOf } from "../../model/record.js";
import { BREAKPAD_ARM_CONTEXT_SIZE, decodeBreakpadArmContext, MD_CONTEXT_ARM, MD_CONTEXT_ARM_OLD } from "./arm-context.js";
import { MINIDUMP_LIMITS, PROCESSOR_ARCHITECTURE } from "./constants.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpContext, MinidumpLocation } from "./types.js";

/** The CPU bits of ContextFlags (CONTEXT_i386, CONTEXT_AMD64, ...). */
const CONTEXT_CPU_MASK = 0xffffff00;

const AMD64_FLAGS_OFFSET = fieldOf(AMD64_CONTEXT_LAYOUT, "ContextFlags").offset;

/** The machine a SystemInfo ProcessorArchitecture names, for the ones the walker models. */
export const MACHINE_OF_ARCH: Readonly<Record<number, Machine>> = {
  [PROCESSOR_ARCHITECTURE.INTEL]: "x86",
  [PROCESSOR_ARCHITECTURE.IA32_ON_WIN64]: "x86",
  [PROCESSOR_ARCHITECTURE.AMD64]: "x64",
  [PROCESSOR_ARCHITECTURE.IA64]: "ia64",
  [PROCESSOR_ARCHITECTURE.ARM64]: "arm64",
  [PROCESSOR_ARCHITECTURE.ARM64_OLD]: "arm64",
  [PROCESSOR_ARCHITECTURE.ARM]: "arm",
};

/**
 * How a CONTEXT is taken when the CPU bits of the flags at offset 0 name a machine (minidump.md
 * §3.3): x86 is read at its full size even from a shorter record; IA-64 and ARM64 need their full
 * size; AMD64 keeps its flags at 0x30, so a record whose first flags say AMD64 has the wrong size.
 */
const FLAGS_AT_0: Readonly<Record<Machine, "read" | { needsFullSize: string } | "flags-elsewhere">> = {
  x86: "read",
  x64: "flags-elsewhere",
  ia64: { needsFullSize: "IA-64" },
  arm64: { needsFullSize: "ARM64" },
  arm: { needsFullSize: "ARM" },
};

/** Breakpad's MDRawContextARM64_Old (arm64.md §2.3): 796 bytes, u64 flags with CPU bit 0x80000000, `#pragma pack(4)`. */
const ARM64_OLD = {
  size: 796,
  cpu: 0x8000_0000,
  integer: 0x02,
  floatingPoint: 0x04,
  /** iregs[33]: x0-x28, fp, lr, sp, pc. */
  iregs: 8,
  cpsr: 272,
  fpsr: 276,
  fpcr: 280,
  /** float_save.regs[32], 16 bytes each. */
  vregs: 284,
} as const;

/**
 * Reads the CONTEXT at `loc` (its descriptor's DataSize at `at`). The layout is chosen from the
 * size and SystemInfo, never from the first u32 alone, as Breakpad does (minidump.md §3.3):
 * exactly 1232 bytes, or SystemInfo AMD64 and at least 1232, is AMD64 and needs CONTEXT_AMD64 in
 * the flags at 0x30; otherwise the CPU bits of the flags at offset 0 decide, with SystemInfo
 * standing in when they are 0. Up to 16384 trailing XSAVE bytes are skipped. An x86 record
 * shorter than 716 bytes is accepted and 716 bytes are read regardless. IA-64 (0xA70 bytes) is
 * this project's addition. ARM64 (arm64.md §2.3): a Windows CONTEXT of at least 912 bytes with
 * CONTEXT_ARM64, or exactly 796 bytes, Breakpad's older form with u64 flags (CPU bit 0x80000000,
 * or SystemInfo 0x8003 when the bits are 0), read as the 912-byte form it converts to.
 */
export function readContext(input: MinidumpInput, loc: MinidumpLocation, at: number, systemArch: number | undefined, what: string): MinidumpContext {
  input.location(loc, at, what);
  const size = loc.dataSize;
  if (size === 0) throw new InputError("bad-value", `${what}: the CONTEXT's DataSize is 0`, { offset: at });
  const decode = (machine: Machine): MinidumpContext => {
    const n = contextSize(machine);
    if (size > n + MINIDUMP_LIMITS.maxXSaveArea) {
      throw new InputError("bad-value", `${what}: a ${size}-byte ${machine} CONTEXT carries more than ${MINIDUMP_LIMITS.maxXSaveArea} bytes of XSAVE data`, { offset: at });
    }
    const c = input.cursor(loc.rva, n, `${what} (${n}-byte ${machine} CONTEXT)`, at);
    const ctx = decodeContext(machine, c.bytes);
    return { machine, contextFlags: ctx.contextFlags, registers: ctx.registers, location: loc };
  };

  if (size === AMD64_CONTEXT_SIZE || (systemArch === PROCESSOR_ARCHITECTURE.AMD64 && size >= AMD64_CONTEXT_SIZE)) {
    const flags = input.cursor(loc.rva + AMD64_FLAGS_OFFSET, 4, `${what} ContextFlags`, at).u32();
    // Breakpad checks the stored CPU bits even when SystemInfo says AMD64 (minidump.md §3.3).
    if ((flags & CONTEXT_CPU_MASK) >>> 0 !== CONTEXT_AMD64) {
      throw new InputError("bad-value", `${what}: a ${size}-byte context whose ContextFlags ${hex(flags)} lack CONTEXT_AMD64 (${hex(CONTEXT_AMD64)}) is not an AMD64 context`, {
        offset: loc.rva + AMD64_FLAGS_OFFSET,
      });
    }
    return decode("x64");
  }
  if (size === ARM64_OLD.size) return readArm64Old(input, loc, at, systemArch, what);
  const flags = input.cursor(loc.rva, 4, `${what} ContextFlags`, at).u32();
  // Breakpad's 368-byte ARM context: its own CPU bit, or the old one (or none) with SystemInfo ARM.
  const armCpu = (flags & CONTEXT_CPU_MASK) >>> 0;
  if (size === BREAKPAD_ARM_CONTEXT_SIZE && (armCpu === MD_CONTEXT_ARM || (armCpu === 0 && (flags & MD_CONTEXT_ARM_OLD) !== 0 && systemArch === PROCESSOR_ARCHITECTURE.ARM) || (armCpu === 0 && systemArch === PROCESSOR_ARCHITECTURE.ARM))) {
    if (systemArch !== undefined && systemArch !== PROCESSOR_ARCHITECTURE.ARM) {
      throw new InputError("bad-value", `${what}: an ARM context needs SystemInfo ProcessorArchitecture ${PROCESSOR_ARCHITECTURE.ARM}, not ${systemArch}`, { offset: at });
    }
    const c = input.cursor(loc.rva, BREAKPAD_ARM_CONTEXT_SIZE, `${what} (368-byte ARM context)`, at);
    return { machine: "arm", ...decodeBreakpadArmContext(c.bytes), location: loc };
  }
  if (armCpu === MD_CONTEXT_ARM) throw new InputError("bad-value", `${what}: Breakpad's ARM context is ${BREAKPAD_ARM_CONTEXT_SIZE} bytes, not ${size}`, { offset: at });
  let cpu = (flags & CONTEXT_CPU_MASK) >>> 0;
  if (cpu === 0) {
    const fromSystem = systemArch === undefined ? undefined : MACHINE_OF_ARCH[systemArch];
    if (fromSystem === undefined) {
      throw new InputError("unsupported", `${what}: ContextFlags ${hex(flags)} name no CPU and SystemInfo names no modelled one`, { offset: loc.rva });
    }
    cpu = machineInfo(fromSystem).context.cpuBit;
  }
  const machine = MACHINES.find((m) => machineInfo(m).context.cpuBit === cpu);
  if (machine !== undefined) {
    const how = FLAGS_AT_0[machine];
    if (how === "flags-elsewhere") {
      throw new InputError("bad-value", `${what}: ContextFlags at offset 0 say AMD64, but an AMD64 CONTEXT is ${AMD64_CONTEXT_SIZE} bytes, not ${size}`, { offset: at });
    }
    if (how !== "read" && size < contextSize(machine)) {
      throw new InputError("bad-value", `${what}: an ${how.needsFullSize} CONTEXT is ${contextSize(machine)} bytes, not ${size}`, { offset: at });
    }
    return decode(machine);
  }
  throw new InputError("unsupported", `${what}: ContextFlags ${hex(flags)} name a CPU (${hex(cpu)}) the walker does not model`, { offset: loc.rva });
}

/** Breakpad's 796-byte ARM64 context, its registers under the names of the 912-byte one and its flags converted (arm64.md §2.3). */
function readArm64Old(input: MinidumpInput, loc: MinidumpLocation, at: number, systemArch: number | undefined, what: string): MinidumpContext {
  const c = input.cursor(loc.rva, ARM64_OLD.size, `${what} (796-byte ARM64 context)`, at);
  const view = new DataView(c.bytes.buffer, c.bytes.byteOffset, ARM64_OLD.size);
  const flags = view.getUint32(0, true);
  let cpu = (flags & CONTEXT_CPU_MASK) >>> 0;
  if (cpu === 0 && systemArch === PROCESSOR_ARCHITECTURE.ARM64_OLD) cpu = ARM64_OLD.cpu;
  if (cpu !== ARM64_OLD.cpu) {
    throw new InputError("bad-value", `${what}: a 796-byte context whose flags ${hex(flags)} lack Breakpad's ARM64 bit (${hex(ARM64_OLD.cpu)}) is not an ARM64 context`, { offset: loc.rva });
  }
  if (systemArch !== undefined && systemArch !== PROCESSOR_ARCHITECTURE.ARM64_OLD) {
    throw new InputError("bad-value", `${what}: a 796-byte ARM64 context needs SystemInfo ProcessorArchitecture ${hex(PROCESSOR_ARCHITECTURE.ARM64_OLD)}, not ${hex(systemArch)}`, { offset: at });
  }
  const u64 = (offset: number): bigint => view.getBigUint64(offset, true);
  const registers: Record<string, bigint> = {};
  for (let i = 0; i < 29; i++) registers[`x${i}`] = u64(ARM64_OLD.iregs + 8 * i);
  registers["fp"] = u64(ARM64_OLD.iregs + 8 * 29);
  registers["lr"] = u64(ARM64_OLD.iregs + 8 * 30);
  registers["sp"] = u64(ARM64_OLD.iregs + 8 * 31);
  registers["pc"] = u64(ARM64_OLD.iregs + 8 * 32);
  registers["cpsr"] = BigInt(view.getUint32(ARM64_OLD.cpsr, true));
  registers["fpsr"] = BigInt(view.getUint32(ARM64_OLD.fpsr, true));
  registers["fpcr"] = BigInt(view.getUint32(ARM64_OLD.fpcr, true));
  for (let i = 8; i < 16; i++) registers[`d${i}`] = u64(ARM64_OLD.vregs + 16 * i);
  let contextFlags = CONTEXT_ARM64;
  if ((flags & ARM64_OLD.integer) !== 0) contextFlags |= CONTEXT_ARM64_CONTROL | CONTEXT_ARM64_INTEGER;
  if ((flags & ARM64_OLD.floatingPoint) !== 0) contextFlags |= CONTEXT_ARM64_FLOATING_POINT;
  return { machine: "arm64", contextFlags, registers, location: loc };
}

/** Runs `read`, turning an InputError into a recorded rejection. */
export function attempt<T>(read: () => T): { value: T } | { error: InputError } {
  try {
    return { value: read() };
  } catch (e) {
    if (e instanceof InputError) return { error: e };
    throw e;
  }
}
