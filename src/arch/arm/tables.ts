/**
 * ARM unwind tables per module (docs/arm.md): the `.pdata` array of the module's image as the
 * snapshot maps it — 8-byte entries, Function Start RVA (bit 0 set: Thumb code) then the unwind
 * word, sorted by start — and each entry's unwind data, decoded once: an `.xdata` record (Flag 0)
 * or a packed word expanded (Flag 1, 2). There is no end address: an entry covers its Function
 * Length, from the packed word or the `.xdata` header. A lookup is the Windows one: the last
 * entry that starts at or below the address, if the address lies within its length. The Thumb
 * bit takes no part: an address is looked up with its bit 0 set, so that it compares with the
 * starts as they are stored.
 */
import { findPairIndex } from "../../formats/sorted-ranges.js";
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { IMAGE_FILE_MACHINE } from "../../model/machine.js";
import type { Module } from "../../model/snapshot.js";
import type { UnwindCache } from "../../unwind/cache.js";
import { functionTables, pairTableCheck, tableKind, type FunctionTables } from "../function-table.js";
import { isProblem, type DataProblem } from "../../formats/unwind-data/problem.js";
import { ARM_RUNTIME_FUNCTION_BYTES, decodeArmXdata, expandArmPacked, type ArmUnwindData } from "../../formats/unwind-data/arm.js";

/** The unwind tables of one ARM module: start and unwind word of entry i at `functions[2i]`, `functions[2i + 1]`. */
export type ArmTables = FunctionTables<ArmUnwindData | DataProblem>;

const TABLES = tableKind<ArmUnwindData | DataProblem>("arm tables", { machine: IMAGE_FILE_MACHINE.ARMNT, check: pairTableCheck(~1), entryBytes: ARM_RUNTIME_FUNCTION_BYTES });

/** The unwind tables of `module` from its image in `images`; undefined when no readable ARMNT image is mapped at its base. */
export function armTables(module: Module, images: MemoryReader, cache?: UnwindCache): ArmTables | undefined {
  return functionTables(TABLES, module, images, cache);
}

/** A `.pdata` entry as found: its start (Thumb bit cleared), whether it is Thumb code, its unwind word, its index. */
export interface ArmEntry {
  begin: number;
  thumb: boolean;
  unwindData: number;
  index: number;
}

/** The unwind data an unwind word names (decoded once per module); Flag 3, reserved, is a problem of its entry alone. */
export function armUnwindDataOf(tables: ArmTables, word: number): ArmUnwindData | DataProblem {
  let data = tables.infos.get(word);
  if (data === undefined) {
    const flag = word & 3;
    data = flag === 0 ? decodeArmXdata(tables.read, word) : flag === 3 ? { problem: `unwind word ${hex(word)} has the reserved Flag 3` } : expandArmPacked(word);
    tables.infos.set(word, data);
  }
  return data;
}

/** The length in bytes of entry `index`, or a problem when its `.xdata` header cannot be read. */
export function armEntryLength(tables: ArmTables, index: number): number | DataProblem {
  const word = tables.functions[2 * index + 1]!;
  if ((word & 3) === 1 || (word & 3) === 2) return 2 * ((word >>> 2) & 0x7ff);
  const data = armUnwindDataOf(tables, word);
  return isProblem(data) ? data : data.functionLength;
}

/** The entry covering `rva`, undefined when none does (a leaf), or a problem when the covering one's length cannot be read. */
export function armLookupEntry(tables: ArmTables, rva: number): ArmEntry | DataProblem | undefined {
  const index = findPairIndex(tables.functions, (rva | 1) >>> 0);
  if (index < 0) return undefined;
  const length = armEntryLength(tables, index);
  if (typeof length !== "number") return length;
  const raw = tables.functions[2 * index]!;
  const begin = raw & ~1;
  return (rva & ~1) - begin < length ? { begin, thumb: (raw & 1) !== 0, unwindData: tables.functions[2 * index + 1]!, index } : undefined;
}
