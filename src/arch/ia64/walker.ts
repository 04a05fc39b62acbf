/**
 * The IA-64 walker (trust `ia64-unwind`): one step of ia64.md §2 per frame, driven by the
 * IMAGE_IA64_RUNTIME_FUNCTION_ENTRY table and unwind descriptors of the images mapped in the
 * snapshot.
 *
 * A frame is the pair (sp, bsp): r12 on the memory stack and the address of its r32 on the
 * register backing store. Working out the rule ({@link ia64Unwind}.ruleFor) reads only the image:
 * the entry covering the PC, its descriptors, and the state at `when_target`. Running it reads
 * the two stacks:
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
 * Modelling choices [M] (ia64.md §4.3, §5.3): AddrPC is `bundle | slot·4` (StIIP with
 * StIPSR.ri); a caller frame's entry is looked up at its return address − 1, inside the call
 * bundle (the walk's lookup address), while when_target is taken at the return address (slot 0
 * of the next bundle), so a call in a function's last bundle still finds its function; Params
 * are r32-r35 of the frame, read from the backing store.
 */
import { InputError } from "../../errors.js";
import type { MemoryReader } from "../../memory/reader.js";
import { moduleAt, type Module, type Registers, type Snapshot } from "../../model/snapshot.js";
import type { FuncTableEntry, StopReason, WalkStop } from "../../walk/frame.js";
import { lazyText } from "../../walk/lazy-text.js";
import { unwindStep, type FrameNumbers, type FrameSite, type UnwindResult, type UnwindRule, type UnwindStrategy } from "../../walk/strategy.js";
import { frameMarkerProblem, ia64Pc, IFS_VALID, isValidPc, MAX_FRAME_REGISTERS, natBit, pcBundle, pcSlot, readWord, skipRegs } from "./rse.js";
import { frameStateAt, stateText, type FrameState, type PspRule, type SaveLocation } from "./state.js";
import { entryAt, findEntryIndex, ia64Tables, unwindInfoAt } from "./tables.js";
import { numberWords, type NumberWords } from "./words.js";

const hex = (v: number | bigint): string => "0x" + v.toString(16);

/** The register names a step recovers for the caller frame. */
export const IA64_RECOVERED = ["stiip", "stipsr", "stifs", "intsp", "rsbsp", "rspfs", "brrp"] as const;

/** cr.ipsr.ri (bits 42:41), cleared in a caller frame: a return resumes at slot 0. */
const IPSR_RI = 3n << 41n;
/** The 38 bits of a frame marker. */
const PFM_MASK = (1n << 38n) - 1n;

/** Static general registers the CONTEXT subset holds (r1, r4-r8, r12, r13), by number. */
const STATIC_GR: Readonly<Record<number, string>> = { 1: "intgp", 4: "ints0", 5: "ints1", 6: "ints2", 7: "ints3", 8: "intv0", 12: "intsp", 13: "intteb" };
/** Branch registers in the CONTEXT, by number. */
const BRANCH: readonly string[] = ["brrp", "brs0", "brs1", "brs2", "brs3", "brs4", "brt0", "brt1"];

/** A memory save location with its offset as a bigint, ready to add to sp or psp. */
type MemoryLoc = { kind: "psprel"; offset: number; offsetBig: bigint } | { kind: "sprel"; offset: number; offsetBig: bigint };

/** The rule for one frame: the state of its function at its PC, in the form exec applies it. */
interface Plan {
  label: string;
  contextFrame: boolean;
  rp: { kind: "gr"; reg: number } | MemoryLoc | { kind: "br"; reg: number };
  pfs: { kind: "gr"; reg: number } | MemoryLoc | { kind: "live" };
  psp: { kind: "sp" } | { kind: "fixed"; size: number; sizeBig: bigint } | { kind: "gr"; reg: number } | { kind: "sprel"; offset: number; offsetBig: bigint };
  entry?: FuncTableEntry;
}

/** A save location of the state in exec form. */
function execLoc(l: SaveLocation): { kind: "gr"; reg: number } | MemoryLoc {
  if (l.kind === "gr") return { kind: "gr", reg: l.reg };
  return l.kind === "psprel" ? { kind: "psprel", offset: l.offset, offsetBig: BigInt(l.offset) } : { kind: "sprel", offset: l.offset, offsetBig: BigInt(l.offset) };
}

/** The psp rule of the state in exec form. */
function execPsp(p: PspRule): Plan["psp"] {
  switch (p.kind) {
    case "sp": return { kind: "sp" };
    case "fixed": return { kind: "fixed", size: p.size, sizeBig: BigInt(p.size) };
    case "gr": return { kind: "gr", reg: p.reg };
    case "sprel": return { kind: "sprel", offset: p.offset, offsetBig: BigInt(p.offset) };
  }
}

// The rse helpers the per-frame path calls, bound once (calls through a module binding cost more).
const readWordOf = readWord;
const skip = skipRegs;

/** Why the last {@link Ia64Rule.exec} read failed (one scratch slot: exec runs for every frame). */
let failure: WalkStop | undefined;

function fail(reason: StopReason, address: bigint | undefined, detail: string): undefined {
  failure = address === undefined ? { reason, detail } : { reason, address, detail };
  return undefined;
}

/** Where the last value of each kind came from: a backing-store or stack address, or −1n for a register. */
let rpAt = -1n;
let pfsAt = -1n;

/** The frame being unwound, as {@link readGr} needs it. */
let frameBsp = 0n;
/** The frame's sof from a valid StIFS, or −1 when unknown. */
let frameSof = -1;

/**
 * The value of general register `reg` of the frame: a stacked register from the backing store
 * (refused when its NaT bit is set), or a static one from the CONTEXT (context frame only).
 * Sets `lastAt` to the address read.
 */
function readGr(reg: number, what: string, registers: Registers, memory: MemoryReader, contextFrame: boolean): bigint | undefined {
  if (reg >= 32) {
    const n = reg - 32;
    if (frameSof >= 0 && n >= frameSof) return fail("unsupported", undefined, `${what} is in r${reg}, outside the frame (sof ${frameSof})`);
    // The kernel maps saved GR n to skip(bsp, n − 32) (§1.6 "Rotation": rrb is 0 in prologues).
    const at = skip(frameBsp, n);
    lastAt = at;
    const value = readWordOf(memory, at);
    if (value === undefined) return fail("read-fault", at, `${what} in r${reg} at ${hex(at)} (backing store) cannot be read`);
    const nat = natBit(at, registers["rsbspstore"] ?? 0n, registers["rsrnat"] ?? 0n, memory);
    if (nat === -1) return fail("read-fault", at | 0x1f8n, `the NaT collection of r${reg} at ${hex(at | 0x1f8n)} cannot be read`);
    if (nat === 1) return fail("unsupported", at, `${what} in r${reg} at ${hex(at)} has its NaT bit set: it is not a value`);
    return value;
  }
  lastAt = -1n;
  const name = STATIC_GR[reg];
  const value = contextFrame && name !== undefined ? registers[name] : undefined;
  if (value === undefined) {
    return fail("unsupported", undefined, `${what} is in static register r${reg}, which ${contextFrame ? "the CONTEXT does not hold" : "only the context frame has"}`);
  }
  return value;
}

/** The address {@link readGr} or {@link readMemory} last read (−1n: a register). */
let lastAt = -1n;

function readMemory(at: bigint, what: string, memory: MemoryReader): bigint | undefined {
  lastAt = at;
  const value = readWordOf(memory, at);
  return value === undefined ? fail("read-fault", at, `${what} at ${hex(at)} (memory stack) cannot be read`) : value;
}

function stepText(label: string, rpFrom: number | bigint, bsp: bigint, sol: number, callerBsp: bigint): string {
  const rp = rpFrom < 0 ? "" : ` rp@[${hex(rpFrom)}]`;
  return `${label};${rp} bsp=skip(${hex(bsp)}, -${sol})=${hex(callerBsp)}`;
}

function stopped(reason: StopReason, address: bigint | undefined, detail: string): UnwindResult {
  return { ok: false, stop: address === undefined ? { reason, detail } : { reason, address, detail } };
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const IFS_V = IFS_VALID;
const MAX_REGS = MAX_FRAME_REGISTERS;
const step = unwindStep;
const lazy = lazyText;

/** Small caches of the last conversions: deep walks see the same values frame after frame. */
let lastIfs = -1n;
let lastIfsSof = -1;
let lastPfs = -1n;
let lastStifs = 0n;
let lastIpsr = -1n;
let lastCallerIpsr = 0n;

/** The address the fast path last read a stacked register or rp from. */
let fastRpAt = -1;

/**
 * Stacked register `reg` on the number path: its value when it is in the frame, readable and not
 * NaT; undefined for anything else (the exact path then says why). The address is rse.ts
 * `skipRegs(bsp, n)` for n ≥ 0 and the NaT test its `natBit`, on numbers.
 */
function readGrFast(words: NumberWords, reg: number, bspN: number, slot: number, sof: number, bspstoreN: number, rnat: bigint): bigint | undefined {
  if (reg < 32) return undefined;
  const n = reg - 32;
  if (sof >= 0 && n >= sof) return undefined;
  const at = bspN + 8 * (n + Math.trunc((slot + n) / 63));
  fastRpAt = at;
  const value = words.read(at);
  if (value === undefined) return undefined;
  // The low 32 bits (exact: at < 2^53) give the offset in the 512-byte group with integer operations.
  const inGroup = (at >>> 0) & 0x1ff;
  const collection = at - inGroup + 0x1f8;
  const bit = inGroup / 8;
  const nat = collection >= bspstoreN ? (rnat === 0n ? 0 : Number((rnat >> BigInt(bit)) & 1n)) : words.bit(collection, bit);
  return nat === 0 ? value : undefined;
}

/**
 * A caller frame's step with addresses as numbers (all below 2^53, snapshot memory): the same
 * steps as {@link Ia64Rule.execExact}, for the case where everything is in order. Anything else
 * (a read that fails, a NaT bit, a bad frame marker, the end of the stack) returns undefined, and
 * the exact path runs and reports it.
 */
function execFast(plan: Plan, registers: Registers, words: NumberWords, numbers: FrameNumbers | undefined): UnwindResult | undefined {
  const sp = registers["intsp"];
  const bsp = registers["rsbsp"];
  const bspstore = registers["rsbspstore"] ?? 0n;
  if (sp === undefined || bsp === undefined) return undefined;
  // A bigint above 2^53 − 1 converts to a number above it too (rounding never goes below). The
  // walk usually has SP and BSP as numbers already; BSPSTORE is carried from frame to frame.
  const bspN = numbers !== undefined && numbers.bstore >= 0 ? numbers.bstore : Number(bsp);
  const spN = numbers !== undefined && numbers.sp >= 0 ? numbers.sp : Number(sp);
  if (bspstore !== lastBspstore) {
    lastBspstore = bspstore;
    lastBspstoreN = Number(bspstore);
  }
  const bspstoreN = lastBspstoreN;
  if (bspN > MAX_SAFE || spN > MAX_SAFE || bspstoreN > MAX_SAFE) return undefined;
  const low = (bspN >>> 0) & 0x1ff;
  if (low % 8 !== 0 || low === 0x1f8) return undefined;
  const slot = low / 8;
  const ifs = registers["stifs"];
  let sof = -1;
  if (ifs !== undefined) {
    if (ifs !== lastIfs) {
      lastIfs = ifs;
      lastIfsSof = ifs >= IFS_V ? Number(ifs & 0x7fn) : -1;
    }
    sof = lastIfsSof;
  }
  const rnat = registers["rsrnat"] ?? 0n;

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
    psp = p.kind === "gr" ? readGrFast(words, p.reg, bspN, slot, sof, bspstoreN, rnat) : words.read(spN + p.offset);
    if (psp === undefined) return undefined;
    pspN = Number(psp);
    if (pspN > MAX_SAFE) return undefined;
  }

  const r = plan.rp;
  let rp: bigint | undefined;
  if (r.kind === "gr") rp = readGrFast(words, r.reg, bspN, slot, sof, bspstoreN, rnat);
  else if (r.kind === "br") return undefined;
  else {
    fastRpAt = (r.kind === "psprel" ? pspN : spN) + r.offset;
    rp = words.read(fastRpAt);
  }
  // rp = 0 (the end of the stack) and a misaligned rp are the exact path's to report.
  if (rp === undefined || (words.lo | words.hi) === 0 || (words.lo & 0xf) !== 0) return undefined;
  const rpN = words.hi < 0x20_0000 ? words.hi * 4294967296 + words.lo : -1;
  const rpAtN = fastRpAt;

  const f = plan.pfs;
  let pfs: bigint | undefined;
  if (f.kind === "gr") pfs = readGrFast(words, f.reg, bspN, slot, sof, bspstoreN, rnat);
  else if (f.kind === "live") return undefined;
  else pfs = words.read((f.kind === "psprel" ? pspN : spN) + f.offset);
  if (pfs === undefined) return undefined;
  const marker = words.lo & 0x3ffff;
  const callerSof = marker & 0x7f;
  const sol = (marker >> 7) & 0x7f;
  if (sol > callerSof || callerSof > MAX_REGS || (marker >> 14) * 8 > callerSof) return undefined;
  // skip_regs(bsp, −sol) (rse.ts): d = slot − sol − 62, truncated toward zero.
  const callerBspN = sol === 0 ? bspN : bspN + 8 * (-sol + Math.trunc((slot - sol - 62) / 63));
  if (callerBspN < 0 || (callerSof > 0 && !words.has(callerBspN))) return undefined;
  // Subtracting a small bigint costs less than making one from a number.
  const down = (bspN - callerBspN) / 8;
  const callerBsp = sol === 0 ? bsp : down < BSP_STEPS.length ? bsp - BSP_STEPS[down]! : BigInt(callerBspN);
  if (pfs !== lastPfs) {
    lastPfs = pfs;
    lastStifs = IFS_V | (pfs & PFM_MASK);
  }
  const ipsr = registers["stipsr"] ?? 0n;
  if (ipsr !== lastIpsr) {
    lastIpsr = ipsr;
    lastCallerIpsr = ipsr & ~IPSR_RI;
  }
  const out: Registers = { stiip: rp, stipsr: lastCallerIpsr, stifs: lastStifs, intsp: psp, rsbsp: callerBsp, rspfs: pfs, brrp: rp, rsbspstore: bspstore, rsrnat: rnat };
  return step(out, lazy(stepText, plan.label, rpAtN, bsp, sol, callerBsp), IA64_RECOVERED, undefined, plan.entry, undefined, undefined, rpN, pspN, callerBspN);
}

/** 8·k as bigints for every k a frame's BSP can move by (up to 96 registers and their NaT slots). */
const BSP_STEPS: readonly bigint[] = Array.from({ length: 128 }, (_, k) => BigInt(8 * k));
let lastBspstore: bigint | undefined;
let lastBspstoreN = 0;

/** A plan kept by value (the walk reuses its site object). */
class Ia64Rule implements UnwindRule {
  constructor(private readonly plan: Plan) {}

  describe(): string {
    return this.plan.label;
  }

  exec(registers: Registers, memory: MemoryReader, numbers?: FrameNumbers): UnwindResult {
    if (!this.plan.contextFrame) {
      const words = numberWords(memory);
      if (words !== undefined) {
        const fast = execFast(this.plan, registers, words, numbers);
        if (fast !== undefined) return fast;
      }
    }
    return this.execExact(registers, memory);
  }

  /** The step with bigint addresses, every check made and every failure explained. */
  execExact(registers: Registers, memory: MemoryReader): UnwindResult {
    const plan = this.plan;
    const sp = registers["intsp"];
    const bsp = registers["rsbsp"];
    if (sp === undefined || bsp === undefined) return stopped("unsupported", undefined, `the frame has no ${sp === undefined ? "IntSp" : "RsBSP"}`);
    const low = Number(bsp & 0x1ffn);
    if ((low & 7) !== 0) return stopped("unsupported", bsp, `BSP ${hex(bsp)} is not 8-byte aligned`);
    if ((low & 0x1f8) === 0x1f8) return stopped("unsupported", bsp, `BSP ${hex(bsp)} is a NaT collection slot, which BSP never points at`);
    const ifs = registers["stifs"];
    frameBsp = bsp;
    // StIFS.v is bit 63: a valid IFS is ≥ 2^63.
    frameSof = ifs !== undefined && ifs >= IFS_VALID ? Number(ifs & 0x7fn) : -1;
    const ctx = plan.contextFrame;

    let psp: bigint | undefined;
    const p = plan.psp;
    if (p.kind === "sp") psp = sp;
    else if (p.kind === "fixed") psp = sp + p.sizeBig;
    else if (p.kind === "gr") psp = readGr(p.reg, "psp", registers, memory, ctx);
    else psp = readMemory(sp + p.offsetBig, "psp", memory);
    if (psp === undefined) return { ok: false, stop: failure! };

    let rp: bigint | undefined;
    const r = plan.rp;
    if (r.kind === "gr") rp = readGr(r.reg, "rp", registers, memory, ctx);
    else if (r.kind === "psprel") rp = readMemory(psp + r.offsetBig, "rp", memory);
    else if (r.kind === "sprel") rp = readMemory(sp + r.offsetBig, "rp", memory);
    else {
      lastAt = -1n;
      const name = BRANCH[r.reg];
      rp = name === undefined ? undefined : registers[name];
      if (rp === undefined) return stopped("unsupported", undefined, `rp is in b${r.reg}, which the CONTEXT does not hold`);
    }
    if (rp === undefined) return { ok: false, stop: failure! };
    rpAt = lastAt;

    let pfs: bigint | undefined;
    const f = plan.pfs;
    if (f.kind === "gr") pfs = readGr(f.reg, "ar.pfs", registers, memory, ctx);
    else if (f.kind === "psprel") pfs = readMemory(psp + f.offsetBig, "ar.pfs", memory);
    else if (f.kind === "sprel") pfs = readMemory(sp + f.offsetBig, "ar.pfs", memory);
    else {
      lastAt = -1n;
      pfs = registers["rspfs"];
      if (pfs === undefined) return stopped("unsupported", undefined, "ar.pfs is live, but the CONTEXT has no RsPFS");
    }
    if (pfs === undefined) return { ok: false, stop: failure! };
    pfsAt = lastAt;

    const ipsr = registers["stipsr"];
    const callerIpsr = ipsr === undefined ? 0n : ipsr & ~IPSR_RI;
    const bspstore = registers["rsbspstore"] ?? 0n;
    const rnat = registers["rsrnat"] ?? 0n;
    if (rp === 0n) {
      // A return address of 0 ends the stack; the walk loop reports it.
      const out: Registers = { stiip: 0n, stipsr: callerIpsr, stifs: IFS_VALID | (pfs & PFM_MASK), intsp: psp, rsbsp: bsp, rspfs: pfs, brrp: 0n, rsbspstore: bspstore, rsrnat: rnat };
      return unwindStep(out, `${plan.label}; rp = 0: the outermost frame`, IA64_RECOVERED, undefined, plan.entry);
    }
    if ((rp & 0xfn) !== 0n) {
      const from = rpAt < 0n ? "" : ` read from ${hex(rpAt)}`;
      return stopped("bad-pc", rp, `the return address ${hex(rp)}${from} is not bundle-aligned (${plan.label})`);
    }
    // The caller's frame marker (§1.2): sol ≤ sof ≤ 96, rotating region inside the frame.
    const marker = Number(pfs & 0x3ffffn);
    const sof = marker & 0x7f;
    const sol = (marker >> 7) & 0x7f;
    if (sol > sof || sof > MAX_FRAME_REGISTERS || (marker >> 14) * 8 > sof) {
      const from = f.kind === "live" || pfsAt < 0n ? "ar.pfs" : `the ar.pfs saved at ${hex(pfsAt)}`;
      return stopped("unsupported", f.kind === "live" || pfsAt < 0n ? undefined : pfsAt, `${from} (${hex(pfs)}) is not a frame marker: ${frameMarkerProblem(pfs) ?? ""}`);
    }
    const callerBsp = sol === 0 ? bsp : skip(bsp, -sol);
    if (callerBsp < 0n) return stopped("unsupported", bsp, `the caller's BSP, ${sol} registers below ${hex(bsp)}, is below address 0`);
    if (ctx && psp === sp && callerBsp === bsp && rp === ia64Pc(registers)) {
      return stopped("no-progress", rp, `the caller's (ip, sp, bsp) equal this frame's (${hex(rp)}, ${hex(sp)}, ${hex(bsp)})`);
    }
    // The caller's frame must be in the backing store (§2 step 8: bsp must not leave its region).
    if (sof > 0 && readWordOf(memory, callerBsp) === undefined) {
      return stopped("read-fault", callerBsp, `the caller's frame at BSP ${hex(callerBsp)} is not in the backing store`);
    }
    const out: Registers = { stiip: rp, stipsr: callerIpsr, stifs: IFS_VALID | (pfs & PFM_MASK), intsp: psp, rsbsp: callerBsp, rspfs: pfs, brrp: rp, rsbspstore: bspstore, rsrnat: rnat };
    return unwindStep(out, lazyText(stepText, plan.label, rpAt, bsp, sol, callerBsp), IA64_RECOVERED, undefined, plan.entry);
  }
}

/** A rule that stops the frame. */
function stopRule(reason: StopReason, detail: string, address?: bigint): UnwindRule {
  const stop: WalkStop = address === undefined ? { reason, detail } : { reason, address, detail };
  return { describe: () => detail, exec: (): UnwindResult => ({ ok: false, stop }) };
}

/** The leaf rule for a context frame without an unwind entry (§2 step 1): rp in b0, nothing saved, psp = sp. */
function leafPlan(why: string): Plan {
  return { label: `ia64 leaf (${why}): rp=b0 pfs=ar.pfs psp=sp`, contextFrame: true, rp: { kind: "br", reg: 0 }, pfs: { kind: "live" }, psp: { kind: "sp" } };
}

/**
 * The plan for a frame whose IP is `ip` (`bundle | slot·4`), its entry looked up at `lookup`;
 * a rule that stops when there is none.
 */
function planAt(modules: readonly Module[], images: MemoryReader, lookup: bigint, ip: bigint, contextFrame: boolean): Plan | UnwindRule {
  if (contextFrame ? !isValidPc(ip) : (ip & 0xfn) !== 0n) {
    return stopRule("bad-pc", `the IP ${hex(ip)} is not a bundle address with a slot of 0, 4 or 8`, ip);
  }
  const none = (why: string): Plan | UnwindRule =>
    contextFrame ? leafPlan(why) : stopRule("unsupported", `the return address ${hex(ip)}: ${why}, and only the context frame may be a leaf (ia64.md §2 step 1)`, ip);
  const module = moduleAt(modules, lookup);
  if (module === undefined) return none("no module contains it");
  const tables = ia64Tables(module, images);
  if (tables === undefined) return none(`${module.name} has no readable IA-64 image in the snapshot`);
  if (tables.problem !== undefined) return stopRule("unsupported", tables.problem);
  const index = findEntryIndex(tables, Number(lookup - module.base));
  if (index < 0) return none(`no IMAGE_IA64_RUNTIME_FUNCTION_ENTRY of ${module.name} covers it`);
  const e = entryAt(tables, index);
  const info = unwindInfoAt(tables, e.unwindInfo);
  if ("problem" in info) return stopRule("unsupported", info.problem, info.address);
  const start = module.base + BigInt(e.begin);
  const whenTarget = 3 * Number((pcBundle(ip) - start) / 16n) + pcSlot(ip);
  let state: FrameState;
  try {
    state = frameStateAt(info.records, whenTarget);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const at = module.base + BigInt(err.offset ?? e.unwindInfo);
    return stopRule("unsupported", `${module.name}: the unwind descriptors at ${hex(at)}: ${err.reason}`, at);
  }
  const entry: FuncTableEntry = { kind: "ia64-function", beginRva: BigInt(e.begin), endRva: BigInt(e.end), moduleBase: module.base };
  if (state.unwabi !== undefined) {
    return stopRule("unsupported", `an OS-specific frame (unwabi abi ${state.unwabi.abi}, context ${hex(state.unwabi.context)}) is not modelled`, ip);
  }
  if (state.bspSaved) return stopRule("unsupported", "the function saves ar.bsp (a backing-store switch), which is not modelled", ip);
  if (!contextFrame) {
    if (state.rp.kind === "br") return stopRule("unsupported", `at return address ${hex(ip)} rp is still in b${state.rp.reg}, which only the context frame has`, ip);
    if (state.pfs.kind === "live") return stopRule("unsupported", `at return address ${hex(ip)} ar.pfs is not saved yet, and only the context frame has it live`, ip);
  }
  const label = `ia64 ${module.name}+${hex(e.begin)} t=${whenTarget} ${stateText(state)}`;
  return {
    label,
    contextFrame,
    rp: state.rp.kind === "br" ? state.rp : execLoc(state.rp),
    pfs: state.pfs.kind === "live" ? state.pfs : execLoc(state.pfs),
    psp: execPsp(state.psp),
    entry,
  };
}

/** The IA-64 table-driven unwinder (trust `ia64-unwind`). */
export const ia64Unwind: UnwindStrategy = {
  name: "ia64-unwind",
  trust: "ia64-unwind",
  ruleFor(site: FrameSite): UnwindRule | undefined {
    const contextFrame = site.index === 0 || site.interrupted;
    // A caller frame's lookup address is its return address − 1: inside the call bundle.
    const ip = contextFrame ? site.lookupPc : site.lookupPc + 1n;
    const plan = planAt(site.modules, site.images, site.lookupPc, ip, contextFrame);
    return "exec" in plan ? plan : new Ia64Rule(plan);
  },
};

/**
 * STACKFRAME Params on IA-64 (a modelling choice [M], ia64.md §4.2): r32-r35 of the frame, read
 * from the backing store at skip(bsp, 0..3). Registers past the frame's sof (when StIFS is
 * valid) and unreadable words are 0.
 */
export function ia64Params(registers: Registers, memory: MemoryReader): [bigint, bigint, bigint, bigint] {
  const bsp = registers["rsbsp"];
  const out: [bigint, bigint, bigint, bigint] = [0n, 0n, 0n, 0n];
  if (bsp === undefined || (bsp & 7n) !== 0n) return out;
  const ifs = registers["stifs"];
  const n = ifs !== undefined && ifs >= IFS_VALID ? Math.min(4, Number(ifs & 0x7fn)) : 4;
  for (let i = 0; i < n; i++) out[i] = readWord(memory, skipRegs(bsp, i)) ?? 0n;
  return out;
}

/**
 * What SymFunctionTableAccess64 returns on IA-64: the address, in the target, of the
 * IMAGE_IA64_RUNTIME_FUNCTION_ENTRY covering `address`, or 0 (NULL) when there is none.
 */
export function ia64FunctionTableAccess(target: Snapshot, address: bigint): bigint {
  const module = moduleAt(target.modules, address);
  if (module === undefined) return 0n;
  const tables = ia64Tables(module, target.memory);
  if (tables === undefined || tables.problem !== undefined || tables.directoryRva === 0) return 0n;
  const index = findEntryIndex(tables, Number(address - module.base));
  return index < 0 ? 0n : module.base + BigInt(tables.directoryRva + index * 12);
}
