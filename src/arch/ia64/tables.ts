/**
 * IA-64 unwind tables per module (ia64.md §3.1, §3.2): the IMAGE_IA64_RUNTIME_FUNCTION_ENTRY table
 * named by the exception directory of the image as the snapshot maps it, checked once (sorted by
 * BeginAddress, bundle-aligned, not empty, not overlapping, inside the image) and searched by
 * binary search; and the unwind info blocks, each decoded once. Kept in the walk's cache per
 * module and image memory (the same module in another snapshot's memory is read again).
 */
import { InputError } from "../../errors.js";
import { findTripleIndex } from "../../formats/sorted-ranges.js";
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { IMAGE_FILE_MACHINE } from "../../model/machine.js";
import type { Module } from "../../model/snapshot.js";
import type { UnwindCache } from "../../unwind/cache.js";
import { entryTableCheck, functionTables, tableKind, type FunctionTables } from "../function-table.js";
import type { DataProblem } from "../../formats/unwind-data/problem.js";
import { decodeUnwindInfo, type Ia64RuntimeFunction, type UnwindInfo } from "../../formats/unwind-data/ia64.js";

/**
 * The unwind tables of one IA-64 module: BeginAddress, EndAddress, UnwindInfoAddress of entry i
 * at `functions[3i..3i+2]` (entry i itself at directoryRva + 12·i), and the decoded unwind infos
 * by RVA (or why one cannot be used).
 */
export type Ia64Tables = FunctionTables<UnwindInfo | InfoProblem>;

/** Entries sorted, disjoint, inside the image and on bundle (16-byte) boundaries (ia64.md §3.1). */
const checkTable = entryTableCheck("IMAGE_IA64_RUNTIME_FUNCTION_ENTRY", { bytes: 16, name: "bundle-aligned" });
const TABLES = tableKind<UnwindInfo | InfoProblem>("ia64 tables", { machine: IMAGE_FILE_MACHINE.IA64, check: checkTable });

/**
 * The tables of `module`, read from its image in `images`; undefined when no readable IA-64
 * image is mapped at its base. An image without an exception directory has an empty table. Kept
 * in `cache` when one is given.
 */
export function ia64Tables(module: Module, images: MemoryReader, cache?: UnwindCache): Ia64Tables | undefined {
  // The IA-64 entry has the x64 RUNTIME_FUNCTION's size and field order: three image-relative u32s.
  return functionTables(TABLES, module, images, cache);
}

/** Index of the entry with BeginAddress ≤ rva < EndAddress, or −1. */
export function findEntryIndex(tables: Ia64Tables, rva: number): number {
  return findTripleIndex(tables.functions, rva);
}

/** Entry `index` of the table. */
export function entryAt(tables: Ia64Tables, index: number): Ia64RuntimeFunction {
  const f = tables.functions;
  return { begin: f[index * 3]!, end: f[index * 3 + 1]!, unwindInfo: f[index * 3 + 2]! };
}

/** Why an unwind info block cannot be used, and the address of the bad byte. */
export type InfoProblem = DataProblem & { address: bigint };

/** Unwind info blocks larger than this (8-byte words of descriptors) are not believed. */
const MAX_INFO_WORDS = 0x10000;

/** The decoded unwind info at `rva` (decoded once per module), or why it cannot be used. */
export function unwindInfoAt(tables: Ia64Tables, rva: number): UnwindInfo | InfoProblem {
  let info = tables.infos.get(rva);
  if (info === undefined) {
    info = decodeInfo(tables, rva);
    tables.infos.set(rva, info);
  }
  return info;
}

function decodeInfo(tables: Ia64Tables, rva: number): UnwindInfo | InfoProblem {
  const at = (offset: number): bigint => tables.module.base + BigInt(offset);
  const where = `${tables.module.name}: the unwind info at ${hex(at(rva))} (RVA ${hex(rva)})`;
  const header = tables.read(rva, 8);
  if (header === undefined) return { problem: `${where} is not in the image`, address: at(rva) };
  const words = new DataView(header.buffer, header.byteOffset, 8).getUint32(0, true);
  if (words > MAX_INFO_WORDS) return { problem: `${where} claims ${words} descriptor words, more than ${MAX_INFO_WORDS}`, address: at(rva) };
  const bytes = tables.read(rva, 8 + 8 * words);
  if (bytes === undefined) return { problem: `${where}: its ${words} descriptor words run past the image or are not in memory`, address: at(rva) };
  try {
    return decodeUnwindInfo(bytes, rva);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    const bad = at(e.offset ?? rva);
    return { problem: `${where}: at ${hex(bad)}: ${e.reason}`, address: bad };
  }
}
