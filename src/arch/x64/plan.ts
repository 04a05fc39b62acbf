/**
 * Working out an x64 unwind without reading the stack (framehop's split): from a frame's
 * RUNTIME_FUNCTION, its UNWIND_INFO chain and the code bytes at its PC, a {@link UnwindPlan} — a
 * short straight-line program over RSP, the establisher frame and the registers — that
 * exec.ts runs against the stack. The plan follows RtlVirtualUnwind (x64-unwind.md §1.4–§1.7,
 * the Windows semantics where implementations disagree, §1.9):
 *
 * - the establisher frame (the base of every SAVE_* offset) is worked out once, from the first
 *   entry's info, before anything is undone (§1.4);
 * - version 1: epilog detection by the instruction bytes at the PC, then emulation of the add or
 *   lea, the pops and a return (§1.5); version 2: the EPILOG codes and the prolog's push codes
 *   (§1.6);
 * - otherwise the prolog walk: a code is undone only when the prolog offset has passed its
 *   CodeOffset, offsets are unsigned per entry of the chain, and the return is popped unless the
 *   last entry applied a PUSH_MACHFRAME (§1.7).
 */
import { hex } from "../../hex.js";
import type { FuncTableEntry } from "../../unwind/frame.js";
import type { UnwindInfoEpilog, UnwindInfoPart, UnwindInfoRule, UnwindOpStep } from "./rule.js";
import { isProblem, type DataProblem } from "../../formats/unwind-data/problem.js";
import {
  REG64,
  RSP,
  UNW_FLAG_CHAININFO,
  UWOP_ALLOC_LARGE,
  UWOP_ALLOC_SMALL,
  UWOP_PUSH_MACHFRAME,
  UWOP_PUSH_NONVOL,
  UWOP_SAVE_NONVOL,
  UWOP_SAVE_NONVOL_FAR,
  UWOP_SAVE_XMM128,
  UWOP_SAVE_XMM128_FAR,
  UWOP_SET_FPREG,
  type RuntimeFunctionEntry,
  type UnwindInfo,
  type UnwindOp,
} from "../../formats/unwind-data/x64.js";
import { lookupEntry, primaryBegin, unwindChain, type ChainLink, type X64Tables } from "./tables.js";

/** Names of the two 64-bit halves of XMMn in a register set (CONTEXT's M128A Low and High). */
export const XMM_LOW = Array.from({ length: 16 }, (_, i) => `xmm${i}.low`);
export const XMM_HIGH = Array.from({ length: 16 }, (_, i) => `xmm${i}.high`);

/** What an op does, as a rule names it (its text: rule.ts `unwindOpText`); undefined for EPILOG codes. */
export function opStep(info: UnwindInfo, op: UnwindOp): UnwindOpStep | undefined {
  switch (op.op) {
    case UWOP_PUSH_NONVOL: return { op: "push", register: REG64[op.info]! };
    case UWOP_ALLOC_LARGE:
    case UWOP_ALLOC_SMALL: return { op: "alloc", size: op.value };
    case UWOP_SET_FPREG: return { op: "set-frame", register: REG64[info.frameRegister]!, offset: info.frameOffset };
    case UWOP_SAVE_NONVOL:
    case UWOP_SAVE_NONVOL_FAR: return { op: "save", register: REG64[op.info]!, offset: op.value };
    case UWOP_SAVE_XMM128:
    case UWOP_SAVE_XMM128_FAR: return { op: "save-xmm", register: op.info, offset: op.value };
    case UWOP_PUSH_MACHFRAME: return { op: "machframe", errorCode: op.info !== 0 };
    default: return undefined;
  }
}

/**
 * Plan instructions, three numbers each (opcode, register, operand):
 * - BASE_RSP: establisher frame = RSP;
 * - BASE_REG r, n: establisher frame = reg(r) − n;
 * - SET_RSP r, d: RSP = reg(r) + d (SET_FPREG with d = −16·FrameOffset; an epilog's lea);
 * - ADD _, n: RSP += n (n may be negative: an epilog's sign-extended `add rsp, imm8`);
 * - POP r: reg(r) = [RSP]; RSP += 8;
 * - LOAD r, n: reg(r) = [establisher + n];
 * - LOAD_XMM x, n: xmm(x) = the 16 bytes at establisher + n;
 * - MACHFRAME _, k: RIP = [RSP + k]; RSP = [RSP + k + 24] (k = 8 with an error code);
 * - RET: RIP = [RSP]; RSP += 8.
 */
export const OP_BASE_RSP = 0;
export const OP_BASE_REG = 1;
export const OP_SET_RSP = 2;
export const OP_ADD = 3;
export const OP_POP = 4;
export const OP_LOAD = 5;
export const OP_LOAD_XMM = 6;
export const OP_MACHFRAME = 7;
export const OP_RET = 8;

/** A frame's unwind, worked out without the stack. */
export interface UnwindPlan {
  /** The instructions, three numbers each (see OP_*). */
  code: number[];
  /** The caller's RIP comes from a machine frame: an interrupted PC, not a return address (§1.8). */
  machineFrame: boolean;
  /** The PC is in an epilog, which the plan emulates. */
  epilog: boolean;
  /** The register names the plan recovers. */
  recovered: readonly string[];
  /** The rule as a frame carries it (its text, e.g. `unwind-info rva=0x1010 ops=[push rbp; alloc 0x28] rsp+0x38`). */
  rule: UnwindInfoRule;
  /** The RUNTIME_FUNCTION the frame was found in; absent for a leaf. */
  entry?: FuncTableEntry;
  /**
   * The usual shape — allocations, pushes and a return, nothing read through a register or the
   * establisher frame — as offsets from the frame's RSP: register number `popRegisters[k]` is at
   * RSP + `popOffsets[k]`, the return address at RSP + `raOffset`, the caller's RSP is RSP +
   * `raOffset` + 8 (`callerRsp`, as a bigint: adding bigints is cheaper than making one from a
   * number). Absent for any other plan.
   */
  simple?: { popOffsets: number[]; popRegisters: number[]; raOffset: number; callerRsp: bigint };
  /**
   * The same plan with the frame register ignored (RSP taken as the establisher frame and left
   * where it is by SET_FPREG), for a frame whose frame register turns out not to be its own;
   * absent when the plan does not use the frame register.
   */
  withoutFrameRegister?: UnwindPlan;
}

/** Offsets that make every code of an entry apply (a body fragment, §1.8). */
const IN_BODY = 0xffff_ffff;

/** How a frame's PC is used: as the interrupted or returned-to instruction, or as "somewhere in the body" (§1.8). */
export type PlanMode = "pc" | "body";

/** What a plan's rule says besides what {@link finish} works out from its code. */
type PlanDescription = Pick<UnwindInfoRule, "function" | "body" | "parts"> & { epilog?: UnwindInfoEpilog };

/** The plan for a function without a RUNTIME_FUNCTION: a leaf, RIP = [RSP]; RSP += 8 (§1.1). */
export function leafPlan(rva: number): UnwindPlan {
  return finish([OP_RET, 0, 0], false, false, { function: { leafRva: rva }, body: false, parts: [] }, undefined);
}

/**
 * The plan for a frame whose PC (or, in "body" mode, whose return address − 1) lies in `entry`
 * of a module based at `moduleBase`; `controlRva` is the PC's RVA. A problem says why the unwind
 * data cannot be used.
 */
export function buildPlan(tables: X64Tables, moduleBase: bigint, entry: RuntimeFunctionEntry, controlRva: number, mode: PlanMode): UnwindPlan | DataProblem {
  const chain = unwindChain(tables, entry);
  if (isProblem(chain)) return chain;
  const first = chain[0]!;
  const funcEntry: FuncTableEntry = { kind: "runtime-function", beginRva: BigInt(entry.begin), endRva: BigInt(entry.end), moduleBase };
  if (mode === "pc") {
    const epilog = first.info.version < 2 ? v1Epilog(tables, chain, controlRva) : v2Epilog(chain, controlRva);
    if (epilog !== undefined) return finish(epilog.code, epilog.machineFrame, true, { function: { begin: entry.begin }, body: false, parts: [], epilog: epilog.epilog }, funcEntry);
  }
  return prologPlan(chain, controlRva, mode, funcEntry);
}

/** The prolog walk over the entry and its chained parents (§1.4, §1.7). */
function prologPlan(chain: readonly ChainLink[], controlRva: number, mode: PlanMode, entry: FuncTableEntry): UnwindPlan {
  const code: number[] = [];
  const first = chain[0]!;
  const info0 = first.info;
  const offset0 = mode === "body" ? IN_BODY : (controlRva - first.entry.begin) >>> 0;
  // The establisher frame: the base of SAVE_* offsets, fixed before anything is undone (§1.4).
  if (info0.frameRegister === 0) code.push(OP_BASE_RSP, 0, 0);
  else if (offset0 >= info0.sizeOfProlog || (info0.flags & UNW_FLAG_CHAININFO) !== 0) code.push(OP_BASE_REG, info0.frameRegister, info0.frameOffset);
  else {
    const setFp = info0.ops.find((o) => o.op === UWOP_SET_FPREG);
    if (setFp !== undefined && offset0 >= setFp.codeOffset) code.push(OP_BASE_REG, info0.frameRegister, info0.frameOffset);
    else code.push(OP_BASE_RSP, 0, 0);
  }
  let machineFrame = false;
  const parts: UnwindInfoPart[] = [];
  for (let k = 0; k < chain.length; k++) {
    const { entry: e, info } = chain[k]!;
    const offset = mode === "body" ? IN_BODY : (controlRva - e.begin) >>> 0;
    machineFrame = false;
    const applied: UnwindOpStep[] = [];
    for (const op of info.ops) {
      if (offset < op.codeOffset) continue;
      switch (op.op) {
        case UWOP_PUSH_NONVOL:
          code.push(OP_POP, op.info, 0);
          break;
        case UWOP_ALLOC_LARGE:
        case UWOP_ALLOC_SMALL:
          code.push(OP_ADD, 0, op.value);
          break;
        case UWOP_SET_FPREG:
          code.push(OP_SET_RSP, info.frameRegister, -info.frameOffset);
          break;
        case UWOP_SAVE_NONVOL:
        case UWOP_SAVE_NONVOL_FAR:
          code.push(OP_LOAD, op.info, op.value);
          break;
        case UWOP_SAVE_XMM128:
        case UWOP_SAVE_XMM128_FAR:
          code.push(OP_LOAD_XMM, op.info, op.value);
          break;
        case UWOP_PUSH_MACHFRAME:
          code.push(OP_MACHFRAME, 0, op.info === 0 ? 0 : 8);
          machineFrame = true;
          break;
        default:
          // UWOP_EPILOG: no effect on the prolog walk.
          continue;
      }
      applied.push(opStep(info, op)!);
    }
    // The codes are stored in reverse prolog order; the rule lists them in prolog order.
    const part: UnwindInfoPart = { ops: applied.reverse() };
    if (k > 0) part.chained = e.begin;
    if (offset < info.sizeOfProlog) part.prologOffset = offset;
    parts.push(part);
  }
  if (!machineFrame) code.push(OP_RET, 0, 0);
  return finish(stripUnusedBase(code), machineFrame, false, { function: { begin: first.entry.begin }, body: mode === "body", parts }, entry);
}

/** Drops the establisher-frame instruction when no LOAD uses it. */
function stripUnusedBase(code: number[]): number[] {
  for (let i = 0; i < code.length; i += 3) if (code[i] === OP_LOAD || code[i] === OP_LOAD_XMM) return code;
  return code.slice(3);
}

/** An epilog's plan and how it reads. */
interface EpilogPlan {
  code: number[];
  machineFrame: boolean;
  epilog: UnwindInfoEpilog;
}

/** The code bytes at an RVA, zero-padded to 40 (Windows reads a 32-byte window; unreadable bytes match nothing). */
function codeBytes(tables: X64Tables, rva: number): Uint8Array {
  const out = new Uint8Array(40);
  for (let n = Math.min(32, tables.sizeOfImage - rva); n > 0; n = n > 4 ? n >> 1 : n - 1) {
    const b = tables.read(rva, n);
    if (b !== undefined) {
      out.set(b);
      break;
    }
  }
  return out;
}

const int8 = (b: number): number => (b << 24) >> 24;
const int32 = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);

/**
 * Version-1 epilog detection by the instruction bytes at the PC (§1.5): an optional `add rsp` or
 * `lea rsp,[fp+d]`, pops, an optional F2 prefix, then a return or a jump out of the function.
 * Undefined when the PC is not in an epilog.
 */
function v1Epilog(tables: X64Tables, chain: readonly ChainLink[], controlRva: number): EpilogPlan | undefined {
  const { entry, info } = chain[0]!;
  const b = codeBytes(tables, controlRva);
  const code: number[] = [];
  const text: string[] = [];
  let i = 0;
  if (b[0] === 0x48 && b[1] === 0x83 && b[2] === 0xc4) {
    code.push(OP_ADD, 0, int8(b[3]!));
    text.push(`add rsp,${hex(int8(b[3]!))}`);
    i = 4;
  } else if (b[0] === 0x48 && b[1] === 0x81 && b[2] === 0xc4) {
    code.push(OP_ADD, 0, int32(b, 3));
    text.push(`add rsp,${hex(int32(b, 3))}`);
    i = 7;
  } else if ((b[0]! & 0xfe) === 0x48 && b[1] === 0x8d) {
    const fp = ((b[0]! & 1) << 3) | (b[2]! & 7);
    if (fp !== 0 && fp === info.frameRegister) {
      if ((b[2]! & 0xf8) === 0x60) {
        code.push(OP_SET_RSP, fp, int8(b[3]!));
        text.push(`lea rsp,[${REG64[fp]}${int8(b[3]!) < 0 ? "" : "+"}${hex(int8(b[3]!))}]`);
        i = 4;
      } else if ((b[2]! & 0xf8) === 0xa0) {
        code.push(OP_SET_RSP, fp, int32(b, 3));
        text.push(`lea rsp,[${REG64[fp]}${int32(b, 3) < 0 ? "" : "+"}${hex(int32(b, 3))}]`);
        i = 7;
      }
    }
  }
  for (;;) {
    if ((b[i]! & 0xf8) === 0x58) {
      code.push(OP_POP, b[i]! & 7, 0);
      text.push(`pop ${REG64[b[i]! & 7]}`);
      i += 1;
    } else if ((b[i]! & 0xf0) === 0x40 && (b[i + 1]! & 0xf8) === 0x58) {
      const r = ((b[i]! & 1) << 3) | (b[i + 1]! & 7);
      code.push(OP_POP, r, 0);
      text.push(`pop ${REG64[r]}`);
      i += 2;
    } else break;
  }
  if (b[i] === 0xf2) i += 1;
  let terminator: string | undefined;
  const op = b[i]!;
  if (op === 0xc3 || op === 0xc2 || (op === 0xf3 && b[i + 1] === 0xc3)) terminator = op === 0xc2 ? `ret ${hex(b[i + 1]! | (b[i + 2]! << 8))}` : op === 0xf3 ? "rep ret" : "ret";
  else if (op === 0xeb || op === 0xe9) {
    const target = controlRva + i + (op === 0xeb ? 2 + int8(b[i + 1]!) : 5 + int32(b, i + 1));
    if (target < entry.begin || target >= entry.end) {
      // Outside this entry: a tail call unless the target is another fragment of the same function (§1.5 D).
      const primary = sameFunction(tables, chain, target);
      if (primary === undefined || target === primary) terminator = `jmp ${hex(target)}`;
    } else if (target === entry.begin && (info.flags & UNW_FLAG_CHAININFO) === 0) terminator = `jmp ${hex(target)} (recursive tail call)`;
  } else if (op === 0xff && b[i + 1] === 0x25) terminator = "jmp [rip+disp32]";
  else if ((op & 0xf8) === 0x48 && b[i + 1] === 0xff && (b[i + 2]! & 0x38) === 0x20) terminator = "rex.w jmp r/m64";
  if (terminator === undefined) return undefined;
  // The return (or the jump's return address) is emulated as a ret (§1.5 step 3).
  code.push(OP_RET, 0, 0);
  text.push(terminator);
  return { code, machineFrame: false, epilog: { version: 1, instructions: text } };
}

/** The BeginAddress of the primary entry when `target` lies in another entry of the same function, else undefined (Windows' SameFunction). */
function sameFunction(tables: X64Tables, chain: readonly ChainLink[], target: number): number | undefined {
  if (target < 0 || target >= tables.sizeOfImage) return undefined;
  const found = lookupEntry(tables, target);
  if (found === undefined || isProblem(found)) return undefined;
  const primary = chain[chain.length - 1]!.entry.begin;
  return primaryBegin(tables, found) === primary ? primary : undefined;
}

/**
 * Version-2 epilog detection and emulation (§1.6): the PC lies in an epilog listed by the EPILOG
 * codes; the pops not yet executed are undone from the prolog's push codes, then an optional
 * pushfq (ALLOC_SMALL 8), then a machine frame or a return.
 */
function v2Epilog(chain: readonly ChainLink[], controlRva: number): EpilogPlan | undefined {
  const { entry, info } = chain[0]!;
  const epilogs = info.epilogs;
  if (epilogs === undefined) return undefined;
  let start: number | undefined;
  if (epilogs.atEnd) {
    const s = entry.end - epilogs.size;
    if ((controlRva - s) >>> 0 < epilogs.size) start = s;
  }
  if (start === undefined) {
    for (const offset of epilogs.offsets) {
      const s = entry.end - offset;
      if ((controlRva - s) >>> 0 < epilogs.size) {
        start = s;
        break;
      }
    }
  }
  if (start === undefined) return undefined;
  const epilogOffset = (controlRva - start) >>> 0;
  const code: number[] = [];
  const text: string[] = [];
  let ops = info.ops;
  let j = -1;
  for (const link of chain) {
    ops = link.info.ops;
    j = ops.findIndex((o) => o.op === UWOP_PUSH_NONVOL || o.op === UWOP_PUSH_MACHFRAME);
    if (j >= 0) break;
  }
  let machineFrame = false;
  if (j >= 0) {
    let cur = 0;
    for (; j < ops.length && ops[j]!.op === UWOP_PUSH_NONVOL; j++) {
      const r = ops[j]!.info;
      if (cur >= epilogOffset) {
        code.push(OP_POP, r, 0);
        text.push(`pop ${REG64[r]}`);
      }
      cur += r >= 8 ? 2 : 1;
    }
    if (j < ops.length && ops[j]!.op === UWOP_ALLOC_SMALL && ops[j]!.info === 0) {
      if (cur >= epilogOffset) {
        code.push(OP_ADD, 0, 8);
        text.push("popfq");
      }
      cur += 1;
      j++;
    }
    if (j < ops.length && ops[j]!.op === UWOP_PUSH_MACHFRAME) {
      code.push(OP_MACHFRAME, 0, 0);
      text.push("iretq");
      machineFrame = true;
    }
  }
  if (!machineFrame) {
    code.push(OP_RET, 0, 0);
    text.push("ret");
  }
  return { code, machineFrame, epilog: { version: 2, offset: epilogOffset, instructions: text } };
}

/** Completes a plan: its recovered names, and its rule with the caller's RSP as an expression. */
function finish(code: number[], machineFrame: boolean, epilog: boolean, description: PlanDescription, entry: FuncTableEntry | undefined, frameRegisterIgnored = false): UnwindPlan {
  const recovered = new Set<string>(["rip", "rsp"]);
  let base = "rsp";
  let offset = 0;
  for (let i = 0; i < code.length; i += 3) {
    const r = code[i + 1]!;
    const n = code[i + 2]!;
    switch (code[i]) {
      case OP_SET_RSP:
        base = REG64[r]!;
        offset = n;
        break;
      case OP_ADD:
        offset += n;
        break;
      case OP_POP:
        if (r === RSP) {
          base = `[${expression(base, offset)}]`;
          offset = 0;
        } else recovered.add(REG64[r]!);
        offset += 8;
        break;
      case OP_LOAD:
        if (r !== RSP) recovered.add(REG64[r]!);
        break;
      case OP_LOAD_XMM:
        recovered.add(XMM_LOW[r]!);
        recovered.add(XMM_HIGH[r]!);
        break;
      case OP_MACHFRAME:
        base = `[${expression(base, offset + n + 24)}]`;
        offset = 0;
        break;
      case OP_RET:
        offset += 8;
        break;
    }
  }
  const plan: UnwindPlan = { code, machineFrame, epilog, recovered: [...recovered], rule: { kind: "unwind-info", ...description, frameRegisterIgnored, callerRsp: expression(base, offset) } };
  if (entry !== undefined) plan.entry = entry;
  const simple = simpleForm(code);
  if (simple !== undefined) plan.simple = simple;
  if (!epilog && code.some((op, i) => i % 3 === 0 && (op === OP_SET_RSP || op === OP_BASE_REG))) {
    const without: number[] = [];
    for (let i = 0; i < code.length; i += 3) {
      if (code[i] === OP_SET_RSP) continue;
      if (code[i] === OP_BASE_REG) without.push(OP_BASE_RSP, 0, 0);
      else without.push(code[i]!, code[i + 1]!, code[i + 2]!);
    }
    plan.withoutFrameRegister = finish(without, machineFrame, false, description, entry, true);
  }
  return plan;
}

/** The {@link UnwindPlan.simple} form of a plan made of ADD, POP (not of RSP) and a final RET only. */
function simpleForm(code: readonly number[]): UnwindPlan["simple"] {
  const popOffsets: number[] = [];
  const popRegisters: number[] = [];
  let offset = 0;
  for (let i = 0; i < code.length; i += 3) {
    const op = code[i];
    const r = code[i + 1]!;
    if (op === OP_ADD && code[i + 2]! >= 0) offset += code[i + 2]!;
    else if (op === OP_POP && r !== RSP) {
      popOffsets.push(offset);
      popRegisters.push(r);
      offset += 8;
    } else if (op === OP_RET && i === code.length - 3) return { popOffsets, popRegisters, raOffset: offset, callerRsp: BigInt(offset + 8) };
    else return undefined;
  }
  return undefined;
}

/** `base+0x10`, `base-0x8` or `base`. */
function expression(base: string, offset: number): string {
  return offset === 0 ? base : `${base}${offset < 0 ? "" : "+"}${hex(offset)}`;
}
