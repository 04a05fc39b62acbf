/**
 * What a function's descriptor records say at one instruction slot (ia64.md §2 steps 2-7, §3.3,
 * §3.4): where rp, ar.pfs and psp are, and whether their saves have executed. This follows the
 * state-record logic of the Linux kernel's unwinder and libunwind [A]:
 *
 * - the regions tile the procedure; a prologue header pushes a copy of the state and, for R2,
 *   assigns rp, ar.pfs, psp, pr (mask bits 3..0) to consecutive GRs from grsave; the decoding
 *   stops at the first region header at or past `whenTarget`'s region end;
 * - a record's time is its region start + min(t, rlen − 1); a location record sets the time to
 *   the prologue's last slot only if no `*_when` set one; a `*_when` record without a location
 *   takes the next GR of the save sequence (from grsave, or r32 after R1/R3) when the prologue
 *   is finished, in the order rp, pfs, psp, pr, unat, lc, fpsr, priunat;
 * - an epilogue (B2/B3) starts at region end − 1 − t and pops ecount + 1 states at the next
 *   header; label_state / copy_state save and restore whole states;
 * - a save counts as done only when its time is < whenTarget (the instruction at the IP has not
 *   executed); past the epilogue start, sp is restored, so psp = sp and every sp-relative save
 *   and every psp-relative save at offset ≤ 0x10 — compared unsigned, as the kernel and
 *   libunwind do, so only pspoff 0-4 — is dropped;
 * - rp not saved yet is in b0, or in the branch register rp_br names.
 *
 * One difference is a modelling choice [M]: a stream that ends inside a prologue region (no
 * padding header after it) still has its `*_when` registers assigned, as the next header would.
 * Nothing here reads memory.
 */
import { InputError } from "../../errors.js";
import type { PfsLocation, PspRule, RpLocation, SaveLocation } from "./rule.js";
import { isRegionHeader, type DecodedRecord } from "../../formats/unwind-data/ia64.js";

/** Register indices of the state record, the first eight in the save order of §3.4. */
const RP = 0;
const PFS = 1;
const PSP = 2;
const PR = 3;
const UNAT = 4;
const LC = 5;
const FPSR = 6;
const PRIUNAT = 7;
const BSP = 8;
const BSPSTORE = 9;
const RNAT = 10;
const REGISTER_COUNT = 11;
/** The order `*_when` registers without a location take GRs in (finish_prologue). */
const SAVE_ORDER = [RP, PFS, PSP, PR, UNAT, LC, FPSR, PRIUNAT];
/** R2 mask bits 3..0. */
const R2_ORDER = [RP, PFS, PSP, PR];

const WHEN_NEVER = Number.MAX_SAFE_INTEGER;

/** Where a register of the state record is (the kernel's UNW_WHERE_*). */
const Where = { None: 0, Gr: 1, GrSave: 2, PspRel: 3, SpRel: 4 } as const;
type Where = (typeof Where)[keyof typeof Where];

interface RegState {
  where: Where;
  /** GR/BR number, or a byte offset: psp-relative = 0x10 − 4·pspoff, sp-relative = 4·spoff; PSP with Where.None: the fixed frame size. */
  val: number;
  when: number;
}

type StateRecord = RegState[];

function emptyState(): StateRecord {
  return Array.from({ length: REGISTER_COUNT }, () => ({ where: Where.None, val: 0, when: WHEN_NEVER }));
}

function copyState(s: StateRecord): StateRecord {
  return s.map((r) => ({ ...r }));
}

/** The unwind state of a frame at `whenTarget`. */
export interface FrameState {
  whenTarget: number;
  rp: RpLocation;
  pfs: PfsLocation;
  psp: PspRule;
  /** The slot the epilogue starts at (sp restored after it), when the target's region has one. */
  epilogueStart?: number;
  /** ar.bsp was saved explicitly (a backing-store switch): not modelled by the walker. */
  bspSaved: boolean;
  /** P10 unwabi (abi, context), when the procedure has one: an OS-specific frame. */
  unwabi?: { abi: number; context: number };
}

class Decoder {
  curr = emptyState();
  readonly stack: StateRecord[] = [];
  readonly labels = new Map<number, StateRecord>();
  regionStart = 0;
  regionLen = 0;
  inBody = false;
  firstRegion = true;
  done = false;
  epilogueStart = WHEN_NEVER;
  epilogueCount = 0;
  grSaveLoc = 32;
  returnLinkReg = 0;
  unwabi: { abi: number; context: number } | undefined;

  constructor(readonly whenTarget: number) {}

  private time(t: number): number {
    return this.regionStart + Math.min(t, this.regionLen - 1);
  }

  private lastPrologueSlot(): number {
    return this.regionStart + this.regionLen - 1;
  }

  private setReg(reg: number, where: Where, when: number, val: number): void {
    const r = this.curr[reg]!;
    r.where = where;
    r.val = val;
    if (r.when === WHEN_NEVER) r.when = when;
  }

  private setWhen(reg: number, t: number): void {
    const r = this.curr[reg]!;
    if (r.where === Where.None) r.where = Where.GrSave;
    r.when = this.time(t);
  }

  finishPrologue(): void {
    for (const reg of SAVE_ORDER) {
      const r = this.curr[reg]!;
      if (r.where === Where.GrSave) {
        r.where = Where.Gr;
        r.val = this.grSaveLoc++;
      }
    }
  }

  private pop(at: number): void {
    const s = this.stack.pop();
    if (s === undefined) throw new InputError("bad-value", "an epilogue pops more prologue states than were pushed", { offset: at });
    this.curr = s;
  }

  region(body: boolean, rlen: number, mask: number, grsave: number, at: number): void {
    if (!(this.inBody || this.firstRegion)) this.finishPrologue();
    this.firstRegion = false;
    if (this.whenTarget < this.regionStart + this.regionLen) {
      this.done = true;
      return;
    }
    const start = this.regionStart + this.regionLen;
    for (let i = 0; i < this.epilogueCount; i++) this.pop(at);
    this.epilogueCount = 0;
    this.epilogueStart = WHEN_NEVER;
    this.regionStart = start;
    this.regionLen = rlen;
    this.inBody = body;
    if (!body) {
      this.stack.push(copyState(this.curr));
      let g = grsave;
      for (let i = 0; i < 4; i++) {
        if ((mask & (8 >> i)) !== 0) this.setReg(R2_ORDER[i]!, Where.Gr, this.lastPrologueSlot(), g++);
      }
      this.grSaveLoc = g;
    }
  }

  apply({ record: r, offset }: DecodedRecord): void {
    if (isRegionHeader(r)) {
      this.region(r.body, r.rlen, r.format === "R2" ? r.mask : 0, r.format === "R2" ? r.grsave : 32, offset);
      return;
    }
    const last = this.lastPrologueSlot();
    switch (r.format) {
      case "P3":
        switch (r.kind) {
          case "psp_gr": return this.setReg(PSP, Where.Gr, last, r.reg);
          case "rp_gr": return this.setReg(RP, Where.Gr, last, r.reg);
          case "pfs_gr": return this.setReg(PFS, Where.Gr, last, r.reg);
          case "preds_gr": return this.setReg(PR, Where.Gr, last, r.reg);
          case "unat_gr": return this.setReg(UNAT, Where.Gr, last, r.reg);
          case "lc_gr": return this.setReg(LC, Where.Gr, last, r.reg);
          case "rp_br": this.returnLinkReg = r.reg; return;
          case "rnat_gr": return this.setReg(RNAT, Where.Gr, last, r.reg);
          case "bsp_gr": return this.setReg(BSP, Where.Gr, last, r.reg);
          case "bspstore_gr": return this.setReg(BSPSTORE, Where.Gr, last, r.reg);
          case "fpsr_gr": return this.setReg(FPSR, Where.Gr, last, r.reg);
          case "priunat_gr": return this.setReg(PRIUNAT, Where.Gr, last, r.reg);
        }
        return;
      case "P7": {
        const psprel = 0x10 - 4 * r.value;
        switch (r.kind) {
          case "mem_stack_f": return this.setReg(PSP, Where.None, this.time(r.value), 16 * (r.size ?? 0));
          case "mem_stack_v": this.curr[PSP]!.when = this.time(r.value); return;
          case "spill_base": return;
          case "psp_sprel": return this.setReg(PSP, Where.SpRel, last, 4 * r.value);
          case "rp_when": return this.setWhen(RP, r.value);
          case "rp_psprel": return this.setReg(RP, Where.PspRel, last, psprel);
          case "pfs_when": return this.setWhen(PFS, r.value);
          case "pfs_psprel": return this.setReg(PFS, Where.PspRel, last, psprel);
          case "preds_when": return this.setWhen(PR, r.value);
          case "preds_psprel": return this.setReg(PR, Where.PspRel, last, psprel);
          case "lc_when": return this.setWhen(LC, r.value);
          case "lc_psprel": return this.setReg(LC, Where.PspRel, last, psprel);
          case "unat_when": return this.setWhen(UNAT, r.value);
          case "unat_psprel": return this.setReg(UNAT, Where.PspRel, last, psprel);
          case "fpsr_when": return this.setWhen(FPSR, r.value);
          case "fpsr_psprel": return this.setReg(FPSR, Where.PspRel, last, psprel);
        }
        return;
      }
      case "P8": {
        const psprel = 0x10 - 4 * r.value;
        const sprel = 4 * r.value;
        switch (r.kind) {
          case "rp_sprel": return this.setReg(RP, Where.SpRel, last, sprel);
          case "pfs_sprel": return this.setReg(PFS, Where.SpRel, last, sprel);
          case "preds_sprel": return this.setReg(PR, Where.SpRel, last, sprel);
          case "lc_sprel": return this.setReg(LC, Where.SpRel, last, sprel);
          case "unat_sprel": return this.setReg(UNAT, Where.SpRel, last, sprel);
          case "fpsr_sprel": return this.setReg(FPSR, Where.SpRel, last, sprel);
          case "bsp_when": return this.setWhen(BSP, r.value);
          case "bsp_psprel": return this.setReg(BSP, Where.PspRel, last, psprel);
          case "bsp_sprel": return this.setReg(BSP, Where.SpRel, last, sprel);
          case "bspstore_when": return this.setWhen(BSPSTORE, r.value);
          case "bspstore_psprel": return this.setReg(BSPSTORE, Where.PspRel, last, psprel);
          case "bspstore_sprel": return this.setReg(BSPSTORE, Where.SpRel, last, sprel);
          case "rnat_when": return this.setWhen(RNAT, r.value);
          case "rnat_psprel": return this.setReg(RNAT, Where.PspRel, last, psprel);
          case "rnat_sprel": return this.setReg(RNAT, Where.SpRel, last, sprel);
          case "priunat_when_gr":
          case "priunat_when_mem": return this.setWhen(PRIUNAT, r.value);
          case "priunat_psprel": return this.setReg(PRIUNAT, Where.PspRel, last, psprel);
          case "priunat_sprel": return this.setReg(PRIUNAT, Where.SpRel, last, sprel);
        }
        return;
      }
      case "P10":
        this.unwabi = { abi: r.abi, context: r.context };
        return;
      case "B1":
      case "B4":
        if (r.kind === "label_state") this.labels.set(r.label, copyState(this.curr));
        else {
          const s = this.labels.get(r.label);
          if (s === undefined) throw new InputError("bad-value", `copy_state names label ${r.label}, which no label_state defined`, { offset });
          this.curr = copyState(s);
        }
        return;
      case "B2":
      case "B3":
        this.epilogueStart = this.regionStart + this.regionLen - 1 - r.t;
        this.epilogueCount = r.ecount + 1;
        return;
      default:
        // P1, P2, P4-P6, P9, X1-X4: spills of registers a rp/pfs/psp walk does not restore.
        return;
    }
  }
}

/**
 * The state at `whenTarget` slots into the procedure, from its decoded records. A copy_state of
 * an undefined label or an epilogue that pops more states than were pushed is an InputError at
 * the record's offset.
 */
export function frameStateAt(records: readonly DecodedRecord[], whenTarget: number): FrameState {
  const d = new Decoder(whenTarget);
  for (const rec of records) {
    if (d.done) break;
    d.apply(rec);
  }
  if (!d.done && !d.inBody && !d.firstRegion) d.finishPrologue();
  const regs = d.curr;
  const epilogue = whenTarget > d.epilogueStart;
  if (epilogue) {
    regs[PSP] = { where: Where.None, val: 0, when: WHEN_NEVER };
    for (const r of regs) {
      // The kernel and libunwind compare the psp-relative offset as an unsigned value.
      if ((r.where === Where.PspRel && r.val >= 0 && r.val <= 0x10) || r.where === Where.SpRel) {
        r.where = Where.None;
        r.when = WHEN_NEVER;
      }
    }
  }
  const saved = (r: RegState): SaveLocation | undefined => {
    if (r.when >= whenTarget) return undefined;
    switch (r.where) {
      case Where.Gr: return { kind: "gr", reg: r.val };
      case Where.PspRel: return { kind: "psprel", offset: r.val };
      case Where.SpRel: return { kind: "sprel", offset: r.val };
      default: return undefined;
    }
  };
  const rpSaved = saved(regs[RP]!);
  const pfsSaved = saved(regs[PFS]!);
  const p = regs[PSP]!;
  let psp: PspRule = { kind: "sp" };
  if (p.when < whenTarget) {
    if (p.where === Where.None && p.val !== 0) psp = { kind: "fixed", size: p.val, when: p.when };
    else if (p.where === Where.Gr) psp = { kind: "gr", reg: p.val, when: p.when };
    else if (p.where === Where.SpRel) psp = { kind: "sprel", offset: p.val, when: p.when };
  }
  const bsp = regs[BSP]!;
  const state: FrameState = {
    whenTarget,
    rp: rpSaved === undefined ? { kind: "br", reg: d.returnLinkReg } : { ...rpSaved, when: regs[RP]!.when },
    pfs: pfsSaved === undefined ? { kind: "live" } : { ...pfsSaved, when: regs[PFS]!.when },
    psp,
    bspSaved: bsp.when < whenTarget && bsp.where !== Where.None && bsp.where !== Where.GrSave,
  };
  if (d.epilogueStart !== WHEN_NEVER) state.epilogueStart = d.epilogueStart;
  if (d.unwabi !== undefined) state.unwabi = d.unwabi;
  return state;
}
