/**
 * The records StackWalk/StackWalk64/StackWalkEx read and update on every call: KDHELP64, KDHELP,
 * STACKFRAME64, STACKFRAME_EX and the legacy 32-bit STACKFRAME (stackwalk64.md §2.2-§2.6).
 *
 * STACKFRAME64 is the same on every host: pointers are widened to DWORD64 and ADDRESS64 is used
 * throughout. The 32-bit STACKFRAME is its own layout, and there AddrBStore comes after KdHelp,
 * as the last field, because it was appended when Itanium support arrived.
 */
import {
  ADDRESS32_LAYOUT,
  ADDRESS64_LAYOUT,
  decodeAddress32,
  decodeAddress64,
  encodeAddress32,
  encodeAddress64,
  zeroAddress32,
  zeroAddress64,
} from "./address.js";
import type { Address32, Address64 } from "./address.js";
import { bigintField, decodeFields, defineLayout, encodeFields, fieldOf, numberField } from "./record.js";
import type { FieldInput, FieldSpec, FieldValues, RecordLayout } from "./record.js";

/** sizeof(KDHELP64): 112 in every SDK variant (stackwalk64.md §2.2). */
export const KDHELP64_SIZE = 112;
/** sizeof(KDHELP): 64 in the SDK headers; Wine declares only 28 (stackwalk64.md §2.3). */
export const KDHELP32_SIZE = 64;
/** sizeof(STACKFRAME64) = 0x108 (stackwalk64.md §2.4). */
export const STACKFRAME64_SIZE = 264;
/** sizeof(STACKFRAME_EX) = 0x110; also the value StackFrameSize must hold (stackwalk64.md §2.5). */
export const STACKFRAME_EX_SIZE = 272;
/** sizeof(STACKFRAME), the 32-bit record = 0xA4 (stackwalk64.md §2.6). */
export const STACKFRAME32_SIZE = 164;

/** KDHELP64: kernel-mode walking hints, current SDK field set (stackwalk64.md §2.2). */
export interface KdHelp64 {
  thread: bigint;
  thCallbackStack: number;
  thCallbackBStore: number;
  nextCallback: number;
  framePointer: number;
  kiCallUserMode: bigint;
  keUserCallbackDispatcher: bigint;
  systemRangeStart: bigint;
  kiUserExceptionDispatcher: bigint;
  stackBase: bigint;
  stackLimit: bigint;
  buildVersion: number;
  retpolineStubFunctionTableSize: number;
  retpolineStubFunctionTable: bigint;
  retpolineStubOffset: number;
  retpolineStubSize: number;
  reserved0: [bigint, bigint];
}

/** KDHELP (32-bit), current SDK field order; every field is a DWORD held as a bigint (stackwalk64.md §2.3). */
export interface KdHelp32 {
  thread: bigint;
  thCallbackStack: bigint;
  nextCallback: bigint;
  framePointer: bigint;
  kiCallUserMode: bigint;
  keUserCallbackDispatcher: bigint;
  systemRangeStart: bigint;
  thCallbackBStore: bigint;
  kiUserExceptionDispatcher: bigint;
  stackBase: bigint;
  stackLimit: bigint;
  reserved: [bigint, bigint, bigint, bigint, bigint];
}

/** STACKFRAME64: one frame's addresses plus the walker's private state in Reserved (stackwalk64.md §2.4). */
export interface StackFrame64 {
  addrPC: Address64;
  addrReturn: Address64;
  addrFrame: Address64;
  addrStack: Address64;
  addrBStore: Address64;
  funcTableEntry: bigint;
  params: [bigint, bigint, bigint, bigint];
  far: number;
  virtual: number;
  reserved: [bigint, bigint, bigint];
  kdHelp: KdHelp64;
}

/** STACKFRAME_EX: STACKFRAME64 plus the record size and the inline frame context (stackwalk64.md §2.5). */
export interface StackFrameEx extends StackFrame64 {
  stackFrameSize: number;
  inlineFrameContext: number;
}

/** STACKFRAME (32-bit): DWORD fields held as bigints; AddrBStore is the last field (stackwalk64.md §2.6). */
export interface StackFrame32 {
  addrPC: Address32;
  addrReturn: Address32;
  addrFrame: Address32;
  addrStack: Address32;
  funcTableEntry: bigint;
  params: [bigint, bigint, bigint, bigint];
  far: number;
  virtual: number;
  reserved: [bigint, bigint, bigint];
  kdHelp: KdHelp32;
  addrBStore: Address32;
}

/** `count` consecutive fields `name[0]`, `name[1]`, … of one kind starting at `offset`. */
function arrayFields(name: string, offset: number, count: number, kind: "u32" | "u64", doc: string): FieldSpec[] {
  const size = kind === "u64" ? 8 : 4;
  return Array.from({ length: count }, (_, i) => ({ name: `${name}[${i}]`, offset: offset + i * size, size, kind, doc }));
}

/** KDHELP64 field table, current SDK (stackwalk64.md §2.2). */
export const KDHELP64_LAYOUT: RecordLayout = defineLayout("KDHELP64", KDHELP64_SIZE, [
  { name: "Thread", offset: 0x00, size: 8, kind: "u64", doc: "address of the kernel thread object" },
  { name: "ThCallbackStack", offset: 0x08, size: 4, kind: "u32", doc: "offset in the thread object of the callback stack pointer" },
  { name: "ThCallbackBStore", offset: 0x0c, size: 4, kind: "u32", doc: "offset in the thread object of the callback backing store (IA-64)" },
  { name: "NextCallback", offset: 0x10, size: 4, kind: "u32", doc: "offset in a callback frame of the next callback frame" },
  { name: "FramePointer", offset: 0x14, size: 4, kind: "u32", doc: "offset in a callback frame of the saved frame pointer" },
  { name: "KiCallUserMode", offset: 0x18, size: 8, kind: "u64", doc: "address of the kernel routine that calls user mode" },
  { name: "KeUserCallbackDispatcher", offset: 0x20, size: 8, kind: "u64", doc: "address of the user-mode callback dispatcher" },
  { name: "SystemRangeStart", offset: 0x28, size: 8, kind: "u64", doc: "lowest kernel-mode address" },
  { name: "KiUserExceptionDispatcher", offset: 0x30, size: 8, kind: "u64", doc: "address of the user-mode exception dispatcher" },
  { name: "StackBase", offset: 0x38, size: 8, kind: "u64", doc: "thread stack base" },
  { name: "StackLimit", offset: 0x40, size: 8, kind: "u64", doc: "thread stack limit" },
  { name: "BuildVersion", offset: 0x48, size: 4, kind: "u32", doc: "target OS build number" },
  { name: "RetpolineStubFunctionTableSize", offset: 0x4c, size: 4, kind: "u32", doc: "size of the retpoline stub function table" },
  { name: "RetpolineStubFunctionTable", offset: 0x50, size: 8, kind: "u64", doc: "address of the retpoline stub function table" },
  { name: "RetpolineStubOffset", offset: 0x58, size: 4, kind: "u32", doc: "retpoline stub offset" },
  { name: "RetpolineStubSize", offset: 0x5c, size: 4, kind: "u32", doc: "retpoline stub size" },
  ...arrayFields("Reserved0", 0x60, 2, "u64", "reserved"),
]);

/** KDHELP (32-bit) field table, current SDK: all DWORDs (stackwalk64.md §2.3). */
export const KDHELP32_LAYOUT: RecordLayout = defineLayout("KDHELP", KDHELP32_SIZE, [
  { name: "Thread", offset: 0x00, size: 4, kind: "u32", doc: "address of the kernel thread object" },
  { name: "ThCallbackStack", offset: 0x04, size: 4, kind: "u32", doc: "offset in the thread object of the callback stack pointer" },
  { name: "NextCallback", offset: 0x08, size: 4, kind: "u32", doc: "offset in a callback frame of the next callback frame" },
  { name: "FramePointer", offset: 0x0c, size: 4, kind: "u32", doc: "offset in a callback frame of the saved frame pointer" },
  { name: "KiCallUserMode", offset: 0x10, size: 4, kind: "u32", doc: "address of the kernel routine that calls user mode" },
  { name: "KeUserCallbackDispatcher", offset: 0x14, size: 4, kind: "u32", doc: "address of the user-mode callback dispatcher" },
  { name: "SystemRangeStart", offset: 0x18, size: 4, kind: "u32", doc: "lowest kernel-mode address; the end of Wine's 28-byte KDHELP" },
  { name: "ThCallbackBStore", offset: 0x1c, size: 4, kind: "u32", doc: "offset in the thread object of the callback backing store (IA-64)" },
  { name: "KiUserExceptionDispatcher", offset: 0x20, size: 4, kind: "u32", doc: "address of the user-mode exception dispatcher" },
  { name: "StackBase", offset: 0x24, size: 4, kind: "u32", doc: "thread stack base" },
  { name: "StackLimit", offset: 0x28, size: 4, kind: "u32", doc: "thread stack limit" },
  ...arrayFields("Reserved", 0x2c, 5, "u32", "reserved"),
]);

/** The STACKFRAME64 fields, shared by STACKFRAME_EX at the same offsets (stackwalk64.md §2.4, §2.5). */
const STACKFRAME64_FIELDS: FieldSpec[] = [
  { name: "AddrPC", offset: 0x00, size: 16, kind: "bytes", record: ADDRESS64_LAYOUT, doc: "program counter" },
  { name: "AddrReturn", offset: 0x10, size: 16, kind: "bytes", record: ADDRESS64_LAYOUT, doc: "return address" },
  { name: "AddrFrame", offset: 0x20, size: 16, kind: "bytes", record: ADDRESS64_LAYOUT, doc: "frame pointer" },
  { name: "AddrStack", offset: 0x30, size: 16, kind: "bytes", record: ADDRESS64_LAYOUT, doc: "stack pointer" },
  { name: "AddrBStore", offset: 0x40, size: 16, kind: "bytes", record: ADDRESS64_LAYOUT, doc: "backing store pointer (Itanium only)" },
  { name: "FuncTableEntry", offset: 0x50, size: 8, kind: "u64", doc: "PVOID to the function-table entry (FPO_DATA, RUNTIME_FUNCTION)" },
  ...arrayFields("Params", 0x58, 4, "u64", "possible argument"),
  { name: "Far", offset: 0x78, size: 4, kind: "u32", doc: "BOOL: WOW far call" },
  { name: "Virtual", offset: 0x7c, size: 4, kind: "u32", doc: "BOOL: virtual frame" },
  ...arrayFields("Reserved", 0x80, 3, "u64", "walker state between calls"),
  { name: "KdHelp", offset: 0x98, size: 112, kind: "bytes", record: KDHELP64_LAYOUT, doc: "KDHELP64" },
];

/** STACKFRAME64 field table (stackwalk64.md §2.4). */
export const STACKFRAME64_LAYOUT: RecordLayout = defineLayout("STACKFRAME64", STACKFRAME64_SIZE, STACKFRAME64_FIELDS);

/** STACKFRAME_EX field table: STACKFRAME64, then StackFrameSize and InlineFrameContext (stackwalk64.md §2.5). */
export const STACKFRAME_EX_LAYOUT: RecordLayout = defineLayout("STACKFRAME_EX", STACKFRAME_EX_SIZE, [
  ...STACKFRAME64_FIELDS,
  { name: "StackFrameSize", offset: 0x108, size: 4, kind: "u32", doc: "must be sizeof(STACKFRAME_EX) = 272" },
  { name: "InlineFrameContext", offset: 0x10c, size: 4, kind: "u32", doc: "inline frame context; 0 = INIT, 0xFFFFFFFF = IGNORE" },
]);

/** STACKFRAME (32-bit) field table; AddrBStore last at 0x98 (stackwalk64.md §2.6). */
export const STACKFRAME32_LAYOUT: RecordLayout = defineLayout("STACKFRAME", STACKFRAME32_SIZE, [
  { name: "AddrPC", offset: 0x00, size: 12, kind: "bytes", record: ADDRESS32_LAYOUT, doc: "program counter" },
  { name: "AddrReturn", offset: 0x0c, size: 12, kind: "bytes", record: ADDRESS32_LAYOUT, doc: "return address" },
  { name: "AddrFrame", offset: 0x18, size: 12, kind: "bytes", record: ADDRESS32_LAYOUT, doc: "frame pointer" },
  { name: "AddrStack", offset: 0x24, size: 12, kind: "bytes", record: ADDRESS32_LAYOUT, doc: "stack pointer" },
  { name: "FuncTableEntry", offset: 0x30, size: 4, kind: "u32", doc: "PVOID to the function-table entry" },
  ...arrayFields("Params", 0x34, 4, "u32", "possible argument"),
  { name: "Far", offset: 0x44, size: 4, kind: "u32", doc: "BOOL: WOW far call" },
  { name: "Virtual", offset: 0x48, size: 4, kind: "u32", doc: "BOOL: virtual frame" },
  ...arrayFields("Reserved", 0x4c, 3, "u32", "walker state between calls"),
  { name: "KdHelp", offset: 0x58, size: 64, kind: "bytes", record: KDHELP32_LAYOUT, doc: "KDHELP" },
  { name: "AddrBStore", offset: 0x98, size: 12, kind: "bytes", record: ADDRESS32_LAYOUT, doc: "backing store pointer: the last field, unlike STACKFRAME64" },
]);

/** An all-zero KDHELP64. */
export function newKdHelp64(): KdHelp64 {
  return {
    thread: 0n,
    thCallbackStack: 0,
    thCallbackBStore: 0,
    nextCallback: 0,
    framePointer: 0,
    kiCallUserMode: 0n,
    keUserCallbackDispatcher: 0n,
    systemRangeStart: 0n,
    kiUserExceptionDispatcher: 0n,
    stackBase: 0n,
    stackLimit: 0n,
    buildVersion: 0,
    retpolineStubFunctionTableSize: 0,
    retpolineStubFunctionTable: 0n,
    retpolineStubOffset: 0,
    retpolineStubSize: 0,
    reserved0: [0n, 0n],
  };
}

/** An all-zero KDHELP (32-bit). */
export function newKdHelp32(): KdHelp32 {
  return {
    thread: 0n,
    thCallbackStack: 0n,
    nextCallback: 0n,
    framePointer: 0n,
    kiCallUserMode: 0n,
    keUserCallbackDispatcher: 0n,
    systemRangeStart: 0n,
    thCallbackBStore: 0n,
    kiUserExceptionDispatcher: 0n,
    stackBase: 0n,
    stackLimit: 0n,
    reserved: [0n, 0n, 0n, 0n, 0n],
  };
}

/** An all-zero STACKFRAME64, as after memset: every address is AddrMode1616, not Flat (stackwalk64.md §1). */
export function newStackFrame64(): StackFrame64 {
  return {
    addrPC: zeroAddress64(),
    addrReturn: zeroAddress64(),
    addrFrame: zeroAddress64(),
    addrStack: zeroAddress64(),
    addrBStore: zeroAddress64(),
    funcTableEntry: 0n,
    params: [0n, 0n, 0n, 0n],
    far: 0,
    virtual: 0,
    reserved: [0n, 0n, 0n],
    kdHelp: newKdHelp64(),
  };
}

/** A zeroed STACKFRAME_EX with StackFrameSize = 272, as StackWalkEx requires (stackwalk64.md §2.5). */
export function newStackFrameEx(): StackFrameEx {
  return { ...newStackFrame64(), stackFrameSize: STACKFRAME_EX_SIZE, inlineFrameContext: 0 };
}

/** An all-zero 32-bit STACKFRAME (every address AddrMode1616). */
export function newStackFrame32(): StackFrame32 {
  return {
    addrPC: zeroAddress32(),
    addrReturn: zeroAddress32(),
    addrFrame: zeroAddress32(),
    addrStack: zeroAddress32(),
    funcTableEntry: 0n,
    params: [0n, 0n, 0n, 0n],
    far: 0,
    virtual: 0,
    reserved: [0n, 0n, 0n],
    kdHelp: newKdHelp32(),
    addrBStore: zeroAddress32(),
  };
}

/** Writes a KDHELP64 at `at` in `out` (a new 112-byte buffer when omitted) and returns the buffer. */
export function encodeKdHelp64(k: KdHelp64, out?: Uint8Array, at = 0): Uint8Array {
  return encodeFields(
    KDHELP64_LAYOUT,
    {
      Thread: k.thread,
      ThCallbackStack: k.thCallbackStack,
      ThCallbackBStore: k.thCallbackBStore,
      NextCallback: k.nextCallback,
      FramePointer: k.framePointer,
      KiCallUserMode: k.kiCallUserMode,
      KeUserCallbackDispatcher: k.keUserCallbackDispatcher,
      SystemRangeStart: k.systemRangeStart,
      KiUserExceptionDispatcher: k.kiUserExceptionDispatcher,
      StackBase: k.stackBase,
      StackLimit: k.stackLimit,
      BuildVersion: k.buildVersion,
      RetpolineStubFunctionTableSize: k.retpolineStubFunctionTableSize,
      RetpolineStubFunctionTable: k.retpolineStubFunctionTable,
      RetpolineStubOffset: k.retpolineStubOffset,
      RetpolineStubSize: k.retpolineStubSize,
      "Reserved0[0]": k.reserved0[0],
      "Reserved0[1]": k.reserved0[1],
    },
    out,
    at,
  );
}

/** Reads a KDHELP64 at `offset`; a short input throws InputError("truncated"). */
export function decodeKdHelp64(bytes: Uint8Array, offset = 0): KdHelp64 {
  const v = decodeFields(KDHELP64_LAYOUT, bytes, offset);
  return {
    thread: bigintField(v, "Thread"),
    thCallbackStack: numberField(v, "ThCallbackStack"),
    thCallbackBStore: numberField(v, "ThCallbackBStore"),
    nextCallback: numberField(v, "NextCallback"),
    framePointer: numberField(v, "FramePointer"),
    kiCallUserMode: bigintField(v, "KiCallUserMode"),
    keUserCallbackDispatcher: bigintField(v, "KeUserCallbackDispatcher"),
    systemRangeStart: bigintField(v, "SystemRangeStart"),
    kiUserExceptionDispatcher: bigintField(v, "KiUserExceptionDispatcher"),
    stackBase: bigintField(v, "StackBase"),
    stackLimit: bigintField(v, "StackLimit"),
    buildVersion: numberField(v, "BuildVersion"),
    retpolineStubFunctionTableSize: numberField(v, "RetpolineStubFunctionTableSize"),
    retpolineStubFunctionTable: bigintField(v, "RetpolineStubFunctionTable"),
    retpolineStubOffset: numberField(v, "RetpolineStubOffset"),
    retpolineStubSize: numberField(v, "RetpolineStubSize"),
    reserved0: [bigintField(v, "Reserved0[0]"), bigintField(v, "Reserved0[1]")],
  };
}

/** Writes a KDHELP (32-bit) at `at` in `out` (a new 64-byte buffer when omitted) and returns the buffer. */
export function encodeKdHelp32(k: KdHelp32, out?: Uint8Array, at = 0): Uint8Array {
  return encodeFields(
    KDHELP32_LAYOUT,
    {
      Thread: k.thread,
      ThCallbackStack: k.thCallbackStack,
      NextCallback: k.nextCallback,
      FramePointer: k.framePointer,
      KiCallUserMode: k.kiCallUserMode,
      KeUserCallbackDispatcher: k.keUserCallbackDispatcher,
      SystemRangeStart: k.systemRangeStart,
      ThCallbackBStore: k.thCallbackBStore,
      KiUserExceptionDispatcher: k.kiUserExceptionDispatcher,
      StackBase: k.stackBase,
      StackLimit: k.stackLimit,
      "Reserved[0]": k.reserved[0],
      "Reserved[1]": k.reserved[1],
      "Reserved[2]": k.reserved[2],
      "Reserved[3]": k.reserved[3],
      "Reserved[4]": k.reserved[4],
    },
    out,
    at,
  );
}

/** Reads a KDHELP (32-bit) at `offset`; a short input throws InputError("truncated"). */
export function decodeKdHelp32(bytes: Uint8Array, offset = 0): KdHelp32 {
  const v = decodeFields(KDHELP32_LAYOUT, bytes, offset);
  const dword = (name: string): bigint => BigInt(numberField(v, name));
  return {
    thread: dword("Thread"),
    thCallbackStack: dword("ThCallbackStack"),
    nextCallback: dword("NextCallback"),
    framePointer: dword("FramePointer"),
    kiCallUserMode: dword("KiCallUserMode"),
    keUserCallbackDispatcher: dword("KeUserCallbackDispatcher"),
    systemRangeStart: dword("SystemRangeStart"),
    thCallbackBStore: dword("ThCallbackBStore"),
    kiUserExceptionDispatcher: dword("KiUserExceptionDispatcher"),
    stackBase: dword("StackBase"),
    stackLimit: dword("StackLimit"),
    reserved: [dword("Reserved[0]"), dword("Reserved[1]"), dword("Reserved[2]"), dword("Reserved[3]"), dword("Reserved[4]")],
  };
}

/** Offset of a named field inside a layout. */
function offsetOf(layout: RecordLayout, name: string): number {
  return fieldOf(layout, name).offset;
}

/** The fields STACKFRAME and STACKFRAME64 share besides addresses and KdHelp, keyed by their layout names. */
function scalarFields(f: Pick<StackFrame64, "funcTableEntry" | "params" | "far" | "virtual" | "reserved">): FieldInput {
  return {
    FuncTableEntry: f.funcTableEntry,
    "Params[0]": f.params[0],
    "Params[1]": f.params[1],
    "Params[2]": f.params[2],
    "Params[3]": f.params[3],
    Far: f.far,
    Virtual: f.virtual,
    "Reserved[0]": f.reserved[0],
    "Reserved[1]": f.reserved[1],
    "Reserved[2]": f.reserved[2],
  };
}

/** Writes the STACKFRAME64 part of `f` (shared by STACKFRAME_EX) into `out` at `base`. */
function writeStackFrame64(layout: RecordLayout, f: StackFrame64, out: Uint8Array, base: number): void {
  encodeFields(
    layout,
    scalarFields(f),
    out,
    base,
  );
  encodeAddress64(f.addrPC, out, base + offsetOf(layout, "AddrPC"));
  encodeAddress64(f.addrReturn, out, base + offsetOf(layout, "AddrReturn"));
  encodeAddress64(f.addrFrame, out, base + offsetOf(layout, "AddrFrame"));
  encodeAddress64(f.addrStack, out, base + offsetOf(layout, "AddrStack"));
  encodeAddress64(f.addrBStore, out, base + offsetOf(layout, "AddrBStore"));
  encodeKdHelp64(f.kdHelp, out, base + offsetOf(layout, "KdHelp"));
}

/**
 * Reads the STACKFRAME64 part of a record at `base` (shared by STACKFRAME_EX), returning it with
 * the decoded top-level fields so a caller can read the fields that follow.
 */
function readStackFrame64(layout: RecordLayout, bytes: Uint8Array, base: number): { frame: StackFrame64; values: FieldValues } {
  const v = decodeFields(layout, bytes, base);
  const frame: StackFrame64 = {
    addrPC: decodeAddress64(bytes, base + offsetOf(layout, "AddrPC")),
    addrReturn: decodeAddress64(bytes, base + offsetOf(layout, "AddrReturn")),
    addrFrame: decodeAddress64(bytes, base + offsetOf(layout, "AddrFrame")),
    addrStack: decodeAddress64(bytes, base + offsetOf(layout, "AddrStack")),
    addrBStore: decodeAddress64(bytes, base + offsetOf(layout, "AddrBStore")),
    funcTableEntry: bigintField(v, "FuncTableEntry"),
    params: [bigintField(v, "Params[0]"), bigintField(v, "Params[1]"), bigintField(v, "Params[2]"), bigintField(v, "Params[3]")],
    far: numberField(v, "Far"),
    virtual: numberField(v, "Virtual"),
    reserved: [bigintField(v, "Reserved[0]"), bigintField(v, "Reserved[1]"), bigintField(v, "Reserved[2]")],
    kdHelp: decodeKdHelp64(bytes, base + offsetOf(layout, "KdHelp")),
  };
  return { frame, values: v };
}

/** Writes a STACKFRAME64 at `offset` in `out` (a new 264-byte buffer when omitted) and returns the buffer. */
export function encodeStackFrame64(f: StackFrame64, out?: Uint8Array, offset = 0): Uint8Array {
  const target = out ?? new Uint8Array(STACKFRAME64_SIZE);
  writeStackFrame64(STACKFRAME64_LAYOUT, f, target, offset);
  return target;
}

/** Reads a STACKFRAME64 at `offset`; a short input throws InputError("truncated") at the first cut field. */
export function decodeStackFrame64(bytes: Uint8Array, offset = 0): StackFrame64 {
  return readStackFrame64(STACKFRAME64_LAYOUT, bytes, offset).frame;
}

/** Writes a STACKFRAME_EX at `offset` in `out` (a new 272-byte buffer when omitted) and returns the buffer. */
export function encodeStackFrameEx(f: StackFrameEx, out?: Uint8Array, offset = 0): Uint8Array {
  const target = out ?? new Uint8Array(STACKFRAME_EX_SIZE);
  writeStackFrame64(STACKFRAME_EX_LAYOUT, f, target, offset);
  encodeFields(STACKFRAME_EX_LAYOUT, { StackFrameSize: f.stackFrameSize, InlineFrameContext: f.inlineFrameContext }, target, offset);
  return target;
}

/** Reads a STACKFRAME_EX at `offset`; a short input throws InputError("truncated") at the first cut field. */
export function decodeStackFrameEx(bytes: Uint8Array, offset = 0): StackFrameEx {
  const { frame, values } = readStackFrame64(STACKFRAME_EX_LAYOUT, bytes, offset);
  return { ...frame, stackFrameSize: numberField(values, "StackFrameSize"), inlineFrameContext: numberField(values, "InlineFrameContext") };
}

/** Writes a 32-bit STACKFRAME at `offset` in `out` (a new 164-byte buffer when omitted) and returns the buffer. */
export function encodeStackFrame32(f: StackFrame32, out?: Uint8Array, offset = 0): Uint8Array {
  const layout = STACKFRAME32_LAYOUT;
  const target = out ?? new Uint8Array(STACKFRAME32_SIZE);
  encodeFields(
    layout,
    scalarFields(f),
    target,
    offset,
  );
  encodeAddress32(f.addrPC, target, offset + offsetOf(layout, "AddrPC"));
  encodeAddress32(f.addrReturn, target, offset + offsetOf(layout, "AddrReturn"));
  encodeAddress32(f.addrFrame, target, offset + offsetOf(layout, "AddrFrame"));
  encodeAddress32(f.addrStack, target, offset + offsetOf(layout, "AddrStack"));
  encodeKdHelp32(f.kdHelp, target, offset + offsetOf(layout, "KdHelp"));
  encodeAddress32(f.addrBStore, target, offset + offsetOf(layout, "AddrBStore"));
  return target;
}

/** Reads a 32-bit STACKFRAME at `offset`; a short input throws InputError("truncated") at the first cut field. */
export function decodeStackFrame32(bytes: Uint8Array, offset = 0): StackFrame32 {
  const layout = STACKFRAME32_LAYOUT;
  const v = decodeFields(layout, bytes, offset);
  const dword = (name: string): bigint => BigInt(numberField(v, name));
  return {
    addrPC: decodeAddress32(bytes, offset + offsetOf(layout, "AddrPC")),
    addrReturn: decodeAddress32(bytes, offset + offsetOf(layout, "AddrReturn")),
    addrFrame: decodeAddress32(bytes, offset + offsetOf(layout, "AddrFrame")),
    addrStack: decodeAddress32(bytes, offset + offsetOf(layout, "AddrStack")),
    funcTableEntry: dword("FuncTableEntry"),
    params: [dword("Params[0]"), dword("Params[1]"), dword("Params[2]"), dword("Params[3]")],
    far: numberField(v, "Far"),
    virtual: numberField(v, "Virtual"),
    reserved: [dword("Reserved[0]"), dword("Reserved[1]"), dword("Reserved[2]")],
    kdHelp: decodeKdHelp32(bytes, offset + offsetOf(layout, "KdHelp")),
    addrBStore: decodeAddress32(bytes, offset + offsetOf(layout, "AddrBStore")),
  };
}
