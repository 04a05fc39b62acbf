/**
 * What SymFunctionTableAccess64 returns for x86 in native dbghelp: a pointer to the FPO_DATA
 * that covers an address (stackwalk64.md §2.7, §3), here an opaque non-zero handle per record,
 * which {@link x86FunctionTableEntry} turns back into the record. FrameData records are handed
 * out the same way when a module has no FPO_DATA for the address. Handles are per snapshot and
 * stable for its lifetime.
 */
import type { FrameData } from "../../formats/frame-data.js";
import type { FpoData } from "../../model/fpo-data.js";
import { moduleAt, type Snapshot } from "../../model/snapshot.js";
import { findFpo, findFrameData, x86Tables } from "./tables.js";

/** A record behind a function-table handle. */
export type X86FunctionTableEntry = { kind: "fpo"; moduleBase: bigint; record: FpoData } | { kind: "frame-data"; moduleBase: bigint; record: FrameData };

interface Registry {
  byHandle: Map<bigint, X86FunctionTableEntry>;
  byRecord: Map<FpoData | FrameData, bigint>;
}

/** Handles count up from here in steps of 16 (sizeof(FPO_DATA)), like pointers into a table. */
const HANDLE_BASE = 0x7ff0_0000n;

const registries = new WeakMap<Snapshot, Registry>();

function registryOf(target: Snapshot): Registry {
  let r = registries.get(target);
  if (r === undefined) {
    r = { byHandle: new Map(), byRecord: new Map() };
    registries.set(target, r);
  }
  return r;
}

/** The handle of the FPO_DATA (else FrameData) record covering `address`, or 0 (NULL) when there is none. */
export function x86FunctionTableAccess(target: Snapshot, address: bigint): bigint {
  const module = moduleAt(target.modules, address);
  if (module === undefined) return 0n;
  const tables = x86Tables(module, target.memory);
  if (tables === undefined) return 0n;
  const rva = Number(address - module.base);
  const fpo = findFpo(tables.fpo, rva);
  const entry: X86FunctionTableEntry | undefined = fpo !== undefined
    ? { kind: "fpo", moduleBase: module.base, record: fpo }
    : (() => {
        const fd = findFrameData(tables.frameData, rva);
        return fd === undefined ? undefined : { kind: "frame-data" as const, moduleBase: module.base, record: fd };
      })();
  if (entry === undefined) return 0n;
  const registry = registryOf(target);
  let handle = registry.byRecord.get(entry.record);
  if (handle === undefined) {
    handle = HANDLE_BASE + BigInt(registry.byHandle.size * 16);
    registry.byRecord.set(entry.record, handle);
    registry.byHandle.set(handle, entry);
  }
  return handle;
}

/** The record behind a handle from {@link x86FunctionTableAccess} for the same snapshot. */
export function x86FunctionTableEntry(target: Snapshot, handle: bigint): X86FunctionTableEntry | undefined {
  return registries.get(target)?.byHandle.get(handle);
}
