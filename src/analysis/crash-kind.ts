/**
 * What kind of fault a dump's Exception stream reports, in the terms the crash analysis needs
 * (crash-analysis.ts): a bad memory access (and of which kind, where the OS says), an integer
 * division by zero, a privileged instruction, and the report an x86-64 general-protection fault
 * leaves when the address was non-canonical (the OS does not learn the address then: Windows
 * reports a read at 0xffffffffffffffff, Linux SIGSEGV or SIGBUS with si_code SI_KERNEL at 0,
 * macOS EXC_BAD_ACCESS / EXC_I386_GPFLT at 0).
 */
import type { Minidump } from "../formats/minidump.js";

/** The access a fault was reported for. */
export type AccessKind = "read" | "write" | "exec";

/** The fault, classified. */
export interface CrashKind {
  /** A bad memory access: an access violation, SIGSEGV or SIGBUS, EXC_BAD_ACCESS. */
  memory: boolean;
  /** The access the OS reported (Windows access violations say; other OSes do not). */
  access?: AccessKind;
  /** The report of a general-protection fault, which a non-canonical address causes. */
  generalProtection: boolean;
  intDivideByZero: boolean;
  privilegedInstruction: boolean;
}

/** SystemInfo.PlatformId values. */
const PLATFORM = { windows: 1, windowsNt: 2, mac: 0x8101, ios: 0x8102, linux: 0x8201, android: 0x8203 } as const;

const EXCEPTION_ACCESS_VIOLATION = 0xc0000005;
const EXCEPTION_INT_DIVIDE_BY_ZERO = 0xc0000094;
const EXCEPTION_PRIV_INSTRUCTION = 0xc0000096;
const WINDOWS_ACCESS: Readonly<Record<string, AccessKind>> = { "0": "read", "1": "write", "8": "exec" };

const SIGILL = 4;
const SIGBUS = 7;
const SIGFPE = 8;
const SIGSEGV = 11;
const SI_KERNEL = 0x80;
const FPE_INTDIV = 1;
const ILL_PRVOPC = 5;

const EXC_BAD_ACCESS = 1;
const EXC_ARITHMETIC = 3;
const EXC_I386_DIV = 1;
const EXC_I386_GPFLT = 13;

const ALL_ONES = 0xffff_ffff_ffff_ffffn;

/**
 * The fault of a dump's Exception stream, reported at `address` (the crash address: a Windows
 * access violation's data address, else the exception address); undefined without an Exception
 * stream or a SystemInfo stream naming the OS.
 */
export function crashKind(dump: Minidump, address: bigint): CrashKind | undefined {
  const ex = dump.exception;
  const platform = dump.systemInfo?.platformId;
  if (ex === undefined || platform === undefined) return undefined;
  const code = ex.code >>> 0;
  const flags = ex.flags >>> 0;
  const kind: CrashKind = { memory: false, generalProtection: false, intDivideByZero: false, privilegedInstruction: false };
  switch (platform) {
    case PLATFORM.windows:
    case PLATFORM.windowsNt: {
      if (code === EXCEPTION_ACCESS_VIOLATION) {
        kind.memory = true;
        const access = ex.numberParameters >= 1 ? WINDOWS_ACCESS[String(ex.parameters[0] ?? 0n)] : undefined;
        if (access !== undefined) kind.access = access;
        kind.generalProtection = access === "read" && address === ALL_ONES;
      }
      kind.intDivideByZero = code === EXCEPTION_INT_DIVIDE_BY_ZERO;
      kind.privilegedInstruction = code === EXCEPTION_PRIV_INSTRUCTION;
      break;
    }
    case PLATFORM.linux:
    case PLATFORM.android:
      kind.memory = code === SIGSEGV || code === SIGBUS;
      kind.generalProtection = kind.memory && flags === SI_KERNEL && address === 0n;
      kind.intDivideByZero = code === SIGFPE && flags === FPE_INTDIV;
      kind.privilegedInstruction = code === SIGILL && flags === ILL_PRVOPC;
      break;
    case PLATFORM.mac:
    case PLATFORM.ios:
      kind.memory = code === EXC_BAD_ACCESS;
      kind.generalProtection = kind.memory && flags === EXC_I386_GPFLT && address === 0n;
      kind.intDivideByZero = code === EXC_ARITHMETIC && flags === EXC_I386_DIV;
      break;
    default:
      break;
  }
  return kind;
}
