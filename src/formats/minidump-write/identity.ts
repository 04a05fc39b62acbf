/**
 * What the dump writer records of a module's identity (minidump.md §2.3, §8): its CodeView record,
 * which names its PDB and forms its symbol-store id, its TimeDateStamp and its code id.
 */
import type { MemoryReader } from "../../memory/reader.js";
import type { Module } from "../../model/snapshot.js";
import { CV_NB10, CV_RSDS } from "../minidump/code-view.js";
import { readMappedImage } from "../pe-mapped.js";
import { peCodeId } from "../pe.js";

/** A module's CodeView identity: what names its PDB and forms its symbol-store id (minidump.md §2.3, §8). */
export interface CodeViewIdentity {
  format: "RSDS" | "NB10";
  /** The PDB as the record names it (possibly a full path). */
  pdbName: string;
  /** RSDS: the GUID as 32 upper-case hex digits in display order; NB10: the signature as 8 hex digits. */
  guid: string;
  age: number;
  /** `guid` followed by the age in lower-case hex: the symbol-store identifier. */
  debugId: string;
}


/**
 * The CodeView identity of a module: from its `debugFile` and `debugId` when both are set (a
 * 32-digit GUID plus age is RSDS, an 8-digit signature plus age is NB10), otherwise from the RSDS
 * record of its image mapped in `memory` (pe-mapped.ts). Undefined when neither gives one.
 */
export function moduleCodeView(module: Module, memory: MemoryReader): CodeViewIdentity | undefined {
  if (module.debugFile !== undefined && module.debugId !== undefined) {
    // The id as readers form it from the record written (upper-case GUID, lower-case age without
    // leading zeros), so that the .sym path and the dump agree.
    const id = module.debugId;
    const identity = (format: "RSDS" | "NB10", m: RegExpExecArray): CodeViewIdentity => {
      const guid = m[1]!.toUpperCase();
      const age = parseInt(m[2]!, 16);
      return { format, pdbName: module.debugFile!, guid, age, debugId: guid + age.toString(16) };
    };
    const rsds = /^([0-9A-Fa-f]{32})([0-9A-Fa-f]{1,8})$/.exec(id);
    if (rsds !== null) return identity("RSDS", rsds);
    const nb10 = /^([0-9A-Fa-f]{8})([0-9A-Fa-f]{1,8})$/.exec(id);
    if (nb10 !== null) return identity("NB10", nb10);
  }
  const cv = readMappedImage(memory, module.base)?.codeView;
  if (cv === undefined) return undefined;
  return { format: "RSDS", pdbName: cv.pdbName, guid: cv.guid, age: cv.age, debugId: cv.debugId };
}

/** The CodeView record's bytes: RSDS (GUID, age, UTF-8 path, NUL) or NB10 (offset 0, signature, age, path, NUL). */
export function encodeCodeView(cv: CodeViewIdentity): Uint8Array {
  const name = new TextEncoder().encode(cv.pdbName);
  if (cv.format === "RSDS") {
    const out = new Uint8Array(24 + name.length + 1);
    const v = new DataView(out.buffer);
    v.setUint32(0, CV_RSDS, true);
    v.setUint32(4, parseInt(cv.guid.slice(0, 8), 16), true);
    v.setUint16(8, parseInt(cv.guid.slice(8, 12), 16), true);
    v.setUint16(10, parseInt(cv.guid.slice(12, 16), 16), true);
    for (let i = 0; i < 8; i++) out[12 + i] = parseInt(cv.guid.slice(16 + 2 * i, 18 + 2 * i), 16);
    v.setUint32(20, cv.age >>> 0, true);
    out.set(name, 24);
    return out;
  }
  const out = new Uint8Array(16 + name.length + 1);
  const v = new DataView(out.buffer);
  v.setUint32(0, CV_NB10, true);
  v.setUint32(8, parseInt(cv.guid, 16), true);
  v.setUint32(12, cv.age >>> 0, true);
  out.set(name, 16);
  return out;
}

/** TimeDateStamp of a module: the first 8 hex digits of its code id, else its mapped image's file header, else 0. */
export function moduleTimeDateStamp(module: Module, memory: MemoryReader): number {
  if (module.codeId !== undefined && /^[0-9A-Fa-f]{8}/.test(module.codeId)) return parseInt(module.codeId.slice(0, 8), 16);
  const dos = memory.read(module.base, 0x40);
  if (dos === undefined || dos[0] !== 0x4d || dos[1] !== 0x5a) return 0;
  const lfanew = (dos[0x3c]! | (dos[0x3d]! << 8) | (dos[0x3e]! << 16) | (dos[0x3f]! << 24)) >>> 0;
  if (lfanew > 0x10000) return 0;
  const nt = memory.read(module.base + BigInt(lfanew), 12);
  if (nt === undefined || nt[0] !== 0x50 || nt[1] !== 0x45 || nt[2] !== 0 || nt[3] !== 0) return 0;
  return (nt[8]! | (nt[9]! << 8) | (nt[10]! << 16) | (nt[11]! << 24)) >>> 0;
}

/** Breakpad's code id of a module (`%08X` TimeDateStamp, `%x` SizeOfImage): its own, or worked out as the dump writer does. */
export function moduleCodeId(module: Module, memory: MemoryReader): string {
  return module.codeId ?? peCodeId(moduleTimeDateStamp(module, memory), module.size);
}
