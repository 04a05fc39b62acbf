/** Small helpers to turn label-built stacks into snapshots for tests. */
import { RegionMemory, type MemoryRegion } from "../../src/memory/region-memory.js";
import type { Machine } from "../../src/model/machine.js";
import type { Module, Registers, TruthFrame } from "../../src/model/snapshot.js";
import type { Vector } from "../../src/formats/vector.js";
import type { BuiltStack } from "./stack-builder.js";

/** A one-thread snapshot over the given stacks/regions. */
export function snapshotOf(
  machine: Machine,
  registers: Registers,
  regions: readonly (BuiltStack | MemoryRegion)[],
  modules: Module[] = [],
  truth?: TruthFrame[],
): Vector {
  const memory = new RegionMemory(regions.map((r) => ({ base: r.base, bytes: r.bytes })));
  const thread: Vector["threads"][number] = { id: 0, crashed: true, registers };
  if (truth !== undefined) thread.truth = truth;
  return { machine, threads: [thread], memory, modules };
}

/** A module with functions laid out back to back from rva 0x1000, each `size` bytes. */
export function moduleWith(name: string, base: bigint, functions: readonly string[], size = 0x40n): Module {
  return {
    name,
    base,
    size: 0x1000n + size * BigInt(functions.length) + 0x1000n,
    symbols: functions.map((f, i) => ({ name: f, rva: 0x1000n + size * BigInt(i), size })),
  };
}

/** The address `offset` bytes into function `name` of `module`. */
export function codeAddress(module: Module, name: string, offset: number | bigint): bigint {
  const sym = module.symbols.find((s) => s.name === name);
  if (sym === undefined) throw new Error(`no function ${name} in ${module.name}`);
  return module.base + sym.rva + BigInt(offset);
}
