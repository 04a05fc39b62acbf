/**
 * What SymFunctionTableAccess64 returns for x86 in native dbghelp: a pointer to the FPO_DATA that
 * covers an address (stackwalk64.md §2.7, §3), here an opaque non-zero handle per record, which
 * {@link x86FunctionTableEntry} turns back into the record. FrameData records are handed out the
 * same way when a module has no FPO_DATA for the address. A handle encodes where its record is —
 * the module's index in the snapshot, the record's index in its table, and which table — so it is
 * the same for a record every time, and no table of handles is kept.
 */
import type { FrameData } from "../../formats/frame-data.js";
import type { FpoData } from "../../model/fpo-data.js";
import { moduleAt, type Snapshot } from "../../model/snapshot.js";
import { findFpo, x86Tables } from "./tables.js";

/** A record behind a function-table handle. */
export type X86FunctionTableEntry = { kind: "fpo"; moduleBase: bigint; record: FpoData } | { kind: "frame-data"; moduleBase: bigint; record: FrameData };

/**
 * Handles: HANDLE_BASE + module index · MODULE_STRIDE + record index · 16 (sizeof(FPO_DATA), like
 * a pointer into a table), + 8 for a FrameData record.
 */
const HANDLE_BASE = 0x1000_0000n;
const MODULE_STRIDE = 0x100_0000n;
const RECORD_STRIDE = 16n;
const FRAME_DATA_BIT = 8n;

/** The handle of the FPO_DATA (else FrameData) record covering `address`, or 0 (NULL) when there is none. */
export function x86FunctionTableAccess(target: Snapshot, address: bigint): bigint {
  const module = moduleAt(target.modules, address);
  if (module === undefined) return 0n;
  const tables = x86Tables(module, target.memory);
  if (tables === undefined) return 0n;
  const rva = Number(address - module.base);
  const at = HANDLE_BASE + BigInt(target.modules.indexOf(module)) * MODULE_STRIDE;
  const fpo = findFpo(tables.fpo, rva);
  if (fpo !== undefined) return at + BigInt(tables.fpo.indexOf(fpo)) * RECORD_STRIDE;
  const fd = tables.frameDataIndex.innermost(rva);
  return fd === undefined ? 0n : at + BigInt(tables.frameData.indexOf(fd)) * RECORD_STRIDE + FRAME_DATA_BIT;
}

/** The record behind a handle from {@link x86FunctionTableAccess} for the same snapshot. */
export function x86FunctionTableEntry(target: Snapshot, handle: bigint): X86FunctionTableEntry | undefined {
  if (handle < HANDLE_BASE) return undefined;
  const offset = handle - HANDLE_BASE;
  const module = target.modules[Number(offset / MODULE_STRIDE)];
  const within = offset % MODULE_STRIDE;
  const tables = module === undefined ? undefined : x86Tables(module, target.memory);
  if (module === undefined || tables === undefined) return undefined;
  const index = Number(within / RECORD_STRIDE);
  if (within % RECORD_STRIDE === FRAME_DATA_BIT) {
    const record = tables.frameData[index];
    return record === undefined ? undefined : { kind: "frame-data", moduleBase: module.base, record };
  }
  const record = within % RECORD_STRIDE === 0n ? tables.fpo[index] : undefined;
  return record === undefined ? undefined : { kind: "fpo", moduleBase: module.base, record };
}
