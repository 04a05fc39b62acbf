/**
 * Small assembled programs run through the emulator's run loop, for tests: code at
 * 0x00401000 (read + execute), a read/write data page at 0x00500000, the default stack with
 * the sentinel, and one module whose symbols are the labels the test names as functions.
 */
import { loadAssembler } from "../../emulator/assemble.js";
import type { CpuMode } from "../../emulator/cpu-mode.js";
import { loadDisassembler } from "../../emulator/disassemble.js";
import { DEFAULT_STACKS, emulate, mapStack, type EmulationSetup, type RunOptions, type RunResult } from "../../emulator/run.js";
import { UC_PROT, Unicorn } from "../../emulator/unicorn.js";
import type { Module } from "../../src/model/snapshot.js";

/** Where the code goes. */
export const CODE = 0x0040_1000n;
/** A read/write page for data. */
export const DATA = 0x0050_0000n;
/** The module that holds the code. */
export const MODULE_BASE = 0x0040_0000n;

/** A finished run of an assembled program. */
export interface AssembledRun {
  result: RunResult;
  /** The address of a label. */
  at(label: string): bigint;
  /** The stack pointer at the first instruction (it points at the sentinel). */
  sp0: bigint;
}

/** Options: which labels are functions (symbols), and the run's options. */
export interface AssembledOptions extends RunOptions {
  functions?: readonly string[];
  /** Called with the engine after everything is mapped and before the run (extra hooks). */
  prepare?: (uc: Unicorn) => void;
}

/** Assembles `lines` at {@link CODE} and runs them from the first line until the return to the sentinel. */
export async function runAssembled(mode: CpuMode, lines: readonly string[], options: AssembledOptions = {}): Promise<AssembledRun> {
  const asm = await loadAssembler();
  const disassembler = await loadDisassembler();
  const program = asm.assembleProgram(lines.join("\n"), { mode, address: CODE });
  const at = (label: string): bigint => {
    const address = program.labels.get(label);
    if (address === undefined) throw new Error(`no label ${label}`);
    return address;
  };
  const module: Module = {
    name: "test.exe",
    base: MODULE_BASE,
    size: 0x2000n,
    symbols: (options.functions ?? []).map((name) => ({ name, rva: at(name) - MODULE_BASE })).sort((a, b) => (a.rva < b.rva ? -1 : 1)),
  };
  const uc = Unicorn.open(mode);
  try {
    uc.memMap(CODE, 0x1000, UC_PROT.READ | UC_PROT.EXEC);
    uc.memWrite(CODE, program.bytes);
    uc.memMap(DATA, 0x1000, UC_PROT.READ | UC_PROT.WRITE);
    const stack = DEFAULT_STACKS[mode];
    mapStack(uc, stack);
    options.prepare?.(uc);
    const setup: EmulationSetup = {
      uc,
      entry: CODE,
      modules: [module],
      regions: [
        { base: CODE, size: 0x1000n, name: "code" },
        { base: DATA, size: 0x1000n, name: "data" },
        { base: stack.base, size: stack.size, name: "stack" },
      ],
      stack,
      labels: program.labels,
    };
    const result = emulate(setup, options, (b, a, m) => disassembler.describe(b, a, m));
    return { result, at, sp0: stack.initialSp };
  } finally {
    uc.close();
  }
}
