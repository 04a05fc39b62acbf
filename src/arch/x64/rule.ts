/**
 * The rules an x64 frame carries (unwind/rule.ts has the kinds every machine shares) and their
 * words: the unwind operations undone per chained entry, the epilog, the caller's RSP as an
 * expression; and a result that was not a frame, repaired by scanning. arch/rule.ts puts them in
 * the one union, arch/rule-text.ts dispatches their text here.
 */
import { hex } from "../../hex.js";

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

/** A rule's result that was not a frame (`problem`), repaired by scanning from `start` to the return address at `slot`. */
export interface RescanRule {
  kind: "rescan";
  problem: string;
  start: bigint;
  slot: bigint;
  value: bigint;
}

/** The rules of x64 frames. */
export type X64Rule = UnwindInfoRule | RescanRule;

/** An x64 rule in words (arch/rule-text.ts `ruleText` dispatches here). */
export function x64RuleText(rule: X64Rule): string {
  switch (rule.kind) {
    case "unwind-info":
      return unwindInfoText(rule);
    case "rescan":
      return `${rule.problem}; scanned from ${hex(rule.start)} to ra@[${hex(rule.slot)}]=${hex(rule.value)}`;
  }
}

/** An unwind operation as prolog text: `push rbx`, `alloc 0x28`, `save rsi@0x20`, `machframe+errcode`. */
export function unwindOpText(o: UnwindOpStep): string {
  switch (o.op) {
    case "push":
      return `push ${o.register}`;
    case "alloc":
      return `alloc ${hex(o.size)}`;
    case "set-frame":
      return `lea ${o.register},[rsp+${hex(o.offset)}]`;
    case "save":
      return `save ${o.register}@${hex(o.offset)}`;
    case "save-xmm":
      return `save xmm${o.register}@${hex(o.offset)}`;
    case "machframe":
      return o.errorCode ? "machframe+errcode" : "machframe";
  }
}

function unwindInfoText(r: UnwindInfoRule): string {
  const jumped = r.jumped === undefined ? "" : `jmp ${r.jumped.register}=${hex(r.jumped.target)} leaves the function: as at ${hex(r.jumped.target)}, `;
  let core: string;
  if ("leafRva" in r.function) core = `leaf (no RUNTIME_FUNCTION at rva ${hex(r.function.leafRva)})`;
  else {
    core = `unwind-info rva=${hex(r.function.begin)}`;
    const e = r.epilog;
    if (e !== undefined) core += e.version === 1 ? ` epilog=[${e.instructions.join("; ")}]` : ` v2 epilog+${hex(e.offset)}=[${e.instructions.join("; ")}]`;
    else {
      if (r.body) core += " (called at the end of the function)";
      for (const p of r.parts) {
        const chained = p.chained === undefined ? "" : ` chained rva=${hex(p.chained)}`;
        const prolog = p.prologOffset === undefined ? "" : ` prolog+${hex(p.prologOffset)}`;
        core += `${chained}${prolog} ops=[${p.ops.map(unwindOpText).join("; ")}]`;
      }
    }
  }
  const ignored = r.frameRegisterIgnored ? ", its frame register ignored" : "";
  const machineFrame = r.machineFrameSlot === undefined ? "" : `: rip@[${hex(r.machineFrameSlot)}]`;
  return `${jumped}${core}${ignored} ${r.callerRsp}${machineFrame}`;
}

