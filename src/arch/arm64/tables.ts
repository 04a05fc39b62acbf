/**
 * ARM64 unwind tables per module (arm64.md §1.1): the `.pdata` array of the module's image as the
 * snapshot maps it — 8-byte entries, BeginAddress then UnwindData, sorted by BeginAddress — and
 * each entry's unwind data, decoded once: an `.xdata` record (Flag 0), a packed word expanded
 * (Flag 1, 2), or the parent entry a Flag 3 entry names. There is no EndAddress: an entry covers
 * 4 × FunctionLength bytes, from its packed word or its `.xdata` header (a Flag 3 entry, which
 * holds no length, up to the next entry's start). A lookup is the Windows one: the last entry that
 * starts at or below the address, if the address lies within its length.
 */
import { findPairIndex } from "../../formats/sorted-ranges.js";
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { IMAGE_FILE_MACHINE } from "../../model/machine.js";
import type { Module } from "../../model/snapshot.js";
import type { UnwindCache } from "../../unwind/cache.js";
import { functionTables, pairTableCheck, tableKind, type FunctionTables } from "../function-table.js";
import { isProblem, problemAt, type DataProblem } from "../../formats/unwind-data/problem.js";
import { ARM64_RUNTIME_FUNCTION_BYTES } from "../../formats/pe-mapped.js";
import { decodeXdata, expandPacked, type Arm64UnwindData } from "../../formats/unwind-data/arm64-xdata.js";

/**
 * The unwind tables of one ARM64 module: BeginAddress and UnwindData of entry i at
 * `functions[2i]`, `functions[2i + 1]`, sorted unless `problem` says otherwise, and the unwind
 * data by UnwindData word (an `.xdata` RVA or a packed word: their low bits tell them apart).
 */
export type Arm64Tables = FunctionTables<Arm64UnwindData | DataProblem>;

const TABLES = tableKind<Arm64UnwindData | DataProblem>("arm64 tables", { machine: IMAGE_FILE_MACHINE.ARM64, check: pairTableCheck(), entryBytes: ARM64_RUNTIME_FUNCTION_BYTES });

/**
 * The unwind tables of `module`, read from its image mapped in `images`; undefined when no
 * readable ARM64 image is mapped at its base. An image without an exception directory has an
 * empty table: every function in it is a leaf. Kept in `cache` when one is given.
 */
export function arm64Tables(module: Module, images: MemoryReader, cache?: UnwindCache): Arm64Tables | undefined {
  return functionTables(TABLES, module, images, cache);
}

/** A `.pdata` entry as found: its start, its UnwindData word, its index in the table. */
export interface Arm64Entry {
  begin: number;
  unwindData: number;
  index: number;
}

/** The unwind data an UnwindData word names (decoded once per module): an `.xdata` record, or a packed word expanded. */
export function unwindDataOf(tables: Arm64Tables, word: number): Arm64UnwindData | DataProblem {
  let data = tables.infos.get(word);
  if (data === undefined) {
    data = (word & 3) === 0 ? decodeXdata(tables.read, word) : expandPacked(word);
    tables.infos.set(word, data);
  }
  return data;
}

/** The length in bytes of entry `index`, or a problem when its `.xdata` header cannot be read. */
export function entryLength(tables: Arm64Tables, index: number): number | DataProblem {
  const f = tables.functions;
  const word = f[2 * index + 1]!;
  switch (word & 3) {
    case 0: {
      const data = unwindDataOf(tables, word);
      return isProblem(data) ? data : 4 * data.functionLength;
    }
    case 3: {
      const next = 2 * index + 2 < f.length ? f[2 * index + 2]! : tables.sizeOfImage;
      return next - f[2 * index]!;
    }
    default:
      return 4 * ((word >>> 2) & 0x7ff);
  }
}

/** The entry covering `rva`, undefined when none does (a leaf), or a problem when the covering one's length cannot be read. */
export function lookupEntry(tables: Arm64Tables, rva: number): Arm64Entry | DataProblem | undefined {
  const index = findPairIndex(tables.functions, rva);
  if (index < 0) return undefined;
  const length = entryLength(tables, index);
  if (typeof length !== "number") return length;
  const begin = tables.functions[2 * index]!;
  return rva - begin < length ? { begin, unwindData: tables.functions[2 * index + 1]!, index } : undefined;
}

/**
 * The entry whose unwind data unwinds a Flag 3 entry (arm64.md §1.1): with bit 2 clear,
 * UnwindData − 3 is the RVA of the parent RUNTIME_FUNCTION, unwound as at its start; with bit 2
 * set, or a parent that is itself Flag 3, the data cannot be used.
 */
export function parentEntry(tables: Arm64Tables, entry: Arm64Entry): Arm64Entry | DataProblem {
  if ((entry.unwindData & 4) !== 0) return problemAt(entry.unwindData, `the .pdata entry at ${hex(entry.begin)} has Flag 3 with bit 2 set (UnwindData ${hex(entry.unwindData)}), which the Windows unwinder rejects`);
  const at = entry.unwindData - 3;
  const bytes = tables.read(at, ARM64_RUNTIME_FUNCTION_BYTES);
  if (bytes === undefined) return problemAt(at, `the .pdata entry at ${hex(entry.begin)} names a parent entry at RVA ${hex(at)}, outside the image`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, ARM64_RUNTIME_FUNCTION_BYTES);
  const parent: Arm64Entry = { begin: view.getUint32(0, true), unwindData: view.getUint32(4, true), index: -1 };
  if ((parent.unwindData & 3) === 3) return problemAt(at, `the .pdata entry at ${hex(entry.begin)} names a parent entry (RVA ${hex(at)}) that has Flag 3 itself`);
  return parent;
}
