/**
 * FPO_DATA, the 16-byte "old FPO" record that tells an x86 walker how a function that omits the
 * frame pointer laid out its frame (stackwalk64.md §2.7, x86-fpo.md §1).
 *
 * The last two bytes are MSVC bit fields packed from bit 0 upwards: cbProlog 0-7, cbRegs 8-10,
 * fHasSEH 11, fUseBP 12, reserved 13, cbFrame 14-15. The packing was measured against winnt.h
 * (x86-fpo.md §1.1); LLVM's accessors read some of these bits from the wrong places.
 */
import { InputError } from "../errors.js";
import { decodeFields, defineLayout, encodeFields, numberField } from "./record.js";
import type { RecordLayout } from "./record.js";

/** cbFrame: an FPO frame, unwound relative to ESP (x86-fpo.md §1.2). */
export const FRAME_FPO = 0;
/** cbFrame: a kernel trap frame; a user-mode walker stops. */
export const FRAME_TRAP = 1;
/** cbFrame: a task-gate (TSS) frame; a user-mode walker stops. */
export const FRAME_TSS = 2;
/** cbFrame: a normal EBP frame. */
export const FRAME_NONFPO = 3;

/** sizeof(FPO_DATA). */
export const FPO_DATA_SIZE = 16;

/** FPO_DATA as plain values; the counts are in the units the record stores (DWORDs, registers). */
export interface FpoData {
  /** RVA of the function's first byte. */
  ulOffStart: number;
  /** Bytes of code in the function. */
  cbProcSize: number;
  /** Locals, in DWORDs. */
  cdwLocals: number;
  /** Parameters, in DWORDs (16 bits). */
  cdwParams: number;
  /** Prolog length in bytes (8 bits). */
  cbProlog: number;
  /** Number of saved registers (3 bits). */
  cbRegs: number;
  /** The function has an SEH frame. */
  fHasSEH: boolean;
  /** EBP was allocated by the function rather than used as a frame pointer. */
  fUseBP: boolean;
  /** The reserved bit (1 bit). */
  reserved: number;
  /** Frame kind, FRAME_FPO..FRAME_NONFPO (2 bits). */
  cbFrame: number;
}

/** FPO_DATA field table; the word at 14 holds the bit fields in FPO_ATTRIBUTE_BITS. */
export const FPO_DATA_LAYOUT: RecordLayout = defineLayout("FPO_DATA", FPO_DATA_SIZE, [
  { name: "ulOffStart", offset: 0, size: 4, kind: "u32", doc: "RVA of the function start" },
  { name: "cbProcSize", offset: 4, size: 4, kind: "u32", doc: "bytes of code" },
  { name: "cdwLocals", offset: 8, size: 4, kind: "u32", doc: "locals in DWORDs" },
  { name: "cdwParams", offset: 12, size: 2, kind: "u16", doc: "parameters in DWORDs" },
  { name: "Attributes", offset: 14, size: 2, kind: "u16", doc: "bit fields: cbProlog, cbRegs, fHasSEH, fUseBP, reserved, cbFrame" },
]);

/** One bit field of the FPO_DATA attribute word. */
export interface BitField {
  readonly name: "cbProlog" | "cbRegs" | "fHasSEH" | "fUseBP" | "reserved" | "cbFrame";
  /** Lowest bit. */
  readonly bit: number;
  /** Width in bits. */
  readonly width: number;
}

/** The attribute word's bit fields, lowest first (x86-fpo.md §1.1). */
export const FPO_ATTRIBUTE_BITS: readonly BitField[] = Object.freeze([
  { name: "cbProlog", bit: 0, width: 8 },
  { name: "cbRegs", bit: 8, width: 3 },
  { name: "fHasSEH", bit: 11, width: 1 },
  { name: "fUseBP", bit: 12, width: 1 },
  { name: "reserved", bit: 13, width: 1 },
  { name: "cbFrame", bit: 14, width: 2 },
] as const);

function checkRange(name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`FPO_DATA.${name} = ${value} is out of range 0..${max}`);
  }
  return value;
}

/** Packs the bit fields into the 16-bit attribute word; a value too wide for its field throws a RangeError naming it. */
export function fpoAttributeWord(f: FpoData): number {
  let word = 0;
  for (const b of FPO_ATTRIBUTE_BITS) {
    const raw = f[b.name];
    const value = typeof raw === "boolean" ? (raw ? 1 : 0) : checkRange(b.name, raw, (1 << b.width) - 1);
    word |= value << b.bit;
  }
  return word;
}

/** Unpacks a 16-bit attribute word into its bit fields. */
export function fpoAttributesFromWord(word: number): Pick<FpoData, "cbProlog" | "cbRegs" | "fHasSEH" | "fUseBP" | "reserved" | "cbFrame"> {
  const bits = (bit: number, width: number): number => (word >>> bit) & ((1 << width) - 1);
  return {
    cbProlog: bits(0, 8),
    cbRegs: bits(8, 3),
    fHasSEH: bits(11, 1) === 1,
    fUseBP: bits(12, 1) === 1,
    reserved: bits(13, 1),
    cbFrame: bits(14, 2),
  };
}

/** Writes an FPO_DATA at `at` in `out` (a new 16-byte buffer when omitted); out-of-range fields throw a RangeError naming the field. */
export function encodeFpoData(f: FpoData, out?: Uint8Array, at = 0): Uint8Array {
  const values = {
    ulOffStart: checkRange("ulOffStart", f.ulOffStart, 0xffff_ffff),
    cbProcSize: checkRange("cbProcSize", f.cbProcSize, 0xffff_ffff),
    cdwLocals: checkRange("cdwLocals", f.cdwLocals, 0xffff_ffff),
    cdwParams: checkRange("cdwParams", f.cdwParams, 0xffff),
    Attributes: fpoAttributeWord(f),
  };
  return encodeFields(FPO_DATA_LAYOUT, values, out, at);
}

/** Reads an FPO_DATA at `offset`; a short input throws InputError("truncated"). */
export function decodeFpoData(bytes: Uint8Array, offset = 0): FpoData {
  const v = decodeFields(FPO_DATA_LAYOUT, bytes, offset);
  return {
    ulOffStart: numberField(v, "ulOffStart"),
    cbProcSize: numberField(v, "cbProcSize"),
    cdwLocals: numberField(v, "cdwLocals"),
    cdwParams: numberField(v, "cdwParams"),
    ...fpoAttributesFromWord(numberField(v, "Attributes")),
  };
}

/**
 * Reads a packed FPO_DATA array, such as an IMAGE_DEBUG_TYPE_FPO directory entry or the PDB's
 * FPO stream (x86-fpo.md §1.3). A length that is not a multiple of 16 throws
 * InputError("truncated") at the offset of the incomplete last record.
 */
export function decodeFpoTable(bytes: Uint8Array): FpoData[] {
  const whole = bytes.byteLength - (bytes.byteLength % FPO_DATA_SIZE);
  if (whole !== bytes.byteLength) {
    throw new InputError(
      "truncated",
      `FPO_DATA table is ${bytes.byteLength} bytes, not a multiple of ${FPO_DATA_SIZE}: the last record has only ${bytes.byteLength - whole} byte(s)`,
      { offset: whole },
    );
  }
  const out: FpoData[] = [];
  for (let at = 0; at < whole; at += FPO_DATA_SIZE) out.push(decodeFpoData(bytes, at));
  return out;
}

/** Packs FPO_DATA records into one array of 16-byte records. */
export function encodeFpoTable(records: readonly FpoData[]): Uint8Array {
  const out = new Uint8Array(records.length * FPO_DATA_SIZE);
  records.forEach((r, i) => encodeFpoData(r, out, i * FPO_DATA_SIZE));
  return out;
}
