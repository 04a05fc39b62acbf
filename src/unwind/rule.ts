/**
 * How a frame was found, as a value (framehop's rules, DESIGN.md "Core types"): every frame of a
 * walk carries one, tagged by `kind`, with the unwind data it followed and the values it read.
 * Renderers read its fields; its text (what `walk` prints after "rule:") is derived from them in
 * one place, rule-text.ts. Nothing here reads memory or names an architecture's internals: the
 * values are plain data, made by the rules in src/arch when they run.
 */
import type { FrameData } from "../formats/frame-data.js";
import type { FpoData } from "../model/fpo-data.js";
import type { Registers } from "../model/snapshot.js";

/** The context frame: the registers the thread stopped with. */
export interface ContextRule {
  kind: "context";
}

/** The registers a frame-pointer chain uses, and the slot width. */
export interface ChainRegisters {
  pc: string;
  sp: string;
  fp: string;
  width: 4 | 8;
}

/**
 * The frame-pointer chain (stackwalk64.md §6.4): pc' = [fp + w], sp' = fp + 2w, fp' = [fp]. `fp`
 * is the frame pointer followed, `pc` and `savedFp` the words read above it.
 */
export interface FramePointerRule {
  kind: "frame-pointer";
  chain: ChainRegisters;
  fp: bigint;
  pc: bigint;
  savedFp: bigint;
}

/** An FPO_DATA record's rule (x86-fpo.md §1.4), in one of its three forms. */
export type FpoRule =
  /** In the body: the return address at esp + `raOffset` (callee params + locals + saved registers), `moved` bytes further up when a short scan found it there; the caller's EBP read at `ebpSlot` (fUseBP), else −1. */
  | { kind: "fpo"; record: FpoData; form: "body"; raOffset: number; moved: number; ebpSlot: number }
  /** In the prolog: the return address above what the `instructions` before the PC pushed (`pushed` bytes). */
  | { kind: "fpo"; record: FpoData; form: "prolog"; instructions: readonly string[]; pushed: number }
  /** FRAME_NONFPO: an EBP frame, the return address at [ebp + 4]. */
  | { kind: "fpo"; record: FpoData; form: "non-fpo"; ebp: bigint };

/** Where a FrameData program found the return address. */
export type FrameDataReturn =
  /** `.raSearch` from ESP: esp + `offset` (callee params + locals + saved registers), moved up `moved` bytes by a short scan. */
  | { at: "esp"; offset: number; moved: number }
  /** `.raSearch` from EBP + 4, the program realigning the stack. */
  | { at: "ebp+4" }
  /** The program locates it itself: at `base` + `offset` when that is all it does, else unsaid. */
  | { at: "program"; base?: string; offset?: number };

/** A FrameData record's program string (x86-fpo.md §2, §3). */
export interface FrameDataRule {
  kind: "frame-data";
  record: FrameData;
  ra: FrameDataReturn;
  /** The record that starts at the return address, not the one at return address − 1, described the call. */
  atReturn?: true;
}

/**
 * An FPO_DATA or FrameData rule whose EIP the call sites contradicted (x86-fpo.md §8): EIP was a
 * return address after a call to `target`, outside the function, and the one at `slot` returns
 * from a call into it (`found` "other-call"); or EIP was no return address at all and the stack
 * was scanned to `slot` ("scan").
 */
export interface SiteCheckRule {
  kind: "site-check";
  rule: FpoRule | FrameDataRule;
  found: "other-call" | "scan";
  eip: bigint;
  target?: bigint;
  slot: bigint;
  value: bigint;
}

/** The record an x86 epilogue's rule belongs to: an FPO_DATA or FrameData record, or none. */
export type EpilogSource = { fpo: FpoData } | { frameData: FrameData } | { none: true };

/**
 * The context frame at an x86 epilogue (or a stack probe's tail, a tail jump), its instructions
 * run to the return (x86-fpo.md §1.4 step 5): the return address was at `raSlot` (absent before
 * the run). With `switched`, the jump at the end switched stacks (a longjmp) and the stack was
 * scanned instead.
 */
export interface X86EpilogRule {
  kind: "x86-epilog";
  source: EpilogSource;
  instructions: readonly string[];
  tailCall?: bigint;
  raSlot?: bigint;
  switched?: { esp: bigint; slot: bigint; value: bigint };
}

/** One x64 unwind operation undone, in prolog order (x64-unwind.md §1.3). */
export type UnwindOpStep =
  | { op: "push"; register: string }
  | { op: "alloc"; size: number }
  | { op: "set-frame"; register: string; offset: number }
  | { op: "save"; register: string; offset: number }
  | { op: "save-xmm"; register: number; offset: number }
  | { op: "machframe"; errorCode: boolean };

/** The unwind codes of one entry of a chain that applied at the PC. */
export interface UnwindInfoPart {
  /** The chained parent's BeginAddress (absent for the entry itself). */
  chained?: number;
  /** The PC's offset into the prolog, when it is in the prolog. */
  prologOffset?: number;
  ops: readonly UnwindOpStep[];
}

/** An x64 epilog the PC is in, with the instructions still to run (§1.5, §1.6). */
export type UnwindInfoEpilog = { version: 1; instructions: readonly string[] } | { version: 2; offset: number; instructions: readonly string[] };

/**
 * RtlVirtualUnwind over a RUNTIME_FUNCTION's UNWIND_INFO chain (x64-unwind.md Part 1), or the leaf
 * rule where no entry covers the PC.
 */
export interface UnwindInfoRule {
  kind: "unwind-info";
  /** The entry's BeginAddress, or the RVA of a leaf without one. */
  function: { begin: number } | { leafRva: number };
  /** The PC is in an epilog, which is run instead of the prolog's codes. */
  epilog?: UnwindInfoEpilog;
  /** The caller's PC is past the entry's end (a call ended the function): every code applies. */
  body: boolean;
  /** The codes undone, per entry of the chain (empty in an epilog and for a leaf). */
  parts: readonly UnwindInfoPart[];
  /** The frame register was not the frame's own (a longjmp reloaded it): RSP was the base. */
  frameRegisterIgnored: boolean;
  /** The caller's RSP as an expression of this frame's registers: `rsp+0x38`, `[rbp+0x20]`. */
  callerRsp: string;
  /** The context frame was at a register jump out of its function, and is unwound as at its target. */
  jumped?: { register: string; target: bigint };
  /** A machine frame gave the caller's RIP, read at this slot (the caller's PC was interrupted). */
  machineFrameSlot?: number | bigint;
}

/** One ARM64 unwind code undone (arm64.md §1.4), as an ARM64 rule lists it: its name and what it restores. */
export type Arm64OpStep =
  /** alloc_s, alloc_m, alloc_l: sp += size. */
  | { op: "alloc"; code: string; size: number }
  /** A save code: `registers` from sp + offset, or with `writeback` from sp and then sp += offset. */
  | { op: "save"; code: string; registers: readonly string[]; offset: number; writeback: boolean }
  /** set_fp (offset 0) or add_fp: sp = fp − offset. */
  | { op: "set-fp"; code: string; offset: number }
  /** nop, or a reserved code the unwinder skips. */
  | { op: "nop"; code: string }
  /** pac_sign_lr: lr authenticated (its pointer authentication code stripped). */
  | { op: "pac" }
  /** A custom stack: trap_frame, machine_frame, context, clear_unwound_to_call. */
  | { op: "custom"; code: string }
  /** end_c: the region's own codes end, the parent region's phantom prolog follows. */
  | { op: "end-c" };

/** Where an ARM64 frame's PC is in its function (arm64.md §1.7). */
export type Arm64Position =
  | { at: "body" }
  /** `offset` instructions of the prolog have run: the codes of the `skipped` ones that have not are skipped. */
  | { at: "prolog"; offset: number; skipped: number }
  /** `offset` instructions into the epilog starting at instruction `start`: the `skipped` codes they ran are skipped. */
  | { at: "epilog"; start: number; offset: number; skipped: number };

/**
 * RtlVirtualUnwind over an ARM64 function's `.pdata` entry and its packed word or `.xdata`
 * (arm64.md Part 1), or the leaf rule where no entry covers the PC (pc = lr, sp unchanged).
 */
export interface Arm64UnwindRule {
  kind: "arm64-unwind";
  /** The entry's BeginAddress and the form of its unwind data (`parent`: a Flag 3 entry's parent), or the RVA of a leaf without one. */
  function: { begin: number; form: "packed" | "fragment" | "xdata"; parent?: number } | { leafRva: number };
  position: Arm64Position;
  /** The codes run, in the order they ran (the nearest to the body first). */
  ops: readonly Arm64OpStep[];
  /** The caller's sp as an expression of this frame's registers: `sp+0x30`, `fp+0x10`, `[sp+0x8]`. */
  callerSp: string;
  /** Where the caller's pc came from: lr once the codes ran, or the custom stack a code names. */
  pcFrom: "lr" | "machine-frame" | "context" | "trap-frame";
  /** The address the caller's pc was read from, for a custom stack. */
  pcSlot?: bigint;
}

/**
 * The ARM64 frame-record walker's step from the context frame while its return address is still
 * in the link register (a leaf, or a prolog before the frame record is stored, arm64.md Part 4):
 * the caller's pc is lr, its sp and fp are this frame's.
 */
export interface LinkRegisterRule {
  kind: "link-register";
  lr: bigint;
  sp: bigint;
}

/**
 * Breakpad's ARM64 frame-pointer step (arm64.md Part 5, `GetCallerByFramePointer`): the caller's
 * pc is the callee's lr, its x29 and lr are read from the record at the callee's x29 (`fp`), its
 * sp is fp + 16; with fp 0, the caller keeps the callee's sp and gets fp = lr = 0.
 */
export interface Arm64BreakpadFpRule {
  kind: "arm64-breakpad-fp";
  fp: bigint;
  lr: bigint;
  savedFp: bigint;
  savedLr: bigint;
}

/** A rule's result that was not a frame (`problem`), repaired by scanning from `start` to the return address at `slot`. */
export interface RescanRule {
  kind: "rescan";
  problem: string;
  start: bigint;
  slot: bigint;
  value: bigint;
}

/** Breakpad STACK CFI (minidump.md §7): the rules in effect at the address, `.cfa` and `.ra` first. */
export interface CfiRule {
  kind: "cfi";
  /** The RVA of the INIT range. */
  rva: number;
  /** Each rule's name and expression text. */
  rules: readonly (readonly [string, string])[];
}

/** Stack scanning (minidump.md §5.3): the first return address from `sp` up, at `slot`. */
export interface ScanRule {
  kind: "scan";
  registers: { sp: string; fp: string };
  /** The function has no record in a module whose other functions have (the RVA looked up). */
  noRecordRva?: number;
  sp: bigint;
  slot: bigint;
  value: bigint;
  /** The caller's frame pointer, when the scan recovered one (minidump.md §5.5, §5.6). */
  fp?: bigint;
}

/** Breakpad's simulated return from a leaf: the return address at the stack pointer or one word above. */
export interface LeafRule {
  kind: "leaf";
  slot: bigint;
  value: bigint;
}

/** Where an IA-64 frame's saved register is found. */
export type SaveLocation =
  /** In a general register (n ≥ 32: the backing store at skip(bsp, n − 32)). */
  | { kind: "gr"; reg: number }
  /** In memory at psp + offset (offset = 0x10 − 4·pspoff). */
  | { kind: "psprel"; offset: number }
  /** In memory at sp + offset (offset = 4·spoff). */
  | { kind: "sprel"; offset: number };

/** Where rp is: saved, or still in a branch register (b0, or the one rp_br names). */
export type RpLocation = (SaveLocation & { when: number }) | { kind: "br"; reg: number };
/** Where ar.pfs is: saved, or still live in ar.pfs. */
export type PfsLocation = (SaveLocation & { when: number }) | { kind: "live" };

/** How the caller's sp (this frame's psp) is found. */
export type PspRule =
  /** No frame is allocated (yet, or any more): psp = sp. */
  | { kind: "sp" }
  /** mem_stack_f: psp = sp + size. */
  | { kind: "fixed"; size: number; when: number }
  /** mem_stack_v: psp was saved in a GR or at sp + offset. */
  | { kind: "gr"; reg: number; when: number }
  | { kind: "sprel"; offset: number; when: number };

/** Where an IA-64 function keeps rp, ar.pfs and psp at a frame's IP (ia64.md §2 steps 2-7). */
export interface Ia64Locations {
  rp: RpLocation;
  pfs: PfsLocation;
  psp: PspRule;
}

/**
 * One IA-64 unwind step (ia64.md §2) from the function's unwind descriptors at slot `whenTarget`,
 * or from the leaf rule: rp read at `rpAt` (a register when absent), and the caller's BSP
 * skip(`bsp`, −`sol`). `outermost`: rp was 0.
 */
export interface Ia64Rule extends Ia64Locations {
  kind: "ia64";
  function: { module: string; begin: number; whenTarget: number } | { leaf: string };
  rpAt?: number | bigint;
  bsp: bigint;
  sol: number;
  callerBsp: bigint;
  outermost?: true;
}

/** A frame found by a rule of a strategy of one's own (WalkOptions.strategies), which names itself. */
export interface CustomRule {
  kind: "custom";
  text: string;
}

/** How a frame was found: the value every frame carries (its text: rule-text.ts). */
export type Rule =
  | ContextRule
  | FramePointerRule
  | FpoRule
  | FrameDataRule
  | SiteCheckRule
  | X86EpilogRule
  | UnwindInfoRule
  | Arm64UnwindRule
  | LinkRegisterRule
  | Arm64BreakpadFpRule
  | RescanRule
  | CfiRule
  | ScanRule
  | LeafRule
  | Ia64Rule
  | CustomRule;

/**
 * A rule a frame works out from its own registers when it is first read: a frame chain's step
 * read exactly the frame's PC and frame pointer, just above the callee's frame pointer, so a deep
 * chain's rows keep one shared value instead of a rule each. Steps may carry it; frames never do.
 */
export interface DerivedRule {
  kind: "derived";
  /** The kind of the rule it works out. */
  of: RuleKind;
  derive(registers: Registers): Rule;
}

/** What a step says about how it found the caller: the rule, or how the caller's frame works it out. */
export type StepRule = Rule | DerivedRule;

/** The rule a frame with `registers` carries, from what its step said. */
export function frameRule(rule: StepRule, registers: Registers): Rule {
  return rule.kind === "derived" ? rule.derive(registers) : rule;
}

/** The kind of a rule. */
export type RuleKind = Rule["kind"];

/** The context frame's rule. */
export const CONTEXT_RULE: ContextRule = { kind: "context" };
