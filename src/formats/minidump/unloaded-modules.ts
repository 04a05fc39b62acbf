/**
 * The UnloadedModuleList stream (type 14): MINIDUMP_UNLOADED_MODULE_LIST, a header (SizeOfHeader,
 * SizeOfEntry, NumberOfEntries) and 24-byte MINIDUMP_UNLOADED_MODULE entries (BaseOfImage u64,
 * SizeOfImage, CheckSum, TimeDateStamp, ModuleNameRva). Entries are read with the entry size
 * the header gives (at least 24 bytes); an entry with no bytes or past the end of the address
 * space, or whose name cannot be read, is passed over with a note.
 */
import { hex } from "../../hex.js";
import { MINIDUMP_LIMITS, MINIDUMP_STREAM } from "./constants.js";
import { sizedListEntries, type MinidumpInput, type SizedListShape } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation, MinidumpStreamEntry } from "./types.js";
import { fileNameOf } from "../../path-name.js";

/** One module the process had unloaded when the dump was written. */
export interface MinidumpUnloadedModule {
  base: bigint;
  size: number;
  checksum: number;
  timeDateStamp: number;
  /** The module's path as recorded. */
  path: string;
  /** Its file-name part. */
  name: string;
}

/** sizeof(MINIDUMP_UNLOADED_MODULE). */
const UNLOADED_MODULE_SIZE = 24;
/** MINIDUMP_UNLOADED_MODULE_LIST's header (12 bytes) and entries. */
const UNLOADED_MODULE_LIST: SizedListShape = { stream: "UnloadedModuleList", headerSize: 12, entrySize: UNLOADED_MODULE_SIZE, entry: "an entry", sizeField: "SizeOfEntry", countField: "NumberOfEntries", most: { count: MINIDUMP_LIMITS.maxModules, of: "modules", entries: "entries" } };

function readUnloadedModules(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpUnloadedModule[] {
  const list = sizedListEntries(input, s, held, UNLOADED_MODULE_LIST);
  const modules: MinidumpUnloadedModule[] = [];
  for (let i = 0; i < list.count; i++) {
    const at = list.first + i * list.entrySize;
    const c = input.cursor(at, UNLOADED_MODULE_SIZE, `unloaded module ${i}`);
    const base = c.u64();
    const size = c.u32();
    const checksum = c.u32();
    const timeDateStamp = c.u32();
    const nameRva = c.u32();
    if (size === 0 || base + BigInt(size) > 1n << 64n) {
      input.note(at + 8, `unloaded module ${i}: ${hex(size)} bytes at ${hex(base)} ${size === 0 ? "cover nothing" : "run past the end of the 64-bit address space"}; it is passed over`);
      continue;
    }
    const path = input.optionalString(nameRva, at + 20, `unloaded module ${i} ModuleNameRva`, `unloaded module ${i} name`) ?? "";
    modules.push({ base, size, checksum, timeDateStamp, path, name: fileNameOf(path) });
  }
  return modules;
}

/** The UnloadedModuleList stream's reader. */
export const unloadedModuleListStream: MinidumpStream<MinidumpUnloadedModule[]> = {
  type: MINIDUMP_STREAM.UnloadedModuleList,
  read: (input, entry, held) => readUnloadedModules(input, entry, held),
  store(dump, modules) {
    dump.unloadedModules = modules;
  },
};
