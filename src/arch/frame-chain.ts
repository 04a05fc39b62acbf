/**
 * The frame-pointer chain shared by x86 and x64 code built with frame pointers. A prolog of
 * `push fp; mov fp, sp` leaves, at [fp], the caller's saved frame pointer and, one slot above,
 * the return address the call pushed:
 *
 *     fp + 2w  caller's stack (arguments)      <- caller's sp after return
 *     fp + w   return address                  -> caller's pc
 *     fp       saved caller fp                 -> caller's fp
 *
 * so pc' = [fp + w], sp' = fp + 2w, fp' = [fp] (stackwalk64.md §6.4 step 4). The rule is one
 * value per machine ({@link FramePointerPlan}); {@link execFramePointer} runs it. This is the
 * simplest rule and the one deep frame-pointer stacks take for every frame: it reads its two words
 * as numbers where the memory offers them, and makes only the caller's registers and its rule.
 */
import { bigintOfU32 } from "../memory/bigint-cache.js";
import { readPointer, type MemoryReader } from "../memory/reader.js";
import type { Registers } from "../model/snapshot.js";
import { hexPadded } from "../hex.js";
import type { StopReason } from "../unwind/frame.js";
import { walkStop } from "../unwind/frame.js";
import type { ChainRegisters, FramePointerRule } from "../unwind/rule.js";
import type { DerivedRule, Rule } from "./rule.js";
import { cacheSlot } from "../unwind/cache.js";
import { unwindStep, type ExecContext, type OkStep, type UnwindResult } from "./step.js";

/** The registers a frame chain uses and how a caller's register set is written. */
export interface ChainMachine extends ChainRegisters {
  /** The caller's register object, written with fixed property names (this runs for every frame); `ctx` is the walk's. */
  make(pc: bigint, sp: bigint, fp: bigint, ctx?: ExecContext): Registers;
  /** The registers a chain step recovers: PC, SP and the frame pointer. */
  recovered: readonly string[];
  /**
   * What a frame pointer of 0 means: the chain's conventional end (x86 code that keeps a chain
   * ends it with EBP = 0 at thread start), or nothing at all (x64 code keeps no chain).
   */
  zeroFp: "end-of-stack" | "unsupported";
  /** The alignment a frame pointer must have to be followed (ARM64's frame records: 8), when the machine requires one. */
  align?: number;
  /** A chain step's rule as the caller frame works it out ({@link chainMachine}). */
  rule: DerivedRule;
}

/**
 * A chain's machine with its derived rule: the caller's PC and frame pointer are the words the
 * step read, at fp + w and fp, and fp = sp' − 2w (stackwalk64.md §6.4 step 4).
 */
export function chainMachine(m: Omit<ChainMachine, "rule">): ChainMachine {
  const w = BigInt(2 * m.width);
  const mask = m.width === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const chain: ChainRegisters = { pc: m.pc, sp: m.sp, fp: m.fp, width: m.width };
  const derive = (r: Registers): Rule => chainRule(chain, ((r[m.sp] ?? 0n) - w) & mask, r[m.pc] ?? 0n, r[m.fp] ?? 0n);
  return { ...m, rule: { kind: "derived", of: "frame-pointer", derive } };
}

/** The plain chain: the same rule for every frame, so it reads no memory to build. */
export interface FramePointerPlan {
  kind: "frame-pointer";
  chain: ChainMachine;
}

/** A frame-pointer step's rule. */
export function chainRule(chain: ChainRegisters, fp: bigint, pc: bigint, savedFp: bigint): FramePointerRule {
  return { kind: "frame-pointer", chain, fp, pc, savedFp };
}

/** `0x` and the digits of `v` padded to the chain's width. */
export function padHex(v: bigint, width: 4 | 8): string {
  return hexPadded(v, width * 2);
}

/**
 * The step a 32-bit chain step is written into, one per cache and refilled by every step: the walk
 * reads a step before it runs the next rule, and a deep chain need not make one per frame.
 */
const STEP = cacheSlot("frame-chain step", (): OkStep => unwindStep({}, { kind: "context" }));

/** Runs the plain chain. */
export function execFramePointer(plan: FramePointerPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const c = plan.chain;
  const fp = registers[c.fp];
  const name = c.fp.toUpperCase();
  if (fp === undefined) return { ok: false, stop: walkStop("unsupported", `${name} is not known for this frame`) };
  if (fp === 0n) {
    return { ok: false, stop: walkStop(c.zeroFp, c.zeroFp === "end-of-stack" ? `${name} is 0: the frame chain ends here` : `${name} is 0: no frame pointer to follow`) };
  }
  if (c.align !== undefined && fp % BigInt(c.align) !== 0n) {
    return { ok: false, stop: walkStop("unsupported", `${name} ${padHex(fp, c.width)} is not ${c.align}-byte aligned: not a frame record`, fp) };
  }
  if (c.width === 4 && memory.u32n !== undefined) return execFramePointer32(c, fp, memory as U32Reader, ctx.cache.get(STEP));
  const w = BigInt(c.width);
  const mask = c.width === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const raSlot = (fp + w) & mask;
  const pc = readPointer(memory, raSlot, c.width);
  if (pc === undefined) {
    return { ok: false, stop: walkStop("read-fault", `cannot read the return address at [${c.fp}+${c.width}] = ${padHex(raSlot, c.width)}`, raSlot) };
  }
  const savedFp = readPointer(memory, fp, c.width);
  if (savedFp === undefined) return { ok: false, stop: walkStop("read-fault", `cannot read the saved ${name} at ${padHex(fp, c.width)}`, fp) };
  const sp = (fp + 2n * w) & mask;
  return unwindStep(c.make(pc, sp, savedFp, ctx), c.rule);
}

/** The 32-bit chain on numbers: two word reads, the values made bigints from recent ones. */
type U32Reader = MemoryReader & { u32n(address: number): number | undefined };

function execFramePointer32(c: ChainMachine, fpBig: bigint, memory: U32Reader, step: OkStep): UnwindResult {
  const fp = Number(fpBig);
  const raSlot = (fp + 4) >>> 0;
  const pc = memory.u32n(raSlot);
  if (pc === undefined) return { ok: false, stop: walkStop("read-fault", `cannot read the return address at [${c.fp}+4] = ${padHex(BigInt(raSlot), 4)}`, BigInt(raSlot)) };
  const savedFp = memory.u32n(fp);
  if (savedFp === undefined) return { ok: false, stop: walkStop("read-fault", `cannot read the saved ${c.fp.toUpperCase()} at ${padHex(fpBig, 4)}`, fpBig) };
  const sp = (fp + 8) >>> 0;
  const pcBig = bigintOfU32(pc);
  const savedBig = bigintOfU32(savedFp);
  const spBig = sp === fp + 8 ? fpBig + 8n : BigInt(sp);
  step.registers = c.make(pcBig, spBig, savedBig);
  step.rule = c.rule;
  step.pcNumber = pc;
  step.spNumber = sp;
  return step;
}

/**
 * Why a checked frame-chain step is not taken; the walk goes on to the next strategy. A step that
 * failed for memory the snapshot lacks is what the walk reports if nothing else finds a caller
 * (the stack may go on where it cannot be read); any other is passed over for a later failure.
 */
export function notTaken(reason: StopReason, detail: string, address?: bigint): UnwindResult {
  const stop = walkStop(reason, detail, address);
  return reason === "read-fault" ? { ok: false, stop } : { ok: false, stop, fallback: true };
}
