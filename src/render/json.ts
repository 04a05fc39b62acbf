/** `walk --format json`: the schema fixed in DESIGN.md "Contract". */
import { formatAddress, type Machine } from "../model/machine.js";
import type { Module } from "../model/snapshot.js";
import type { Frame } from "../walk/frame.js";
import type { ThreadWalk } from "../walk/walk.js";
import { locate } from "./location.js";

const offset = (v: bigint): string => "0x" + v.toString(16);

/** One frame as a JSON value. */
export function frameJson(machine: Machine, modules: readonly Module[], frame: Frame): Record<string, unknown> {
  const a = (v: bigint): string => formatAddress(machine, v);
  const loc = locate(modules, frame);
  const registers: Record<string, string> = {};
  for (const [k, v] of Object.entries(frame.registers)) registers[k] = a(v);
  return {
    index: frame.index,
    addrPC: a(frame.addrPC),
    addrReturn: a(frame.addrReturn),
    addrFrame: a(frame.addrFrame),
    addrStack: a(frame.addrStack),
    addrBStore: a(frame.addrBStore),
    params: frame.params.map(a),
    far: frame.far,
    virtual: frame.virtual,
    funcTableEntry:
      frame.funcTableEntry === undefined
        ? null
        : { kind: frame.funcTableEntry.kind, beginRva: offset(frame.funcTableEntry.beginRva), endRva: offset(frame.funcTableEntry.endRva) },
    trust: frame.trust,
    rule: frame.rule,
    registers,
    module: loc.module?.name ?? null,
    moduleOffset: loc.moduleOffset === undefined ? null : offset(loc.moduleOffset),
    function: loc.function ?? null,
    functionOffset: loc.functionOffset === undefined ? null : offset(loc.functionOffset),
  };
}

/**
 * The whole walk document. `notes` (a minidump's: what the reader passed over or repaired, each
 * naming the file offset) adds a `notes` array.
 */
export function walkJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], notes?: readonly string[]): Record<string, unknown> {
  return {
    machine,
    ...(notes === undefined ? {} : { notes: [...notes] }),
    threads: walks.map(({ thread, walk }) => {
      const stop: Record<string, unknown> = { reason: walk.stop.reason };
      if (walk.stop.address !== undefined) stop["address"] = formatAddress(machine, walk.stop.address);
      stop["detail"] = walk.stop.detail;
      return { id: thread.id, crashed: thread.crashed, frames: walk.frames.map((f) => frameJson(machine, modules, f)), stop };
    }),
  };
}

/** The walk document as text (two-space indented, newline-terminated). */
export function renderJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], notes?: readonly string[]): string {
  return JSON.stringify(walkJson(machine, modules, walks, notes), null, 2) + "\n";
}
