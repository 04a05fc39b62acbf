/**
 * The ModuleList stream (type 4, minidump.md §2.3): every loaded image's base, size, path,
 * version resource and debug identity (code-view.ts).
 */
import { hex } from "../../hex.js";
import { peCodeId, type CodeViewInfo } from "../pe.js";
import { moduleIdentity, elfDebugId } from "./code-view.js";
import { MINIDUMP_LIMITS, MINIDUMP_STREAM, VS_FFI_SIGNATURE } from "./constants.js";
import { listEntries, type MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation, MinidumpStreamEntry } from "./types.js";
import type { ByteCursor } from "../../memory/cursor.js";
import { fileNameOf } from "../../path-name.js";

/** VS_FIXEDFILEINFO, the fields Breakpad prints. */
export interface MinidumpVersionInfo {
  signature: number;
  structVersion: number;
  fileVersionHi: number;
  fileVersionLo: number;
  productVersionHi: number;
  productVersionLo: number;
  fileFlagsMask: number;
  fileFlags: number;
  fileOs: number;
  fileType: number;
  fileSubtype: number;
  fileDateHi: number;
  fileDateLo: number;
}

/** One MINIDUMP_MODULE. */
export interface MinidumpModule {
  base: bigint;
  size: number;
  checksum: number;
  timeDateStamp: number;
  /** The module name as stored: usually the full path of the image. */
  path: string;
  /** The file-name part of `path`. */
  name: string;
  versionInfo: MinidumpVersionInfo;
  /** `a.b.c.d` from the file version, when the version resource is valid (minidump.md §2.3). */
  version?: string;
  cvRecord: MinidumpLocation;
  miscRecord: MinidumpLocation;
  /** The CodeView record, when it is an acceptable RSDS or NB10 record. */
  codeView?: CodeViewInfo;
  /** The ELF build id, when the CodeView record is Breakpad's `BpEL` record. */
  buildId?: Uint8Array;
  /**
   * The debug file: the PDB as an RSDS or NB10 record names it, the code file (`path`) of an ELF
   * module, else what an IMAGE_DEBUG_MISC record names; undefined when nothing names one.
   */
  debugFile?: string;
  /** Symbol-store identifier (minidump.md §8); for an ELF module its build id as a GUID, age 0. */
  debugId?: string;
  /** `%08X` TimeDateStamp followed by `%x` SizeOfImage; for an ELF module the build id in lower-case hex. */
  codeId: string;
  /** File offset of the module's entry. */
  offset: number;
}

/** sizeof(MINIDUMP_MODULE) on disk. */
export const MODULE_SIZE = 108;

/**
 * A module name as notes show it: at most 80 characters, and quoted as JSON when it holds
 * control characters (a damaged name never breaks a note's line).
 */
function shownName(name: string): string {
  if (name === "") return "no name";
  const clipped = name.length > 80 ? `${name.slice(0, 80)}…` : name;
  return /[\u0000-\u001f\u007f]/.test(clipped) ? JSON.stringify(clipped) : clipped;
}

function readVersionInfo(c: ByteCursor): MinidumpVersionInfo {
  return {
    signature: c.u32(),
    structVersion: c.u32(),
    fileVersionHi: c.u32(),
    fileVersionLo: c.u32(),
    productVersionHi: c.u32(),
    productVersionLo: c.u32(),
    fileFlagsMask: c.u32(),
    fileFlags: c.u32(),
    fileOs: c.u32(),
    fileType: c.u32(),
    fileSubtype: c.u32(),
    fileDateHi: c.u32(),
    fileDateLo: c.u32(),
  };
}

/**
 * The module list (minidump.md §2.3). Modules whose entries the file holds are read; one with no
 * bytes or a range past the end of the address space is passed over, an unreadable name is
 * left empty, and a rejected debug record leaves the module without debug information (as
 * Breakpad leaves it); each with a note. At most {@link MINIDUMP_LIMITS}' `maxModules` entries are
 * read.
 */
function readModules(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpModule[] {
  const listed = listEntries(input, s, held, MODULE_SIZE);
  const { first } = listed;
  if (listed.count === 0) return [];
  const count = Math.min(listed.count, MINIDUMP_LIMITS.maxModules);
  if (count < listed.count) {
    input.note(s.location.rva, `ModuleList: ${listed.count} entries; the first ${count} are read (the limit of modules read from one dump), the rest passed over`);
  }
  const c = input.cursor(first, count * MODULE_SIZE, "ModuleList entries");
  const modules: MinidumpModule[] = [];
  // File-name parts by path: the entries of a damaged list may all name one long string.
  const names = new Map<string, string>();
  const shown = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const offset = c.offset;
    const what = `module ${i}`;
    const base = c.u64();
    const size = c.u32();
    const checksum = c.u32();
    const timeDateStamp = c.u32();
    const nameRva = c.u32();
    const versionInfo = readVersionInfo(c);
    const cvAt = c.offset;
    const cvRecord: MinidumpLocation = { dataSize: c.u32(), rva: c.u32() };
    const miscRecord: MinidumpLocation = { dataSize: c.u32(), rva: c.u32() };
    c.skip(16); // Reserved0, Reserved1
    if (size === 0 || base + BigInt(size) > 1n << 64n) {
      input.note(offset + 8, `${what}: ${hex(size)} bytes at ${hex(base)} ${size === 0 ? "cover nothing" : "run past the end of the 64-bit address space"}; the module is passed over`);
      continue;
    }
    const path = input.optionalString(nameRva, offset + 20, `${what} ModuleNameRva`, `${what} name`) ?? "";
    const module: MinidumpModule = {
      base,
      size,
      checksum,
      timeDateStamp,
      path,
      name: names.get(path) ?? names.set(path, fileNameOf(path)).get(path)!,
      versionInfo,
      cvRecord,
      miscRecord,
      codeId: peCodeId(timeDateStamp, size),
      offset,
    };
    if (versionInfo.signature === VS_FFI_SIGNATURE && (versionInfo.structVersion & 0x10000) !== 0) {
      const { fileVersionHi: hi, fileVersionLo: lo } = versionInfo;
      module.version = `${hi >>> 16}.${hi & 0xffff}.${lo >>> 16}.${lo & 0xffff}`;
    }
    const label = `${what} (${shown.get(module.name) ?? shown.set(module.name, shownName(module.name)).get(module.name)!})`;
    const identity = moduleIdentity(input, cvRecord, miscRecord, cvAt, label);
    if (typeof identity === "string") input.note(undefined, `${identity}; the module has no debug file or identifier`);
    else {
      if (identity.codeView !== undefined) {
        module.codeView = identity.codeView;
        module.debugId = identity.codeView.debugId;
      }
      if (identity.buildId !== undefined) {
        // An ELF module: the debug file is the code file, the code id the whole build id.
        module.buildId = identity.buildId;
        module.debugFile = path;
        module.debugId = elfDebugId(identity.buildId);
        module.codeId = Array.from(identity.buildId, (b) => b.toString(16).padStart(2, "0")).join("");
      }
      if (identity.debugFile !== undefined && module.debugFile === undefined) module.debugFile = identity.debugFile;
    }
    modules.push(module);
  }
  return modules;
}

/** The ModuleList stream's reader. */
export const moduleListStream: MinidumpStream<MinidumpModule[]> = {
  type: MINIDUMP_STREAM.ModuleList,
  read: (input, entry, held) => readModules(input, entry, held),
  store(dump, modules) {
    dump.modules = modules;
  },
};
