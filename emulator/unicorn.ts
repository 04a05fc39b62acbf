/**
 * A thin typed wrapper over the Unicorn 2 CPU emulator (the shared library from Debian's
 * `libunicorn2` package), bound with koffi. It covers what the stack-walk checks need from an
 * x86/x64 CPU: memory mapping, register access by name, code/block/memory/interrupt hooks, and
 * runs bounded by an end address, an instruction count or a time limit. Unicorn's error codes
 * become {@link UnicornError}s that carry `uc_strerror`'s text and, for faults, the address.
 */
import koffi from "koffi";
import type { LibraryHandle, TypeObject } from "koffi";
import { hex } from "../src/index.js";
import { assertCpuMode, cpuName, type CpuMode } from "./cpu-mode.js";

export type { CpuMode } from "./cpu-mode.js";

/** Unicorn's error codes (`uc_err`), as returned by every `uc_*` call. */
export const UC_ERR = {
  OK: 0,
  NOMEM: 1,
  ARCH: 2,
  HANDLE: 3,
  MODE: 4,
  VERSION: 5,
  READ_UNMAPPED: 6,
  WRITE_UNMAPPED: 7,
  FETCH_UNMAPPED: 8,
  HOOK: 9,
  INSN_INVALID: 10,
  MAP: 11,
  WRITE_PROT: 12,
  READ_PROT: 13,
  FETCH_PROT: 14,
  ARG: 15,
  READ_UNALIGNED: 16,
  WRITE_UNALIGNED: 17,
  FETCH_UNALIGNED: 18,
  HOOK_EXIST: 19,
  RESOURCE: 20,
  EXCEPTION: 21,
} as const;

/** Page permissions for {@link Unicorn.memMap} and {@link Unicorn.memProtect} (`uc_prot`). */
export const UC_PROT = {
  NONE: 0,
  READ: 1,
  WRITE: 2,
  EXEC: 4,
  ALL: 7,
} as const;

/** Hook kinds (`uc_hook_type` bits) that this wrapper installs. */
const UC_HOOK = {
  INTR: 1 << 0,
  CODE: 1 << 2,
  BLOCK: 1 << 3,
  MEM_READ_UNMAPPED: 1 << 4,
  MEM_WRITE_UNMAPPED: 1 << 5,
  MEM_FETCH_UNMAPPED: 1 << 6,
  MEM_READ_PROT: 1 << 7,
  MEM_WRITE_PROT: 1 << 8,
  MEM_FETCH_PROT: 1 << 9,
  MEM_READ: 1 << 10,
  MEM_WRITE: 1 << 11,
} as const;

/** Every invalid access: unmapped or protected, for reads, writes and instruction fetches. */
const UC_HOOK_MEM_INVALID =
  UC_HOOK.MEM_READ_UNMAPPED |
  UC_HOOK.MEM_WRITE_UNMAPPED |
  UC_HOOK.MEM_FETCH_UNMAPPED |
  UC_HOOK.MEM_READ_PROT |
  UC_HOOK.MEM_WRITE_PROT |
  UC_HOOK.MEM_FETCH_PROT;

/** The access kind Unicorn passes to memory callbacks (`uc_mem_type`). */
const UC_MEM: Readonly<Record<number, { kind: MemoryAccessKind; cause: InvalidMemoryCause | undefined }>> = {
  16: { kind: "read", cause: undefined },
  17: { kind: "write", cause: undefined },
  18: { kind: "fetch", cause: undefined },
  19: { kind: "read", cause: "unmapped" },
  20: { kind: "write", cause: "unmapped" },
  21: { kind: "fetch", cause: "unmapped" },
  22: { kind: "write", cause: "protected" },
  23: { kind: "read", cause: "protected" },
  24: { kind: "fetch", cause: "protected" },
  25: { kind: "read", cause: undefined },
};

/** `uc_arch` for x86 in all its widths; the width itself is the `uc_mode`. */
const UC_ARCH_X86 = 4;
const UC_MODE_32 = 1 << 2;
const UC_MODE_64 = 1 << 3;
/** `uc_arch` for AArch64; `UC_MODE_ARM` (0) is little-endian A64. */
const UC_ARCH_ARM64 = 2;
const UC_MODE_ARM = 0;
/** `uc_arch` for 32-bit ARM; `UC_MODE_THUMB` starts the CPU in Thumb state. */
const UC_ARCH_ARM = 1;
const UC_MODE_THUMB = 1 << 4;
/** `uc_query` item that says whether the last run ended because its time limit ran out. */
const UC_QUERY_TIMEOUT = 4;
/**
 * `uc_ctl` request that drops the blocks translated from a range of guest memory: control
 * number 9 (`UC_CTL_TB_REMOVE_CACHE`), two arguments (bits 26-29: begin and end, both
 * `uint64_t`), marked as a write (bit 30).
 */
const UC_CTL_TB_REMOVE_CACHE = 9 | (2 << 26) | (1 << 30);
/** `uc_ctl` request that drops every translated block (`UC_CTL_TB_FLUSH`, no arguments). */
const UC_CTL_TB_FLUSH = 10 | (1 << 30);
/** Past this many pages, one full flush is cheaper than dropping translations page by page. */
const FLUSH_ABOVE_PAGES = 4096n;
/** The largest `size_t`: an instruction limit that is never reached. */
const NO_COUNT_LIMIT = (1n << 64n) - 1n;
/** Unicorn's x86 page size: mappings and protections work in whole 4 KiB pages. */
const PAGE_SIZE = 0x1000n;

/** The message of the error thrown when the shared library is missing. */
const NOT_INSTALLED =
  "libunicorn2 is not installed: apt-get install libunicorn2 (Debian/Ubuntu) or brew install unicorn (macOS)";

/** Where each platform's loader finds Unicorn 2 (a bare name goes through the system search path). */
const LIBRARY_CANDIDATES: Readonly<Record<string, readonly string[]>> = {
  linux: ["libunicorn.so.2", "libunicorn.so"],
  darwin: [
    "libunicorn.2.dylib",
    "/opt/homebrew/lib/libunicorn.2.dylib",
    "/usr/local/lib/libunicorn.2.dylib",
    "libunicorn.dylib",
  ],
  win32: ["unicorn.dll"],
};

/** A register as Unicorn numbers it (`UC_X86_REG_*`) and the width of its value in bits. */
interface RegisterSpec {
  readonly id: number;
  readonly bits: 16 | 32 | 64;
}

/**
 * Selectors are 16 bits wide. Unicorn stores only two bytes for them and four for the 32-bit
 * registers (EFLAGS included, even in 64-bit mode), so reads are masked to the register's width.
 */
const SEGMENT_SPECS = {
  cs: { id: 11, bits: 16 },
  ds: { id: 17, bits: 16 },
  es: { id: 28, bits: 16 },
  fs: { id: 32, bits: 16 },
  gs: { id: 33, bits: 16 },
  ss: { id: 49, bits: 16 },
} as const satisfies Record<string, RegisterSpec>;

const X86_SPECS = {
  eax: { id: 19, bits: 32 },
  ebx: { id: 21, bits: 32 },
  ecx: { id: 22, bits: 32 },
  edx: { id: 24, bits: 32 },
  esi: { id: 29, bits: 32 },
  edi: { id: 23, bits: 32 },
  ebp: { id: 20, bits: 32 },
  esp: { id: 30, bits: 32 },
  eip: { id: 26, bits: 32 },
  eflags: { id: 25, bits: 32 },
  ...SEGMENT_SPECS,
} as const satisfies Record<string, RegisterSpec>;

/**
 * In 64-bit mode the FS and GS bases are plain 64-bit values (MSRs), which is how a TEB is
 * reached on x64 Windows (GS) without a descriptor table. In 32-bit mode Unicorn 2.0 ignores
 * writes to them, so they are offered for x64 only.
 */
const X64_SPECS = {
  rax: { id: 35, bits: 64 },
  rbx: { id: 37, bits: 64 },
  rcx: { id: 38, bits: 64 },
  rdx: { id: 40, bits: 64 },
  rsi: { id: 43, bits: 64 },
  rdi: { id: 39, bits: 64 },
  rbp: { id: 36, bits: 64 },
  rsp: { id: 44, bits: 64 },
  rip: { id: 41, bits: 64 },
  r8: { id: 106, bits: 64 },
  r9: { id: 107, bits: 64 },
  r10: { id: 108, bits: 64 },
  r11: { id: 109, bits: 64 },
  r12: { id: 110, bits: 64 },
  r13: { id: 111, bits: 64 },
  r14: { id: 112, bits: 64 },
  r15: { id: 113, bits: 64 },
  eflags: { id: 25, bits: 32 },
  rflags: { id: 253, bits: 64 },
  fs_base: { id: 250, bits: 64 },
  gs_base: { id: 251, bits: 64 },
  ...SEGMENT_SPECS,
} as const satisfies Record<string, RegisterSpec>;

/**
 * AArch64 registers by Unicorn 2's `uc_arm64_reg` numbers (unicorn/arm64.h): X29 1, X30 2,
 * NZCV 3, SP 4, D0-D31 from 40, X0-X28 from 199, PC 260. The names are the CONTEXT's lower-case
 * ones: `fp` is x29 and `lr` x30 (both also by number); `cpsr` reads NZCV, the flags a user-mode
 * Cpsr shows.
 */
const ARM64_SPECS = {
  pc: { id: 260, bits: 64 },
  sp: { id: 4, bits: 64 },
  fp: { id: 1, bits: 64 },
  lr: { id: 2, bits: 64 },
  x29: { id: 1, bits: 64 },
  x30: { id: 2, bits: 64 },
  cpsr: { id: 3, bits: 32 },
  ...(Object.fromEntries(Array.from({ length: 29 }, (_, i) => [`x${i}`, { id: 199 + i, bits: 64 }])) as Record<`x${number}`, RegisterSpec>),
  ...(Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`d${i}`, { id: 40 + i, bits: 64 }])) as Record<`d${number}`, RegisterSpec>),
} as const satisfies Record<string, RegisterSpec>;

/**
 * 32-bit ARM registers by Unicorn 2's `uc_arm_reg` numbers (unicorn/arm.h): CPSR 3, FPEXC 4,
 * LR 10, PC 11, SP 12, D0-D31 from 14, R0-R12 from 66. `pc` reads the address of the
 * instruction, without the Thumb bit (the state is CPSR's T bit, 0x20).
 */
const ARM_SPECS = {
  ...(Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`r${i}`, { id: 66 + i, bits: 32 }])) as Record<`r${number}`, RegisterSpec>),
  sp: { id: 12, bits: 32 },
  lr: { id: 10, bits: 32 },
  pc: { id: 11, bits: 32 },
  cpsr: { id: 3, bits: 32 },
  fpexc: { id: 4, bits: 32 },
  ...(Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`d${i}`, { id: 14 + i, bits: 64 }])) as Record<`d${number}`, RegisterSpec>),
} as const satisfies Record<string, RegisterSpec>;

/** Register names of a 32-bit (x86) engine. */
export type X86RegisterName = keyof typeof X86_SPECS;
/** Register names of a 64-bit (x64) engine. */
export type X64RegisterName = keyof typeof X64_SPECS;
/** Register names of an AArch64 engine: pc, sp, fp, lr, cpsr, x0-x30, d0-d31. */
export type Arm64RegisterName = "pc" | "sp" | "fp" | "lr" | "cpsr" | `x${number}` | `d${number}`;
/** Register names of a 32-bit ARM engine: r0-r12, sp, lr, pc, cpsr, fpexc, d0-d31. */
export type ArmRegisterName = `r${number}` | "sp" | "lr" | "pc" | "cpsr" | "fpexc" | `d${number}`;
/** The register names an engine of mode `M` accepts. */
export type RegisterName<M extends CpuMode> = M extends "arm64" ? Arm64RegisterName : M extends "arm" ? ArmRegisterName : M extends 64 ? X64RegisterName : X86RegisterName;

/** The register names a 32-bit engine accepts. */
export const X86_REGISTERS = Object.keys(X86_SPECS) as readonly X86RegisterName[];
/** The register names a 64-bit engine accepts. */
export const X64_REGISTERS = Object.keys(X64_SPECS) as readonly X64RegisterName[];
/** The register names an AArch64 engine accepts. */
export const ARM64_REGISTERS = Object.keys(ARM64_SPECS) as readonly Arm64RegisterName[];
/** The register names a 32-bit ARM engine accepts. */
export const ARM_REGISTERS = Object.keys(ARM_SPECS) as readonly ArmRegisterName[];

/** Each CPU's register table. */
const SPECS: Readonly<Record<CpuMode, Readonly<Record<string, RegisterSpec>>>> = { 32: X86_SPECS, 64: X64_SPECS, arm64: ARM64_SPECS, arm: ARM_SPECS };
/** Each CPU's `uc_open` arguments. */
const OPEN_ARGS: Readonly<Record<CpuMode, { arch: number; mode: number; name: string }>> = {
  32: { arch: UC_ARCH_X86, mode: UC_MODE_32, name: "x86, 32-bit" },
  64: { arch: UC_ARCH_X86, mode: UC_MODE_64, name: "x86, 64-bit" },
  arm64: { arch: UC_ARCH_ARM64, mode: UC_MODE_ARM, name: "arm64" },
  arm: { arch: UC_ARCH_ARM, mode: UC_MODE_THUMB, name: "arm, Thumb" },
};
/** Each CPU's program counter and stack pointer. */
const PC_SP: Readonly<Record<CpuMode, { pc: string; sp: string }>> = { 32: { pc: "eip", sp: "esp" }, 64: { pc: "rip", sp: "rsp" }, arm64: { pc: "pc", sp: "sp" }, arm: { pc: "pc", sp: "sp" } };

/** Whether a memory access read, wrote, or fetched an instruction. */
export type MemoryAccessKind = "read" | "write" | "fetch";
/** Why an access was refused: nothing mapped there, or the page's permissions forbid it. */
export type InvalidMemoryCause = "unmapped" | "protected";

/** A memory access seen by a memory hook. */
export interface MemoryAccess {
  readonly kind: MemoryAccessKind;
  readonly address: bigint;
  readonly size: number;
  /** The value written (zero-extended to `size` bytes); 0n for reads. */
  readonly value: bigint;
}

/** An access the CPU could not make: where, how wide, and why. */
export interface InvalidMemoryAccess extends MemoryAccess {
  readonly cause: InvalidMemoryCause;
}

/** An inclusive address range that limits where a hook fires. */
export interface AddressRange {
  readonly begin: bigint;
  readonly end: bigint;
}

/** A mapped region as `uc_mem_regions` lists it; `end` is inclusive. */
export interface MemoryRegion {
  readonly begin: bigint;
  readonly end: bigint;
  readonly perms: number;
}

/** Limits for {@link Unicorn.start}: 0 or absent means no limit. */
export interface StartOptions {
  /** Wall-clock limit in microseconds. */
  readonly timeoutMicros?: number | bigint;
  /** Instruction limit. */
  readonly count?: number | bigint;
}

/**
 * Why a run ended without an error: the CPU reached `until`, the instruction count or time
 * limit ran out, a hook called {@link Unicorn.stop}, or the CPU stopped by itself (e.g. `hlt`).
 */
export type StopReason = "until" | "count" | "timeout" | "stop" | "ended";

/** How a run that raised no error ended. */
export interface StopInfo {
  readonly reason: StopReason;
  /** EIP, RIP or PC after the run. */
  readonly pc: bigint;
}

/** Called before each instruction (code hook) or each basic block (block hook) executes. */
export type CodeHookCallback = (address: bigint, size: number) => void;
/** Called on every successful read and write. */
export type MemoryHookCallback = (access: MemoryAccess) => void;
/** Called on an interrupt or CPU exception (e.g. 3 for `int3`), which then does not stop the run. */
export type InterruptHookCallback = (interrupt: number) => void;
/**
 * Called when the CPU touches memory it may not. Return true only after mapping or unprotecting
 * the page, so the access is retried; otherwise the run stops with a {@link UnicornError}.
 */
export type InvalidMemoryCallback = (access: InvalidMemoryAccess) => boolean | void;

/** Thrown when the Unicorn 2 shared library cannot be found or is not version 2. */
export class UnicornUnavailableError extends Error {
  /** The files that were tried, each with the loader's complaint. */
  readonly tried: readonly string[];

  constructor(tried: readonly string[]) {
    super(NOT_INSTALLED);
    this.name = "UnicornUnavailableError";
    this.tried = tried;
  }
}

/** What a failed `uc_*` call reported, plus the fault's address and PC when a run stopped on one. */
export interface UnicornErrorDetails {
  readonly pc?: bigint;
  readonly access?: InvalidMemoryAccess;
}

/** A Unicorn call that returned an error code, with `uc_strerror`'s text. */
export class UnicornError extends Error {
  /** The `uc_err` value. */
  readonly code: number;
  /** The code's name, e.g. `UC_ERR_FETCH_UNMAPPED`. */
  readonly codeName: string;
  /** The call that failed, with its arguments. */
  readonly operation: string;
  /** `uc_strerror`'s text for the code. */
  readonly description: string;
  /** EIP/RIP when a run stopped on this error. */
  readonly pc: bigint | undefined;
  /** The refused memory access, when that is what stopped the run. */
  readonly access: InvalidMemoryAccess | undefined;

  constructor(code: number, operation: string, description: string, details: UnicornErrorDetails = {}) {
    super(UnicornError.compose(operation, description, details));
    this.name = "UnicornError";
    this.code = code;
    this.codeName = errorName(code);
    this.operation = operation;
    this.description = description;
    this.pc = details.pc;
    this.access = details.access;
  }

  private static compose(operation: string, description: string, details: UnicornErrorDetails): string {
    const where: string[] = [];
    if (details.access !== undefined) where.push(describeAccess(details.access));
    if (details.pc !== undefined) where.push(`pc ${hex(details.pc)}`);
    return where.length > 0 ? `${operation}: ${where.join(", ")}: ${description}` : `${operation}: ${description}`;
  }
}

/** The library file and version an engine runs on. */
export interface UnicornLibraryInfo {
  readonly path: string;
  /** `major.minor.patch` as `uc_version` reports it. */
  readonly version: string;
}

/** A pointer as koffi hands it over (an address as a bigint, or an external object). */
type NativePointer = unknown;

/** The `uc_*` entry points, typed as this file calls them. */
interface Native {
  readonly info: UnicornLibraryInfo;
  uc_open(arch: number, mode: number, engine: [NativePointer]): number;
  uc_close(engine: NativePointer): number;
  uc_strerror(code: number): string;
  uc_query(engine: NativePointer, type: number, result: [number | bigint]): number;
  uc_mem_map(engine: NativePointer, address: bigint, size: bigint, perms: number): number;
  uc_mem_unmap(engine: NativePointer, address: bigint, size: bigint): number;
  uc_mem_protect(engine: NativePointer, address: bigint, size: bigint, perms: number): number;
  uc_mem_regions(engine: NativePointer, regions: [NativePointer], count: [number]): number;
  uc_free(memory: NativePointer): number;
  uc_mem_read(engine: NativePointer, address: bigint, bytes: Uint8Array, size: number): number;
  uc_mem_write(engine: NativePointer, address: bigint, bytes: Uint8Array, size: number): number;
  uc_reg_read(engine: NativePointer, id: number, value: BigUint64Array): number;
  uc_reg_write(engine: NativePointer, id: number, value: BigUint64Array): number;
  uc_emu_start(engine: NativePointer, begin: bigint, until: bigint, timeout: bigint, count: bigint): number;
  uc_emu_stop(engine: NativePointer): number;
  uc_hook_add(
    engine: NativePointer,
    hook: [number | bigint],
    type: number,
    callback: bigint,
    userData: null,
    begin: bigint,
    end: bigint,
  ): number;
  uc_hook_del(engine: NativePointer, hook: number | bigint): number;
  uc_ctl(engine: NativePointer, control: number, ...args: unknown[]): number;
}

/**
 * Callback shapes from unicorn.h, declared without names so that loading this module twice in
 * one process (as test runners do) does not clash in koffi's type registry.
 */
const callbackTypes = {
  code: koffi.pointer(koffi.proto("void", ["void *", "uint64_t", "uint32_t", "void *"])),
  interrupt: koffi.pointer(koffi.proto("void", ["void *", "uint32_t", "void *"])),
  memory: koffi.pointer(koffi.proto("void", ["void *", "int", "uint64_t", "int", "int64_t", "void *"])),
  invalidMemory: koffi.pointer(koffi.proto("bool", ["void *", "int", "uint64_t", "int", "int64_t", "void *"])),
};

/** `uc_mem_region`: two inclusive 64-bit bounds and the permission bits. */
const memRegionType = koffi.struct({ begin: "uint64_t", end: "uint64_t", perms: "uint32_t" });

/**
 * Loads Unicorn from the first of `candidates` that opens and binds its functions, uncached.
 * Throws {@link UnicornUnavailableError} when none does or the library is not Unicorn 2.
 */
export function openUnicornLibrary(
  candidates: readonly string[] = LIBRARY_CANDIDATES[process.platform] ?? LIBRARY_CANDIDATES["linux"] ?? [],
): UnicornLibraryInfo {
  return bindLibrary(candidates).info;
}

let cached: Native | undefined;

/** Loads libunicorn once per process and returns which file and version were bound. */
export function unicornLibrary(): UnicornLibraryInfo {
  return native().info;
}

/** True when the Unicorn 2 shared library can be loaded on this machine. */
export function isUnicornAvailable(): boolean {
  try {
    native();
    return true;
  } catch (error) {
    if (error instanceof UnicornUnavailableError) return false;
    throw error;
  }
}

function native(): Native {
  cached ??= bindLibrary(LIBRARY_CANDIDATES[process.platform] ?? LIBRARY_CANDIDATES["linux"] ?? []);
  return cached;
}

function bindLibrary(candidates: readonly string[]): Native {
  const tried: string[] = [];
  for (const path of candidates) {
    let lib: LibraryHandle;
    try {
      lib = koffi.load(path);
    } catch (error) {
      tried.push(`${path}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    try {
      return bindFunctions(lib, path);
    } catch (error) {
      tried.push(`${path}: ${error instanceof Error ? error.message : String(error)}`);
      lib.unload();
    }
  }
  throw new UnicornUnavailableError(tried);
}

/** Declares each `uc_*` function with its C signature from unicorn.h (Unicorn 2.0). */
function bindFunctions(lib: LibraryHandle, path: string): Native {
  const version = lib.func("unsigned int uc_version(unsigned int *major, unsigned int *minor)");
  // Unicorn 2 packs major.minor.patch.extra into one byte each; Unicorn 1 returned major << 8.
  const packed = Number(version(null, null)) >>> 0;
  const major = packed >>> 24;
  if (major !== 2) throw new Error(`not Unicorn 2 (uc_version() = 0x${packed.toString(16)})`);
  const fn = (signature: string) => lib.func(signature);
  const bound = {
    info: { path, version: `${major}.${(packed >>> 16) & 0xff}.${(packed >>> 8) & 0xff}` },
    uc_open: fn("int uc_open(int arch, int mode, _Out_ void **uc)"),
    uc_close: fn("int uc_close(void *uc)"),
    uc_strerror: fn("const char *uc_strerror(int code)"),
    uc_query: fn("int uc_query(void *uc, int type, _Out_ size_t *result)"),
    uc_mem_map: fn("int uc_mem_map(void *uc, uint64_t address, size_t size, uint32_t perms)"),
    uc_mem_unmap: fn("int uc_mem_unmap(void *uc, uint64_t address, size_t size)"),
    uc_mem_protect: fn("int uc_mem_protect(void *uc, uint64_t address, size_t size, uint32_t perms)"),
    uc_mem_regions: fn("int uc_mem_regions(void *uc, _Out_ void **regions, _Out_ uint32_t *count)"),
    uc_free: fn("int uc_free(void *mem)"),
    uc_mem_read: fn("int uc_mem_read(void *uc, uint64_t address, _Out_ void *bytes, size_t size)"),
    uc_mem_write: fn("int uc_mem_write(void *uc, uint64_t address, const void *bytes, size_t size)"),
    uc_reg_read: fn("int uc_reg_read(void *uc, int regid, _Out_ void *value)"),
    uc_reg_write: fn("int uc_reg_write(void *uc, int regid, const void *value)"),
    uc_emu_start: fn("int uc_emu_start(void *uc, uint64_t begin, uint64_t until, uint64_t timeout, size_t count)"),
    uc_emu_stop: fn("int uc_emu_stop(void *uc)"),
    uc_hook_add: fn(
      "int uc_hook_add(void *uc, _Out_ size_t *hh, int type, void *callback, void *user_data," +
        " uint64_t begin, uint64_t end, ...)",
    ),
    uc_hook_del: fn("int uc_hook_del(void *uc, size_t hh)"),
    uc_ctl: fn("int uc_ctl(void *uc, int control, ...)"),
  };
  return bound as Native;
}

/** A hook installed on an engine; `remove()` uninstalls it (also from inside a callback). */
export class UnicornHook {
  /** Set while the hook is installed. */
  active = true;

  constructor(
    private readonly detach: () => void,
    /** What the hook watches. */
    readonly kind: "code" | "block" | "memory" | "interrupt" | "invalid-memory",
  ) {}

  /** Uninstalls the hook; a second call does nothing. */
  remove(): void {
    if (!this.active) return;
    this.active = false;
    this.detach();
  }
}

/** All addresses: Unicorn treats begin > end as "everywhere". */
const EVERYWHERE: AddressRange = { begin: 1n, end: 0n };

/**
 * One emulated x86 (mode 32), x64 (mode 64) or AArch64 ("arm64") CPU with its own memory. Open with
 * {@link Unicorn.open}, and {@link Unicorn.close} when done: the engine's memory lives outside
 * the JavaScript heap and is not reclaimed by the garbage collector.
 */
export class Unicorn<M extends CpuMode = CpuMode> {
  /** 32 (x86), 64 (x64) or "arm64" (AArch64). */
  readonly mode: M;
  private handle: NativePointer | undefined;
  private readonly lib: Native;
  private readonly specs: Readonly<Record<string, RegisterSpec>>;
  /** koffi callback pointers by native hook, freed when the hook is deleted. */
  private readonly callbacks = new Map<UnicornHook, { hook: number | bigint; pointer: bigint }>();
  private readonly invalidListeners = new Set<InvalidMemoryCallback>();
  private invalidPointer: bigint | undefined;
  /** Callback pointers whose hooks were deleted during a run: freed once the run returns. */
  private unregisterLater: bigint[] = [];
  private running = false;
  private stopRequested = false;
  private callbackFailure: { error: unknown } | undefined;
  private lastFault: InvalidMemoryAccess | undefined;
  private readonly scratch = new BigUint64Array(1);
  /** Executable regions, cached between changes to the memory map. */
  private executable: MemoryRegion[] | undefined;

  private constructor(lib: Native, mode: M, handle: NativePointer) {
    this.lib = lib;
    this.mode = mode;
    this.handle = handle;
    this.specs = SPECS[mode];
  }

  /** Opens an engine for 32-bit x86, 64-bit x64 or AArch64 ("arm64") code. */
  static open<M extends CpuMode>(mode: M): Unicorn<M> {
    assertCpuMode(mode);
    const lib = native();
    const out: [NativePointer] = [null];
    const args = OPEN_ARGS[mode];
    const code = lib.uc_open(args.arch, args.mode, out);
    if (code !== UC_ERR.OK) throw new UnicornError(code, `uc_open(${args.name})`, lib.uc_strerror(code));
    const engine = new Unicorn(lib, mode, out[0]);
    engine.installInvalidMemoryDispatcher();
    return engine;
  }

  /** True once {@link close} has run. */
  get closed(): boolean {
    return this.handle === undefined;
  }

  /** Frees the engine, its memory and its hooks; a second call does nothing. */
  close(): void {
    if (this.handle === undefined) return;
    if (this.running) throw new Error("Unicorn.close() cannot run inside a hook of the same engine");
    const handle = this.handle;
    this.handle = undefined;
    const code = this.lib.uc_close(handle);
    // uc_close has dropped every hook, so no callback can fire any more.
    for (const [hook, entry] of this.callbacks) {
      hook.active = false;
      koffi.unregister(entry.pointer);
    }
    this.callbacks.clear();
    this.invalidListeners.clear();
    if (this.invalidPointer !== undefined) koffi.unregister(this.invalidPointer);
    this.invalidPointer = undefined;
    for (const pointer of this.unregisterLater) koffi.unregister(pointer);
    this.unregisterLater = [];
    if (code !== UC_ERR.OK) throw new UnicornError(code, "uc_close", this.lib.uc_strerror(code));
  }

  /** Maps `size` bytes at `address` (both multiples of 4 KiB) with `perms` (default rwx). */
  memMap(address: bigint, size: number | bigint, perms: number = UC_PROT.ALL): void {
    this.executable = undefined;
    this.check(
      this.lib.uc_mem_map(this.open(), address, BigInt(size), perms),
      `uc_mem_map(${hex(address)}, ${hex(BigInt(size))}, ${permsText(perms)})`,
    );
  }

  /** Unmaps `size` bytes at `address` (page-aligned). */
  memUnmap(address: bigint, size: number | bigint): void {
    this.forgetTranslations(address, BigInt(size));
    this.executable = undefined;
    this.check(
      this.lib.uc_mem_unmap(this.open(), address, BigInt(size)),
      `uc_mem_unmap(${hex(address)}, ${hex(BigInt(size))})`,
    );
  }

  /** Changes the permissions of `size` bytes at `address` (page-aligned). */
  memProtect(address: bigint, size: number | bigint, perms: number): void {
    this.forgetTranslations(address, BigInt(size));
    this.executable = undefined;
    this.check(
      this.lib.uc_mem_protect(this.open(), address, BigInt(size), perms),
      `uc_mem_protect(${hex(address)}, ${hex(BigInt(size))}, ${permsText(perms)})`,
    );
  }

  /** Lists the mapped regions in address order. */
  memRegions(): MemoryRegion[] {
    const regions: [NativePointer] = [null];
    const count: [number] = [0];
    this.check(this.lib.uc_mem_regions(this.open(), regions, count), "uc_mem_regions");
    if (count[0] === 0) return [];
    try {
      type RawRegion = { begin: number | bigint; end: number | bigint; perms: number };
      const raw = koffi.decode(regions[0], memRegionType, count[0]) as RawRegion[];
      return raw.map((r) => ({ begin: u64(r.begin), end: u64(r.end), perms: r.perms }));
    } finally {
      this.lib.uc_free(regions[0]);
    }
  }

  /** Reads `size` bytes at `address`; throws if any of them is unmapped. */
  memRead(address: bigint, size: number): Uint8Array {
    if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`size must be a byte count, not ${size}`);
    const bytes = new Uint8Array(size);
    if (size > 0) {
      this.check(this.lib.uc_mem_read(this.open(), address, bytes, size), `uc_mem_read(${hex(address)}, ${size})`);
    }
    return bytes;
  }

  /**
   * Writes `bytes` at `address`, whatever the pages' permissions; throws if unmapped. Code
   * rewritten from inside a hook may keep its old meaning until the run ends.
   */
  memWrite(address: bigint, bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.check(
      this.lib.uc_mem_write(this.open(), address, bytes, bytes.length),
      `uc_mem_write(${hex(address)}, ${bytes.length})`,
    );
    this.forgetTranslations(address, BigInt(bytes.length));
  }

  /** Reads a register by name as an unsigned value of its width. */
  regRead(name: RegisterName<M>): bigint {
    const spec = this.spec(name);
    this.scratch[0] = 0n;
    this.check(this.lib.uc_reg_read(this.open(), spec.id, this.scratch), `uc_reg_read(${name})`);
    return BigInt.asUintN(spec.bits, this.scratch[0]);
  }

  /** Writes a register by name; the value must fit the register's width, unsigned. */
  regWrite(name: RegisterName<M>, value: bigint): void {
    const spec = this.spec(name);
    if (value < 0n || value >= 1n << BigInt(spec.bits)) {
      throw new RangeError(`${name} is ${spec.bits} bits wide; ${hex(value)} does not fit`);
    }
    this.scratch[0] = value;
    this.check(this.lib.uc_reg_write(this.open(), spec.id, this.scratch), `uc_reg_write(${name}, ${hex(value)})`);
  }

  /** The instruction pointer: EIP in 32-bit mode, RIP in 64-bit mode, PC on AArch64. */
  pc(): bigint {
    return this.regRead(PC_SP[this.mode].pc as RegisterName<M>);
  }

  /** The stack pointer: ESP in 32-bit mode, RSP in 64-bit mode, SP on AArch64. */
  sp(): bigint {
    return this.regRead(PC_SP[this.mode].sp as RegisterName<M>);
  }

  /** Calls `callback` before each instruction in `range` (default: everywhere) executes. */
  hookCode(callback: CodeHookCallback, range: AddressRange = EVERYWHERE): UnicornHook {
    const onCode = (_uc: unknown, address: number | bigint, size: number): void => {
      this.guard(() => callback(u64(address), size));
    };
    return this.addNativeHook("code", UC_HOOK.CODE, range, callbackTypes.code, onCode);
  }

  /** Calls `callback` at the start of each basic block in `range`, with the block's size. */
  hookBlock(callback: CodeHookCallback, range: AddressRange = EVERYWHERE): UnicornHook {
    const onBlock = (_uc: unknown, address: number | bigint, size: number): void => {
      this.guard(() => callback(u64(address), size));
    };
    return this.addNativeHook("block", UC_HOOK.BLOCK, range, callbackTypes.code, onBlock);
  }

  /** Calls `callback` on each successful data read or write in `range`. */
  hookMemory(callback: MemoryHookCallback, range: AddressRange = EVERYWHERE): UnicornHook {
    return this.addNativeHook(
      "memory",
      UC_HOOK.MEM_READ | UC_HOOK.MEM_WRITE,
      range,
      callbackTypes.memory,
      (_uc: unknown, type: number, address: number | bigint, size: number, value: number | bigint) => {
        this.guard(() => {
          const { kind } = UC_MEM[type] ?? { kind: "read" };
          callback({ kind, address: u64(address), size, value: kind === "write" ? unsignedValue(value, size) : 0n });
        });
      },
    );
  }

  /** Calls `callback` with the vector number of each interrupt or CPU exception (`int3` is 3). */
  hookInterrupt(callback: InterruptHookCallback): UnicornHook {
    const onInterrupt = (_uc: unknown, interrupt: number): void => {
      this.guard(() => callback(interrupt));
    };
    return this.addNativeHook("interrupt", UC_HOOK.INTR, EVERYWHERE, callbackTypes.interrupt, onInterrupt);
  }

  /**
   * Calls `callback` when the CPU reads, writes or fetches unmapped or protected memory. Such an
   * access stops the run with a {@link UnicornError} carrying the access, unless a callback
   * returns true after making the memory accessible.
   */
  hookInvalidMemory(callback: InvalidMemoryCallback): UnicornHook {
    this.open();
    const listener: InvalidMemoryCallback = (access) => callback(access);
    this.invalidListeners.add(listener);
    return new UnicornHook(() => this.invalidListeners.delete(listener), "invalid-memory");
  }

  /** Uninstalls a hook (same as `hook.remove()`). */
  removeHook(hook: UnicornHook): void {
    hook.remove();
  }

  /**
   * Runs from `begin` until the CPU reaches `until`, a limit runs out, a hook calls
   * {@link stop}, or the CPU stops by itself. Faults (unmapped or protected memory, invalid
   * instructions, unhandled exceptions) throw a {@link UnicornError} with the PC and, for memory,
   * the access; an exception thrown by a hook stops the run and is rethrown here.
   */
  start(begin: bigint, until: bigint, options: StartOptions = {}): StopInfo {
    const handle = this.open();
    if (this.running) throw new Error("Unicorn.start() cannot run inside a hook of the same engine");
    const timeout = BigInt(options.timeoutMicros ?? 0);
    const count = BigInt(options.count ?? 0);
    if (timeout < 0n) throw new RangeError("timeoutMicros must not be negative");
    if (count < 0n) throw new RangeError("count must not be negative");
    // Unicorn counts instructions with an internal code hook that it adds for a run with a
    // limit and removes for one without. Removing it discards all translated code (about
    // 0.1 s), and adding it does not reach blocks translated before, so a limit set after an
    // unlimited run would be ignored in code that already ran. Every run therefore has a limit,
    // one that cannot be reached when none was asked for, and the hook is there from the start.
    const limit = count === 0n ? NO_COUNT_LIMIT : count;
    // Unicorn 2.0's timeout is a timer thread calling uc_emu_stop, and a stop that arrives
    // before the CPU loop has started is lost, so under load a timed run of endless code can
    // run forever. A block hook that checks the same deadline makes the timeout certain.
    let deadlineHit = false;
    const deadlineHook =
      timeout === 0n
        ? undefined
        : ((deadline: number) =>
            this.hookBlock(() => {
              if (performance.now() < deadline) return;
              deadlineHit = true;
              this.lib.uc_emu_stop(handle);
            }))(performance.now() + Number(timeout) / 1000);
    this.beginRun();
    let code: number;
    try {
      code = this.lib.uc_emu_start(handle, begin, until, timeout, limit);
    } finally {
      this.running = false;
      for (const pointer of this.unregisterLater) koffi.unregister(pointer);
      this.unregisterLater = [];
      deadlineHook?.remove();
    }
    if (this.callbackFailure !== undefined) throw this.callbackFailure.error;
    const pc = this.pc();
    if (code !== UC_ERR.OK) {
      const access = isMemoryFault(code) ? this.lastFault : undefined;
      const details: UnicornErrorDetails = access === undefined ? { pc } : { pc, access };
      throw new UnicornError(code, `uc_emu_start(${hex(begin)})`, this.lib.uc_strerror(code), details);
    }
    const timedOut: [number | bigint] = [0];
    this.check(this.lib.uc_query(handle, UC_QUERY_TIMEOUT, timedOut), "uc_query(timeout)");
    let reason: StopReason;
    if (this.stopRequested) reason = "stop";
    else if (deadlineHit || BigInt(timedOut[0]) !== 0n) reason = "timeout";
    else if (pc === until) reason = "until";
    else if (count > 0n) reason = "count";
    else reason = "ended";
    return { reason, pc };
  }

  /** Asks a running emulation to stop (from a hook); {@link start} then returns reason "stop". */
  stop(): void {
    const handle = this.open();
    if (!this.running) return;
    this.stopRequested = true;
    this.check(this.lib.uc_emu_stop(handle), "uc_emu_stop");
  }

  /**
   * Unicorn translates guest code into host code one block at a time and caches the result.
   * Unicorn 2.0 keeps running those blocks after `uc_mem_write` replaces their bytes or
   * `uc_mem_protect`/`uc_mem_unmap` takes the page away, and a code, block or memory hook only
   * reaches blocks translated after it was added. So the translations made from the affected
   * executable memory are dropped first, page by page (a range is looked up from its first
   * page, and neighbouring pages need not be neighbours in Unicorn's own memory). Dropping
   * everything (`UC_CTL_TB_FLUSH`) costs about 0.1 s, so it is kept for very large ranges.
   */
  private forgetTranslations(address: bigint, size: bigint): void {
    if (size <= 0n) return;
    const handle = this.open();
    this.executable ??= this.memRegions().filter((region) => (region.perms & UC_PROT.EXEC) !== 0);
    const last = address + size - 1n;
    const ranges = this.executable
      .map((region) => ({
        from: address > region.begin ? address : region.begin,
        to: last < region.end ? last : region.end,
      }))
      .filter((range) => range.from <= range.to);
    const pages = ranges.reduce((sum, range) => sum + (range.to - range.from) / PAGE_SIZE + 2n, 0n);
    if (pages > FLUSH_ABOVE_PAGES) {
      this.check(this.lib.uc_ctl(handle, UC_CTL_TB_FLUSH), "uc_ctl(UC_CTL_TB_FLUSH)");
      return;
    }
    for (const { from, to } of ranges) {
      for (let page = from - (from % PAGE_SIZE); page <= to; page += PAGE_SIZE) {
        const begin = page > from ? page : from;
        const end = page + PAGE_SIZE - 1n < to ? page + PAGE_SIZE : to + 1n;
        this.check(
          this.lib.uc_ctl(handle, UC_CTL_TB_REMOVE_CACHE, "uint64_t", begin, "uint64_t", end),
          `uc_ctl(UC_CTL_TB_REMOVE_CACHE, ${hex(begin)}, ${hex(end)})`,
        );
      }
    }
  }

  /** Clears what the previous run left behind and marks the engine as running. */
  private beginRun(): void {
    this.running = true;
    this.stopRequested = false;
    this.callbackFailure = undefined;
    this.lastFault = undefined;
  }

  private open(): NativePointer {
    if (this.handle === undefined) {
      throw new UnicornError(UC_ERR.HANDLE, "Unicorn", "the engine is closed");
    }
    return this.handle;
  }

  private spec(name: string): RegisterSpec {
    const spec = this.specs[name];
    if (spec === undefined) {
      throw new RangeError(`${name} is not a register of the ${cpuName(this.mode)} engine`);
    }
    return spec;
  }

  private check(code: number, operation: string): void {
    if (code !== UC_ERR.OK) throw new UnicornError(code, operation, this.lib.uc_strerror(code));
  }

  /**
   * Runs a hook body. A JavaScript exception must not cross back into Unicorn: koffi would
   * leave it pending and skip every later callback, so a runaway loop could never be stopped.
   * It is kept, the run is stopped, and {@link start} rethrows it.
   */
  private guard(body: () => void): void {
    if (this.callbackFailure !== undefined) return;
    try {
      body();
    } catch (error) {
      this.callbackFailure = { error };
      if (this.handle !== undefined) this.lib.uc_emu_stop(this.handle);
    }
  }

  private addNativeHook(
    kind: UnicornHook["kind"],
    type: number,
    range: AddressRange,
    callbackType: TypeObject,
    body: (...args: never[]) => void,
  ): UnicornHook {
    const handle = this.open();
    if (type !== UC_HOOK.INTR) {
      const everywhere = range.begin > range.end;
      this.forgetTranslations(everywhere ? 0n : range.begin, everywhere ? 1n << 64n : range.end - range.begin + 1n);
    }
    const pointer = koffi.register(body, callbackType);
    const out: [number | bigint] = [0];
    const code = this.lib.uc_hook_add(handle, out, type, pointer, null, range.begin, range.end);
    if (code !== UC_ERR.OK) {
      koffi.unregister(pointer);
      throw new UnicornError(code, `uc_hook_add(${kind})`, this.lib.uc_strerror(code));
    }
    const hook: UnicornHook = new UnicornHook(() => this.deleteNativeHook(hook), kind);
    this.callbacks.set(hook, { hook: out[0], pointer });
    return hook;
  }

  private deleteNativeHook(hook: UnicornHook): void {
    const entry = this.callbacks.get(hook);
    if (entry === undefined || this.handle === undefined) return;
    this.callbacks.delete(hook);
    const code = this.lib.uc_hook_del(this.handle, entry.hook);
    // Unicorn only marks a deleted hook during a run; its callback may still be on the stack.
    if (this.running) this.unregisterLater.push(entry.pointer);
    else koffi.unregister(entry.pointer);
    if (code !== UC_ERR.OK) throw new UnicornError(code, `uc_hook_del(${hook.kind})`, this.lib.uc_strerror(code));
  }

  /**
   * One native hook for every invalid access, installed at open: it offers the access to the
   * listeners added with {@link hookInvalidMemory} and otherwise records it, so that the error
   * {@link start} throws can name the address Unicorn's bare error code leaves out.
   */
  private installInvalidMemoryDispatcher(): void {
    type Dispatch = (_uc: unknown, type: number, address: number | bigint, size: number, value: number | bigint) => boolean;
    const dispatch: Dispatch = (_uc, type, address, size, value) => {
      const meaning = UC_MEM[type];
      const access: InvalidMemoryAccess = {
        kind: meaning?.kind ?? "read",
        cause: meaning?.cause ?? "unmapped",
        address: u64(address),
        size,
        value: meaning?.kind === "write" ? unsignedValue(value, size) : 0n,
      };
      let handled = false;
      for (const listener of [...this.invalidListeners]) {
        this.guard(() => {
          if (listener(access) === true) handled = true;
        });
        if (handled || this.callbackFailure !== undefined) break;
      }
      if (!handled) this.lastFault = access;
      return handled;
    };
    const pointer = koffi.register(dispatch, callbackTypes.invalidMemory);
    const out: [number | bigint] = [0];
    const { begin, end } = EVERYWHERE;
    const code = this.lib.uc_hook_add(this.open(), out, UC_HOOK_MEM_INVALID, pointer, null, begin, end);
    if (code !== UC_ERR.OK) {
      koffi.unregister(pointer);
      this.close();
      throw new UnicornError(code, "uc_hook_add(invalid memory)", this.lib.uc_strerror(code));
    }
    this.invalidPointer = pointer;
  }
}

function isMemoryFault(code: number): boolean {
  return (
    code === UC_ERR.READ_UNMAPPED ||
    code === UC_ERR.WRITE_UNMAPPED ||
    code === UC_ERR.FETCH_UNMAPPED ||
    code === UC_ERR.READ_PROT ||
    code === UC_ERR.WRITE_PROT ||
    code === UC_ERR.FETCH_PROT
  );
}

const ERROR_NAMES = new Map<number, string>(Object.entries(UC_ERR).map(([name, code]) => [code, `UC_ERR_${name}`]));

function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? `UC_ERR_${code}`;
}

/** Unicorn hands written values over as signed 64-bit; keep the `size` bytes actually written. */
function unsignedValue(value: number | bigint, size: number): bigint {
  const bits = size > 0 && size <= 8 ? size * 8 : 64;
  return BigInt.asUintN(bits, BigInt(value));
}

/**
 * koffi hands a `uint64_t` callback argument over as a number when it is small and as a
 * bigint otherwise, and a value of 2^63 or more arrives negative; this restores the unsigned
 * value (x64 kernel-half addresses such as 0xffff8000_00000000 are in that range).
 */
function u64(value: number | bigint): bigint {
  return BigInt.asUintN(64, BigInt(value));
}

function describeAccess(access: InvalidMemoryAccess): string {
  return `${access.kind} of ${access.size} byte(s) at ${hex(access.address)} (${access.cause})`;
}

function permsText(perms: number): string {
  return (
    (perms & UC_PROT.READ ? "r" : "-") + (perms & UC_PROT.WRITE ? "w" : "-") + (perms & UC_PROT.EXEC ? "x" : "-")
  );
}
