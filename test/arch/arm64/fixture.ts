/**
 * Small ARM64 PE32+ images and stacks for the ARM64 unwinder's tests. An image is built as the
 * loader maps it (headers at RVA 0, machine 0xAA64; code; `.xdata` records from RVA 0x8000; the
 * 8-byte `.pdata` entries at 0xC000, named by the exception directory), so the walker reads it
 * from snapshot memory as it reads an emulated program. RVA 0x1000 holds a caller without unwind
 * data made of `bl` instructions: {@link ra}(k) is the return address after the k-th.
 */
import { RegionMemory } from "../../../src/memory/region-memory.js";
import type { Module, Registers, Snapshot } from "../../../src/model/snapshot.js";
import type { FrameSite } from "../../../src/unwind/step.js";
import type { UnwindResult } from "../../../src/arch/step.js";
import { UnwindCache } from "../../../src/unwind/cache.js";
import { lookupAddress } from "../../../src/unwind/lookup-address.js";
import { arm64Unwind } from "../../../src/arch/arm64/unwind.js";
import type { BuiltStack } from "../../support/stack-builder.js";
import { runRule } from "../../support/rules.js";
import { writePeHeaders } from "../../support/pe-headers.js";

export const BASE = 0x1_4000_0000n;
export const IMAGE_SIZE = 0x1_0000;
export const STACK_BASE = 0x0010_0000n;
const XDATA = 0x8000;
const PDATA = 0xc000;
const CALLS = 64;
/** `nop` (hint #0). */
export const NOP = 0xd503201f;
/** `bl` to itself: a call instruction a return address may follow. */
const BL_SELF = 0x94000000;

/** The return address after the k-th `bl` of the caller at RVA 0x1000. */
export const ra = (k: number): bigint => BASE + BigInt(0x1004 + 4 * k);

const NAMES = ["x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "fp", "lr", ...Array.from({ length: 8 }, (_, i) => `d${i + 8}`)];
/** Values the caller had in every preserved register (what a correct unwind restores). */
export const CALLER: Readonly<Record<string, bigint>> = Object.fromEntries(NAMES.map((r, i) => [r, 0xca11_0000_0000_0000n + BigInt(i)]));
/** Values the callee left in them (it saved and then changed them). */
export const CLOBBERED: Readonly<Record<string, bigint>> = Object.fromEntries(NAMES.map((r, i) => [r, 0x0bad_0000_0000_0000n + BigInt(i)]));

/** An `.xdata` record: the header word(s), epilog scopes and code bytes padded to words (arm64.md §1.3). */
export function xdata(spec: { length: number; codes: readonly number[]; epilog?: number; scopes?: readonly { start: number; index: number }[]; handler?: number; version?: number; extended?: boolean }): number[] {
  const codes = [...spec.codes];
  while (codes.length % 4 !== 0) codes.push(0xe3);
  const words = codes.length / 4;
  const scopes = spec.scopes ?? [];
  const e = spec.epilog !== undefined;
  const count = e ? spec.epilog! : scopes.length;
  const extended = spec.extended === true;
  const header = (spec.length | ((spec.version ?? 0) << 18) | ((spec.handler !== undefined ? 1 : 0) << 20) | ((e ? 1 : 0) << 21) | ((extended ? 0 : count) << 22) | ((extended ? 0 : words) << 27)) >>> 0;
  const out: number[] = [];
  const word = (w: number): void => void out.push(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, (w >>> 24) & 0xff);
  word(header);
  if (extended) word(count | (words << 16));
  for (const s of scopes) word(s.start | (s.index << 22));
  out.push(...codes);
  if (spec.handler !== undefined) word(spec.handler);
  return out;
}

/** A packed `.pdata` word (arm64.md §1.2). */
export function packed(f: { flag?: 1 | 2; length: number; regF?: number; regI?: number; h?: boolean; cr?: 0 | 1 | 2 | 3; frameSize: number }): number {
  return ((f.flag ?? 1) | (f.length << 2) | ((f.regF ?? 0) << 13) | ((f.regI ?? 0) << 16) | ((f.h === true ? 1 : 0) << 20) | ((f.cr ?? 0) << 21) | (f.frameSize << 23)) >>> 0;
}

/** An ARM64 PE32+ image under construction. */
export class ImageBuilder {
  readonly bytes = new Uint8Array(IMAGE_SIZE);
  private readonly view = new DataView(this.bytes.buffer);
  private xdataAt = XDATA;
  private readonly entries: [number, number][] = [];

  constructor() {
    const b = this.bytes;
    const v = writePeHeaders(b, 0xaa64, IMAGE_SIZE, "pe32+");
    for (let k = 0; k < CALLS; k++) v.setUint32(0x1000 + 4 * k, BL_SELF, true);
  }

  /** `count` nops from an RVA (a function body). */
  code(rva: number, count: number): this {
    for (let i = 0; i < count; i++) this.view.setUint32(rva + 4 * i, NOP, true);
    return this;
  }

  /** Raw bytes at an RVA. */
  at(rva: number, bytes: readonly number[]): this {
    this.bytes.set(bytes, rva);
    return this;
  }

  /** Stores an `.xdata` record and returns its RVA. */
  info(bytes: readonly number[]): number {
    const rva = this.xdataAt;
    this.bytes.set(bytes, rva);
    this.xdataAt = (rva + bytes.length + 3) & ~3;
    return rva;
  }

  /** A `.pdata` entry at `begin`: an `.xdata` record's bytes (stored), or a raw UnwindData word (packed, Flag 3). */
  fn(begin: number, unwind: readonly number[] | number): this {
    this.entries.push([begin, typeof unwind === "number" ? unwind : this.info(unwind)]);
    return this;
  }

  /** Writes the table (sorted by BeginAddress unless "as-given") and the exception directory; returns the image bytes. */
  build(order: "sorted" | "as-given" = "sorted"): Uint8Array {
    const entries = order === "sorted" ? [...this.entries].sort((a, b) => a[0] - b[0]) : this.entries;
    entries.forEach(([b, u], i) => {
      this.view.setUint32(PDATA + 8 * i, b, true);
      this.view.setUint32(PDATA + 8 * i + 4, u, true);
    });
    const dir = 0x58 + 112 + 3 * 8;
    this.view.setUint32(dir, entries.length === 0 ? 0 : PDATA, true);
    this.view.setUint32(dir + 4, 8 * entries.length, true);
    return this.bytes;
  }

  /** Where the table's entry i is. */
  static entryRva(i: number): number {
    return PDATA + 8 * i;
  }
}

/** The module of an image built by {@link ImageBuilder}. */
export const MODULE: Module = { name: "t.exe", base: BASE, size: BigInt(IMAGE_SIZE), symbols: [] };

/** A one-thread ARM64 snapshot of an image and a stack; each call gets a fresh module object. */
export function snapshotArm64(image: Uint8Array, stack: BuiltStack, registers: Registers, extra: { base: bigint; bytes: Uint8Array }[] = []): Snapshot {
  return {
    machine: "arm64",
    threads: [{ id: 0, crashed: true, registers }],
    memory: new RegionMemory([{ base: BASE, bytes: image }, { base: stack.base, bytes: stack.bytes }, ...extra]),
    modules: [{ ...MODULE }],
  };
}

/** The callee's registers: every preserved register clobbered, then `set` (pc, sp, ...). */
export function calleeRegisters(set: Registers): Registers {
  return { ...CLOBBERED, ...set };
}

/**
 * One unwind by the ARM64 `unwind-info` strategy, as the walk does it: frame `index` (0 = the
 * context frame: the pc as it is; otherwise a pc that is a return address, looked up at pc − 4).
 */
export function unwindStep(snap: Snapshot, registers: Registers, options: { index?: number; interrupted?: boolean } = {}): UnwindResult | undefined {
  const index = options.index ?? 0;
  const interrupted = options.interrupted ?? false;
  const pc = registers["pc"]!;
  const site: FrameSite = {
    machine: "arm64",
    index,
    interrupted,
    registers,
    pc,
    lookupPc: lookupAddress(pc, index > 0 && !interrupted, "arm64"),
    modules: snap.modules,
    images: snap.memory,
    calleeParams: 0,
    cache: new UnwindCache(),
  };
  const rule = arm64Unwind.ruleFor(site);
  return rule === undefined ? undefined : runRule(rule, registers, snap.memory);
}

/** The recovered registers of a successful step, by name (fails the test otherwise). */
export function recoveredOf(result: UnwindResult | undefined): Record<string, bigint> {
  if (result === undefined) throw new Error("the strategy has no rule for this frame");
  if (!result.ok) throw new Error(`the unwind stopped: ${result.stop.reason}: ${result.stop.detail}`);
  const names = result.recovered ?? Object.keys(result.registers);
  return Object.fromEntries(names.map((n) => [n, result.registers[n]!]));
}

/** The stop of a failed step (fails the test otherwise). */
export function stopOf(result: UnwindResult | undefined): string {
  if (result === undefined) throw new Error("the strategy has no rule for this frame");
  if (result.ok) throw new Error("the unwind succeeded");
  return `${result.stop.reason}: ${result.stop.detail}`;
}
