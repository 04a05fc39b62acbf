/**
 * A module's debug identity from the records its MINIDUMP_MODULE points at (minidump.md §2.3,
 * §8): the CodeView record (RSDS, NB10 or Breakpad's `BpEL` for ELF modules) and the older
 * IMAGE_DEBUG_MISC record, read and rejected as Breakpad reads and rejects them.
 */
import { hex } from "../../hex.js";
import { guidText } from "../guid.js";
import { parseCodeView, type CodeViewInfo } from "../pe.js";
import { MINIDUMP_LIMITS } from "./constants.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpLocation } from "./types.js";

/** CodeView signature "RSDS" (PDB 7.0, GUID). */
export const CV_RSDS = 0x53445352;
/** CodeView signature "NB10" (PDB 2.0, 32-bit signature). */
export const CV_NB10 = 0x3031424e;
/** Breakpad's CodeView record for ELF modules (MD_CVINFOELF_SIGNATURE, 'BpEL': the bytes "LEpB" on disk), the signature followed by the build id. */
const CV_ELF = 0x4270454c;
/** IMAGE_DEBUG_MISC: DataType, Length, Unicode and 3 reserved bytes before the data. */
const MISC_RECORD_HEADER = 12;

/** What a module's debug records say about its symbols (minidump.md §2.3, §8). */
export interface ModuleIdentity {
  codeView?: CodeViewInfo;
  /** The ELF build id of a `BpEL` CodeView record. */
  buildId?: Uint8Array;
  debugFile?: string;
}

/**
 * A module's CodeView record as Breakpad reads it (minidump.md §2.3): RSDS needs DataSize ≥ 25,
 * NB10 ≥ 17, and the record's last byte must be NUL, or the record is rejected, and with it all
 * of the module's debug information; `BpEL` (Breakpad's ELF record) is the signature followed by
 * the build id; a record with another signature (or none) is kept but names nothing. Returns
 * the identity, or why the record was rejected.
 */
function readCodeView(input: MinidumpInput, loc: MinidumpLocation, what: string): ModuleIdentity | string {
  if (loc.dataSize > MINIDUMP_LIMITS.maxCodeViewBytes) return `${what}: ${loc.dataSize}-byte CodeView record is larger than ${MINIDUMP_LIMITS.maxCodeViewBytes} bytes`;
  const c = input.cursor(loc.rva, loc.dataSize, `${what} CodeView record`);
  const bytes = c.bytes;
  // Breakpad reads a signature only from a record longer than one.
  const signature = bytes.length > 4 ? c.u32() : undefined;
  const lastNul = bytes[bytes.length - 1] === 0;
  if (signature === CV_RSDS && (bytes.length < 25 || !lastNul)) return `${what}: RSDS record of ${bytes.length} bytes is shorter than 25 or does not end in NUL`;
  if (signature === CV_NB10 && (bytes.length < 17 || !lastNul)) return `${what}: NB10 record of ${bytes.length} bytes is shorter than 17 or does not end in NUL`;
  if (signature === CV_RSDS || signature === CV_NB10) {
    const cv = parseCodeView(input.cursor(loc.rva, loc.dataSize, `${what} CodeView record`));
    return { codeView: cv, debugFile: cv.pdbName };
  }
  if (signature === CV_ELF) return { buildId: bytes.slice(4) };
  const sig = signature === undefined ? `a ${bytes.length}-byte CodeView record has no signature` : `CodeView signature ${hex(signature)} is not RSDS, NB10 or BpEL`;
  input.note(loc.rva, `${what}: ${sig}; the module has no debug identifier`);
  return {};
}

/**
 * The debug file an IMAGE_DEBUG_MISC record names (Breakpad's fallback when the CodeView record
 * names none), or why the record was rejected: it must be 12 bytes or more, no larger than the
 * CodeView limit, and its Length field must equal its DataSize.
 */
function readMiscRecord(input: MinidumpInput, loc: MinidumpLocation, what: string): { debugFile: string } | string {
  if (loc.dataSize < MISC_RECORD_HEADER || loc.dataSize > MINIDUMP_LIMITS.maxCodeViewBytes) return `${what}: a ${loc.dataSize}-byte IMAGE_DEBUG_MISC record`;
  const c = input.cursor(loc.rva, loc.dataSize, `${what} IMAGE_DEBUG_MISC record`);
  c.skip(4); // DataType
  const length = c.u32();
  if (length !== loc.dataSize) return `${what}: IMAGE_DEBUG_MISC Length ${length} is not its DataSize ${loc.dataSize}`;
  const unicode = c.u8() !== 0;
  const data = c.bytes.subarray(MISC_RECORD_HEADER);
  if (unicode && data.length % 2 !== 0) return { debugFile: "" };
  const text = new TextDecoder(unicode ? "utf-16le" : "latin1").decode(data);
  return { debugFile: text.split("\0", 1)[0]! };
}

/** The Breakpad debug identifier of an ELF build id: its first 16 bytes (zero-filled) as a GUID with little-endian fields, age 0 (minidump.md §8). */
export function elfDebugId(buildId: Uint8Array): string {
  const g = new Uint8Array(16);
  g.set(buildId.subarray(0, 16));
  return guidText(g) + "0";
}

/**
 * A module's debug identity from its CodeView and IMAGE_DEBUG_MISC records, each read only when
 * its DataSize is not 0 (Breakpad's MinidumpModule::ReadAuxiliaryData): a record that is
 * declared but cannot be read or is rejected leaves the module with no debug information.
 */
export function moduleIdentity(input: MinidumpInput, cvRecord: MinidumpLocation, miscRecord: MinidumpLocation, cvAt: number, what: string): ModuleIdentity | string {
  const whole = (loc: MinidumpLocation, at: number, name: string): string | undefined =>
    loc.rva > input.size
      ? `offset ${hex(at + 4)}: ${what}: its ${name} at RVA ${hex(loc.rva)} lies outside the file (${hex(input.size)} bytes)`
      : loc.dataSize > input.size - loc.rva
        ? `offset ${hex(at)}: ${what}: its ${loc.dataSize}-byte ${name} at RVA ${hex(loc.rva)} runs past the end of the file (${hex(input.size)} bytes)`
        : undefined;
  let identity: ModuleIdentity = {};
  if (cvRecord.dataSize !== 0) {
    const cut = whole(cvRecord, cvAt, "CodeView record");
    if (cut !== undefined) return cut;
    const cv = readCodeView(input, cvRecord, what);
    if (typeof cv === "string") return `offset ${hex(cvRecord.rva)}: ${cv}`;
    identity = cv;
  }
  if (miscRecord.dataSize !== 0) {
    const cut = whole(miscRecord, cvAt + 8, "IMAGE_DEBUG_MISC record");
    if (cut !== undefined) return cut;
    const misc = readMiscRecord(input, miscRecord, what);
    if (typeof misc === "string") return `offset ${hex(miscRecord.rva)}: ${misc}`;
    if (identity.debugFile === undefined && identity.buildId === undefined) identity.debugFile = misc.debugFile;
  }
  // The debug file and the build id (written out in hex as the code id) count as names do.
  const chars = (identity.debugFile?.length ?? 0) + 2 * (identity.buildId?.length ?? 0);
  const over = chars === 0 ? undefined : input.nameChars(chars, `${what}: its debug file or build id`);
  return over === undefined ? identity : `offset ${hex(cvAt)}: ${over}`;
}
