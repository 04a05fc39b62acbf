/**
 * Small ARM (ARMNT, Thumb-2) PE32 images, and a forward model of the prolog and epilog
 * instructions Microsoft's "ARM exception handling" lists (push, vpush, sub sp, mov/add r11, add
 * sp, vpop, pop, ldr pc, bx lr), for the ARM unwinder's tests. The expected registers of every
 * test come from running those instructions forward on a stack, never from the unwinder: the
 * caller's registers before the call are what an unwind at any point of the prolog, body or
 * epilog must give back.
 *
 * The instruction model is the emulator's (emulator/arm/thumb-model.ts). An image is laid out as the loader maps it: headers at RVA 0 (machine 0x1C4), a caller made of
 * Thumb `bl` instructions at RVA 0x1000 ({@link ra}(k) is the return address after the k-th, with
 * the Thumb bit), function code from 0x2000, `.xdata` from 0x8000, the `.pdata` table at 0xC000.
 */
import { RegionMemory } from "../../../src/memory/region-memory.js";
import type { Module, Registers, Snapshot } from "../../../src/model/snapshot.js";
import type { FrameSite } from "../../../src/unwind/step.js";
import type { ExecContext, UnwindResult } from "../../../src/arch/step.js";
import { UnwindCache } from "../../../src/unwind/cache.js";
import { lookupAddress } from "../../../src/unwind/lookup-address.js";
import { armUnwind } from "../../../src/arch/arm/unwind.js";
import { runRule } from "../../support/rules.js";
import { bytesOf, ThumbMachine, type Insn } from "../../../emulator/arm/thumb-model.js";
import { writePeHeaders } from "../../support/pe-headers.js";

export const BASE = 0x0040_0000n;
export const IMAGE_SIZE = 0x1_0000;
export const STACK_TOP = 0x0010_8000n;
const XDATA = 0x8000;
const PDATA = 0xc000;
const CALLS = 64;

/** The return address after the k-th `bl` of the caller at RVA 0x1000, Thumb bit set. */
export const ra = (k: number): bigint => BASE + BigInt(0x1004 + 4 * k) + 1n;

/** The registers a callee must give back: r4-r11, lr (as the return address), d8-d15. */
export const SAVED = ["r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", ...Array.from({ length: 8 }, (_, i) => `d${i + 8}`)];
/** Values the caller had in them. */
export const CALLER: Readonly<Record<string, bigint>> = Object.fromEntries(SAVED.map((r, i) => [r, r.startsWith("d") ? 0xca11_0000_0000_0000n + BigInt(i) : 0xca11_0000n + BigInt(i)]));
/** Values a callee leaves in a register once it has saved it. */
export const CLOBBERED: Readonly<Record<string, bigint>> = Object.fromEntries([...SAVED, "lr", "r0", "r1", "r2", "r3", "r12"].map((r, i) => [r, r.startsWith("d") ? 0x0bad_0000_0000_0000n + BigInt(i) : 0x0bad_0000n + BigInt(i)]));

export { bytesOf, type Insn } from "../../../emulator/arm/thumb-model.js";

/** The model's machine with this file's clobbered values: a saved register is then changed, as a callee may. */
export class Machine extends ThumbMachine {
  constructor(regs: Record<string, bigint>) {
    super(regs, (name) => CLOBBERED[name]);
  }
}

/** An ARMNT PE32 image under construction. */
export class ImageBuilder {
  readonly bytes = new Uint8Array(IMAGE_SIZE);
  private readonly view = new DataView(this.bytes.buffer);
  private xdataAt = XDATA;
  private readonly entries: [number, number][] = [];

  constructor() {
    const b = this.bytes;
    const v = writePeHeaders(b, 0x01c4, IMAGE_SIZE, "pe32");
    // `bl .` (f7ff fffe), CALLS times: return addresses whose call instruction is there.
    for (let k = 0; k < CALLS; k++) {
      v.setUint16(0x1000 + 4 * k, 0xf7ff, true);
      v.setUint16(0x1002 + 4 * k, 0xfffe, true);
    }
  }

  /** Stores an `.xdata` record and returns its RVA. */
  info(bytes: Uint8Array | readonly number[]): number {
    const rva = this.xdataAt;
    this.bytes.set(bytes, rva);
    this.xdataAt = (rva + bytes.length + 3) & ~3;
    return rva;
  }

  /** A `.pdata` entry at `begin` (Thumb bit added): an `.xdata` record's bytes (stored), or a packed word. */
  fn(begin: number, unwind: Uint8Array | readonly number[] | number): this {
    this.entries.push([begin | 1, typeof unwind === "number" ? unwind : this.info(unwind)]);
    return this;
  }

  /** Raw bytes at an RVA. */
  at(rva: number, bytes: readonly number[]): this {
    this.bytes.set(bytes, rva);
    return this;
  }

  /** Writes the table and the exception directory; returns the image bytes. */
  build(): Uint8Array {
    const entries = [...this.entries].sort((a, b) => a[0] - b[0]);
    entries.forEach(([b, u], i) => {
      this.view.setUint32(PDATA + 8 * i, b, true);
      this.view.setUint32(PDATA + 8 * i + 4, u, true);
    });
    const dir = 0x58 + 96 + 3 * 8;
    this.view.setUint32(dir, entries.length === 0 ? 0 : PDATA, true);
    this.view.setUint32(dir + 4, 8 * entries.length, true);
    return this.bytes;
  }
}

/** The module of an image built by {@link ImageBuilder}. */
export const MODULE: Module = { name: "t.exe", base: BASE, size: BigInt(IMAGE_SIZE), symbols: [] };

/** The stack words of a machine as memory from `low` to {@link STACK_TOP}. */
export function stackBytes(m: Machine, low: bigint): { base: bigint; bytes: Uint8Array } {
  const bytes = new Uint8Array(Number(STACK_TOP - low));
  const view = new DataView(bytes.buffer);
  for (const [at, v] of m.words) if (at >= low && at < STACK_TOP) view.setUint32(Number(at - low), Number(v), true);
  return { base: low, bytes };
}

/** A one-thread ARM snapshot of an image and a machine's stack. */
export function snapshotArm(image: Uint8Array, m: Machine, registers: Registers = m.regs, os: Snapshot["os"] = undefined): Snapshot {
  const stack = stackBytes(m, STACK_TOP - 0x4000n);
  const snap: Snapshot = {
    machine: "arm",
    threads: [{ id: 0, crashed: true, registers }],
    memory: new RegionMemory([{ base: BASE, bytes: image }, stack]),
    modules: [{ ...MODULE }],
  };
  if (os !== undefined) snap.os = os;
  return snap;
}

/** The caller's registers at a call: sp, lr = the return address, every preserved register its own. */
export function callerAt(k: number, sp: bigint = STACK_TOP - 0x100n): Record<string, bigint> {
  return { ...CALLER, ...Object.fromEntries(["r0", "r1", "r2", "r3", "r12"].map((r) => [r, CLOBBERED[r]!])), sp, lr: ra(k), pc: 0n };
}

/**
 * One unwind by the ARM `unwind-info` strategy: frame `index` (0: the pc as it is; else a return
 * address, looked up at pc − 2); `known`: what a walk would know of the frame besides its registers.
 */
export function unwindOnce(snap: Snapshot, registers: Registers, index = 0, known: Partial<ExecContext> = {}): UnwindResult | undefined {
  const pc = registers["pc"]!;
  const site: FrameSite = {
    machine: "arm",
    index,
    interrupted: false,
    registers,
    pc,
    lookupPc: lookupAddress(pc, index > 0, "arm"),
    modules: snap.modules,
    images: snap.memory,
    calleeParams: 0,
    cache: new UnwindCache(),
  };
  const rule = armUnwind.ruleFor(site);
  return rule === undefined ? undefined : runRule(rule, registers, snap.memory, known);
}

/** The caller registers a step gives (fails the test when it stopped). */
export function callerOf(result: UnwindResult | undefined): Registers {
  if (result === undefined) throw new Error("the strategy has no rule for this frame");
  if (!result.ok) throw new Error(`the unwind stopped: ${result.stop.reason}: ${result.stop.detail}`);
  return result.registers;
}

/** What the caller had that an unwind must give back: pc = the return address, sp, r4-r11, d8-d15 (those in `saved`). */
export function expectedOf(caller: Record<string, bigint>, saved: readonly string[] = SAVED): Record<string, bigint> {
  return { pc: caller["lr"]!, sp: caller["sp"]!, ...Object.fromEntries(saved.map((r) => [r, caller[r]!])) };
}

/** The names of `expected` picked from `actual`. */
export function pick(actual: Registers, expected: Record<string, bigint>): Record<string, bigint | undefined> {
  return Object.fromEntries(Object.keys(expected).map((k) => [k, actual[k]]));
}

/**
 * Every position of a function with `prolog`, a body of `body` bytes and `epilog` (at its end),
 * as the machine state a thread stopped there has: the prolog's first k instructions run, or the
 * whole prolog and the epilog's first k. The pc is the function's start plus the bytes run.
 */
export function positions(start: number, prolog: readonly Insn[], body: number, epilog: readonly Insn[] | undefined, caller: Record<string, bigint>): { where: string; machine: Machine }[] {
  const out: { where: string; machine: Machine }[] = [];
  for (let k = 0; k <= prolog.length; k++) {
    const m = new Machine(caller);
    prolog.slice(0, k).forEach((i) => m.run(i));
    m.regs["pc"] = BASE + BigInt(start + bytesOf(prolog.slice(0, k)));
    out.push({ where: `prolog+${k}`, machine: m });
  }
  const full = (): Machine => {
    const m = new Machine(caller);
    prolog.forEach((i) => m.run(i));
    return m;
  };
  const bodyStart = start + bytesOf(prolog);
  const bm = full();
  bm.regs["pc"] = BASE + BigInt(bodyStart + body / 2);
  out.push({ where: "body", machine: bm });
  if (epilog !== undefined) {
    const epilogStart = bodyStart + body;
    // Up to the last instruction (the return itself, or a pop of pc, which leaves the function).
    const last = epilog.findIndex((i) => i.op === "ret" || (i.op === "pop" && i.regs.includes("pc")) || i.op === "ldr-pc");
    const stop = last < 0 ? epilog.length : last + 1;
    for (let k = 0; k < stop; k++) {
      const m = full();
      epilog.slice(0, k).forEach((i) => m.run(i));
      m.regs["pc"] = BASE + BigInt(epilogStart + bytesOf(epilog.slice(0, k)));
      out.push({ where: `epilog+${k}`, machine: m });
    }
  }
  return out;
}
