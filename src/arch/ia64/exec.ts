/**
 * Running an IA-64 rule (ia64.md §2): the one place the IA-64 walker reads the two stacks.
 *
 * 1. psp (the caller's sp): sp, sp + the fixed frame size, or the saved psp (mem_stack_v);
 * 2. rp (the caller's IP): from its save location — a stacked GR at skip(bsp, n − 32), or
 *    memory at psp + 16 − 4·pspoff or sp + 4·spoff — or, before it is saved, from b0 (or the
 *    branch register rp_br names); only the context frame has live branch registers;
 * 3. ar.pfs, likewise saved or live; the caller's CFM is its pfm field;
 * 4. the caller's BSP = skip_regs(bsp, −sol(pfs)): the caller's frame ends where this one starts,
 *    less the caller's outputs, which are this frame's inputs.
 *
 * A value read from a stacked GR is refused when its NaT bit is set (the collection word, or
 * RsRNAT when the collection is at or above RsBSPSTORE, §1.5). Every failure stops the walk with
 * a reason naming the address; nothing here throws.
 *
 * {@link execIa64} runs the exact path, with bigint addresses and every check and explanation.
 * Caller frames first take a fast path on number addresses (the IA-64 walk's benchmark needs it),
 * which gives the exact path's answer whenever everything is in order and otherwise leaves the
 * frame to it.
 */
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { machineInfo } from "../../model/machine.js";
import type { Registers } from "../../model/snapshot.js";
import { cacheSlot } from "../../unwind/cache.js";
import { walkStop, type FuncTableEntry, type StopReason, type WalkStop } from "../../unwind/frame.js";
import type { Ia64Locations, Ia64Rule } from "./rule.js";
import { ia64Label } from "./rule.js";
import { unwindStep, type ExecContext, type OkStep, type UnwindResult } from "../step.js";
import { frameMarkerProblem, ia64Pc, IFS_VALID, MAX_FRAME_REGISTERS, natBit, readWord, skipRegs } from "./rse.js";
import { numberWords, type NumberWords } from "./words.js";

/** A caller frame's registers: what a step recovers (made by a constructor: see {@link Registers}). */
class Ia64CallerRegisters {
  [name: string]: bigint;
  constructor(stiip: bigint, stipsr: bigint, stifs: bigint, intsp: bigint, rsbsp: bigint, rspfs: bigint, brrp: bigint, rsbspstore: bigint, rsrnat: bigint) {
    this.stiip = stiip;
    this.stipsr = stipsr;
    this.stifs = stifs;
    this.intsp = intsp;
    this.rsbsp = rsbsp;
    this.rspfs = rspfs;
    this.brrp = brrp;
    this.rsbspstore = rsbspstore;
    this.rsrnat = rsrnat;
  }
}

/** The register names a step recovers for the caller frame. */
export const IA64_RECOVERED = ["stiip", "stipsr", "stifs", "intsp", "rsbsp", "rspfs", "brrp"] as const;

/** cr.ipsr.ri (bits 42:41), cleared in a caller frame: a return resumes at slot 0. */
const IPSR_RI = 3n << 41n;
/** The 38 bits of a frame marker. */
const PFM_MASK = (1n << 38n) - 1n;

/** The machine table's IA-64 registers by GR and BR number (the static GRs the CONTEXT holds: r1, r4-r8, r12, r13). */
const IA64 = machineInfo("ia64");
const STATIC_GR = IA64.general;
const BRANCH = IA64.branch;

/** A memory save location with its offset as a bigint, ready to add to sp or psp. */
type MemoryLoc = { kind: "psprel"; offset: number; offsetBig: bigint } | { kind: "sprel"; offset: number; offsetBig: bigint };

/** The rule for one frame: the state of its function at its IP, in the form exec applies it. */
export interface Ia64Plan {
  kind: "ia64";
  /** Which function (or the leaf rule) and where it keeps rp, ar.pfs and psp, as the frame's rule names them. */
  function: Ia64Rule["function"];
  locations: Ia64Locations;
  contextFrame: boolean;
  rp: { kind: "gr"; reg: number } | MemoryLoc | { kind: "br"; reg: number };
  pfs: { kind: "gr"; reg: number } | MemoryLoc | { kind: "live" };
  psp: { kind: "sp" } | { kind: "fixed"; size: number; sizeBig: bigint } | { kind: "gr"; reg: number } | { kind: "sprel"; offset: number; offsetBig: bigint };
  entry?: FuncTableEntry;
}

/**
 * What a run keeps between its reads, and the last values it converted (deep walks see the same
 * ones frame after frame): one per cache.
 */
class Ia64Run {
  /** Why the last read failed. */
  failure: WalkStop | undefined = undefined;
  /** The frame being unwound, as {@link readGr} needs it. */
  frameBsp = 0n;
  /** The frame's sof from a valid StIFS, or −1 when unknown. */
  frameSof = -1;
  /** The address {@link readGr} or {@link readMemory} last read (−1n: a register). */
  lastAt = -1n;
  /** The address the fast path last read a stacked register or rp from. */
  fastAt = -1;
  lastIfs = -1n;
  lastIfsSof = -1;
  lastPfs = -1n;
  lastStifs = 0n;
  lastIpsr = -1n;
  lastCallerIpsr = 0n;
  lastBspstore: bigint | undefined = undefined;
  lastBspstoreN = 0;
  /** The frame the fast path is unwinding: its BSP as a number, BSP's slot in its 63-register group, its sof (−1: unknown), BSPSTORE and RNAT. */
  bspN = 0;
  slot = 0;
  sof = -1;
  bspstoreN = 0;
  rnat = 0n;
  /**
   * The step the fast path writes into, refilled by every run: the walk reads a step before it
   * runs the next rule, and a deep walk need not make one per frame.
   */
  step: OkStep | undefined = undefined;
}

const RUN = cacheSlot("ia64 run", () => new Ia64Run());

function fail(run: Ia64Run, reason: StopReason, address: bigint | undefined, detail: string): undefined {
  run.failure = walkStop(reason, detail, address);
  return undefined;
}

function stopped(reason: StopReason, address: bigint | undefined, detail: string): UnwindResult {
  return { ok: false, stop: walkStop(reason, detail, address) };
}

/**
 * The value of general register `reg` of the frame: a stacked register from the backing store
 * (refused when its NaT bit is set), or a static one from the CONTEXT (context frame only).
 * Sets `run.lastAt` to the address read.
 */
function readGr(run: Ia64Run, reg: number, what: string, registers: Registers, memory: MemoryReader, contextFrame: boolean): bigint | undefined {
  if (reg >= 32) {
    const n = reg - 32;
    if (run.frameSof >= 0 && n >= run.frameSof) return fail(run, "unsupported", undefined, `${what} is in r${reg}, outside the frame (sof ${run.frameSof})`);
    // The kernel maps saved GR n to skip(bsp, n − 32) (§1.6 "Rotation": rrb is 0 in prologues).
    const at = skipRegs(run.frameBsp, n);
    run.lastAt = at;
    const value = readWord(memory, at);
    if (value === undefined) return fail(run, "read-fault", at, `${what} in r${reg} at ${hex(at)} (backing store) cannot be read`);
    const nat = natBit(at, registers["rsbspstore"] ?? 0n, registers["rsrnat"] ?? 0n, memory);
    if (nat === -1) return fail(run, "read-fault", at | 0x1f8n, `the NaT collection of r${reg} at ${hex(at | 0x1f8n)} cannot be read`);
    if (nat === 1) return fail(run, "unsupported", at, `${what} in r${reg} at ${hex(at)} has its NaT bit set: it is not a value`);
    return value;
  }
  run.lastAt = -1n;
  const name = STATIC_GR[reg];
  const value = contextFrame && name !== undefined ? registers[name] : undefined;
  if (value === undefined) {
    return fail(run, "unsupported", undefined, `${what} is in static register r${reg}, which ${contextFrame ? "the CONTEXT does not hold" : "only the context frame has"}`);
  }
  return value;
}

function readMemory(run: Ia64Run, at: bigint, what: string, memory: MemoryReader): bigint | undefined {
  run.lastAt = at;
  const value = readWord(memory, at);
  return value === undefined ? fail(run, "read-fault", at, `${what} at ${hex(at)} (memory stack) cannot be read`) : value;
}

/** The frame's rule with what the step read. */
function foundRule(plan: Ia64Plan, rpAt: number | bigint, bsp: bigint, sol: number, callerBsp: bigint): Ia64Rule {
  const l = plan.locations;
  const rule: Ia64Rule = { kind: "ia64", function: plan.function, rp: l.rp, pfs: l.pfs, psp: l.psp, bsp, sol, callerBsp };
  // An address below 2^53 as a number, whichever path read it.
  if (rpAt >= 0) rule.rpAt = typeof rpAt === "bigint" && rpAt <= MAX_SAFE_BIG ? Number(rpAt) : rpAt;
  return rule;
}

/** Runs an IA-64 rule: the fast path for a caller frame when it applies, else the exact path. */
export function execIa64(plan: Ia64Plan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const run = ctx.cache.get(RUN);
  if (!plan.contextFrame) {
    const words = numberWords(memory, ctx.cache);
    if (words !== undefined) {
      const fast = execFast(run, plan, registers, words, ctx);
      if (fast !== undefined) return fast;
    }
  }
  return execExact(run, plan, registers, memory);
}

/**
 * Stacked register `reg` on the number path: its value when it is in the frame, readable and not
 * NaT; undefined for anything else (the exact path then says why). The address is rse.ts
 * `skipRegs(bsp, n)` for n ≥ 0 and the NaT test its `natBit`, on numbers.
 */
function readGrFast(run: Ia64Run, words: NumberWords, reg: number): bigint | undefined {
  if (reg < 32) return undefined;
  const n = reg - 32;
  if (run.sof >= 0 && n >= run.sof) return undefined;
  const at = run.bspN + 8 * (n + Math.trunc((run.slot + n) / 63));
  run.fastAt = at;
  const value = words.read(at);
  if (value === undefined) return undefined;
  // The low 32 bits (exact: at < 2^53) give the offset in the 512-byte group with integer operations.
  const inGroup = (at >>> 0) & 0x1ff;
  const collection = at - inGroup + 0x1f8;
  const bit = inGroup / 8;
  const rnat = run.rnat;
  const nat = collection >= run.bspstoreN ? (rnat === 0n ? 0 : Number((rnat >> BigInt(bit)) & 1n)) : words.bit(collection, bit);
  return nat === 0 ? value : undefined;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_SAFE_BIG = BigInt(MAX_SAFE);
/** 8·k as bigints for every k a frame's BSP can move by (up to 96 registers and their NaT slots). */
const BSP_STEPS: readonly bigint[] = Array.from({ length: 128 }, (_, k) => BigInt(8 * k));

/**
 * A caller frame's step with addresses as numbers (all below 2^53, snapshot memory): the same
 * steps as {@link execExact}, for the case where everything is in order. Anything else (a read
 * that fails, a NaT bit, a bad frame marker, the end of the stack) returns undefined, and the
 * exact path runs and reports it.
 */
function execFast(run: Ia64Run, plan: Ia64Plan, registers: Registers, words: NumberWords, ctx: ExecContext): UnwindResult | undefined {
  const sp = registers["intsp"];
  const bsp = registers["rsbsp"];
  const bspstore = registers["rsbspstore"] ?? 0n;
  if (sp === undefined || bsp === undefined) return undefined;
  // A bigint above 2^53 − 1 converts to a number above it too (rounding never goes below). The
  // walk usually has SP and BSP as numbers already; BSPSTORE is carried from frame to frame.
  const bspN = ctx.bstore >= 0 ? ctx.bstore : Number(bsp);
  const spN = ctx.sp >= 0 ? ctx.sp : Number(sp);
  if (bspstore !== run.lastBspstore) {
    run.lastBspstore = bspstore;
    run.lastBspstoreN = Number(bspstore);
  }
  const bspstoreN = run.lastBspstoreN;
  if (bspN > MAX_SAFE || spN > MAX_SAFE || bspstoreN > MAX_SAFE) return undefined;
  const low = (bspN >>> 0) & 0x1ff;
  if (low % 8 !== 0 || low === 0x1f8) return undefined;
  const slot = low / 8;
  const ifs = registers["stifs"];
  let sof = -1;
  if (ifs !== undefined) {
    if (ifs !== run.lastIfs) {
      run.lastIfs = ifs;
      run.lastIfsSof = ifs >= IFS_VALID ? Number(ifs & 0x7fn) : -1;
    }
    sof = run.lastIfsSof;
  }
  const rnat = registers["rsrnat"] ?? 0n;
  run.bspN = bspN;
  run.slot = slot;
  run.sof = sof;
  run.bspstoreN = bspstoreN;
  run.rnat = rnat;

  let psp: bigint | undefined;
  let pspN: number;
  const p = plan.psp;
  if (p.kind === "sp") {
    psp = sp;
    pspN = spN;
  } else if (p.kind === "fixed") {
    psp = sp + p.sizeBig;
    pspN = spN + p.size;
  } else {
    psp = p.kind === "gr" ? readGrFast(run, words, p.reg) : words.read(spN + p.offset);
    if (psp === undefined) return undefined;
    pspN = Number(psp);
    if (pspN > MAX_SAFE) return undefined;
  }

  const r = plan.rp;
  let rp: bigint | undefined;
  if (r.kind === "gr") rp = readGrFast(run, words, r.reg);
  else if (r.kind === "br") return undefined;
  else {
    run.fastAt = (r.kind === "psprel" ? pspN : spN) + r.offset;
    rp = words.read(run.fastAt);
  }
  // rp = 0 (the end of the stack) and a misaligned rp are the exact path's to report.
  if (rp === undefined || (words.lo | words.hi) === 0 || (words.lo & 0xf) !== 0) return undefined;
  const rpN = words.hi < 0x20_0000 ? words.hi * 4294967296 + words.lo : -1;
  const rpAtN = run.fastAt;

  const f = plan.pfs;
  let pfs: bigint | undefined;
  if (f.kind === "gr") pfs = readGrFast(run, words, f.reg);
  else if (f.kind === "live") return undefined;
  else pfs = words.read((f.kind === "psprel" ? pspN : spN) + f.offset);
  if (pfs === undefined) return undefined;
  const marker = words.lo & 0x3ffff;
  const callerSof = marker & 0x7f;
  const sol = (marker >> 7) & 0x7f;
  if (sol > callerSof || callerSof > MAX_FRAME_REGISTERS || (marker >> 14) * 8 > callerSof) return undefined;
  // skip_regs(bsp, −sol) (rse.ts): d = slot − sol − 62, truncated toward zero.
  const callerBspN = sol === 0 ? bspN : bspN + 8 * (-sol + Math.trunc((slot - sol - 62) / 63));
  if (callerBspN < 0 || (callerSof > 0 && !words.has(callerBspN))) return undefined;
  // Subtracting a small bigint costs less than making one from a number.
  const down = (bspN - callerBspN) / 8;
  const callerBsp = sol === 0 ? bsp : down < BSP_STEPS.length ? bsp - BSP_STEPS[down]! : BigInt(callerBspN);
  if (pfs !== run.lastPfs) {
    run.lastPfs = pfs;
    run.lastStifs = IFS_VALID | (pfs & PFM_MASK);
  }
  const ipsr = registers["stipsr"] ?? 0n;
  if (ipsr !== run.lastIpsr) {
    run.lastIpsr = ipsr;
    run.lastCallerIpsr = ipsr & ~IPSR_RI;
  }
  const out: Registers = new Ia64CallerRegisters(rp, run.lastCallerIpsr, run.lastStifs, psp, callerBsp, pfs, rp, bspstore, rnat);
  const rule = foundRule(plan, rpAtN, bsp, sol, callerBsp);
  const step = (run.step ??= unwindStep(out, rule, { recovered: IA64_RECOVERED }));
  step.registers = out;
  step.rule = rule;
  step.entry = plan.entry;
  step.pcNumber = rpN;
  step.spNumber = pspN;
  step.bstoreNumber = callerBspN;
  return step;
}

/** The step with bigint addresses, every check made and every failure explained. */
function execExact(run: Ia64Run, plan: Ia64Plan, registers: Registers, memory: MemoryReader): UnwindResult {
  const sp = registers["intsp"];
  const bsp = registers["rsbsp"];
  if (sp === undefined || bsp === undefined) return stopped("unsupported", undefined, `the frame has no ${sp === undefined ? "IntSp" : "RsBSP"}`);
  const low = Number(bsp & 0x1ffn);
  if ((low & 7) !== 0) return stopped("unsupported", bsp, `BSP ${hex(bsp)} is not 8-byte aligned`);
  if ((low & 0x1f8) === 0x1f8) return stopped("unsupported", bsp, `BSP ${hex(bsp)} is a NaT collection slot, which BSP never points at`);
  const ifs = registers["stifs"];
  run.frameBsp = bsp;
  // StIFS.v is bit 63: a valid IFS is ≥ 2^63.
  run.frameSof = ifs !== undefined && ifs >= IFS_VALID ? Number(ifs & 0x7fn) : -1;
  const ctx = plan.contextFrame;

  let psp: bigint | undefined;
  const p = plan.psp;
  if (p.kind === "sp") psp = sp;
  else if (p.kind === "fixed") psp = sp + p.sizeBig;
  else if (p.kind === "gr") psp = readGr(run, p.reg, "psp", registers, memory, ctx);
  else psp = readMemory(run, sp + p.offsetBig, "psp", memory);
  if (psp === undefined) return { ok: false, stop: run.failure! };

  const saved = { registers, memory, contextFrame: ctx, sp, psp };
  let rp: bigint | undefined;
  const r = plan.rp;
  if (r.kind === "br") {
    run.lastAt = -1n;
    const name = BRANCH[r.reg];
    rp = name === undefined ? undefined : registers[name];
    if (rp === undefined) return stopped("unsupported", undefined, `rp is in b${r.reg}, which the CONTEXT does not hold`);
  } else rp = readSaved(run, r, "rp", saved);
  if (rp === undefined) return { ok: false, stop: run.failure! };
  const rpAt = run.lastAt;

  let pfs: bigint | undefined;
  const f = plan.pfs;
  if (f.kind === "live") {
    run.lastAt = -1n;
    pfs = registers["rspfs"];
    if (pfs === undefined) return stopped("unsupported", undefined, "ar.pfs is live, but the CONTEXT has no RsPFS");
  } else pfs = readSaved(run, f, "ar.pfs", saved);
  if (pfs === undefined) return { ok: false, stop: run.failure! };
  const pfsAt = run.lastAt;

  const ipsr = registers["stipsr"];
  const callerIpsr = ipsr === undefined ? 0n : ipsr & ~IPSR_RI;
  const bspstore = registers["rsbspstore"] ?? 0n;
  const rnat = registers["rsrnat"] ?? 0n;
  if (rp === 0n) {
    // A return address of 0 ends the stack; the walk loop reports it.
    const out: Registers = new Ia64CallerRegisters(0n, callerIpsr, IFS_VALID | (pfs & PFM_MASK), psp, bsp, pfs, 0n, bspstore, rnat);
    const rule = foundRule(plan, -1, bsp, 0, bsp);
    rule.outermost = true;
    return unwindStep(out, rule, { recovered: IA64_RECOVERED, entry: plan.entry });
  }
  if ((rp & 0xfn) !== 0n) {
    const from = rpAt < 0n ? "" : ` read from ${hex(rpAt)}`;
    return stopped("bad-pc", rp, `the return address ${hex(rp)}${from} is not bundle-aligned (${planText(plan)})`);
  }
  // The caller's frame marker (§1.2): sol ≤ sof ≤ 96, rotating region inside the frame.
  const marker = Number(pfs & 0x3ffffn);
  const sof = marker & 0x7f;
  const sol = (marker >> 7) & 0x7f;
  if (sol > sof || sof > MAX_FRAME_REGISTERS || (marker >> 14) * 8 > sof) {
    const from = f.kind === "live" || pfsAt < 0n ? "ar.pfs" : `the ar.pfs saved at ${hex(pfsAt)}`;
    return stopped("unsupported", f.kind === "live" || pfsAt < 0n ? undefined : pfsAt, `${from} (${hex(pfs)}) is not a frame marker: ${frameMarkerProblem(pfs) ?? ""}`);
  }
  const callerBsp = sol === 0 ? bsp : skipRegs(bsp, -sol);
  if (callerBsp < 0n) return stopped("unsupported", bsp, `the caller's BSP, ${sol} registers below ${hex(bsp)}, is below address 0`);
  if (ctx && psp === sp && callerBsp === bsp && rp === ia64Pc(registers)) {
    return stopped("no-progress", rp, `the caller's (ip, sp, bsp) equal this frame's (${hex(rp)}, ${hex(sp)}, ${hex(bsp)})`);
  }
  // The caller's frame must be in the backing store (§2 step 8: bsp must not leave its region).
  if (sof > 0 && readWord(memory, callerBsp) === undefined) {
    return stopped("read-fault", callerBsp, `the caller's frame at BSP ${hex(callerBsp)} is not in the backing store`);
  }
  const out: Registers = new Ia64CallerRegisters(rp, callerIpsr, IFS_VALID | (pfs & PFM_MASK), psp, callerBsp, pfs, rp, bspstore, rnat);
  return unwindStep(out, foundRule(plan, rpAt, bsp, sol, callerBsp), { recovered: IA64_RECOVERED, entry: plan.entry });
}

/** A value saved in a stacked register or in memory, psp- or sp-relative (the address read in `run.lastAt`). */
function readSaved(
  run: Ia64Run,
  l: { kind: "gr"; reg: number } | MemoryLoc,
  what: string,
  frame: { registers: Registers; memory: MemoryReader; contextFrame: boolean; sp: bigint; psp: bigint },
): bigint | undefined {
  if (l.kind === "gr") return readGr(run, l.reg, what, frame.registers, frame.memory, frame.contextFrame);
  return readMemory(run, (l.kind === "psprel" ? frame.psp : frame.sp) + l.offsetBig, what, frame.memory);
}

/** The plan's rule in words (before the step's values), for a stop's detail. */
function planText(plan: Ia64Plan): string {
  return ia64Label({ function: plan.function, ...plan.locations });
}
