/**
 * Running an {@link UnwindPlan} against the stack: the one place the x64 table-based unwinder
 * reads stack memory. Addresses are numbers while they stay below 2^53 (every user-mode stack);
 * anything larger reruns the plan on bigints, where an RSP that leaves the 64-bit range (an
 * ALLOC_LARGE that overflows) stops the frame instead of wrapping.
 */
import type { MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import type { WalkStop } from "../../walk/frame.js";
import { readWord, readWordBig, wordBig, wordNumber } from "./code.js";
import { OP_ADD, OP_BASE_REG, OP_BASE_RSP, OP_LOAD, OP_LOAD_XMM, OP_MACHFRAME, OP_POP, OP_RET, OP_SET_RSP, type UnwindPlan } from "./plan.js";
import { REG64, RSP, XMM_HIGH, XMM_LOW } from "./unwind-info.js";

/** The general registers the x64 ABI makes callee-saved. */
export const CALLEE_SAVED_64 = ["rbx", "rbp", "rsi", "rdi", "r12", "r13", "r14", "r15"] as const;

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
    return { rip: 0n, rsp: 0n, rbp, rbx, rsi, rdi, r12, r13, r14, r15 };
  }
  const out: Registers = { rip: 0n, rsp: 0n };
  for (const r of CALLEE_SAVED_64) {
    const v = registers[r];
    if (v !== undefined) out[r] = v;
  }
  return out;
}

/** What the last {@link runPlan} found besides the registers (one scratch object: this runs for every frame). */
export const lastRun = {
  /** Why the last run failed. */
  stop: undefined as WalkStop | undefined,
  /**
   * The last run failed because the registers contradict the plan: the frame register would
   * move RSP down (an unwind only ever moves it up, x64-unwind.md §1.8), as after a longjmp
   * reloaded the frame register with another frame's value.
   */
  inconsistent: false,
  /** The address RIP was read from. */
  ripSlot: 0 as number | bigint,
  /** RIP as a number, −1 when it is 2^53 or more. */
  ripNumber: 0,
  /** The low bits of the caller's RSP (for the alignment check). */
  rspLow: 0,
  /** The caller's RSP as a number, −1 when it is 2^53 or more. */
  rspNumber: 0,
};

const MAX = Number.MAX_SAFE_INTEGER;
const MAX_BIG = BigInt(MAX);
const U64 = 0xffff_ffff_ffff_ffffn;
/** The number path cannot continue: run the plan on bigints instead. */
const BAIL = 1;

const hex = (v: number | bigint): string => "0x" + v.toString(16);

function fault(plan: UnwindPlan, address: number | bigint, what: string): WalkStop {
  return { reason: "read-fault", address: BigInt(address), detail: `${plan.label}: cannot read ${what} at ${hex(address)}` };
}

function unknown(plan: UnwindPlan, r: number): WalkStop {
  return { reason: "unsupported", detail: `${plan.label}: ${REG64[r]!.toUpperCase()} is not known for this frame` };
}

function lowered(plan: UnwindPlan, r: number, from: number | bigint, to: number | bigint): WalkStop {
  lastRun.inconsistent = true;
  return {
    reason: "unsupported",
    address: BigInt(to),
    detail: `${plan.label}: ${REG64[r]} gives RSP ${hex(to)}, below the ${hex(from)} it had: the frame register does not belong to this frame`,
  };
}

function overflow(plan: UnwindPlan, what: string): WalkStop {
  return { reason: "unsupported", detail: `${plan.label}: ${what} leaves the 64-bit address space` };
}

/**
 * Runs `plan` on a frame's `registers`: the caller's registers (the callee-saved ones carried
 * over, see {@link inherited64}; more in {@link lastRun}), or undefined with the reason in
 * `lastRun.stop`.
 */
export function runPlan(plan: UnwindPlan, registers: Registers, memory: MemoryReader, rspNumber = -1): Registers | undefined {
  const rsp = registers["rsp"];
  let stop: WalkStop | undefined;
  lastRun.inconsistent = false;
  if (rsp === undefined) stop = { reason: "unsupported", detail: `${plan.label}: RSP is not known for this frame` };
  else {
    let out = inherited64(registers);
    const simple = plan.simple;
    if (simple !== undefined && rsp <= MAX_BIG) {
      const result = runSimple(plan, simple, memory, out, rspNumber >= 0 ? rspNumber : Number(rsp), rsp);
      if (result === undefined) return out;
      if (result !== BAIL) {
        lastRun.stop = result;
        return undefined;
      }
    }
    let result = rsp <= MAX_BIG ? runNumbers(plan, registers, memory, out, Number(rsp)) : BAIL;
    if (result === BAIL) {
      out = inherited64(registers);
      result = runBigints(plan, registers, memory, out, rsp);
    }
    if (result === undefined) return out;
    stop = result;
  }
  lastRun.stop = stop;
  return undefined;
}

/** {@link runNumbers} for a plan's simple form: fixed offsets from RSP. */
function runSimple(plan: UnwindPlan, simple: NonNullable<UnwindPlan["simple"]>, memory: MemoryReader, out: Registers, rsp: number, rspBig: bigint): WalkStop | undefined | typeof BAIL {
  const raSlot = rsp + simple.raOffset;
  if (raSlot + 8 > MAX) return BAIL;
  const offsets = simple.popOffsets;
  for (let k = 0; k < offsets.length; k++) {
    const at = rsp + offsets[k]!;
    const r = simple.popRegisters[k]!;
    if (!readWord(memory, at)) return fault(plan, at, `the saved ${REG64[r]}`);
    setRegister(out, r, wordBig());
  }
  if (!readWord(memory, raSlot)) return fault(plan, raSlot, "the return address");
  out["rip"] = wordBig();
  lastRun.ripNumber = wordNumber();
  lastRun.ripSlot = raSlot;
  // Below 2^53 (checked above), so no wrap: the sum is the caller's RSP.
  out["rsp"] = rspBig + simple.callerRsp;
  lastRun.rspLow = (raSlot + 8) % 16;
  lastRun.rspNumber = raSlot + 8;
  return undefined;
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

/** A register's current value as a number: −1 when it is 2^53 or more, −2 when unknown. */
function registerNumber(r: number, rsp: number, registers: Registers, out: Registers): number {
  if (r === RSP) return rsp;
  const name = REG64[r]!;
  const v = out[name] ?? registers[name];
  if (v === undefined) return -2;
  return v <= MAX_BIG ? Number(v) : -1;
}

function runNumbers(plan: UnwindPlan, registers: Registers, memory: MemoryReader, out: Registers, rsp0: number): WalkStop | undefined | typeof BAIL {
  const code = plan.code;
  let rsp = rsp0;
  let base = rsp0;
  for (let i = 0; i < code.length; i += 3) {
    const r = code[i + 1]!;
    const n = code[i + 2]!;
    switch (code[i]) {
      case OP_BASE_RSP:
        base = rsp;
        break;
      case OP_BASE_REG: {
        const v = registerNumber(r, rsp, registers, out);
        if (v === -2) return unknown(plan, r);
        if (v < 0 || v - n < 0) return BAIL;
        base = v - n;
        break;
      }
      case OP_SET_RSP: {
        const v = registerNumber(r, rsp, registers, out);
        if (v === -2) return unknown(plan, r);
        if (v < 0 || v + n < 0 || v + n > MAX) return BAIL;
        if (v + n < rsp) return lowered(plan, r, rsp, v + n);
        rsp = v + n;
        break;
      }
      case OP_ADD:
        rsp += n;
        if (rsp < 0 || rsp > MAX) return BAIL;
        break;
      case OP_POP:
        if (!readWord(memory, rsp)) return fault(plan, rsp, `the saved ${REG64[r]}`);
        if (r === RSP) {
          const v = wordNumber();
          if (v < 0 || v + 8 > MAX) return BAIL;
          rsp = v + 8;
        } else {
          setRegister(out, r, wordBig());
          rsp += 8;
        }
        break;
      case OP_LOAD: {
        const at = base + n;
        if (at > MAX) return BAIL;
        if (!readWord(memory, at)) return fault(plan, at, `the saved ${REG64[r]}`);
        if (r === RSP) {
          const v = wordNumber();
          if (v < 0) return BAIL;
          rsp = v;
        } else out[REG64[r]!] = wordBig();
        break;
      }
      case OP_LOAD_XMM: {
        const at = base + n;
        if (at + 8 > MAX) return BAIL;
        if (!readWord(memory, at)) return fault(plan, at, `the saved xmm${r}`);
        const low = wordBig();
        if (!readWord(memory, at + 8)) return fault(plan, at + 8, `the saved xmm${r}`);
        out[XMM_LOW[r]!] = low;
        out[XMM_HIGH[r]!] = wordBig();
        break;
      }
      case OP_MACHFRAME: {
        const at = rsp + n;
        if (at + 24 > MAX) return BAIL;
        if (!readWord(memory, at)) return fault(plan, at, "the machine frame's RIP");
        out["rip"] = wordBig();
        lastRun.ripNumber = wordNumber();
        lastRun.ripSlot = at;
        if (!readWord(memory, at + 24)) return fault(plan, at + 24, "the machine frame's RSP");
        const v = wordNumber();
        if (v < 0) return BAIL;
        rsp = v;
        break;
      }
      case OP_RET:
        if (!readWord(memory, rsp)) return fault(plan, rsp, "the return address");
        out["rip"] = wordBig();
        lastRun.ripNumber = wordNumber();
        lastRun.ripSlot = rsp;
        rsp += 8;
        break;
    }
  }
  out["rsp"] = BigInt(rsp);
  lastRun.rspLow = rsp % 16;
  lastRun.rspNumber = rsp;
  return undefined;
}

/** The same on bigints, for addresses of 2^53 or more. */
function runBigints(plan: UnwindPlan, registers: Registers, memory: MemoryReader, out: Registers, rsp0: bigint): WalkStop | undefined {
  const code = plan.code;
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
        if (v + n < rsp) return lowered(plan, r, rsp, v + n);
        rsp = v + n;
        if (!inRange(rsp)) return overflow(plan, `RSP = ${REG64[r]} ${n < 0n ? "-" : "+"} ${hex(n < 0n ? -n : n)}`);
        break;
      }
      case OP_ADD:
        rsp += n;
        if (!inRange(rsp)) return overflow(plan, `RSP + ${hex(n)}`);
        break;
      case OP_POP:
        if (!readWordBig(memory, rsp)) return fault(plan, rsp, `the saved ${REG64[r]}`);
        if (r === RSP) rsp = wordBig() + 8n;
        else {
          out[REG64[r]!] = wordBig();
          rsp += 8n;
        }
        if (!inRange(rsp)) return overflow(plan, "RSP + 8");
        break;
      case OP_LOAD: {
        const at = (base + n) & U64;
        if (!readWordBig(memory, at)) return fault(plan, at, `the saved ${REG64[r]}`);
        if (r === RSP) rsp = wordBig();
        else out[REG64[r]!] = wordBig();
        break;
      }
      case OP_LOAD_XMM: {
        const at = (base + n) & U64;
        if (!readWordBig(memory, at)) return fault(plan, at, `the saved xmm${r}`);
        const low = wordBig();
        if (!readWordBig(memory, (at + 8n) & U64)) return fault(plan, (at + 8n) & U64, `the saved xmm${r}`);
        out[XMM_LOW[r]!] = low;
        out[XMM_HIGH[r]!] = wordBig();
        break;
      }
      case OP_MACHFRAME: {
        const at = (rsp + n) & U64;
        if (!readWordBig(memory, at)) return fault(plan, at, "the machine frame's RIP");
        out["rip"] = wordBig();
        lastRun.ripNumber = wordNumber();
        lastRun.ripSlot = at;
        const rspAt = (at + 24n) & U64;
        if (!readWordBig(memory, rspAt)) return fault(plan, rspAt, "the machine frame's RSP");
        rsp = wordBig();
        break;
      }
      case OP_RET:
        if (!readWordBig(memory, rsp)) return fault(plan, rsp, "the return address");
        out["rip"] = wordBig();
        lastRun.ripNumber = wordNumber();
        lastRun.ripSlot = rsp;
        rsp += 8n;
        if (!inRange(rsp)) return overflow(plan, "RSP + 8");
        break;
    }
  }
  out["rsp"] = rsp;
  lastRun.rspLow = Number(rsp & 15n);
  lastRun.rspNumber = rsp <= MAX_BIG ? Number(rsp) : -1;
  return undefined;
}
