/**
 * The rules an x86 frame carries (how it was found, as plain data: unwind/rule.ts has the kinds
 * every machine shares) and their words: an FPO_DATA record's three forms, a FrameData program,
 * a record its call site contradicted (repaired by scanning), an epilogue run to its return.
 * arch/rule.ts puts them in the one union, arch/rule-text.ts dispatches their text here.
 */
import type { FrameData } from "../../formats/frame-data.js";
import { hex } from "../../hex.js";
import type { FpoData } from "../../model/fpo-data.js";

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

/** The rules of x86 frames. */
export type X86Rule = FpoRule | FrameDataRule | SiteCheckRule | X86EpilogRule;

/** An x86 rule in words (arch/rule-text.ts `ruleText` dispatches here). */
export function x86RuleText(rule: X86Rule): string {
  switch (rule.kind) {
    case "fpo":
      return fpoText(rule);
    case "frame-data":
      return frameDataText(rule);
    case "site-check": {
      const inner = rule.rule.kind === "fpo" ? fpoText(rule.rule) : frameDataText(rule.rule);
      return rule.found === "other-call"
        ? `${inner}; eip ${hex(rule.eip)} returns from a call to ${hex(rule.target ?? 0n)}, not to this function: [${hex(rule.slot)}]=${hex(rule.value)} does`
        : `${inner}; eip ${hex(rule.eip)} is not a return address: scanned to [${hex(rule.slot)}]=${hex(rule.value)}`;
    }
    case "x86-epilog": {
      const text = `${epilogLabel(rule.source)} to return: ${rule.instructions.join("; ")}`;
      if (rule.switched !== undefined) {
        const s = rule.switched;
        return `${text}: the jump to ${hex(rule.tailCall ?? 0n)} switches stacks; scanned from esp=${hex(s.esp)} to [${hex(s.slot)}]=${hex(s.value)}`;
      }
      // Before it has run, the rule is its instructions alone.
      if (rule.raSlot === undefined) return text;
      const tail = rule.tailCall === undefined ? "" : ` (tail call to ${hex(rule.tailCall)})`;
      return `${text}${tail}, ra@[${hex(rule.raSlot)}]`;
    }
  }
}

/** An FPO_DATA record as a rule names it: `fpo rva=0x1010 locals=8 regs=2 params=4 useBP`. */
export function fpoLabel(record: FpoData): string {
  return `fpo rva=${hex(record.ulOffStart)} locals=${record.cdwLocals * 4} regs=${record.cbRegs} params=${record.cdwParams * 4}${record.fUseBP ? " useBP" : ""}`;
}

function fpoText(r: FpoRule): string {
  const label = fpoLabel(r.record);
  switch (r.form) {
    case "non-fpo":
      return `${label} FRAME_NONFPO ebp=${hex(r.ebp)}: eip=[ebp+4]`;
    case "prolog":
      return `${label} prolog [${r.instructions.join("; ")}] ra@esp+${r.pushed}`;
    case "body":
      return `${label} ra@esp+${r.raOffset}${r.moved === 0 ? "" : `, found ${r.moved} bytes above`}${r.ebpSlot < 0 ? "" : ` ebp@[${hex(r.ebpSlot)}]`}`;
  }
}

function frameDataText(r: FrameDataRule): string {
  const d = r.record;
  const label = `frame-data rva=${hex(d.rvaStart)} locals=${d.localSize} saved=${d.savedRegsSize} params=${d.paramsSize}`;
  const ra = r.ra;
  let where: string;
  if (ra.at === "esp") where = `ra@esp+${ra.offset}${ra.moved === 0 ? "" : `, found ${ra.moved} bytes above`}`;
  else if (ra.at === "ebp+4") where = "ra@ebp+4 (realigned)";
  else if (ra.base === undefined) where = "by its program";
  else {
    const offset = ra.offset ?? 0;
    where = `ra@${ra.base}${offset === 0 ? "" : `${offset > 0 ? "+" : "-"}${Math.abs(offset | 0)}`}`;
  }
  return `${label} ${where}${r.atReturn === true ? " (the record that starts at the return address)" : ""}`;
}

function epilogLabel(source: EpilogSource): string {
  if ("fpo" in source) return fpoLabel(source.fpo);
  if ("frameData" in source) return `frame-data rva=${hex(source.frameData.rvaStart)}`;
  return "no record,";
}

