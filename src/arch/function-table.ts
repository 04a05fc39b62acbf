/**
 * The function table of a module's image as the snapshot maps it, shared by the table-driven
 * walkers (x64 RUNTIME_FUNCTION, IA-64 IMAGE_IA64_RUNTIME_FUNCTION_ENTRY: both three
 * image-relative u32s per entry; ARM64 IMAGE_ARM64_RUNTIME_FUNCTION_ENTRY: two; all named by the
 * exception directory): the entries, a reader of image bytes bounded by SizeOfImage, and why the
 * table cannot be searched, when it cannot.
 */
import { readMappedImage, readMappedRuntimeFunctions } from "../formats/pe-mapped.js";
import { hex } from "../hex.js";
import type { MemoryReader } from "../memory/reader.js";
import type { Module } from "../model/snapshot.js";
import { cacheSlot, ImageKeyed, type CacheSlot, type UnwindCache } from "../unwind/cache.js";

/** A module's function table and what the walkers read beside it. */
export interface MappedFunctionTable {
  sizeOfImage: number;
  /** The exception directory's RVA, or 0 when there is none. */
  directoryRva: number;
  /** Begin, end and unwind data of entry i at [3i..3i+2] (ARM64: begin and unwind data at [2i..2i+1]); empty when the table cannot be read. */
  functions: Uint32Array;
  /** Why the table cannot be searched (`module: reason`): every frame in the module stops with it. */
  problem?: string;
  /** Reads image bytes at an RVA, inside SizeOfImage only. */
  read(rva: number, size: number): Uint8Array | undefined;
}

/**
 * The function table of `module`, read from its image in `images`; undefined when no readable
 * image of `machine` (an IMAGE_FILE_MACHINE value) is mapped at its base. `check` says why a
 * readable table cannot be binary-searched (unsorted, overlapping, outside the image...).
 */
export function mappedFunctionTable(
  module: Module,
  images: MemoryReader,
  machine: number,
  check: TableCheck,
  entryBytes?: number,
): MappedFunctionTable | undefined {
  const image = readMappedImage(images, module.base);
  if (image === undefined || image.machine !== machine) return undefined;
  const sizeOfImage = image.sizeOfImage;
  const base = module.base;
  const read = (rva: number, size: number): Uint8Array | undefined =>
    rva >= 0 && size >= 0 && rva + size <= sizeOfImage ? images.read(base + BigInt(rva), size) : undefined;
  const raw = readMappedRuntimeFunctions(images, base, image, entryBytes);
  const table: MappedFunctionTable = { sizeOfImage, directoryRva: image.exceptionDirectory?.rva ?? 0, functions: typeof raw === "string" ? new Uint32Array(0) : raw, read };
  const problem = typeof raw === "string" ? raw : check(raw, sizeOfImage);
  if (problem !== undefined) table.problem = `${module.name}: ${problem}`;
  return table;
}

/** Why a table cannot be binary-searched, or undefined when it can. */
export type TableCheck = (functions: Uint32Array, sizeOfImage: number) => string | undefined;

/**
 * The check of a table of `entry` records (begin, end, unwind data): every entry not empty,
 * aligned to `align` when given, inside SizeOfImage, and beginning at or after the end of the one
 * before (sorted by begin, no overlaps).
 */
export function entryTableCheck(entry: string, align?: { bytes: number; name: string }): TableCheck {
  return (f, sizeOfImage) => {
    let previousEnd = 0;
    for (let i = 0; i < f.length; i += 3) {
      const begin = f[i]!;
      const end = f[i + 1]!;
      const n = i / 3;
      const range = `${entry} ${n} (${hex(begin)}..${hex(end)})`;
      if (end <= begin) return `${range} is empty`;
      if (align !== undefined && (begin % align.bytes !== 0 || end % align.bytes !== 0)) return `${range} is not ${align.name}`;
      if (end > sizeOfImage) return `${range} runs past the image (SizeOfImage ${hex(sizeOfImage)})`;
      if (n > 0) {
        const previousBegin = f[i - 3]!;
        if (begin < previousBegin) return `the ${entry} table is not sorted: entry ${n} begins at ${hex(begin)}, before entry ${n - 1} (${hex(previousBegin)})`;
        if (begin < previousEnd) return `${range} overlaps entry ${n - 1} (${hex(previousBegin)}..${hex(previousEnd)})`;
      }
      previousEnd = end;
    }
    return undefined;
  };
}

/**
 * The check of a table of (begin, unwind word) pairs, the `.pdata` of ARM64 and ARM: every begin
 * inside SizeOfImage and after the one before. `startMask` clears what a begin carries besides its
 * address (ARM's Thumb bit).
 */
export function pairTableCheck(startMask = 0xffff_ffff): TableCheck {
  return (f, sizeOfImage) => {
    for (let i = 0; i < f.length; i += 2) {
      const begin = (f[i]! & startMask) >>> 0;
      const n = i / 2;
      if (begin >= sizeOfImage) return `.pdata entry ${n} begins at ${hex(begin)}, outside the image (SizeOfImage ${hex(sizeOfImage)})`;
      const previous = n > 0 ? (f[i - 2]! & startMask) >>> 0 : -1;
      if (begin <= previous) return `the .pdata table is not sorted: entry ${n} begins at ${hex(begin)}, not after entry ${n - 1} (${hex(previous)})`;
    }
    return undefined;
  };
}

/** A module's function table with its decoded unwind infos (`I`: an info, or why it is bad), each decoded once. */
export interface FunctionTables<I> extends MappedFunctionTable {
  module: Module;
  /** Decoded unwind infos by RVA. */
  infos: Map<number, I>;
}

/** How one machine's function tables are read and kept: the IMAGE_FILE_MACHINE its images carry, the table check, the entry size when not 12 bytes. */
export interface TableReading {
  machine: number;
  check: TableCheck;
  entryBytes?: number | undefined;
}

/** One machine's function tables: how they are read, and the cache slot that keeps them per module and image memory. */
export interface TableKind<I> extends TableReading {
  slot: CacheSlot<ImageKeyed<Module, FunctionTables<I> | undefined>>;
}

/** A machine's function tables, kept under a cache slot named `name`. */
export function tableKind<I>(name: string, reading: TableReading): TableKind<I> {
  return { ...reading, slot: cacheSlot(name, () => new ImageKeyed<Module, FunctionTables<I> | undefined>()) };
}

/**
 * The function tables of `module` with its image in `images` (see {@link mappedFunctionTable}),
 * kept in `cache` under the kind's slot when a cache is given.
 */
export function functionTables<I>(kind: TableKind<I>, module: Module, images: MemoryReader, cache: UnwindCache | undefined): FunctionTables<I> | undefined {
  const read = (): FunctionTables<I> | undefined => {
    const table = mappedFunctionTable(module, images, kind.machine, kind.check, kind.entryBytes);
    return table === undefined ? undefined : { module, ...table, infos: new Map() };
  };
  return cache === undefined ? read() : cache.get(kind.slot).get(images, module, read);
}
