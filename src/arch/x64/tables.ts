/**
 * x64 unwind tables per module (x64-unwind.md §1.1): the RUNTIME_FUNCTION table of the module's
 * image as mapped in the snapshot, checked once (sorted by BeginAddress, no empty or overlapping
 * entries, inside the image) and searched by binary search; indirect entries; and the decoded
 * UNWIND_INFOs, each decoded once. Everything is found on first use and kept in the walk's cache
 * for the module and the image memory it was read from.
 */
import { RUNTIME_FUNCTION_BYTES } from "../../formats/pe-mapped.js";
import { findTripleIndex } from "../../formats/sorted-ranges.js";
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { IMAGE_FILE_MACHINE } from "../../model/machine.js";
import type { Module } from "../../model/snapshot.js";
import type { UnwindCache } from "../../unwind/cache.js";
import { entryTableCheck, functionTables, tableKind, type FunctionTables } from "../function-table.js";
import { isProblem, problemAt, type DataProblem } from "../../formats/unwind-data/problem.js";
import { decodeUnwindInfo, UNW_FLAG_CHAININFO, UNWIND_CHAIN_LIMIT, type RuntimeFunctionEntry, type UnwindInfo } from "../../formats/unwind-data/x64.js";

/**
 * The unwind tables of one x64 module: BeginAddress, EndAddress, UnwindData of entry i at
 * `functions[3i..3i+2]`, sorted and disjoint unless `problem` says otherwise, and the decoded
 * UNWIND_INFOs by RVA (or why one is bad).
 */
export type X64Tables = FunctionTables<UnwindInfo | DataProblem>;

/** RUNTIME_FUNCTIONs sorted, disjoint and inside the image (x64-unwind.md §1.1). */
const checkTable = entryTableCheck("RUNTIME_FUNCTION");
const TABLES = tableKind<UnwindInfo | DataProblem>("x64 tables", { machine: IMAGE_FILE_MACHINE.AMD64, check: checkTable });

/**
 * The unwind tables of `module`, read from its image mapped in `images`; undefined when no
 * readable AMD64 image is mapped at its base (nothing is known about its functions then). An
 * image without an exception directory has an empty table: every function in it is a leaf. Kept
 * in `cache` when one is given.
 */
export function x64Tables(module: Module, images: MemoryReader, cache?: UnwindCache): X64Tables | undefined {
  return functionTables(TABLES, module, images, cache);
}

/** Index of the entry with BeginAddress ≤ rva < EndAddress, or −1 (binary search). */
export function findEntryIndex(tables: X64Tables, rva: number): number {
  return findTripleIndex(tables.functions, rva);
}

/** The entry at `index` of the table. */
export function entryAt(tables: X64Tables, index: number): RuntimeFunctionEntry {
  const f = tables.functions;
  return { begin: f[index * 3]!, end: f[index * 3 + 1]!, unwindData: f[index * 3 + 2]! };
}

/**
 * The entry that describes `rva`, with an indirect entry (UnwindData & 1) followed to the
 * RUNTIME_FUNCTION it names; undefined when no entry covers `rva`, a problem when the indirect
 * entry cannot be followed.
 */
export function lookupEntry(tables: X64Tables, rva: number): RuntimeFunctionEntry | DataProblem | undefined {
  const index = findEntryIndex(tables, rva);
  return index < 0 ? undefined : resolveEntry(tables, index);
}

/** The entry at `index`, with an indirect entry followed to the RUNTIME_FUNCTION it names (a problem when it cannot be). */
export function resolveEntry(tables: X64Tables, index: number): RuntimeFunctionEntry | DataProblem {
  const entry = entryAt(tables, index);
  if ((entry.unwindData & 1) === 0) return entry;
  const at = entry.unwindData & ~1;
  const bytes = tables.read(at, RUNTIME_FUNCTION_BYTES);
  if (bytes === undefined) return problemAt(at, `the indirect RUNTIME_FUNCTION ${hex(entry.begin)}..${hex(entry.end)} points at RVA ${hex(at)}, outside the image`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, RUNTIME_FUNCTION_BYTES);
  const target: RuntimeFunctionEntry = { begin: view.getUint32(0, true), end: view.getUint32(4, true), unwindData: view.getUint32(8, true) };
  if ((target.unwindData & 1) !== 0) return problemAt(at, `the indirect RUNTIME_FUNCTION ${hex(entry.begin)}..${hex(entry.end)} points at another indirect entry (RVA ${hex(at)})`);
  return target;
}

/** The decoded UNWIND_INFO at `rva` (decoded once per module), or why it cannot be used. */
export function unwindInfoAt(tables: X64Tables, rva: number): UnwindInfo | DataProblem {
  let info = tables.infos.get(rva);
  if (info === undefined) {
    info = decodeUnwindInfo(tables.read, rva);
    tables.infos.set(rva, info);
  }
  return info;
}

/** An entry with its UNWIND_INFO. */
export interface ChainLink {
  entry: RuntimeFunctionEntry;
  info: UnwindInfo;
}

/**
 * The entry's UNWIND_INFO followed by its CHAININFO parents, child first: at most
 * {@link UNWIND_CHAIN_LIMIT} parents, no info visited twice. A problem says why the chain is bad.
 */
export function unwindChain(tables: X64Tables, entry: RuntimeFunctionEntry): ChainLink[] | DataProblem {
  const chain: ChainLink[] = [];
  const seen = new Set<number>();
  let current = entry;
  for (;;) {
    if ((current.unwindData & 3) !== 0) return problemAt(current.unwindData, `RUNTIME_FUNCTION ${hex(current.begin)}..${hex(current.end)}: UnwindData ${hex(current.unwindData)} is not DWORD-aligned`);
    if (seen.has(current.unwindData)) {
      return problemAt(current.unwindData, `the chained unwind info loops: RUNTIME_FUNCTION ${hex(current.begin)}..${hex(current.end)} leads back to the UNWIND_INFO at ${hex(current.unwindData)}`);
    }
    seen.add(current.unwindData);
    const info = unwindInfoAt(tables, current.unwindData);
    if (isProblem(info)) return info;
    chain.push({ entry: current, info });
    if ((info.flags & UNW_FLAG_CHAININFO) === 0) return chain;
    if (chain.length > UNWIND_CHAIN_LIMIT) return problemAt(entry.unwindData, `the chained unwind info from RUNTIME_FUNCTION ${hex(entry.begin)} is deeper than ${UNWIND_CHAIN_LIMIT} entries`);
    current = info.chained!;
  }
}

/** The BeginAddress of the primary entry of `entry`'s function (its last CHAININFO parent), or undefined when the chain is bad. */
export function primaryBegin(tables: X64Tables, entry: RuntimeFunctionEntry): number | undefined {
  const chain = unwindChain(tables, entry);
  return isProblem(chain) ? undefined : chain[chain.length - 1]!.entry.begin;
}
