/**
 * Running an {@link Arm64UnwindPlan} against the stack: the one place the ARM64 table-based
 * unwinder reads stack memory. One interpreter, on bigints, runs every plan, including the custom
 * stacks (a machine frame, a trap frame, a CONTEXT, arm64.md §1.9); plans of the usual shape
 * (loads at fixed offsets, allocations, pc = lr) also run on numbers, {@link runSimple}, which
 * gives the interpreter's answer. The caller's pc is stripped of any pointer authentication code
 * (pac.ts), and a caller's sp that is not 16-byte aligned — which the ABI never allows — stops the
 * frame (arm64.md §3.3 step 6).
 */
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { bigintOf } from "../../memory/bigint-cache.js";
import { Words } from "../../memory/words.js";
import { fieldOf } from "../../model/record.js";
import { ARM64_CONTEXT_LAYOUT, CONTEXT_UNWOUND_TO_CALL } from "../../model/context-layout.js";
import { machineInfo } from "../../model/machine.js";
import type { Registers } from "../../model/snapshot.js";
import { registersFrom } from "../register-set.js";
import { cacheSlot } from "../../unwind/cache.js";
import { walkStop, type WalkStop } from "../../unwind/frame.js";
import type { Arm64UnwindRule } from "./rule.js";
import { ruleText } from "../rule-text.js";
import { stepInto, unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import { stripPac, type PacStrip } from "./pac.js";
import {
  OP_ADD,
  OP_CLEAR,
  OP_CONTEXT,
  OP_LEAF,
  OP_LOAD,
  OP_MACHFRAME,
  OP_PAC,
  OP_RET,
  OP_SET_SP,
  OP_TRAP,
  planRegister,
  type Arm64UnwindPlan,
} from "./plan.js";

/** The registers the Windows ARM64 ABI preserves (the machine table's): a caller keeps them unless a code restores them. */
export const CALLEE_SAVED_ARM64: readonly string[] = machineInfo("arm64").calleeSaved;

/** The registers a caller's set starts with, to be set. */
const PC_SP: readonly string[] = ["pc", "sp"];

/** A caller frame's registers in the usual case: pc and sp to be set, and every preserved register (made by a constructor: see {@link Registers}). */
class Arm64CallerRegisters {
  [name: string]: bigint;
  constructor(fp: bigint, lr: bigint, x18: bigint, x19: bigint, x20: bigint, x21: bigint, x22: bigint, x23: bigint, x24: bigint, x25: bigint, x26: bigint, x27: bigint, x28: bigint, d8: bigint, d9: bigint, d10: bigint, d11: bigint, d12: bigint, d13: bigint, d14: bigint, d15: bigint) {
    this.pc = 0n;
    this.sp = 0n;
    this.fp = fp;
    this.lr = lr;
    this.x18 = x18;
    this.x19 = x19;
    this.x20 = x20;
    this.x21 = x21;
    this.x22 = x22;
    this.x23 = x23;
    this.x24 = x24;
    this.x25 = x25;
    this.x26 = x26;
    this.x27 = x27;
    this.x28 = x28;
    this.d8 = d8;
    this.d9 = d9;
    this.d10 = d10;
    this.d11 = d11;
    this.d12 = d12;
    this.d13 = d13;
    this.d14 = d14;
    this.d15 = d15;
  }
}

/** The caller's starting register set: pc and sp to be set, and the callee frame's preserved registers. */
export function inheritedArm64(registers: Registers): Registers {
  const { x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, fp, lr, d8, d9, d10, d11, d12, d13, d14, d15 } = registers;
  // The usual case (a context with every register, and every frame unwound from it) in one
  // object shape, made without a loop of keyed stores.
  if (
    x18 !== undefined && x19 !== undefined && x20 !== undefined && x21 !== undefined && x22 !== undefined && x23 !== undefined && x24 !== undefined && x25 !== undefined &&
    x26 !== undefined && x27 !== undefined && x28 !== undefined && fp !== undefined && lr !== undefined && d8 !== undefined && d9 !== undefined &&
    d10 !== undefined && d11 !== undefined && d12 !== undefined && d13 !== undefined && d14 !== undefined && d15 !== undefined
  ) {
    return new Arm64CallerRegisters(fp, lr, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, d8, d9, d10, d11, d12, d13, d14, d15);
  }
  return registersFrom(registers, CALLEE_SAVED_ARM64, PC_SP);
}

/** An ARM64 frame's rule: its plan (never changed once made). */
export interface Arm64Plan {
  kind: "arm64-unwind";
  plan: Arm64UnwindPlan;
}

/** What a run found besides the registers: one per cache, refilled by every run. */
class Arm64Run {
  stop: WalkStop | undefined = undefined;
  /** The caller's pc was interrupted (a custom stack gave it), not a return address. */
  interrupted = false;
  /** Where a custom stack's pc was read. */
  pcSlot: bigint | undefined = undefined;
  readonly words = new Words();
  /** The simple path's caller pc (stripped) and sp as numbers, −1 when not a number below 2^53. */
  pcNumber = -1;
  spNumber = -1;
  /**
   * The registers the last simple run made, with their fp as a bigint and as a number (−1 when it
   * did not load fp as one): the next frame's base is worked out from them without converting fp.
   */
  last: Registers | undefined = undefined;
  lastFp: bigint | undefined = undefined;
  lastFpNumber = -1;
}

const RUN = cacheSlot("arm64 plan run", () => new Arm64Run());
const MAX = Number.MAX_SAFE_INTEGER;
const MAX_BIG = BigInt(MAX);
const U64 = 0xffff_ffff_ffff_ffffn;
const NAMES: readonly string[] = Array.from({ length: 96 }, (_, r) => planRegister(r));

/** Runs an ARM64 plan on a frame's registers. */
export function execArm64Unwind(rule: Arm64Plan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const plan = rule.plan;
  const sp = registers["sp"];
  if (sp === undefined) return { ok: false, stop: walkStop("unsupported", `${ruleText(plan.rule)}: SP is not known for this frame`) };
  const run = ctx.cache.get(RUN);
  const strip = ctx.stripPac ?? stripPac;
  const out = inheritedArm64(registers);
  run.interrupted = false;
  run.pcSlot = undefined;
  const simple = plan.simple;
  let ran = false;
  if (simple !== undefined) {
    const base = simple.fpOffset < 0 ? (ctx.sp >= 0 ? ctx.sp : sp <= MAX_BIG ? Number(sp) : -1) : baseFromFp(run, registers, simple.fpOffset);
    ran = base >= 0 && runSimple(simple, memory, run, out, base, strip);
  }
  if (!ran) run.last = undefined;
  let pcNumber: number;
  let spNumber: number;
  if (ran) {
    // The simple path worked on numbers: the caller's pc is stripped and sp known as a number.
    pcNumber = run.pcNumber;
    spNumber = run.spNumber;
    // The low bits through a 32-bit integer: a remainder on a number above 2^31 is a floating-point one.
    if ((spNumber & 15) !== 0) return { ok: false, stop: walkStop("unsupported", `${ruleText(plan.rule)}: the caller's sp ${hex(out["sp"]!)} is not 16-byte aligned`, out["sp"]!) };
  } else {
    run.stop = interpret(plan, registers, memory, run, out, sp, strip);
    if (run.stop !== undefined) return { ok: false, stop: run.stop };
    const pc = strip(out["pc"]!);
    out["pc"] = pc;
    const callerSp = out["sp"]!;
    if ((callerSp & 15n) !== 0n) return { ok: false, stop: walkStop("unsupported", `${ruleText(plan.rule)}: the caller's sp ${hex(callerSp)} is not 16-byte aligned`, callerSp) };
    pcNumber = pc <= MAX_BIG ? Number(pc) : -1;
    spNumber = callerSp <= MAX_BIG ? Number(callerSp) : -1;
  }
  // A plan that leaves lr as it found it takes the caller's pc from it: when that is this frame's
  // own pc, the caller is this frame again, higher on the stack, and so on for ever. No real
  // caller does that (a function that made a call saved the lr the call overwrote); this is
  // RtlVirtualUnwind's check on a leaf's pc and lr, for any plan that does not restore lr.
  if (!plan.custom && (pcNumber >= 0 ? pcNumber === ctx.pc : out["pc"] === registers["pc"]) && !plan.recovered.includes("lr")) {
    return { ok: false, stop: walkStop("no-progress", `${ruleText(plan.rule)}: the caller's pc ${hex(out["pc"]!)} is this frame's own, from an lr the function does not restore (the frame would repeat for ever)`, out["pc"]!) };
  }
  if (!plan.custom) {
    return stepInto(ctx, out, plan.rule, plan.recovered, plan.entry, pcNumber, spNumber);
  }
  const found: Arm64UnwindRule = run.pcSlot === undefined ? plan.rule : { ...plan.rule, pcSlot: run.pcSlot };
  return unwindStep(out, found, { recovered: plan.recovered, entry: plan.entry, interrupted: run.interrupted ? true : undefined, pcNumber, spNumber });
}

/** fp − offset as a number, or −1 when fp is unknown or not a number address. */
function baseFromFp(run: Arm64Run, registers: Registers, offset: number): number {
  const fp = registers["fp"];
  if (fp === undefined) return -1;
  // The registers the last run made (the walk's next frame): their fp is known as a number.
  const fpNumber = registers === run.last && run.lastFpNumber >= 0 && fp === run.lastFp ? run.lastFpNumber : fp <= MAX_BIG ? Number(fp) : -1;
  const base = fpNumber - offset;
  return fpNumber >= 0 && base >= 0 ? base : -1;
}

/**
 * The fast path (see {@link Arm64UnwindPlan.simple}), on numbers: true when it ran, with the
 * caller's pc (stripped of a pointer authentication code) and sp also in `run` as numbers; false
 * leaves the plan to the interpreter.
 */
function runSimple(simple: NonNullable<Arm64UnwindPlan["simple"]>, memory: MemoryReader, run: Arm64Run, out: Registers, base: number, strip: PacStrip): boolean {
  const slots = simple.slots;
  const regs = simple.registers;
  const words = run.words;
  const callerSp = base + simple.callerSp;
  if (callerSp > MAX) return false;
  // lr and fp as numbers when this run loads them (−1 when not, or not below 2^53).
  let lrNumber = -1;
  let fpNumber = -1;
  for (let k = 0; k < slots.length; k++) {
    if (!words.read(memory, base + slots[k]!)) return false;
    const r = regs[k]!;
    setRegister(out, r, words.big());
    if (r === 30) lrNumber = words.number();
    else if (r === 29) fpNumber = words.number();
  }
  const lr = out["lr"];
  if (lr === undefined) return false;
  // At or below the stripping's plain limit a return address has no code to strip (the usual case,
  // decided on numbers when lr was loaded as one).
  let pc = lr;
  if (lrNumber >= 0 && lrNumber <= strip.plainBelowNumber) run.pcNumber = lrNumber;
  else {
    if (lr > strip.plainBelow) pc = strip(lr);
    run.pcNumber = pc <= MAX_BIG ? Number(pc) : -1;
  }
  if (simple.stripLr) out["lr"] = pc;
  out["pc"] = pc;
  // A caller's sp is often a word just read (its frame record's address, the fp it saved): the
  // recent bigints have it.
  out["sp"] = bigintOf(callerSp >>> 0, Math.floor(callerSp / 4294967296));
  run.spNumber = callerSp;
  run.last = out;
  run.lastFp = out["fp"];
  run.lastFpNumber = fpNumber;
  return true;
}

/** Sets plan register `r` (an X or D register) with fixed property names: this runs for every frame. */
function setRegister(out: Registers, r: number, value: bigint): void {
  switch (r) {
    case 19: out["x19"] = value; break;
    case 20: out["x20"] = value; break;
    case 21: out["x21"] = value; break;
    case 22: out["x22"] = value; break;
    case 23: out["x23"] = value; break;
    case 24: out["x24"] = value; break;
    case 25: out["x25"] = value; break;
    case 26: out["x26"] = value; break;
    case 27: out["x27"] = value; break;
    case 28: out["x28"] = value; break;
    case 29: out["fp"] = value; break;
    case 30: out["lr"] = value; break;
    default: out[NAMES[r]!] = value;
  }
}

function fault(plan: Arm64UnwindPlan, address: bigint, what: string): WalkStop {
  return walkStop("read-fault", `${ruleText(plan.rule)}: cannot read ${what} at ${hex(address)}`, address);
}

/** Reads the u64 at `address` into `run.words`; false when unreadable. */
function readAt(run: Arm64Run, memory: MemoryReader, address: bigint): boolean {
  return address + 8n <= MAX_BIG ? run.words.read(memory, Number(address)) : run.words.readBig(memory, address);
}

/** The u32 at `address`, or undefined. */
function readU32At(memory: MemoryReader, address: bigint): number | undefined {
  const b = memory.read(address, 4);
  return b === undefined ? undefined : (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
}

const CONTEXT_OFFSET = (name: string): bigint => BigInt(fieldOf(ARM64_CONTEXT_LAYOUT, name).offset);
const CTX_FLAGS = CONTEXT_OFFSET("ContextFlags");
const CTX_CPSR = CONTEXT_OFFSET("Cpsr");
const CTX_X0 = CONTEXT_OFFSET("X0");
const CTX_V0 = CONTEXT_OFFSET("V[0].Low");
const CTX_FPCR = CONTEXT_OFFSET("Fpcr");
const CTX_FPSR = CONTEXT_OFFSET("Fpsr");
/** The u64 fields of an ARM64_NT_CONTEXT a CONTEXT code restores besides X0-X28 and V0-V31. */
const CTX_CONTROL: readonly (readonly [string, bigint])[] = [["fp", CONTEXT_OFFSET("Fp")], ["lr", CONTEXT_OFFSET("Lr")], ["sp", CONTEXT_OFFSET("Sp")], ["pc", CONTEXT_OFFSET("Pc")]];

/**
 * ARM64_KTRAP_FRAME (arm64.md §1.9, 0x150 bytes): VfpState at 0x10, Spsr at 0x90, Sp at 0x98,
 * X0-X18 from 0xA0, Lr at 0x138, Fp at 0x140, Pc at 0x148. KARM64_VFP_STATE: Fpcr at +8, Fpsr at
 * +12, V0-V31 from +16.
 */
const TRAP = { vfpState: 0x10n, spsr: 0x90n, sp: 0x98n, x0: 0xa0n, lr: 0x138n, fp: 0x140n, pc: 0x148n, size: 0x150n } as const;

/** The interpreter: runs every instruction of a plan on bigints; the stop, or undefined with `out` filled. */
function interpret(plan: Arm64UnwindPlan, registers: Registers, memory: MemoryReader, run: Arm64Run, out: Registers, sp0: bigint, strip: PacStrip): WalkStop | undefined {
  const code = plan.code;
  const words = run.words;
  let sp = sp0;
  const word = (address: bigint, what: string): bigint | WalkStop => (readAt(run, memory, address & U64) ? words.big() : fault(plan, address & U64, what));
  for (let i = 0; i < code.length; i += 3) {
    const r = code[i + 1]!;
    const n = code[i + 2]!;
    switch (code[i]) {
      case OP_ADD:
        sp += BigInt(n);
        if (sp > U64) return walkStop("unsupported", `${ruleText(plan.rule)}: sp + ${hex(n)} leaves the 64-bit address space`);
        break;
      case OP_LOAD: {
        const v = word(sp + BigInt(n), `the saved ${NAMES[r]}`);
        if (typeof v !== "bigint") return v;
        out[NAMES[r]!] = v;
        break;
      }
      case OP_SET_SP: {
        const fp = out["fp"] ?? registers["fp"];
        if (fp === undefined) return walkStop("unsupported", `${ruleText(plan.rule)}: FP is not known for this frame`);
        sp = (fp - BigInt(n)) & U64;
        break;
      }
      case OP_PAC: {
        const lr = out["lr"];
        if (lr !== undefined) out["lr"] = strip(lr);
        break;
      }
      case OP_MACHFRAME: {
        const newSp = word(sp, "the machine frame's sp");
        if (typeof newSp !== "bigint") return newSp;
        const pc = word(sp + 8n, "the machine frame's pc");
        if (typeof pc !== "bigint") return pc;
        run.pcSlot = (sp + 8n) & U64;
        out["pc"] = pc;
        sp = newSp;
        run.interrupted = true;
        break;
      }
      case OP_CONTEXT: {
        const stop = restoreContext(plan, memory, run, out, sp);
        if (stop !== undefined) return stop;
        sp = out["sp"]!;
        break;
      }
      case OP_TRAP: {
        const stop = restoreTrapFrame(plan, memory, run, out, sp);
        if (stop !== undefined) return stop;
        sp = out["sp"]!;
        break;
      }
      case OP_CLEAR: {
        const lr = out["lr"];
        if (lr === undefined) return walkStop("unsupported", `${ruleText(plan.rule)}: LR is not known for this frame`);
        out["pc"] = lr;
        run.interrupted = true;
        break;
      }
      case OP_RET: {
        const lr = out["lr"];
        if (lr === undefined) return walkStop("unsupported", `${ruleText(plan.rule)}: LR is not known for this frame`);
        out["pc"] = lr;
        break;
      }
      case OP_LEAF: {
        const lr = registers["lr"];
        const pc = registers["pc"];
        if (lr === undefined) return walkStop("unsupported", `${ruleText(plan.rule)}: LR is not known for this frame`);
        // RtlVirtualUnwind's check on the raw pc: a caller frame's pc already is the lr it was unwound to.
        if (pc === lr) return walkStop("no-progress", `${ruleText(plan.rule)}: pc ${hex(lr)} already is lr (no .pdata entry, so no return address but lr)`, lr);
        out["pc"] = lr;
        break;
      }
    }
  }
  out["sp"] = sp;
  return undefined;
}

/** MSFT_OP_CONTEXT: every register from the ARM64_NT_CONTEXT at sp; UNWOUND_TO_CALL from its flags (arm64.md §1.9). */
function restoreContext(plan: Arm64UnwindPlan, memory: MemoryReader, run: Arm64Run, out: Registers, sp: bigint): WalkStop | undefined {
  const flags = readU32At(memory, sp + CTX_FLAGS);
  const cpsr = readU32At(memory, sp + CTX_CPSR);
  const fpcr = readU32At(memory, sp + CTX_FPCR);
  const fpsr = readU32At(memory, sp + CTX_FPSR);
  if (flags === undefined || cpsr === undefined || fpcr === undefined || fpsr === undefined) return fault(plan, sp, "the CONTEXT");
  for (let k = 0; k < 29; k++) {
    if (!readAt(run, memory, sp + CTX_X0 + BigInt(8 * k))) return fault(plan, sp + CTX_X0 + BigInt(8 * k), `the CONTEXT's x${k}`);
    out[`x${k}`] = run.words.big();
  }
  const stop = restoreVectors(plan, memory, run, out, sp + CTX_V0);
  if (stop !== undefined) return stop;
  for (const [name, offset] of CTX_CONTROL) {
    if (!readAt(run, memory, sp + offset)) return fault(plan, sp + offset, `the CONTEXT's ${name}`);
    out[name] = run.words.big();
  }
  out["cpsr"] = BigInt(cpsr);
  out["fpcr"] = BigInt(fpcr);
  out["fpsr"] = BigInt(fpsr);
  run.pcSlot = sp + CTX_CONTROL[3]![1];
  run.interrupted = (flags & CONTEXT_UNWOUND_TO_CALL) === 0;
  return undefined;
}

/** The 32 V registers (low and high halves) from `at`. */
function restoreVectors(plan: Arm64UnwindPlan, memory: MemoryReader, run: Arm64Run, out: Registers, at: bigint): WalkStop | undefined {
  for (let k = 0; k < 32; k++) {
    const a = at + BigInt(16 * k);
    if (!readAt(run, memory, a)) return fault(plan, a, `v${k}`);
    out[`d${k}`] = run.words.big();
    if (!readAt(run, memory, a + 8n)) return fault(plan, a + 8n, `v${k}`);
    out[`v${k}.high`] = run.words.big();
  }
  return undefined;
}

/** MSFT_OP_TRAP_FRAME: the ARM64_KTRAP_FRAME at sp, and its floating-point state when valid (arm64.md §1.9). */
function restoreTrapFrame(plan: Arm64UnwindPlan, memory: MemoryReader, run: Arm64Run, out: Registers, sp: bigint): WalkStop | undefined {
  for (let k = 0; k < 19; k++) {
    const a = sp + TRAP.x0 + BigInt(8 * k);
    if (!readAt(run, memory, a)) return fault(plan, a, `the trap frame's x${k}`);
    out[`x${k}`] = run.words.big();
  }
  if (!readAt(run, memory, sp + TRAP.vfpState)) return fault(plan, sp + TRAP.vfpState, "the trap frame's VfpState");
  const vfp = run.words.big();
  if (vfp !== 0n) {
    const fpcr = readU32At(memory, vfp + 8n);
    const fpsr = readU32At(memory, vfp + 12n);
    if (fpcr === undefined || fpsr === undefined) return fault(plan, vfp, "the trap frame's floating-point state");
    if (fpcr !== 0xffff_ffff && fpsr !== 0xffff_ffff) {
      out["fpcr"] = BigInt(fpcr);
      out["fpsr"] = BigInt(fpsr);
      const stop = restoreVectors(plan, memory, run, out, vfp + 16n);
      if (stop !== undefined) return stop;
    }
  }
  const spsr = readU32At(memory, sp + TRAP.spsr);
  if (spsr === undefined) return fault(plan, sp + TRAP.spsr, "the trap frame's Spsr");
  out["cpsr"] = BigInt(spsr);
  for (const [name, offset] of [["sp", TRAP.sp], ["lr", TRAP.lr], ["fp", TRAP.fp], ["pc", TRAP.pc]] as const) {
    if (!readAt(run, memory, sp + offset)) return fault(plan, sp + offset, `the trap frame's ${name}`);
    out[name] = run.words.big();
  }
  run.pcSlot = sp + TRAP.pc;
  run.interrupted = true;
  return undefined;
}
