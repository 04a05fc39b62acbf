/**
 * The UnloadedModuleList stream (type 14): MINIDUMP_UNLOADED_MODULE_LIST, a header (SizeOfHeader,
 * SizeOfEntry, NumberOfEntries) and 24-byte MINIDUMP_UNLOADED_MODULE entries (BaseOfImage u64,
 * SizeOfImage, CheckSum, TimeDateStamp, ModuleNameRva). Entries are read with the entry size
 * the header gives (at least 24 bytes); an entry with no bytes or past the end of the address
 * space, or whose name cannot be read, is passed over with a note.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import { MINIDUMP_LIMITS, MINIDUMP_STREAM } from "./constants.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation, MinidumpStreamEntry } from "./types.js";

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
/** sizeof(MINIDUMP_UNLOADED_MODULE_LIST). */
const LIST_HEADER_SIZE = 12;

function readUnloadedModules(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpUnloadedModule[] {
  if (held.dataSize < LIST_HEADER_SIZE) {
    throw new InputError("truncated", `UnloadedModuleList stream holds ${held.dataSize} bytes, fewer than its ${LIST_HEADER_SIZE}-byte header`, { offset: s.offset + 4 });
  }
  const h = input.cursor(held.rva, LIST_HEADER_SIZE, "UnloadedModuleList header");
  const headerSize = h.u32();
  const entrySize = h.u32();
  const declared = h.u32();
  if (headerSize < LIST_HEADER_SIZE || headerSize > held.dataSize) {
    throw new InputError("bad-value", `UnloadedModuleList SizeOfHeader ${headerSize} is not between ${LIST_HEADER_SIZE} and the stream's ${held.dataSize} bytes`, { offset: held.rva });
  }
  if (entrySize < UNLOADED_MODULE_SIZE) {
    throw new InputError("bad-value", `UnloadedModuleList SizeOfEntry ${entrySize} is less than the ${UNLOADED_MODULE_SIZE} bytes of an entry`, { offset: held.rva + 4 });
  }
  const fit = Math.floor((held.dataSize - headerSize) / entrySize);
  const inStream = Math.min(declared, fit);
  if (inStream < declared) input.note(held.rva + 8, `UnloadedModuleList NumberOfEntries ${declared} needs ${declared * entrySize} bytes after the header but the stream holds ${held.dataSize - headerSize}: the first ${inStream} are read`);
  const count = Math.min(inStream, MINIDUMP_LIMITS.maxModules);
  if (count < inStream) input.note(held.rva + 8, `UnloadedModuleList: ${inStream} entries; the first ${count} are read (the limit of modules read from one dump), the rest passed over`);
  const modules: MinidumpUnloadedModule[] = [];
  for (let i = 0; i < count; i++) {
    const at = held.rva + headerSize + i * entrySize;
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
    modules.push({ base, size, checksum, timeDateStamp, path, name: path.slice(Math.max(path.lastIndexOf("\\"), path.lastIndexOf("/")) + 1) });
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
