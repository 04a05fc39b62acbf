/**
 * Decoding x64 UNWIND_INFO (x64-unwind.md §1.2, §1.3, §1.6): the header, every unwind code with
 * its slot count and operand, the version-2 EPILOG codes, and the tail (the chained parent
 * RUNTIME_FUNCTION or the handler RVA). Decoding reads only the image, never the stack, and
 * refuses what the unwinder must not guess at: versions other than 1 and 2, unknown ops (SPARE
 * and ≥ 11), an op whose slots run past CountOfCodes, bytes that are not in the image. A refusal
 * is a {@link DataProblem} naming the UNWIND_INFO's RVA.
 */
import { hex } from "../../hex.js";
import { machineInfo } from "../../model/machine.js";
import { problemAt, type DataProblem } from "./problem.js";

/** UnwindOp values (x64-unwind.md §1.3). */
export const UWOP_PUSH_NONVOL = 0;
export const UWOP_ALLOC_LARGE = 1;
export const UWOP_ALLOC_SMALL = 2;
export const UWOP_SET_FPREG = 3;
export const UWOP_SAVE_NONVOL = 4;
export const UWOP_SAVE_NONVOL_FAR = 5;
export const UWOP_EPILOG = 6;
export const UWOP_SPARE = 7;
export const UWOP_SAVE_XMM128 = 8;
export const UWOP_SAVE_XMM128_FAR = 9;
export const UWOP_PUSH_MACHFRAME = 10;

/** UNWIND_INFO flags (bits 3–7 of byte 0). */
export const UNW_FLAG_EHANDLER = 1;
export const UNW_FLAG_UHANDLER = 2;
export const UNW_FLAG_CHAININFO = 4;

/** General registers in CONTEXT order: the numbers OpInfo and FrameRegister use (x64-unwind.md §1.1; the machine table's). */
export const REG64: readonly string[] = machineInfo("x64").general.map((r) => r!);

/** Register number of RSP. */
export const RSP = 4;

/** Slots taken by each op (Windows' UnwindOpExtraSlotTable + 1); ALLOC_LARGE with OpInfo ≠ 0 takes one more. */
const SLOTS = [1, 2, 1, 1, 2, 3, 2, 3, 2, 3, 1];

const OP_NAMES = [
  "UWOP_PUSH_NONVOL", "UWOP_ALLOC_LARGE", "UWOP_ALLOC_SMALL", "UWOP_SET_FPREG", "UWOP_SAVE_NONVOL", "UWOP_SAVE_NONVOL_FAR",
  "UWOP_EPILOG", "UWOP_SPARE", "UWOP_SAVE_XMM128", "UWOP_SAVE_XMM128_FAR", "UWOP_PUSH_MACHFRAME",
];

/** The most chained infos followed from one entry (Windows' UNWIND_CHAIN_LIMIT). */
export const UNWIND_CHAIN_LIMIT = 32;

/** One unwind operation. */
export interface UnwindOp {
  /** Index of its first slot in the code array. */
  slot: number;
  /** Offset from the function start to the end of its prolog instruction. */
  codeOffset: number;
  op: number;
  info: number;
  /**
   * The operand in bytes: the allocation size (ALLOC_SMALL, both ALLOC_LARGE forms), the offset
   * from the establisher frame (SAVE_*: scaled by 8 or 16 in the near forms, as stored in the
   * FAR forms); 0 for the other ops.
   */
  value: number;
  slots: number;
}

/** The RUNTIME_FUNCTION fields (RVAs; `end` exclusive). */
export interface RuntimeFunctionEntry {
  begin: number;
  end: number;
  unwindData: number;
}

/** A decoded UNWIND_INFO. */
export interface UnwindInfo {
  /** Where it is (RVA). */
  rva: number;
  version: number;
  flags: number;
  sizeOfProlog: number;
  countOfCodes: number;
  /** Register number, 0 for none. */
  frameRegister: number;
  /** FrameOffset in bytes (the stored value × 16). */
  frameOffset: number;
  /** The ops in stored (reverse prolog) order, EPILOG codes included. */
  ops: UnwindOp[];
  /** Version 2 with an EPILOG header as the first code (x64-unwind.md §1.6). */
  epilogs?: { size: number; atEnd: boolean; offsets: number[] };
  /** UNW_FLAG_CHAININFO: the parent entry stored in the tail. */
  chained?: RuntimeFunctionEntry;
  /** UNW_FLAG_EHANDLER / UHANDLER (without CHAININFO): the handler's RVA. */
  handlerRva?: number;
}

function u16(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8);
}
function u32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

/** The name of an op, e.g. "UWOP_SAVE_NONVOL", or "op 12". */
export function opName(op: number): string {
  return OP_NAMES[op] ?? `op ${op}`;
}

/** The number of slots an op takes, from its first slot's op and OpInfo. */
export function opSlots(op: number, info: number): number {
  return (SLOTS[op] ?? 1) + (op === UWOP_ALLOC_LARGE && info !== 0 ? 1 : 0);
}

/**
 * Decodes the UNWIND_INFO at `rva`; `read(rva, size)` returns image bytes (undefined when they are
 * not in the image or not in memory). A problem says why the info cannot be used.
 */
export function decodeUnwindInfo(read: (rva: number, size: number) => Uint8Array | undefined, rva: number): UnwindInfo | DataProblem {
  const where = `UNWIND_INFO at RVA ${hex(rva)}`;
  const bad = (problem: string): DataProblem => problemAt(rva, problem);
  if ((rva & 3) !== 0) return bad(`${where} is not DWORD-aligned`);
  const header = read(rva, 4);
  if (header === undefined) return bad(`${where} is not in the image`);
  const version = header[0]! & 7;
  const flags = header[0]! >> 3;
  if (version !== 1 && version !== 2) return bad(`${where} has version ${version}: only versions 1 and 2 are defined (3 is the experimental APX format)`);
  const count = header[2]!;
  const frameRegister = header[3]! & 15;
  const tailAt = 4 + 2 * ((count + 1) & ~1);
  const chained = (flags & UNW_FLAG_CHAININFO) !== 0;
  const handler = !chained && (flags & (UNW_FLAG_EHANDLER | UNW_FLAG_UHANDLER)) !== 0;
  const size = tailAt + (chained ? 12 : handler ? 4 : 0);
  const bytes = read(rva, size);
  if (bytes === undefined) return bad(`${where}: its ${count} codes${chained ? " and chained entry" : handler ? " and handler" : ""} (${size} bytes) run past the image`);
  const info: UnwindInfo = {
    rva, version, flags, sizeOfProlog: header[1]!, countOfCodes: count, frameRegister, frameOffset: (header[3]! >> 4) * 16, ops: [],
  };
  for (let slot = 0; slot < count; ) {
    const at = 4 + 2 * slot;
    const codeOffset = bytes[at]!;
    const op = bytes[at + 1]! & 15;
    const opInfo = bytes[at + 1]! >> 4;
    if (op > UWOP_PUSH_MACHFRAME) return bad(`${where}: slot ${slot} holds unknown op ${op}`);
    if (op === UWOP_SPARE) return bad(`${where}: slot ${slot} holds UWOP_SPARE (7), which is invalid`);
    const slots = opSlots(op, opInfo);
    if (slot + slots > count) return bad(`${where}: ${opName(op)} at slot ${slot} needs ${slots} slots, but CountOfCodes is ${count}`);
    let value = 0;
    switch (op) {
      case UWOP_ALLOC_LARGE:
        value = opInfo === 0 ? u16(bytes, at + 2) * 8 : u32(bytes, at + 2);
        break;
      case UWOP_ALLOC_SMALL:
        value = opInfo * 8 + 8;
        break;
      case UWOP_SET_FPREG:
        if (frameRegister === 0) return bad(`${where}: UWOP_SET_FPREG at slot ${slot}, but FrameRegister is 0`);
        break;
      case UWOP_SAVE_NONVOL:
        value = u16(bytes, at + 2) * 8;
        break;
      case UWOP_SAVE_XMM128:
        value = u16(bytes, at + 2) * 16;
        break;
      case UWOP_SAVE_NONVOL_FAR:
      case UWOP_SAVE_XMM128_FAR:
        value = u32(bytes, at + 2);
        break;
    }
    info.ops.push({ slot, codeOffset, op, info: opInfo, value, slots });
    slot += slots;
  }
  if (version === 2 && count > 0 && (bytes[5]! & 15) === UWOP_EPILOG) {
    const epilogSize = bytes[4]!;
    if (epilogSize === 0) return bad(`${where}: its EPILOG header gives an epilog size of 0`);
    const offsets: number[] = [];
    for (let slot = 1; slot < count; slot++) {
      const at = 4 + 2 * slot;
      if ((bytes[at + 1]! & 15) !== UWOP_EPILOG) break;
      const offset = bytes[at]! + 256 * (bytes[at + 1]! >> 4);
      if (offset === 0) break;
      offsets.push(offset);
    }
    info.epilogs = { size: epilogSize, atEnd: (bytes[5]! >> 4 & 1) === 1, offsets };
  }
  if (chained) info.chained = { begin: u32(bytes, tailAt), end: u32(bytes, tailAt + 4), unwindData: u32(bytes, tailAt + 8) };
  else if (handler) info.handlerRva = u32(bytes, tailAt);
  return info;
}
