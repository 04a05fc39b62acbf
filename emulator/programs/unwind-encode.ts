/**
 * Encoders for the unwind data of x64 PE32+ images: UNWIND_CODE slots, UNWIND_INFO (version 1
 * and 2) and the RUNTIME_FUNCTION table of the exception directory, byte for byte as
 * x64-unwind.md §1.1–§1.3 and §1.6 lay them out.
 *
 * A code is described by what its prolog instruction did (`push rbx`, `sub rsp, 0x4e40`) and
 * where that instruction ends (CodeOffset, §1.2). Sizes and offsets are given in bytes; the
 * encoder does the scaling (×8 for ALLOC_LARGE's 16-bit form and SAVE_NONVOL, ×16 for
 * SAVE_XMM128 and FrameOffset) and refuses values the chosen form cannot hold, so a test can
 * trust that the bytes mean what the spec says they mean.
 */
import { hex } from "../../src/index.js";
import type { RuntimeFunction } from "../../src/entry/formats.js";

/** UnwindOp values (x64-unwind.md §1.3). */
export const UWOP = {
  PUSH_NONVOL: 0,
  ALLOC_LARGE: 1,
  ALLOC_SMALL: 2,
  SET_FPREG: 3,
  SAVE_NONVOL: 4,
  SAVE_NONVOL_FAR: 5,
  EPILOG: 6,
  SPARE: 7,
  SAVE_XMM128: 8,
  SAVE_XMM128_FAR: 9,
  PUSH_MACHFRAME: 10,
} as const;

/** UNWIND_INFO flags, stored in bits 3–7 of byte 0 (x64-unwind.md §1.2). */
export const UNW_FLAG = {
  EHANDLER: 1,
  UHANDLER: 2,
  CHAININFO: 4,
} as const;

/** General registers in CONTEXT order: the numbers OpInfo and FrameRegister use (x64-unwind.md §1.1). */
export const UNWIND_REGISTERS = [
  "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
  "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
] as const;

/** A general register by name, as OpInfo and FrameRegister number it. */
export type UnwindRegister = (typeof UNWIND_REGISTERS)[number];

/** Size in bytes of one RUNTIME_FUNCTION (x64-unwind.md §1.1). */
export const RUNTIME_FUNCTION_SIZE = 12;

/** The largest allocation ALLOC_SMALL holds: OpInfo 15 → 15·8 + 8. */
export const ALLOC_SMALL_MAX = 128;
/** The largest allocation the 2-slot ALLOC_LARGE holds: 0xFFFF·8 = 512 KiB − 8. */
export const ALLOC_LARGE_16_MAX = 0xffff * 8;
/** The largest offset the 2-slot SAVE_NONVOL holds: 0xFFFF·8. */
export const SAVE_NONVOL_MAX = 0xffff * 8;
/** The largest offset the 2-slot SAVE_XMM128 holds: 0xFFFF·16. */
export const SAVE_XMM128_MAX = 0xffff * 16;

/**
 * One unwind operation at the prolog offset where its instruction ends (CodeOffset).
 * Sizes and offsets are in bytes; the FAR and 32-bit forms store them unscaled (§1.3).
 */
export type UnwindCode =
  | { readonly op: "push-nonvol"; readonly codeOffset: number; readonly register: UnwindRegister }
  | { readonly op: "alloc-small"; readonly codeOffset: number; readonly size: number }
  | { readonly op: "alloc-large"; readonly codeOffset: number; readonly size: number; readonly form: 16 | 32 }
  | { readonly op: "set-fpreg"; readonly codeOffset: number }
  | { readonly op: "save-nonvol" | "save-nonvol-far"; readonly codeOffset: number; readonly register: UnwindRegister; readonly offset: number }
  | { readonly op: "save-xmm128" | "save-xmm128-far"; readonly codeOffset: number; readonly xmm: number; readonly offset: number }
  | { readonly op: "push-machframe"; readonly codeOffset: number; readonly errorCode: boolean };

/** The EPILOG codes of a version-2 UNWIND_INFO (x64-unwind.md §1.6). */
export interface EpilogCodes {
  /** EpilogSize: the bytes from an epilog's first pop through its terminator, the same for every epilog (1..255). */
  readonly size: number;
  /** An epilog ends exactly at EndAddress (the header's OpInfo bit 0). */
  readonly atEnd: boolean;
  /** Every other epilog, as the distance from EndAddress back to its first byte (1..0xFFF). */
  readonly offsets: readonly number[];
}

/** A language handler in the UNWIND_INFO tail: the u32 handler RVA, then its data (x64-unwind.md §1.2). */
export interface UnwindHandler {
  /** UNW_FLAG_EHANDLER, UNW_FLAG_UHANDLER or both. */
  readonly flags: number;
  readonly rva: number;
  /** Language-specific data written after the RVA, e.g. a C scope table. */
  readonly data?: Uint8Array;
}

/** Everything that decides the bytes of one UNWIND_INFO. */
export interface UnwindInfoSpec {
  /** 1, or 2 for EPILOG codes. */
  readonly version: 1 | 2;
  /** SizeOfProlog in bytes (0..255); every CodeOffset must be at most this. */
  readonly sizeOfProlog: number;
  /** The codes in the order the prolog runs their instructions; they are stored reversed (§1.2). */
  readonly prolog: readonly UnwindCode[];
  /** FrameRegister; absent means none (0). */
  readonly frameRegister?: UnwindRegister;
  /** FrameOffset in bytes: a multiple of 16 in 0..240, stored ÷16 (default 0). */
  readonly frameOffset?: number;
  /** Version 2 only: EPILOG codes, stored before the prolog codes (§1.6). */
  readonly epilogs?: EpilogCodes;
  /** Sets UNW_FLAG_CHAININFO and stores this parent RUNTIME_FUNCTION in the tail (§1.7). */
  readonly chained?: RuntimeFunction;
  /** Sets the handler flags and stores the handler in the tail; excludes `chained`. */
  readonly handler?: UnwindHandler;
}

const UWOP_NAMES = [
  "UWOP_PUSH_NONVOL", "UWOP_ALLOC_LARGE", "UWOP_ALLOC_SMALL", "UWOP_SET_FPREG", "UWOP_SAVE_NONVOL",
  "UWOP_SAVE_NONVOL_FAR", "UWOP_EPILOG", "UWOP_SPARE", "UWOP_SAVE_XMM128", "UWOP_SAVE_XMM128_FAR", "UWOP_PUSH_MACHFRAME",
] as const;

/** The register number of a general register (x64-unwind.md §1.1). */
export function unwindRegisterNumber(register: UnwindRegister): number {
  const n = UNWIND_REGISTERS.indexOf(register);
  if (n < 0) throw new RangeError(`${String(register)} is not a general register`);
  return n;
}

/** The allocation code for `size` bytes in its smallest form: ALLOC_SMALL to 128, the 16-bit ALLOC_LARGE to 512 KiB − 8, else the 32-bit one. */
export function allocCode(codeOffset: number, size: number): UnwindCode {
  if (size <= ALLOC_SMALL_MAX) return { op: "alloc-small", codeOffset, size };
  return { op: "alloc-large", codeOffset, size, form: size <= ALLOC_LARGE_16_MAX ? 16 : 32 };
}

/** SAVE_NONVOL when offset÷8 fits 16 bits, else SAVE_NONVOL_FAR. */
export function saveNonvolCode(codeOffset: number, register: UnwindRegister, offset: number): UnwindCode {
  return { op: offset <= SAVE_NONVOL_MAX ? "save-nonvol" : "save-nonvol-far", codeOffset, register, offset };
}

/** SAVE_XMM128 when offset÷16 fits 16 bits, else SAVE_XMM128_FAR. */
export function saveXmm128Code(codeOffset: number, xmm: number, offset: number): UnwindCode {
  return { op: offset <= SAVE_XMM128_MAX ? "save-xmm128" : "save-xmm128-far", codeOffset, xmm, offset };
}

/** The number of 16-bit slots a code takes (x64-unwind.md §1.3). */
export function unwindCodeSlots(code: UnwindCode): number {
  switch (code.op) {
    case "push-nonvol":
    case "alloc-small":
    case "set-fpreg":
    case "push-machframe":
      return 1;
    case "alloc-large":
      return code.form === 16 ? 2 : 3;
    case "save-nonvol":
    case "save-xmm128":
      return 2;
    case "save-nonvol-far":
    case "save-xmm128-far":
      return 3;
  }
}

/** Encodes one code as its slots: CodeOffset, UnwindOp | OpInfo << 4, then any operand slots, little-endian. */
export function encodeUnwindCode(code: UnwindCode): Uint8Array {
  const where = `${code.op} at CodeOffset ${hex(code.codeOffset)}`;
  checkInteger(where, "CodeOffset", code.codeOffset, 0, 0xff);
  let op: number;
  let info: number;
  const operands: number[] = [];
  switch (code.op) {
    case "push-nonvol":
      op = UWOP.PUSH_NONVOL;
      info = unwindRegisterNumber(code.register);
      break;
    case "alloc-small":
      checkMultiple(where, "size", code.size, 8, 8, ALLOC_SMALL_MAX);
      op = UWOP.ALLOC_SMALL;
      info = code.size / 8 - 1;
      break;
    case "alloc-large":
      op = UWOP.ALLOC_LARGE;
      if (code.form === 16) {
        checkMultiple(where, "size", code.size, 8, 8, ALLOC_LARGE_16_MAX);
        info = 0;
        operands.push(code.size / 8);
      } else {
        checkMultiple(where, "size", code.size, 8, 8, 0xffff_fff8);
        info = 1;
        operands.push(code.size & 0xffff, code.size >>> 16);
      }
      break;
    case "set-fpreg":
      op = UWOP.SET_FPREG;
      info = 0;
      break;
    case "save-nonvol":
    case "save-nonvol-far":
      op = code.op === "save-nonvol" ? UWOP.SAVE_NONVOL : UWOP.SAVE_NONVOL_FAR;
      info = unwindRegisterNumber(code.register);
      operands.push(...offsetSlots(where, code.offset, 8, code.op === "save-nonvol"));
      break;
    case "save-xmm128":
    case "save-xmm128-far":
      checkInteger(where, "XMM register", code.xmm, 0, 15);
      op = code.op === "save-xmm128" ? UWOP.SAVE_XMM128 : UWOP.SAVE_XMM128_FAR;
      info = code.xmm;
      operands.push(...offsetSlots(where, code.offset, 16, code.op === "save-xmm128"));
      break;
    case "push-machframe":
      op = UWOP.PUSH_MACHFRAME;
      info = code.errorCode ? 1 : 0;
      break;
  }
  const out = new Uint8Array(2 + 2 * operands.length);
  out[0] = code.codeOffset;
  out[1] = op | (info << 4);
  operands.forEach((slot, i) => {
    out[2 + 2 * i] = slot & 0xff;
    out[3 + 2 * i] = slot >>> 8;
  });
  return out;
}

/**
 * Encodes the EPILOG codes of a version-2 UNWIND_INFO (x64-unwind.md §1.6): the header slot
 * (CodeOffset = EpilogSize, OpInfo bit 0 = an epilog ends at EndAddress), one slot per further
 * epilog (its distance back from EndAddress, low 8 bits in CodeOffset and high 4 in OpInfo),
 * then `00 06` padding entries up to an even slot count, since the prolog walk steps over EPILOG
 * codes two slots at a time.
 */
export function encodeEpilogCodes(epilogs: EpilogCodes): Uint8Array {
  checkInteger("EPILOG header", "EpilogSize", epilogs.size, 1, 0xff);
  if (!epilogs.atEnd && epilogs.offsets.length === 0) {
    throw new RangeError("EPILOG codes describe at least one epilog: set atEnd or list an offset");
  }
  const seen = new Set<number>(epilogs.atEnd ? [epilogs.size] : []);
  for (const offset of epilogs.offsets) {
    checkInteger("EPILOG entry", "offset", offset, epilogs.size, 0xfff);
    if (seen.has(offset)) throw new RangeError(`EPILOG entry: the epilog at EndAddress − ${hex(offset)} is described twice`);
    seen.add(offset);
  }
  const slots = [[epilogs.size, UWOP.EPILOG | ((epilogs.atEnd ? 1 : 0) << 4)]];
  for (const offset of epilogs.offsets) slots.push([offset & 0xff, UWOP.EPILOG | ((offset >>> 8) << 4)]);
  if (slots.length % 2 === 1) slots.push([0, UWOP.EPILOG]);
  return new Uint8Array(slots.flat());
}

/**
 * Encodes an UNWIND_INFO (x64-unwind.md §1.2): the 4-byte header, the EPILOG codes (version 2),
 * the prolog codes in reverse prolog order, one zero pad slot when CountOfCodes is odd, then the
 * chained RUNTIME_FUNCTION or the handler. CountOfCodes counts the EPILOG slots (padding
 * entries included) but not the pad slot. An info with no codes and no tail is padded with a
 * zero u32 to the 8-byte minimum, as LLVM writes it.
 */
export function encodeUnwindInfo(info: UnwindInfoSpec): Uint8Array {
  if (info.version !== 1 && info.version !== 2) throw new RangeError(`UNWIND_INFO version ${String(info.version)} is not 1 or 2`);
  checkInteger("UNWIND_INFO", "SizeOfProlog", info.sizeOfProlog, 0, 0xff);
  const frameOffset = info.frameOffset ?? 0;
  checkMultiple("UNWIND_INFO", "FrameOffset", frameOffset, 16, 0, 240);
  if (info.frameRegister === undefined && frameOffset !== 0) throw new RangeError("UNWIND_INFO: a FrameOffset needs a FrameRegister");
  const frameRegister = info.frameRegister === undefined ? 0 : unwindRegisterNumber(info.frameRegister);
  if (info.frameRegister !== undefined && frameRegister === 0) throw new RangeError("UNWIND_INFO: RAX (0) cannot be the FrameRegister: 0 means none");
  if (info.epilogs !== undefined && info.version !== 2) throw new RangeError("UNWIND_INFO: EPILOG codes need version 2");
  if (info.chained !== undefined && info.handler !== undefined) throw new RangeError("UNWIND_INFO: CHAININFO excludes a handler");

  let previous = 0;
  for (const code of info.prolog) {
    if (code.codeOffset < previous) throw new RangeError(`UNWIND_INFO: prolog codes must be in prolog order; ${code.op} at ${hex(code.codeOffset)} follows ${hex(previous)}`);
    if (code.codeOffset > info.sizeOfProlog) throw new RangeError(`UNWIND_INFO: ${code.op} at ${hex(code.codeOffset)} lies past SizeOfProlog ${hex(info.sizeOfProlog)}`);
    if (code.op === "set-fpreg" && info.frameRegister === undefined) throw new RangeError("UNWIND_INFO: SET_FPREG needs a FrameRegister");
    previous = code.codeOffset;
  }

  const epilogBytes = info.epilogs === undefined ? new Uint8Array() : encodeEpilogCodes(info.epilogs);
  const codeBytes = [...info.prolog].reverse().map(encodeUnwindCode);
  const count = epilogBytes.length / 2 + codeBytes.reduce((sum, b) => sum + b.length / 2, 0);
  if (count > 0xff) throw new RangeError(`UNWIND_INFO: ${count} slots do not fit CountOfCodes`);

  let flags = 0;
  let tail: Uint8Array = new Uint8Array();
  if (info.chained !== undefined) {
    flags = UNW_FLAG.CHAININFO;
    tail = encodeRuntimeFunction(info.chained);
  } else if (info.handler !== undefined) {
    const { flags: handlerFlags, rva, data } = info.handler;
    if (handlerFlags === 0 || (handlerFlags & ~(UNW_FLAG.EHANDLER | UNW_FLAG.UHANDLER)) !== 0) {
      throw new RangeError(`UNWIND_INFO: handler flags ${handlerFlags} must be EHANDLER, UHANDLER or both`);
    }
    checkInteger("UNWIND_INFO", "handler RVA", rva, 0, 0xffff_ffff);
    flags = handlerFlags;
    tail = new Uint8Array(4 + (data?.length ?? 0));
    new DataView(tail.buffer).setUint32(0, rva, true);
    if (data !== undefined) tail.set(data, 4);
  }

  const codesEnd = 4 + 2 * ((count + 1) & ~1);
  const out = new Uint8Array(Math.max(codesEnd + tail.length, 8));
  out[0] = info.version | (flags << 3);
  out[1] = info.sizeOfProlog;
  out[2] = count;
  out[3] = frameRegister | ((frameOffset / 16) << 4);
  let at = 4;
  out.set(epilogBytes, at);
  at += epilogBytes.length;
  for (const bytes of codeBytes) {
    out.set(bytes, at);
    at += bytes.length;
  }
  out.set(tail, codesEnd);
  return out;
}

/** Encodes one RUNTIME_FUNCTION: BeginAddress, EndAddress (exclusive), UnwindData, as u32 RVAs. */
export function encodeRuntimeFunction(entry: RuntimeFunction): Uint8Array {
  checkInteger("RUNTIME_FUNCTION", "BeginAddress", entry.beginRva, 0, 0xffff_ffff);
  checkInteger("RUNTIME_FUNCTION", "EndAddress", entry.endRva, 0, 0xffff_ffff);
  checkInteger("RUNTIME_FUNCTION", "UnwindData", entry.unwindData, 0, 0xffff_ffff);
  if (entry.endRva <= entry.beginRva) throw new RangeError(`RUNTIME_FUNCTION ${hex(entry.beginRva)}..${hex(entry.endRva)} is empty`);
  const out = new Uint8Array(RUNTIME_FUNCTION_SIZE);
  const view = new DataView(out.buffer);
  view.setUint32(0, entry.beginRva, true);
  view.setUint32(4, entry.endRva, true);
  view.setUint32(8, entry.unwindData, true);
  return out;
}

/**
 * Encodes the exception directory: the RUNTIME_FUNCTIONs sorted by BeginAddress, as the
 * binary search of x64-unwind.md §1.1 needs. Overlapping ranges, and UnwindData that is neither
 * a DWORD-aligned UNWIND_INFO nor an indirect entry (bit 0 set), throw.
 */
export function encodeRuntimeFunctions(entries: readonly RuntimeFunction[]): Uint8Array {
  const sorted = [...entries].sort((a, b) => a.beginRva - b.beginRva);
  const out = new Uint8Array(sorted.length * RUNTIME_FUNCTION_SIZE);
  sorted.forEach((entry, i) => {
    if ((entry.unwindData & 3) !== 0 && (entry.unwindData & 3) !== 1) {
      throw new RangeError(`RUNTIME_FUNCTION ${hex(entry.beginRva)}: UnwindData ${hex(entry.unwindData)} is not DWORD-aligned`);
    }
    const next = sorted[i + 1];
    if (next !== undefined && next.beginRva < entry.endRva) {
      throw new RangeError(`RUNTIME_FUNCTIONs ${hex(entry.beginRva)}..${hex(entry.endRva)} and ${hex(next.beginRva)}..${hex(next.endRva)} overlap`);
    }
    out.set(encodeRuntimeFunction(entry), i * RUNTIME_FUNCTION_SIZE);
  });
  return out;
}

/** One code as a line of text, e.g. "UWOP_ALLOC_LARGE 0x4e40 (16-bit form)" or "UWOP_SAVE_NONVOL rsi at 0x20". */
export function formatUnwindCode(code: UnwindCode): string {
  switch (code.op) {
    case "push-nonvol":
      return `${UWOP_NAMES[UWOP.PUSH_NONVOL]} ${code.register}`;
    case "alloc-small":
      return `${UWOP_NAMES[UWOP.ALLOC_SMALL]} ${hex(code.size)}`;
    case "alloc-large":
      return `${UWOP_NAMES[UWOP.ALLOC_LARGE]} ${hex(code.size)} (${code.form === 16 ? "16-bit scaled" : "32-bit unscaled"} form)`;
    case "set-fpreg":
      return UWOP_NAMES[UWOP.SET_FPREG];
    case "save-nonvol":
      return `${UWOP_NAMES[UWOP.SAVE_NONVOL]} ${code.register} at ${hex(code.offset)}`;
    case "save-nonvol-far":
      return `${UWOP_NAMES[UWOP.SAVE_NONVOL_FAR]} ${code.register} at ${hex(code.offset)}`;
    case "save-xmm128":
      return `${UWOP_NAMES[UWOP.SAVE_XMM128]} xmm${code.xmm} at ${hex(code.offset)}`;
    case "save-xmm128-far":
      return `${UWOP_NAMES[UWOP.SAVE_XMM128_FAR]} xmm${code.xmm} at ${hex(code.offset)}`;
    case "push-machframe":
      return `${UWOP_NAMES[UWOP.PUSH_MACHFRAME]} ${code.errorCode ? "with error code" : "without error code"}`;
  }
}

/** EPILOG codes as a line of text, e.g. "UWOP_EPILOG size 3, at end; at End-0xf". */
export function formatEpilogCodes(epilogs: EpilogCodes): string {
  const parts = [`${UWOP_NAMES[UWOP.EPILOG]} size ${epilogs.size}${epilogs.atEnd ? ", one ending at EndAddress" : ""}`];
  for (const offset of epilogs.offsets) parts.push(`one at EndAddress-${hex(offset)}`);
  return parts.join("; ");
}

/** Bytes as space-separated lower-case hex pairs, e.g. "01 0e 03 00". */
export function hexBytes(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(" ");
}

/** The operand slots of a SAVE code: offset ÷ scale in one slot (near), or the unscaled u32 in two (far). */
function offsetSlots(where: string, offset: number, scale: 8 | 16, near: boolean): number[] {
  if (near) {
    checkMultiple(where, "offset", offset, scale, 0, 0xffff * scale);
    return [offset / scale];
  }
  checkMultiple(where, "offset", offset, scale, 0, 0xffff_ffff);
  return [offset & 0xffff, offset >>> 16];
}

function checkInteger(where: string, field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${where}: ${field} ${value} is not an integer in ${hex(min)}..${hex(max)}`);
  }
}

function checkMultiple(where: string, field: string, value: number, of: number, min: number, max: number): void {
  checkInteger(where, field, value, min, max);
  if (value % of !== 0) throw new RangeError(`${where}: ${field} ${hex(value)} is not a multiple of ${of}`);
}
