/**
 * Running an {@link UnwindPlan} against the stack: the one place the x64 table-based unwinder
 * reads stack memory. One interpreter, on bigints, runs every plan; an RSP that leaves the 64-bit
 * range (an ALLOC_LARGE that overflows) stops the frame instead of wrapping. Plans of the usual
 * shape (allocations, pushes, a return) also have a fast path on numbers, {@link runSimple}: the
 * x64 walk's benchmark takes it for every frame, and it gives the interpreter's answer.
 */
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { machineInfo } from "../../model/machine.js";
import type { Registers } from "../../model/snapshot.js";
import { registersFrom } from "../register-set.js";
import { cacheSlot } from "../../unwind/cache.js";
import { walkStop, type WalkStop } from "../../unwind/frame.js";
import { ruleText } from "../rule-text.js";
import { REG64, RSP } from "../../formats/unwind-data/x64.js";
import { Words } from "./code.js";
import { OP_ADD, OP_BASE_REG, OP_BASE_RSP, OP_LOAD, OP_LOAD_XMM, OP_MACHFRAME, OP_POP, OP_RET, OP_SET_RSP, XMM_HIGH, XMM_LOW, type UnwindPlan } from "./plan.js";

/** The general registers the x64 ABI makes callee-saved (the machine table's). */
export const CALLEE_SAVED_64: readonly string[] = machineInfo("x64").calleeSaved;

/** The registers every x64 unwind recovers. */
export const RIP_RSP: readonly string[] = ["rip", "rsp"];

/** A caller frame's registers in the usual case: RIP and RSP to be set, and the callee-saved ones (made by a constructor: see {@link Registers}). */
class X64CallerRegisters {
  [name: string]: bigint;
  constructor(rbp: bigint, rbx: bigint, rsi: bigint, rdi: bigint, r12: bigint, r13: bigint, r14: bigint, r15: bigint) {
    this.rip = 0n;
    this.rsp = 0n;
    this.rbp = rbp;
    this.rbx = rbx;
    this.rsi = rsi;
    this.rdi = rdi;
    this.r12 = r12;
    this.r13 = r13;
    this.r14 = r14;
    this.r15 = r15;
  }
}

/** The caller's starting register set: RIP and RSP to be set, and the callee-saved registers of the callee frame. */
export function inherited64(registers: Registers): Registers {
  const rbx = registers["rbx"];
  const rbp = registers["rbp"];
  const rsi = registers["rsi"];
  const rdi = registers["rdi"];
  const r12 = registers["r12"];
  const r13 = registers["r13"];
  const r14 = registers["r14"];
  const r15 = registers["r15"];
  // The usual case in one object shape.
  if (rbx !== undefined && rbp !== undefined && rsi !== undefined && rdi !== undefined && r12 !== undefined && r13 !== undefined && r14 !== undefined && r15 !== undefined) {
    return new X64CallerRegisters(rbp, rbx, rsi, rdi, r12, r13, r14, r15);
  }
  return registersFrom(registers, CALLEE_SAVED_64, RIP_RSP);
}

/** What a {@link runPlan} found besides the registers: one per cache, refilled by every run. */
export class PlanRun {
  /** Why the run failed. */
  stop: WalkStop | undefined = undefined;
  /**
   * The run failed because the registers contradict the plan: the frame register would move RSP
   * down (an unwind only ever moves it up, x64-unwind.md §1.8), as after a longjmp reloaded the
   * frame register with another frame's value.
   */
  inconsistent = false;
  /** The address RIP was read from. */
  ripSlot: number | bigint = 0;
  /** RIP as a number, −1 when it is 2^53 or more. */
  ripNumber = 0;
  /** The low bits of the caller's RSP (for the alignment check). */
  rspLow = 0;
  /** The caller's RSP as a number, −1 when it is 2^53 or more. */
  rspNumber = 0;
  /** The stack words the run reads. */
  readonly words = new Words();
}

/** The plan runner of a cache. */
export const PLAN_RUN = cacheSlot("x64 plan run", () => new PlanRun());

const MAX = Number.MAX_SAFE_INTEGER;
const MAX_BIG = BigInt(MAX);
const U64 = 0xffff_ffff_ffff_ffffn;

/** The plan's rule in words, for a stop's detail. */
export function planLabel(plan: UnwindPlan): string {
  return ruleText(plan.rule);
}

function fault(plan: UnwindPlan, address: number | bigint, what: string): WalkStop {
  return walkStop("read-fault", `${planLabel(plan)}: cannot read ${what} at ${hex(address)}`, BigInt(address));
}

function unknown(plan: UnwindPlan, r: number): WalkStop {
  return walkStop("unsupported", `${planLabel(plan)}: ${REG64[r]!.toUpperCase()} is not known for this frame`);
}

function lowered(run: PlanRun, plan: UnwindPlan, r: number, from: bigint, to: bigint): WalkStop {
  run.inconsistent = true;
  return walkStop("unsupported", `${planLabel(plan)}: ${REG64[r]} gives RSP ${hex(to)}, below the ${hex(from)} it had: the frame register does not belong to this frame`, to);
}

function overflow(plan: UnwindPlan, what: string): WalkStop {
  return walkStop("unsupported", `${planLabel(plan)}: ${what} leaves the 64-bit address space`);
}

/**
 * Runs `plan` on a frame's `registers`: the caller's registers (the callee-saved ones carried
 * over, see {@link inherited64}; more in `run`), or undefined with the reason in `run.stop`.
 * `rspNumber` is the frame's RSP as a number when the walk has it (−1 when not).
 */
export function runPlan(plan: UnwindPlan, registers: Registers, memory: MemoryReader, run: PlanRun, rspNumber = -1): Registers | undefined {
  const rsp = registers["rsp"];
  run.inconsistent = false;
  if (rsp === undefined) {
    run.stop = walkStop("unsupported", `${planLabel(plan)}: RSP is not known for this frame`);
    return undefined;
  }
  const out = inherited64(registers);
  const simple = plan.simple;
  if (simple !== undefined && rsp <= MAX_BIG && runSimple(simple, memory, run, out, rspNumber >= 0 ? rspNumber : Number(rsp), rsp)) return out;
  run.stop = interpret(plan, registers, memory, run, out, rsp);
  return run.stop === undefined ? out : undefined;
}

/**
 * The fast path for a plan's simple form (fixed offsets from RSP), on numbers: true when it ran.
 * False leaves the plan to the interpreter (a slot at 2^53 or above, a word that cannot be read,
 * which the interpreter then reports).
 */
function runSimple(simple: NonNullable<UnwindPlan["simple"]>, memory: MemoryReader, run: PlanRun, out: Registers, rsp: number, rspBig: bigint): boolean {
  const raSlot = rsp + simple.raOffset;
  if (raSlot + 8 > MAX) return false;
  const words = run.words;
  const offsets = simple.popOffsets;
  for (let k = 0; k < offsets.length; k++) {
    if (!words.read(memory, rsp + offsets[k]!)) return false;
    setRegister(out, simple.popRegisters[k]!, words.big());
  }
  if (!words.read(memory, raSlot)) return false;
  out["rip"] = words.big();
  run.ripNumber = words.number();
  run.ripSlot = raSlot;
  // Below 2^53 (checked above), so no wrap: the sum is the caller's RSP.
  out["rsp"] = rspBig + simple.callerRsp;
  run.rspLow = (raSlot + 8) % 16;
  run.rspNumber = raSlot + 8;
  return true;
}

/** Sets a general register (not RSP) by number, with fixed property names: this runs for every frame. */
function setRegister(out: Registers, r: number, value: bigint): void {
  switch (r) {
    case 0: out["rax"] = value; break;
    case 1: out["rcx"] = value; break;
    case 2: out["rdx"] = value; break;
    case 3: out["rbx"] = value; break;
    case 5: out["rbp"] = value; break;
    case 6: out["rsi"] = value; break;
    case 7: out["rdi"] = value; break;
    case 8: out["r8"] = value; break;
    case 9: out["r9"] = value; break;
    case 10: out["r10"] = value; break;
    case 11: out["r11"] = value; break;
    case 12: out["r12"] = value; break;
    case 13: out["r13"] = value; break;
    case 14: out["r14"] = value; break;
    case 15: out["r15"] = value; break;
  }
}

/** Reads the word at `address` into the run's words: below 2^53 as a number, else through a bigint read. */
function readAt(run: PlanRun, memory: MemoryReader, address: bigint): boolean {
  return address + 8n <= MAX_BIG ? run.words.read(memory, Number(address)) : run.words.readBig(memory, address);
}

/** The interpreter: runs every instruction of a plan on bigints; the stop, or undefined with `out` filled. */
function interpret(plan: UnwindPlan, registers: Registers, memory: MemoryReader, run: PlanRun, out: Registers, rsp0: bigint): WalkStop | undefined {
  const code = plan.code;
  const words = run.words;
  let rsp = rsp0;
  let base = rsp0;
  const current = (r: number): bigint | undefined => (r === RSP ? rsp : (out[REG64[r]!] ?? registers[REG64[r]!]));
  const inRange = (v: bigint): boolean => v >= 0n && v <= U64;
  for (let i = 0; i < code.length; i += 3) {
    const r = code[i + 1]!;
    const n = BigInt(code[i + 2]!);
    switch (code[i]) {
      case OP_BASE_RSP:
        base = rsp;
        break;
      case OP_BASE_REG: {
        const v = current(r);
        if (v === undefined) return unknown(plan, r);
        base = (v - n) & U64;
        break;
      }
      case OP_SET_RSP: {
        const v = current(r);
        if (v === undefined) return unknown(plan, r);
        if (v + n < rsp) return lowered(run, plan, r, rsp, v + n);
        rsp = v + n;
        if (!inRange(rsp)) return overflow(plan, `RSP = ${REG64[r]} ${n < 0n ? "-" : "+"} ${hex(n < 0n ? -n : n)}`);
        break;
      }
      case OP_ADD:
        rsp += n;
        if (!inRange(rsp)) return overflow(plan, `RSP + ${hex(n)}`);
        break;
      case OP_POP:
        if (!readAt(run, memory, rsp)) return fault(plan, rsp, `the saved ${REG64[r]}`);
        if (r === RSP) rsp = words.big() + 8n;
        else {
          out[REG64[r]!] = words.big();
          rsp += 8n;
        }
        if (!inRange(rsp)) return overflow(plan, "RSP + 8");
        break;
      case OP_LOAD: {
        const at = (base + n) & U64;
        if (!readAt(run, memory, at)) return fault(plan, at, `the saved ${REG64[r]}`);
        if (r === RSP) rsp = words.big();
        else out[REG64[r]!] = words.big();
        break;
      }
      case OP_LOAD_XMM: {
        const at = (base + n) & U64;
        if (!readAt(run, memory, at)) return fault(plan, at, `the saved xmm${r}`);
        const low = words.big();
        if (!readAt(run, memory, (at + 8n) & U64)) return fault(plan, (at + 8n) & U64, `the saved xmm${r}`);
        out[XMM_LOW[r]!] = low;
        out[XMM_HIGH[r]!] = words.big();
        break;
      }
      case OP_MACHFRAME: {
        const at = (rsp + n) & U64;
        if (!readAt(run, memory, at)) return fault(plan, at, "the machine frame's RIP");
        out["rip"] = words.big();
        run.ripNumber = words.number();
        run.ripSlot = at <= MAX_BIG ? Number(at) : at;
        const rspAt = (at + 24n) & U64;
        if (!readAt(run, memory, rspAt)) return fault(plan, rspAt, "the machine frame's RSP");
        rsp = words.big();
        break;
      }
      case OP_RET:
        if (!readAt(run, memory, rsp)) return fault(plan, rsp, "the return address");
        out["rip"] = words.big();
        run.ripNumber = words.number();
        run.ripSlot = rsp <= MAX_BIG ? Number(rsp) : rsp;
        rsp += 8n;
        if (!inRange(rsp)) return overflow(plan, "RSP + 8");
        break;
    }
  }
  out["rsp"] = rsp;
  run.rspLow = Number(rsp & 15n);
  run.rspNumber = rsp <= MAX_BIG ? Number(rsp) : -1;
  return undefined;
}
