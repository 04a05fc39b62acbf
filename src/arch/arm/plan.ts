/**
 * Working out an ARM unwind without reading the stack: from a function's unwind data
 * (formats/unwind-data/arm.ts) and where its PC is, an {@link ArmUnwindPlan} — the codes to
 * undo, in order — that exec.ts runs. It follows Microsoft's "ARM exception handling"
 * (docs/arm.md), in bytes, since Thumb-2 instructions are 2 or 4 bytes and every code says which:
 *
 * 1. `off` = ControlPc − Function Start;
 * 2. in the prolog (off below its size, the sum of its codes' instruction sizes up to the first
 *    end, and the function not a fragment): the codes of the instructions not yet run, the last
 *    `size − off` bytes of it, are skipped;
 * 3. in an epilog (the header's one, at the function's end, or a scope): its codes, with those of
 *    the `off − start` bytes already run skipped; an epilog's size counts the extra instruction
 *    its end code names (FD: 16-bit, FE: 32-bit, the `bx lr` or tail branch);
 * 4. otherwise the body: every code from index 0;
 * 5. codes run until an end code; then pc = lr.
 */
import { hex } from "../../hex.js";
import type { FuncTableEntry } from "../../unwind/frame.js";
import { problemAt, type DataProblem } from "../../formats/unwind-data/problem.js";
import { armCodeLength, armCodeOpSize, armScopeBytes, decodeArmCode, isArmEnd, type ArmCode, type ArmUnwindData } from "../../formats/unwind-data/arm.js";
import type { ArmOpStep, ArmPosition, ArmUnwindRule } from "./rule.js";

/** A register of a pop mask by bit: r0-r12, lr (bit 14). */
export function maskRegisters(mask: number): string[] {
  const out: string[] = [];
  for (let r = 0; r <= 12; r++) if ((mask & (1 << r)) !== 0) out.push(`r${r}`);
  if ((mask & (1 << 14)) !== 0) out.push("lr");
  return out;
}

/** A frame's ARM unwind, worked out without the stack. */
export interface ArmUnwindPlan {
  /** The codes to undo, in order; empty for a function whose prolog has not run (pc = lr). */
  codes: readonly ArmCode[];
  /** No `.pdata` entry: a leaf, pc = lr with sp unchanged, and no progress when pc already is lr. */
  leaf: boolean;
  /** The register names the plan recovers (pc and sp always). */
  recovered: readonly string[];
  rule: ArmUnwindRule;
  entry?: FuncTableEntry;
  /**
   * The usual shape — pops, `ldr lr` and d8-d15 vpops at fixed offsets from sp, allocations, no
   * `mov sp` — as register `names[k]` (a pop-mask bit 0-14, or 16 + n for dn, a u64) at sp +
   * `offsets[k]`, and the caller's sp at sp + `callerSp` (`callerSpBig` the same as a bigint).
   * Absent for any other plan.
   */
  simple?: { registers: number[]; offsets: number[]; callerSp: number; callerSpBig: bigint };
}

/** What a plan's rule says about the function besides its codes. */
export type ArmPlanFunction = Extract<ArmUnwindRule["function"], { begin: number }>;

/** The plan of a function without a `.pdata` entry: a leaf. */
export function armLeafPlan(rva: number): ArmUnwindPlan {
  return { codes: [], leaf: true, recovered: ["pc", "sp"], rule: { kind: "arm-unwind", function: { leafRva: rva }, position: { at: "body" }, ops: [], callerSp: "sp" } };
}

/** Skips codes from `p` until `bytes` bytes of instructions are accounted for, stopping at an end. */
function skipBytes(codes: Uint8Array, p: number, bytes: number): { p: number; skipped: number } {
  let done = 0;
  let skipped = 0;
  while (done < bytes && p < codes.length && !isArmEnd(codes[p]!)) {
    done += armCodeOpSize(codes[p]!);
    p += armCodeLength(codes[p]!);
    skipped++;
  }
  return { p, skipped };
}

/** Where the codes to run start and the position they mean (steps 2-4 of the file comment). */
export function armLocate(data: ArmUnwindData, off: number): { index: number; position: ArmPosition } {
  const codes = data.codes;
  if (!data.fragment) {
    const size = armScopeBytes(codes, 0, false);
    if (off < size) {
      const { p, skipped } = skipBytes(codes, 0, size - off);
      return { index: p, position: { at: "prolog", offset: off, skipped } };
    }
  }
  const epilog = (start: number, index: number): { index: number; position: ArmPosition } | undefined => {
    if (off < start || off >= start + armScopeBytes(codes, index, true)) return undefined;
    const { p, skipped } = skipBytes(codes, index, off - start);
    return { index: p, position: { at: "epilog", start, offset: off - start, skipped } };
  };
  if (data.epilogInHeader) {
    const found = epilog(data.functionLength - armScopeBytes(codes, data.epilogIndex, true), data.epilogIndex);
    if (found !== undefined) return found;
  } else {
    for (const scope of data.scopes) {
      if (off < scope.start) break;
      const found = epilog(scope.start, scope.index);
      if (found !== undefined) return found;
    }
  }
  return { index: 0, position: { at: "body" } };
}

/**
 * The plan for a frame whose ControlPc is `off` bytes into the function described by `data`, or
 * a problem when its codes cannot be undone (a reserved or Microsoft-specific code).
 */
export function buildArmPlan(data: ArmUnwindData, off: number, fn: ArmPlanFunction, entry: FuncTableEntry | undefined): ArmUnwindPlan | DataProblem {
  const { index, position } = armLocate(data, off);
  const codes = data.codes;
  const out: ArmCode[] = [];
  const ops: ArmOpStep[] = [];
  const recovered = new Set<string>(["pc", "sp"]);
  let base = "sp";
  let offset = 0;
  const where = (at: number): string => `${data.source.form === "xdata" ? `the .xdata at RVA ${hex(data.source.rva)}` : `packed word ${hex(data.source.word)}`}, code byte ${at}`;
  for (let p = index; p < codes.length; ) {
    const at = p;
    const { code, length } = decodeArmCode(codes, p);
    p += length;
    if (code.op === "end") break;
    switch (code.op) {
      case "alloc":
        offset += code.size;
        ops.push({ op: "alloc", code: code.name, size: code.size });
        break;
      case "pop": {
        const registers = maskRegisters(code.mask);
        for (const r of registers) recovered.add(r);
        offset += 4 * registers.length;
        ops.push({ op: "pop", code: code.name, registers });
        break;
      }
      case "vpop":
        if (code.last < code.first || code.last > 31) return problem(data, `${where(at)}: vpop {d${code.first}-d${code.last}} is not a register range`);
        for (let d = code.first; d <= code.last; d++) if (d >= 8 && d <= 15) recovered.add(`d${d}`);
        offset += 8 * (code.last - code.first + 1);
        ops.push({ op: "vpop", code: code.name, first: code.first, last: code.last });
        break;
      case "mov-sp":
        base = code.register === 13 ? base : code.register === 14 ? "lr" : code.register === 15 ? "pc" : `r${code.register}`;
        if (code.register !== 13) offset = 0;
        ops.push({ op: "mov-sp", register: code.register === 13 ? "sp" : base });
        break;
      case "ldr-lr":
        recovered.add("lr");
        offset += code.size;
        ops.push({ op: "ldr-lr", size: code.size });
        break;
      case "nop":
        ops.push({ op: "nop", size: armCodeOpSize(codes[at]!) === 2 ? 2 : 4 });
        break;
      case "microsoft":
        return problem(data, `${where(at)}: the Microsoft-specific code ee ${hex(code.value)} is not modelled`);
      case "invalid":
        return problem(data, `${where(at)}: ${code.why}`);
    }
    out.push(code);
  }
  const callerSp = offset === 0 ? base : `${base}+${hex(offset)}`;
  const plan: ArmUnwindPlan = { codes: out, leaf: false, recovered: [...recovered], rule: { kind: "arm-unwind", function: fn, position, ops, callerSp } };
  if (entry !== undefined) plan.entry = entry;
  const simple = simpleForm(out);
  if (simple !== undefined) plan.simple = simple;
  return plan;
}

/** The {@link ArmUnwindPlan.simple} form of a plan's codes, when they have one. */
function simpleForm(codes: readonly ArmCode[]): ArmUnwindPlan["simple"] {
  const registers: number[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (const c of codes) {
    switch (c.op) {
      case "alloc":
        at += c.size;
        break;
      case "pop":
        for (let r = 0; r <= 14; r++) {
          if ((c.mask & (1 << r)) === 0) continue;
          registers.push(r);
          offsets.push(at);
          at += 4;
        }
        break;
      case "ldr-lr":
        registers.push(14);
        offsets.push(at);
        at += c.size;
        break;
      case "vpop":
        for (let d = c.first; d <= c.last; d++) {
          if (d >= 8 && d <= 15) {
            registers.push(16 + d);
            offsets.push(at);
          }
          at += 8;
        }
        break;
      case "nop":
        break;
      default:
        return undefined;
    }
  }
  return { registers, offsets, callerSp: at, callerSpBig: BigInt(at) };
}

function problem(data: ArmUnwindData, why: string): DataProblem {
  return data.source.form === "xdata" ? problemAt(data.source.rva, why) : { problem: why };
}
