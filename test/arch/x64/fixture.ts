/**
 * Small PE32+ images and stacks for the x64 unwinder's tests. An image is built as the loader
 * maps it (headers at RVA 0, code, UNWIND_INFOs from RVA 0x8000, the RUNTIME_FUNCTION table at
 * 0xC000 named by the exception directory), so the walker reads it from snapshot memory exactly
 * as it reads an emulated program. RVA 0x1000 holds a caller without unwind data made of
 * `call rel32` instructions: {@link ra}(k) is the return address after the k-th, a value the
 * walker accepts as a return address.
 */
import { RegionMemory } from "../../../src/memory/region-memory.js";
import type { Module, Registers, Snapshot } from "../../../src/model/snapshot.js";
import type { FrameSite } from "../../../src/unwind/step.js";
import type { UnwindResult } from "../../../src/arch/step.js";
import { UnwindCache } from "../../../src/unwind/cache.js";
import { runRule } from "../../support/rules.js";
import { x64UnwindInfo } from "../../../src/arch/x64/unwind.js";
import type { BuiltStack } from "../../support/stack-builder.js";
import { lookupAddress } from "../../../src/unwind/lookup-address.js";
import { writePeHeaders } from "../../support/pe-headers.js";

export const BASE = 0x1_4000_0000n;
export const IMAGE_SIZE = 0x1_0000;
export const STACK_BASE = 0x0010_0000n;
const XDATA = 0x8000;
const PDATA = 0xc000;
const CALLS = 64;

/** The return address after the k-th call of the caller at RVA 0x1000. */
export const ra = (k: number): bigint => BASE + BigInt(0x1005 + 5 * k);

/** Values the caller had in every register (what a correct unwind restores). */
export const CALLER: Readonly<Record<string, bigint>> = Object.fromEntries(
  ["rax", "rcx", "rdx", "rbx", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"].map((r, i) => [r, 0xca11_0000_0000_0000n + BigInt(i)]),
);
/** Values the callee left in the registers (it saved and then changed them). */
export const CLOBBERED: Readonly<Record<string, bigint>> = Object.fromEntries(Object.keys(CALLER).map((r, i) => [r, 0x0bad_0000_0000_0000n + BigInt(i)]));

/** A PE32+ image under construction. */
export class ImageBuilder {
  readonly bytes = new Uint8Array(IMAGE_SIZE);
  private readonly view = new DataView(this.bytes.buffer);
  private xdata = XDATA;
  private readonly entries: [number, number, number][] = [];

  constructor() {
    const b = this.bytes;
    writePeHeaders(b, 0x8664, IMAGE_SIZE, "pe32+");
    for (let k = 0; k < CALLS; k++) b[0x1000 + 5 * k] = 0xe8;
  }

  /** Code (or any bytes) at an RVA. */
  at(rva: number, bytes: readonly number[] | Uint8Array): this {
    this.bytes.set(bytes, rva);
    return this;
  }

  /** Stores an UNWIND_INFO and returns its RVA. */
  info(bytes: readonly number[] | Uint8Array): number {
    const rva = this.xdata;
    this.bytes.set(bytes, rva);
    this.xdata = (rva + bytes.length + 3) & ~3;
    return rva;
  }

  /** A RUNTIME_FUNCTION: [begin, end) with its UNWIND_INFO bytes (stored), or a raw UnwindData. */
  fn(begin: number, end: number, unwind: readonly number[] | Uint8Array | number): this {
    this.entries.push([begin, end, typeof unwind === "number" ? unwind : this.info(unwind)]);
    return this;
  }

  /** Writes the table (sorted by BeginAddress unless `order` is "as-given") and the exception directory; returns the image bytes. */
  build(order: "sorted" | "as-given" = "sorted"): Uint8Array {
    const entries = order === "sorted" ? [...this.entries].sort((a, b) => a[0] - b[0]) : this.entries;
    entries.forEach(([b, e, u], i) => {
      this.view.setUint32(PDATA + 12 * i, b, true);
      this.view.setUint32(PDATA + 12 * i + 4, e, true);
      this.view.setUint32(PDATA + 12 * i + 8, u, true);
    });
    const dir = 0x58 + 112 + 3 * 8;
    this.view.setUint32(dir, entries.length === 0 ? 0 : PDATA, true);
    this.view.setUint32(dir + 4, 12 * entries.length, true);
    return this.bytes;
  }

  /** Where the table's entry i is (for tests that corrupt it). */
  static entryRva(i: number): number {
    return PDATA + 12 * i;
  }
}

/** The module of an image built by {@link ImageBuilder}. */
export const MODULE: Module = { name: "t.exe", base: BASE, size: BigInt(IMAGE_SIZE), symbols: [] };

/** A one-thread x64 snapshot of an image and a stack; each call gets a fresh module object (tables are cached per module). */
export function snapshot64(image: Uint8Array, stack: BuiltStack, registers: Registers): Snapshot {
  return {
    machine: "x64",
    threads: [{ id: 0, crashed: true, registers }],
    memory: new RegionMemory([{ base: BASE, bytes: image }, { base: stack.base, bytes: stack.bytes }]),
    modules: [{ ...MODULE }],
  };
}

/** The callee's registers: every register clobbered, then `set` (rip, rsp, ...). */
export function calleeRegisters(set: Registers): Registers {
  return { ...CLOBBERED, ...set };
}

/**
 * One unwind by the `unwind-info` strategy, as the walk would do it: frame `index` (0 = the
 * context frame: the PC as it is; otherwise a PC that is a return address, looked up at PC − 1).
 */
export function unwindStep(snap: Snapshot, registers: Registers, options: { index?: number; calleeParams?: number; interrupted?: boolean } = {}): UnwindResult | undefined {
  const index = options.index ?? 0;
  const interrupted = options.interrupted ?? false;
  const pc = registers["rip"]!;
  const site: FrameSite = {
    machine: "x64",
    index,
    interrupted,
    registers,
    pc,
    lookupPc: lookupAddress(pc, index > 0 && !interrupted),
    modules: snap.modules,
    images: snap.memory,
    calleeParams: options.calleeParams ?? 0,
    cache: new UnwindCache(),
  };
  const rule = x64UnwindInfo.ruleFor(site);
  return rule === undefined ? undefined : runRule(rule, registers, snap.memory);
}

/** The recovered registers of a successful step, by name (fails the test otherwise). */
export function recoveredOf(result: UnwindResult | undefined): Record<string, bigint> {
  if (result === undefined) throw new Error("the strategy has no rule for this frame");
  if (!result.ok) throw new Error(`the unwind stopped: ${result.stop.reason}: ${result.stop.detail}`);
  const names = result.recovered ?? Object.keys(result.registers);
  return Object.fromEntries(names.map((n) => [n, result.registers[n]!]));
}
