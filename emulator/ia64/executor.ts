/**
 * The IA-64 model executor (ia64.md §5.2). Unicorn cannot run IA-64, so synthetic call chains
 * (main → A → B → … → innermost) run on a model of the machine state a stack walker looks at:
 * the memory stack (r12, growing down), the register backing store (growing up, with its NaT
 * collection slots), CFM, ar.pfs, b0 and the instruction pointer as bundle + slot. Each function
 * is a list of one-slot steps — `alloc`, the rp save, the ar.pfs save, the psp save, the sp
 * adjust, the call, the epilogue's restores and `br.ret` — whose effects follow the architecture
 * (§1.4); the instructions themselves are not modelled (the code section is zero).
 *
 * Everything in this file is a modelling choice [M] built on §1-§4:
 * - every stacked register is written straight to its backing-store address as it is set (the
 *   state after `cover` + `flushrs`); registers the program does not set get a unique tag
 *   0xF000…|frame<<16|regno (outputs: 0xA000…), and some locals get their NaT bit set;
 * - the snapshot covers and flushes the innermost frame: RsBSPSTORE = the end of that frame;
 *   collection words below it are in memory, the partial collection is RsRNAT; words the model
 *   never wrote read as a poison value (0xDEAD…, misaligned as a code address), and collection
 *   slots at or above BSPSTORE as all ones (stale memory), so a walker reading the wrong word
 *   fails loudly;
 * - `bspstoreOnCollection` hand-builds the one state the flushed model never reaches: BSPSTORE on
 *   the collection slot just past the frame (the RSE has not stored that collection yet), to test
 *   the NaT lookup at exactly BSPSTORE (§5.4 item 6);
 * - main is entered with b0 = 0 and ar.pfs = 0 (sentinels), so its return address ends the stack.
 *
 * The ground truth comes from this execution, never from a walker: for each frame its PC
 * (`bundle | slot·4`; a caller's is the return address, the bundle after its call), its sp at
 * that point and its BSP. Nothing here imports src/arch or src/walk.
 */
import { hex, InputError, type MemoryRegion, RegionMemory, type TruthFrame, type Vector } from "../../src/index.js";
import { frameMarker, interruptionFrameState, isCollectionSlot, previousFunctionState, stepRegisters } from "./rse-model.js";
import { mapImage, type ImageFunction, type Record } from "./unwind-encode.js";

/** Where a function keeps rp or ar.pfs. */
export type Ia64Save =
  /** A stacked GR of its own frame (a local: r(32 + ins) … r(32 + sol − 1)). */
  | { gr: number }
  /** Memory at psp + 16 − 4·pspoff (the record's pspoff; even, so the slot is 8-aligned). */
  | { psprel: number }
  /** Memory at sp + 4·spoff, after the sp adjust (even spoff, at least 4: above the callee scratch area). */
  | { sprel: number }
  /** rp only: the caller called with `br.call bk = …`, so the return link is bk (rp_br); innermost only. */
  | { br: number }
  /** Not saved: rp stays in b0, or (ar.pfs) the function has no `alloc`; innermost only. */
  | "none";

/** A prologue step, one slot each. */
export type PrologueStep = "alloc" | "rp" | "pfs" | "psp" | "sp";
/** A step after the prologue. */
export type BodyStep = "call" | "restore-rp" | "restore-pfs" | "restore-sp" | "ret";

/** One function of a chain. */
export interface Ia64FunctionSpec {
  name: string;
  /** Registers of the frame: sol = ins + locals, sof = sol + outs (≤ 96). */
  ins: number;
  locals: number;
  outs: number;
  /** The fixed memory frame (a multiple of 16), or the variable frame's size; 0 for none. */
  frameBytes: number;
  /** A variable frame (mem_stack_v): psp kept in a stacked GR or at sp + 4·spoff. */
  variable?: { gr: number } | { sprel: number };
  rp: Ia64Save;
  pfs: Ia64Save;
  /** The prologue's region header: R1 (default, rlen ≤ 31), R3, or R2 (rp, pfs, psp in consecutive GRs). */
  header?: "R1" | "R2" | "R3";
  /** With `header: "R2"`: also emit rp_when / pfs_when (default true); without them the saves date from the prologue's last slot. */
  whenRecords?: boolean;
  /** Emit each `*_when` record before (default) or after its location record. */
  order?: "when-first" | "location-first";
  /** The prologue steps in order (default: alloc, rp, psp, sp, then sp-relative and memory saves). */
  prologue?: readonly PrologueStep[];
  /** Extra body slots before the call (or before the epilogue of a leaf). */
  bodySlots?: number;
  /** No call site (innermost only). */
  leaf?: boolean;
  /** The call is the last instruction (a noreturn call): no epilogue, so the return address is the function's end. */
  noReturn?: boolean;
  /** Run as this many nested frames (recursion through one call site). */
  repeat?: number;
}

/** Where execution of the innermost function stops: a slot, or a step's slot plus an offset. */
export type StopPoint = number | { step: PrologueStep | BodyStep; offset?: number };

/** A synthetic call chain. */
export interface Ia64ChainSpec {
  name: string;
  description: string;
  /** Outermost (main) first. */
  functions: readonly Ia64FunctionSpec[];
  /** The innermost function's stop slot: that slot has not executed. */
  stop: StopPoint;
  /** Module base (default 0x1_0000_0000); 64 KiB aligned. */
  imageBase?: bigint;
  /** main's sp at entry (default 0x7ff_f000_0000): 16-byte aligned. */
  stackTop?: bigint;
  /** main's BSP (default 0x7ff_e000_0000); its slot in the 512-byte group is the point (§5.2). */
  rbsBase?: bigint;
  /** Hand-build BSPSTORE on the collection slot just past the innermost frame (§5.4 item 6). */
  bspstoreOnCollection?: boolean;
}

/** A step placed at a slot. */
interface Placed<S> {
  step: S;
  slot: number;
}

/** A function laid out in slots. */
export interface FunctionLayout {
  prologue: Placed<PrologueStep>[];
  /** Slots of the body steps. */
  body: Placed<BodyStep>[];
  /** Slots in all (whole bundles). */
  slots: number;
  records: Record[];
}

const U64 = (1n << 64n) - 1n;
const POISON = 0xdead_0000_0000_0000n;
/** A plausible user-mode cr.ipsr: ic, i, dt, rt, it, bn and cpl 3; ri is added per snapshot. */
const USER_IPSR = (1n << 13n) | (1n << 14n) | (1n << 17n) | (1n << 27n) | (3n << 32n) | (1n << 36n) | (1n << 44n);

function bad(spec: string, why: string): never {
  throw new InputError("bad-value", `${spec}: ${why}`);
}

function slotOf(layout: FunctionLayout, step: PrologueStep | BodyStep): number | undefined {
  return layout.prologue.find((p) => p.step === step)?.slot ?? layout.body.find((p) => p.step === step)?.slot;
}

const isMemory = (s: Ia64Save): s is { psprel: number } | { sprel: number } => typeof s === "object" && ("psprel" in s || "sprel" in s);

/** The default prologue order, and checks of an explicit one. */
function prologueSteps(f: Ia64FunctionSpec): PrologueStep[] {
  const sprel = (s: Ia64Save): boolean => typeof s === "object" && "sprel" in s;
  if (f.prologue !== undefined) return [...f.prologue];
  const steps: PrologueStep[] = [];
  if (f.pfs !== "none") steps.push("alloc");
  if (typeof f.rp === "object" && !("br" in f.rp) && !sprel(f.rp)) steps.push("rp");
  if (f.variable !== undefined) steps.push("psp");
  if (f.frameBytes > 0) steps.push("sp");
  if (sprel(f.rp)) steps.push("rp");
  if (isMemory(f.pfs)) steps.push("pfs");
  return steps;
}

/** Lays a function out in slots and writes its unwind records (§3.3-§3.5). */
export function layoutFunction(f: Ia64FunctionSpec, innermost: boolean): FunctionLayout {
  const where = `function ${f.name}`;
  const steps = prologueSteps(f);
  const prologue = steps.map((step, slot) => ({ step, slot }));
  const has = (s: PrologueStep): boolean => steps.includes(s);
  const wants = (s: PrologueStep, yes: boolean): void => {
    const n = steps.filter((x) => x === s).length;
    if (n !== (yes ? 1 : 0)) bad(where, `the prologue must have ${yes ? "one" : "no"} "${s}" step`);
  };
  wants("alloc", f.pfs !== "none");
  wants("rp", typeof f.rp === "object" && !("br" in f.rp));
  wants("pfs", isMemory(f.pfs));
  wants("psp", f.variable !== undefined);
  wants("sp", f.frameBytes > 0);
  const at = (s: PrologueStep): number => steps.indexOf(s);
  const grOf = (s: Ia64Save | { gr: number } | { sprel: number } | undefined): number | undefined => (typeof s === "object" && "gr" in s ? s.gr : undefined);
  // Stacked registers exist only once `alloc` has made the frame; a memory ar.pfs save stores what alloc read.
  if (has("alloc")) {
    if (grOf(f.rp) !== undefined && at("rp") < at("alloc")) bad(where, `"rp" writes r${grOf(f.rp)} before "alloc" made the frame`);
    if (grOf(f.variable) !== undefined && at("psp") < at("alloc")) bad(where, `"psp" writes r${grOf(f.variable)} before "alloc" made the frame`);
    if (has("pfs") && at("pfs") < at("alloc")) bad(where, `"pfs" stores ar.pfs before "alloc" read it`);
  }
  const sprelAfterSp = (s: Ia64Save, step: PrologueStep): void => {
    if (typeof s === "object" && "sprel" in s && at(step) < at("sp")) bad(where, `the sp-relative "${step}" save must follow the sp adjust`);
  };
  sprelAfterSp(f.rp, "rp");
  sprelAfterSp(f.pfs, "pfs");
  if (f.variable !== undefined && at("psp") > at("sp")) bad(where, `the psp save must precede the sp adjust`);

  const P = prologue.length;
  const body: Placed<BodyStep>[] = [];
  let next = P + (f.bodySlots ?? 0);
  if (!f.leaf) {
    while (next % 3 !== 2) next++;
    body.push({ step: "call", slot: next++ });
  } else if (f.noReturn) bad(where, "a leaf has no call to be noreturn");
  if (!innermost && f.leaf) bad(where, "only the innermost function can be a leaf");
  let restoreSp = -1;
  if (!f.noReturn) {
    if (typeof f.rp === "object" && !("br" in f.rp)) body.push({ step: "restore-rp", slot: next++ });
    if (f.pfs !== "none") body.push({ step: "restore-pfs", slot: next++ });
    if (f.frameBytes > 0) {
      restoreSp = next;
      body.push({ step: "restore-sp", slot: next++ });
    }
    while (next % 3 !== 2) next++;
    body.push({ step: "ret", slot: next++ });
  }
  const slots = next;

  // Prologue records: the region header, then rp, ar.pfs, psp and the memory stack (§3.4).
  const records: Record[] = [];
  const header = f.header ?? (P > 31 ? "R3" : "R1");
  let r2Covers = new Set<string>();
  if (P > 0) {
    if (header === "R2") {
      const seq = [
        { name: "rp", reg: grOf(f.rp), bit: 8 },
        { name: "pfs", reg: grOf(f.pfs), bit: 4 },
        { name: "psp", reg: grOf(f.variable), bit: 2 },
      ].filter((x) => x.reg !== undefined);
      if (seq.length === 0) bad(where, "R2 needs rp, ar.pfs or psp in a GR");
      seq.forEach((x, i) => {
        if (x.reg !== seq[0]!.reg! + i) bad(where, "R2 needs rp, ar.pfs and psp in consecutive GRs, in that order");
      });
      records.push({ r: "R2", mask: seq.reduce((m, x) => m | x.bit, 0), grsave: seq[0]!.reg!, rlen: P });
      r2Covers = new Set(seq.map((x) => x.name));
    } else if (header === "R1") {
      if (P > 31) bad(where, `an R1 header holds rlen ≤ 31, not ${P}`);
      records.push({ r: "R1", body: false, rlen: P });
    } else records.push({ r: "R3", body: false, rlen: P });
    const pair = (when: Record | undefined, location: Record | undefined): void => {
      const both = [when, location].filter((x): x is Record => x !== undefined);
      records.push(...(f.order === "location-first" ? both.reverse() : both));
    };
    const whenOf = (which: 4 | 6, step: PrologueStep): Record | undefined =>
      header === "R2" && f.whenRecords === false ? undefined : { r: "P7", which, value: at(step) };
    // ar.pfs: saved in a GR by `alloc` itself, or stored to memory by its own step.
    if (typeof f.pfs === "object" && "gr" in f.pfs) pair(whenOf(6, "alloc"), r2Covers.has("pfs") ? undefined : { r: "P3", which: 2, reg: f.pfs.gr });
    else if (typeof f.pfs === "object" && "psprel" in f.pfs) pair(whenOf(6, "pfs"), { r: "P7", which: 7, value: f.pfs.psprel });
    else if (typeof f.pfs === "object" && "sprel" in f.pfs) pair(whenOf(6, "pfs"), { r: "P8", which: 2, value: f.pfs.sprel });
    if (typeof f.rp === "object" && "gr" in f.rp) pair(whenOf(4, "rp"), r2Covers.has("rp") ? undefined : { r: "P3", which: 1, reg: f.rp.gr });
    else if (typeof f.rp === "object" && "psprel" in f.rp) pair(whenOf(4, "rp"), { r: "P7", which: 5, value: f.rp.psprel });
    else if (typeof f.rp === "object" && "sprel" in f.rp) pair(whenOf(4, "rp"), { r: "P8", which: 1, value: f.rp.sprel });
    else if (typeof f.rp === "object" && "br" in f.rp) records.push({ r: "P3", which: 6, reg: f.rp.br });
    if (f.variable !== undefined) {
      if ("gr" in f.variable && !r2Covers.has("psp")) records.push({ r: "P3", which: 0, reg: f.variable.gr });
      if ("sprel" in f.variable) records.push({ r: "P7", which: 3, value: f.variable.sprel });
      records.push({ r: "P7", which: 1, value: at("sp") });
    } else if (f.frameBytes > 0) records.push({ r: "P7", which: 0, value: at("sp"), size: f.frameBytes / 16 });
  } else if (typeof f.rp === "object" && "br" in f.rp) {
    // rp_br is a prologue record: a one-slot-less function still needs a (zero-length) prologue for it.
    records.push({ r: "R1", body: false, rlen: 0 }, { r: "P3", which: 6, reg: f.rp.br });
  }
  const bodyLen = slots - P;
  records.push(bodyLen > 31 ? { r: "R3", body: true, rlen: bodyLen } : { r: "R1", body: true, rlen: bodyLen });
  if (restoreSp >= 0) records.push({ r: "B2", ecount: 0, t: slots - 1 - restoreSp });
  return { prologue, body, slots, records };
}

/** What {@link runChain} produces. */
export interface ChainRun {
  vector: Vector;
  /** Each frame instance, outermost first: its function, BSP, CFM and sp. */
  frames: { name: string; bsp: bigint; sof: number; sol: number; sp: bigint }[];
  layouts: Map<string, FunctionLayout>;
}

/** Checks a function spec against its caller's outputs (§5.1). */
function checkFunction(f: Ia64FunctionSpec, callerOuts: number | undefined, innermost: boolean): void {
  const where = `function ${f.name}`;
  for (const [k, v] of [["ins", f.ins], ["locals", f.locals], ["outs", f.outs]] as const) {
    if (!Number.isInteger(v) || v < 0) bad(where, `${k} must be a whole number ≥ 0, not ${v}`);
  }
  const sol = f.ins + f.locals;
  const sof = sol + f.outs;
  if (sof > 96) bad(where, `sof = ${sof} is more than 96 registers`);
  if (f.pfs === "none" && sof !== 0) bad(where, "a function without alloc declares no registers (ins = locals = outs = 0)");
  if (callerOuts !== undefined && f.ins > callerOuts) bad(where, `takes ${f.ins} inputs but its caller has ${callerOuts} outputs`);
  if (f.frameBytes % 16 !== 0 || f.frameBytes < 0) bad(where, `frameBytes ${f.frameBytes} is not a multiple of 16`);
  if (f.variable !== undefined && f.frameBytes === 0) bad(where, "a variable frame needs frameBytes > 0");
  if (!innermost && (f.rp === "none" || (typeof f.rp === "object" && "br" in f.rp) || f.pfs === "none")) {
    bad(where, "only the innermost function may keep rp in a branch register or have no alloc");
  }
  const gr = (s: Ia64Save | { gr: number } | { sprel: number } | undefined, what: string): number | undefined => {
    if (typeof s !== "object" || !("gr" in s)) return undefined;
    if (s.gr < 32 + f.ins || s.gr >= 32 + sol) bad(where, `${what} in r${s.gr} is not a local (r${32 + f.ins}..r${31 + sol})`);
    return s.gr;
  };
  const regs = [gr(f.rp, "rp"), gr(f.pfs, "ar.pfs"), gr(f.variable, "psp")].filter((r) => r !== undefined);
  if (new Set(regs).size !== regs.length) bad(where, "rp, ar.pfs and psp need distinct registers");
  const sprel = (s: Ia64Save | { gr: number } | { sprel: number } | undefined, what: string): void => {
    if (typeof s !== "object" || !("sprel" in s)) return;
    if (s.sprel % 2 !== 0 || 4 * s.sprel < 16 || 4 * s.sprel + 8 > f.frameBytes) bad(where, `${what} at sp+${hex(4 * s.sprel)} is not an aligned slot of the frame above the scratch area`);
  };
  sprel(f.rp, "rp");
  sprel(f.pfs, "ar.pfs");
  sprel(f.variable, "psp");
  const psprel = (s: Ia64Save, what: string): void => {
    if (typeof s !== "object" || !("psprel" in s)) return;
    // In the frame above the callee scratch area ([psp − frameBytes + 16, psp)), or in the caller's scratch area ([psp, psp + 16)).
    const off = 16 - 4 * s.psprel;
    const inFrame = off < 0 && off >= 16 - f.frameBytes;
    if (s.psprel % 2 !== 0 || !(inFrame || (off >= 0 && off <= 8))) bad(where, `${what} at psp${off < 0 ? "-" : "+"}${hex(Math.abs(off))} is not an aligned slot of the frame or the caller's scratch area`);
  };
  psprel(f.rp, "rp");
  psprel(f.pfs, "ar.pfs");
  // Each memory save needs its own slot: offsets from the entry sp (psp).
  const slots = [
    ["rp", f.rp],
    ["ar.pfs", f.pfs],
    ["psp", f.variable],
  ].flatMap(([what, s]) => (typeof s !== "object" ? [] : "psprel" in s ? [[what, 16 - 4 * s.psprel]] : "sprel" in s ? [[what, 4 * s.sprel - f.frameBytes]] : [])) as [string, number][];
  for (let i = 0; i < slots.length; i++) {
    for (let j = i + 1; j < slots.length; j++) if (slots[i]![1] === slots[j]![1]) bad(where, `${slots[i]![0]} and ${slots[j]![0]} are saved at the same address`);
  }
}

/** The stop slot of the innermost function. */
function stopSlot(stop: StopPoint, layout: FunctionLayout, name: string): number {
  let slot: number;
  if (typeof stop === "number") slot = stop;
  else {
    const s = slotOf(layout, stop.step);
    if (s === undefined) bad(`function ${name}`, `has no "${stop.step}" step to stop at`);
    slot = s + (stop.offset ?? 0);
  }
  if (!Number.isInteger(slot) || slot < 0 || slot >= layout.slots) bad(`function ${name}`, `the stop slot ${slot} is not one of its ${layout.slots} slots`);
  return slot;
}

/** Runs a chain and returns its vector (memory, CONTEXT subset, module, truth). */
export function runChain(chain: Ia64ChainSpec): ChainRun {
  const imageBase = chain.imageBase ?? 0x1_0000_0000n;
  const stackTop = chain.stackTop ?? 0x7ff_f000_0000n;
  const rbsBase = chain.rbsBase ?? 0x7ff_e000_0000n;
  if (stackTop % 16n !== 0n) bad(chain.name, "stackTop must be 16-byte aligned");
  if (rbsBase % 8n !== 0n || isCollectionSlot(rbsBase)) bad(chain.name, "rbsBase must be an 8-aligned register slot");
  if (chain.functions.length === 0) bad(chain.name, "a chain needs at least one function");

  // Lay out the image: the functions one after another from RVA 0x1000, in chain order.
  const layouts = new Map<string, FunctionLayout>();
  const rvas = new Map<string, number>();
  const imageFunctions: ImageFunction[] = [];
  let rva = 0x1000;
  chain.functions.forEach((f, i) => {
    if (layouts.has(f.name)) bad(chain.name, `function ${f.name} appears twice (use repeat for recursion)`);
    // The innermost spec's last instance is the innermost frame; a recursion's other instances call.
    const innermost = i === chain.functions.length - 1 && (f.repeat ?? 1) === 1;
    checkFunction(f, i === 0 ? undefined : chain.functions[i - 1]!.outs, innermost);
    if ((f.repeat ?? 1) > 1 && f.ins > f.outs) bad(`function ${f.name}`, "a recursive function passes its caller's outputs as inputs: ins ≤ outs");
    const layout = layoutFunction(f, innermost);
    layouts.set(f.name, layout);
    rvas.set(f.name, rva);
    imageFunctions.push({ name: f.name, rva, size: 16 * (layout.slots / 3), records: layout.records });
    rva += 16 * (layout.slots / 3);
  });
  const image = mapImage(imageBase, imageFunctions, 0x1000);

  // The machine state.
  const rbs = new Map<bigint, bigint>();
  const nat = new Map<bigint, boolean>();
  const stack = new Map<bigint, bigint>();
  let bsp = rbsBase;
  let sp = stackTop;
  let sof = chain.functions[0]!.ins;
  let sol = 0;
  let b0 = 0n;
  const br: bigint[] = [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n];
  let pfs = 0n;
  const ec = 0;
  const ppl = 3;
  const writeGr = (frameBsp: bigint, n: number, value: bigint, natBit = false): void => {
    const at = stepRegisters(frameBsp, n);
    if (isCollectionSlot(at)) throw new Error(`internal: register at collection slot ${hex(at)}`);
    rbs.set(at, value & U64);
    nat.set(at, natBit);
  };
  for (let n = 0; n < sof; n++) writeGr(bsp, n, 0xa000_0000_0000_0000n | (0xffffn << 16n) | BigInt(32 + n));

  const instances: Ia64FunctionSpec[] = chain.functions.flatMap((f) => Array.from({ length: f.repeat ?? 1 }, () => f));
  const truth: TruthFrame[] = [];
  const frames: ChainRun["frames"] = [];
  let context: Vector["threads"][number]["registers"] | undefined;

  instances.forEach((f, index) => {
    const innermost = index === instances.length - 1;
    const layout = layouts.get(f.name)!;
    const start = imageBase + BigInt(rvas.get(f.name)!);
    const stop = innermost ? stopSlot(chain.stop, layout, f.name) : Number.MAX_SAFE_INTEGER;
    const entrySp = sp;
    const entryB0 = typeof f.rp === "object" && "br" in f.rp ? br[f.rp.br]! : b0;
    let savedPfs = pfs;
    const fSol = f.ins + f.locals;
    const fSof = fSol + f.outs;
    for (const { step, slot } of layout.prologue) {
      if (slot >= stop) break;
      switch (step) {
        case "alloc":
          savedPfs = pfs;
          sof = fSof;
          sol = fSol;
          for (let n = f.ins; n < fSol; n++) writeGr(bsp, n, 0xf000_0000_0000_0000n | (BigInt(index) << 16n) | BigInt(32 + n), (n + index) % 3 === 2);
          for (let n = fSol; n < fSof; n++) writeGr(bsp, n, 0xa000_0000_0000_0000n | (BigInt(index) << 16n) | BigInt(32 + n));
          if (typeof f.pfs === "object" && "gr" in f.pfs) writeGr(bsp, f.pfs.gr - 32, pfs);
          break;
        case "rp":
          if (typeof f.rp === "object" && "gr" in f.rp) writeGr(bsp, f.rp.gr - 32, b0);
          else if (typeof f.rp === "object" && "psprel" in f.rp) stack.set(entrySp + 16n - 4n * BigInt(f.rp.psprel), b0);
          else if (typeof f.rp === "object" && "sprel" in f.rp) stack.set(sp + 4n * BigInt(f.rp.sprel), b0);
          break;
        case "pfs":
          if (typeof f.pfs === "object" && "psprel" in f.pfs) stack.set(entrySp + 16n - 4n * BigInt(f.pfs.psprel), savedPfs);
          else if (typeof f.pfs === "object" && "sprel" in f.pfs) stack.set(sp + 4n * BigInt(f.pfs.sprel), savedPfs);
          break;
        case "psp":
          if (f.variable !== undefined && "gr" in f.variable) writeGr(bsp, f.variable.gr - 32, entrySp);
          // The new sp is computed into a scratch register and psp stored below it before sp moves.
          else if (f.variable !== undefined) stack.set(entrySp - BigInt(f.frameBytes) + 4n * BigInt(f.variable.sprel), entrySp);
          break;
        case "sp":
          sp = entrySp - BigInt(f.frameBytes);
          break;
      }
    }
    frames.push({ name: f.name, bsp, sof, sol, sp });
    const call = layout.body.find((b) => b.step === "call");
    if (!innermost) {
      // br.call (§1.4): the return link, ar.pfs ← CFM, the callee's frame = this one's outputs.
      const ra = start + BigInt(16 * (Math.floor(call!.slot / 3) + 1));
      const callee = instances[index + 1]!;
      if (typeof callee.rp === "object" && "br" in callee.rp) br[callee.rp.br] = ra;
      else b0 = ra;
      truth.push({ pc: ra, sp, bsp, function: f.name });
      pfs = previousFunctionState(frameMarker(sof, sol), ec, ppl);
      bsp = stepRegisters(bsp, sol);
      sof -= sol;
      sol = 0;
      return;
    }
    // The innermost function: the rest of its steps up to the stop slot.
    for (const { step, slot } of layout.body) {
      if (slot >= stop) break;
      switch (step) {
        case "call":
          // The call returned: b0 = its return link; ar.pfs = what the callee restored (this CFM).
          b0 = start + BigInt(16 * (Math.floor(slot / 3) + 1));
          pfs = previousFunctionState(frameMarker(sof, sol), ec, ppl);
          break;
        case "restore-rp":
          b0 = entryB0;
          break;
        case "restore-pfs":
          pfs = savedPfs;
          break;
        case "restore-sp":
          sp = entrySp;
          break;
        case "ret":
          break;
      }
    }
    const bundle = start + BigInt(16 * Math.floor(stop / 3));
    const ri = stop % 3;
    truth.push({ pc: bundle | BigInt(4 * ri), sp, bsp, function: f.name });
    const cfm = frameMarker(sof, sol);
    context = {
      stiip: bundle,
      stipsr: USER_IPSR | (BigInt(ri) << 41n),
      stifs: interruptionFrameState(cfm),
      intsp: sp,
      rsbsp: bsp,
      rsbspstore: 0n,
      rsrnat: 0n,
      rspfs: pfs,
      brrp: b0,
    };
    if (typeof f.rp === "object" && "br" in f.rp) context[`brs${f.rp.br - 1}`] = br[f.rp.br]!;
  });

  // Cover + flushrs: the innermost frame joins the flushed registers (§5.2 step 5).
  const innermost = frames[frames.length - 1]!;
  let bspstore = stepRegisters(innermost.bsp, innermost.sof);
  if (chain.bspstoreOnCollection) {
    if ((bspstore & 0x1ffn) !== 0n) bad(chain.name, `bspstoreOnCollection needs the innermost frame to end at a 512-byte boundary, not ${hex(bspstore)}`);
    bspstore -= 8n;
  }
  let rnat = 0n;
  const collections = new Map<bigint, bigint>();
  for (const [at, isNat] of nat) {
    if (!isNat) continue;
    const collection = at | 0x1f8n;
    const bit = 1n << ((at >> 3n) & 0x3fn);
    if (collection >= bspstore) rnat |= bit;
    else collections.set(collection, (collections.get(collection) ?? 0n) | bit);
  }
  const ctx = context!;
  ctx["rsbspstore"] = bspstore;
  ctx["rsrnat"] = rnat;

  // Memory: the image, the backing store from its base to the collection slot at or above
  // BSPSTORE, and the memory stack from below the lowest sp to main's scratch area.
  const regions: MemoryRegion[] = image.regions.map((r) => ({ base: imageBase + BigInt(r.rva), bytes: r.bytes }));
  const rbsEnd = (bspstore | 0x1f8n) + 8n;
  const rbsBytes = new Uint8Array(Number(rbsEnd - rbsBase));
  const rv = new DataView(rbsBytes.buffer);
  for (let at = rbsBase; at < rbsEnd; at += 8n) {
    let word: bigint;
    if (isCollectionSlot(at)) word = at < bspstore ? (collections.get(at) ?? 0n) : U64;
    else word = at < bspstore ? (rbs.get(at) ?? POISON | (at & 0xffff_fff8n) | 5n) : POISON | (at & 0xffff_fff8n) | 5n;
    rv.setBigUint64(Number(at - rbsBase), word, true);
  }
  regions.push({ base: rbsBase, bytes: rbsBytes });
  let low = sp;
  for (const at of stack.keys()) if (at < low) low = at;
  low = (low - 0x20n) & ~0xfn;
  const stackEnd = stackTop + 16n;
  const stackBytes = new Uint8Array(Number(stackEnd - low));
  const sv = new DataView(stackBytes.buffer);
  for (let at = low; at < stackEnd; at += 8n) sv.setBigUint64(Number(at - low), stack.get(at) ?? POISON | (at & 0xffff_fff8n) | 5n, true);
  regions.push({ base: low, bytes: stackBytes });

  truth.reverse();
  const vector: Vector = {
    machine: "ia64",
    description: chain.description,
    provenance: `synthetic: IA-64 model executor (emulator/ia64/executor.ts, chain "${chain.name}" in emulator/ia64/corpus.ts); truth from the model's execution, not from a walker`,
    threads: [{ id: 0, crashed: true, registers: ctx, truth }],
    memory: new RegionMemory(regions),
    modules: [
      {
        name: `${chain.name}.exe`,
        base: imageBase,
        size: BigInt(image.sizeOfImage),
        symbols: imageFunctions.map((f) => ({ name: f.name, rva: BigInt(f.rva), size: BigInt(f.size) })),
      },
    ],
  };
  return { vector, frames, layouts };
}
