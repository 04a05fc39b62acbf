/**
 * The words of the cross-check (crosscheck.ts): names for addresses and walked frames, what a
 * function does with EBP according to its x86 unwind record (x86-fpo.md §1.2, §2), and the
 * diagnosis of every row where ETW's EBP-chain capture and the walk differ (x86-fpo.md §6,
 * etw.md §3.1).
 */
import { hex } from "../hex.js";
import { findFpo, outermostFrameData, x86Tables } from "../arch/x86/index.js";
import { FRAME_FPO, FRAME_NONFPO, FRAME_TRAP, FRAME_TSS } from "../model/fpo-data.js";
import { formatAddress, maskAddress, type Machine } from "../model/machine.js";
import { moduleAt, type Snapshot, type TruthFrame } from "../model/snapshot.js";
import type { EtwStack } from "../formats/etw.js";
import type { Frame, Walk } from "../walk/frame.js";
import { lookupAddress } from "../unwind/lookup-address.js";
import type { Cause, Diagnosis } from "./crosscheck.js";
import { ETW_MAX_ADDRESSES, type ChainCapture, type ChainStep } from "./ebp-chain.js";
import { locateAddress, locationText } from "./location.js";

/**
 * An address padded to the machine's width; a wider value (a WOW64 frame in an x86 cross-check)
 * in full.
 */
export function addressText(machine: Machine, v: bigint): string {
  return maskAddress(machine, v) === v ? formatAddress(machine, v) : hex(v);
}

/** Names addresses and walked frames for the diagnoses. */
export class Namer {
  constructor(
    private readonly snapshot: Snapshot,
    private readonly frames: readonly Frame[],
  ) {}

  /** The address padded to the machine's width; a wider value (a WOW64 frame in an x86 cross-check) in full. */
  hex(v: bigint): string {
    return addressText(this.snapshot.machine, v);
  }

  /** `module!function+0xoff` of a code address; `isReturn` looks it up at address − 1. */
  where(address: bigint, isReturn: boolean): string {
    return locationText(locateAddress(this.snapshot.modules, address, isReturn), this.hex(address));
  }

  /** The function a code address is in: its symbol name, else `module+0xoff`, else the address. */
  fn(address: bigint, isReturn: boolean): string {
    const loc = locateAddress(this.snapshot.modules, address, isReturn);
    return loc.function ?? locationText(loc, this.hex(address));
  }

  /** The function of walked frame k. */
  frameFn(k: number): string {
    const f = this.frames[k]!;
    return this.fn(f.addrPC, k > 0);
  }

  frameWhere(k: number): string {
    const f = this.frames[k]!;
    return this.where(f.addrPC, k > 0);
  }
}

/** What a function does with EBP, from its x86 unwind record (x86-fpo.md §1.2, §2). */
type EbpUse = { kind: "frame" | "untouched" | "general" | "prolog" | "unknown"; words: string };

function ebpUse(snapshot: Snapshot, frame: Frame): EbpUse {
  const at = lookupAddress(frame.addrPC, frame.index > 0);
  const module = moduleAt(snapshot.modules, at);
  const tables = module === undefined ? undefined : x86Tables(module, snapshot.memory);
  if (module === undefined || tables === undefined) return { kind: "unknown", words: "has no unwind record to say what it does with EBP" };
  const rva = Number(at - module.base);
  const fd = outermostFrameData(tables, rva);
  if (fd?.program !== undefined) {
    if (/^\s*\$T0\s+\$ebp\s+=/.test(fd.program)) return { kind: "frame", words: "sets up an EBP frame (its FrameData program starts from $ebp)" };
    if (/\$ebp\b[^=]*=/.test(fd.program)) return { kind: "general", words: "uses EBP as a general register (its FrameData program restores the caller's $ebp from the stack)" };
    return { kind: "untouched", words: "does not set up EBP (its FrameData program has no frame pointer)" };
  }
  const fpo = findFpo(tables.fpo, rva);
  if (fpo === undefined) return { kind: "unknown", words: "has no unwind record to say what it does with EBP" };
  if (fpo.cbFrame === FRAME_FPO) {
    return fpo.fUseBP
      ? { kind: "general", words: "uses EBP as a general register (FPO_DATA: frame pointer omitted, fUseBP)" }
      : { kind: "untouched", words: "does not set up EBP (FPO_DATA: frame pointer omitted, EBP left as its caller set it)" };
  }
  if (fpo.cbFrame === FRAME_NONFPO) {
    if (frame.index === 0 && rva - fpo.ulOffStart < fpo.cbProlog) return { kind: "prolog", words: `has not set up EBP yet: the PC is in its prolog (FPO_DATA FRAME_NONFPO, cbProlog ${fpo.cbProlog})` };
    return { kind: "frame", words: "sets up an EBP frame (FPO_DATA FRAME_NONFPO)" };
  }
  if (fpo.cbFrame === FRAME_TRAP || fpo.cbFrame === FRAME_TSS) return { kind: "unknown", words: `is a ${fpo.cbFrame === FRAME_TRAP ? "trap" : "TSS"} frame (FPO_DATA)` };
  return { kind: "unknown", words: "has no usable unwind record" };
}

/** Where an EBP value that is not a frame pointer comes from: the nearest function, from `k` outwards, that uses EBP as a general register. */
function garbageOrigin(snapshot: Snapshot, frames: readonly Frame[], names: Namer, k: number): string {
  const own = ebpUse(snapshot, frames[k]!);
  if (own.kind === "general") return `${names.frameFn(k)} ${own.words}`;
  if (own.kind === "untouched") {
    for (let j = k + 1; j < frames.length; j++) {
      const use = ebpUse(snapshot, frames[j]!);
      if (use.kind === "general") return `${names.frameFn(k)} ${own.words}, and ${names.frameFn(j)} ${use.words}`;
      if (use.kind !== "untouched") break;
    }
    return `${names.frameFn(k)} ${own.words}`;
  }
  if (own.kind === "prolog") return `${names.frameFn(k)} ${own.words}`;
  return `${names.frameFn(k)}'s EBP is not a frame pointer`;
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Who held the EBP the chain follows next: a walked frame's function, or a garbage value read at `slot`. */
export type Holder = { kind: "frame"; index: number } | { kind: "garbage"; slot: bigint };

/** Writes the diagnoses. */
export class Diagnoser {
  private readonly frames: readonly Frame[];

  constructor(
    private readonly snapshot: Snapshot,
    private readonly walk: Walk,
    private readonly stack: EtwStack,
    private readonly names: Namer,
    private readonly truth: readonly TruthFrame[] | undefined,
  ) {
    this.frames = walk.frames;
  }

  /** The truth frame with this pc (and sp, when given), k ≥ 1; -1 when none; undefined without truth. */
  private truthIndex(pc: bigint, sp?: bigint): number | undefined {
    if (this.truth === undefined) return undefined;
    return this.truth.findIndex((t, k) => k > 0 && t.pc === pc && (sp === undefined || t.sp === sp));
  }

  private describe(k: number, extra = ""): string {
    return `${this.names.hex(this.frames[k]!.addrPC)} (${this.names.frameWhere(k)}${extra})`;
  }

  /** The truth's word on a walk-only frame, when it is the walk that is wrong. */
  private walkWrongForWalkOnly(k: number): Diagnosis | undefined {
    const f = this.frames[k]!;
    const t = this.truthIndex(f.addrPC, f.addrStack);
    if (t === undefined || t >= 0 || k === 0) return undefined;
    return { cause: "walk-wrong", text: `${this.describe(k)} is not in the ground truth: the walk invented it (found by ${f.trust}: ${f.rule}); ETW is right not to have it` };
  }

  /** A walked frame ETW skipped: the chain went from frame `from` to frame `to` through fp (the EBP `holder` had). */
  skipped(k: number, from: number, to: number, holder: Holder, step: ChainStep): Diagnosis {
    const wrong = this.walkWrongForWalkOnly(k);
    if (wrong !== undefined) return wrong;
    const n = this.names;
    if (holder.kind === "garbage") {
      return {
        cause: "rejoined",
        text: `${this.describe(k)} missing from ETW: the EBP-chain capture was following a value read at ${n.hex(holder.slot)} that is not a saved EBP, and it came back to the frame chain at ${n.frameFn(to - 1)}'s saved EBP ${n.hex(step.fp)}, past this frame (x86-fpo.md §6)`,
      };
    }
    const callee = k - 1;
    const use = ebpUse(this.snapshot, this.frames[callee]!);
    const reason = use.kind === "frame" ? `${use.words}, yet the EBP it held was not its own frame pointer` : use.words;
    const route = to === from + 2 ? `its caller's caller, ${n.frameFn(to)}` : n.frameFn(to);
    return {
      cause: "fpo-skip",
      text:
        `${this.describe(k, `, the caller of ${n.frameFn(callee)}`)} missing from ETW: ${n.frameFn(callee)} ${reason}, ` +
        `so EBP still held ${n.frameFn(to - 1)}'s frame pointer ${n.hex(step.fp)} and the EBP-chain capture went from ${n.frameFn(from)} straight to ${route} (x86-fpo.md §6, effect 1)`,
    };
  }

  /** An address the chain read at a slot that is no walked frame's. */
  invented(step: ChainStep, holder: Holder, beyond: boolean, atFrame: number | undefined): Diagnosis {
    const n = this.names;
    const e = step.ra;
    const what = `${n.hex(e)} (${n.where(e, true)})`;
    const t = this.truthIndex(e, step.fp + 8n);
    if (t !== undefined && t >= 0) {
      return { cause: "walk-wrong", text: `${what} is truth frame ${t}${this.truth![t]!.function !== undefined ? ` (${this.truth![t]!.function})` : ""}: the walk missed it; ${this.walkStopWords()}` };
    }
    if (atFrame !== undefined) {
      // The chain read a walked frame's own return-address slot, yet the walk has another AddrPC there.
      return this.unexplained(
        `${what} was read at [${n.hex(step.fp + 4n)}], the return-address slot of walked frame ${atFrame}, whose AddrPC is ${n.hex(this.frames[atFrame]!.addrPC)}`,
      );
    }
    if (beyond) {
      if (this.walk.stop.reason !== "end-of-stack") {
        return { cause: "walk-stopped", text: `${what} lies beyond the walk's last frame: the walk stopped (${this.walkStopWords()}) while ETW's EBP chain went on (read at [${n.hex(step.fp + 4n)}])` };
      }
      return this.unexplained(`${what} was read at [${n.hex(step.fp + 4n)}], beyond the walk's last frame, although the walk reached the end of the stack`);
    }
    const from =
      holder.kind === "frame"
        ? `${garbageOrigin(this.snapshot, this.frames, n, holder.index)}, so the EBP it held, ${n.hex(step.fp)}, is not a saved frame pointer, yet it lies inside the stack`
        : `the word at ${n.hex(holder.slot)}, ${n.hex(step.fp)}, is not a saved EBP, yet it lies inside the stack`;
    return {
      cause: "garbage-ebp",
      text: `${what} invented by ETW: ${from}; the EBP-chain capture took [${n.hex(step.fp + 4n)}] = ${n.hex(e)} for a return address (x86-fpo.md §6, effect 2)`,
    };
  }

  /**
   * Why the chain ended while the walk goes on for `missing` frames after frame `last`, whose ETW
   * address is `etw`: the full diagnosis, and a short form for each frame after the end.
   */
  chainEnd(capture: ChainCapture, holder: Holder, last: number, etw: bigint, missing: number): { diagnosis: Diagnosis; short: string } {
    const n = this.names;
    const stop = capture.stop;
    const after = `ETW ends after ${last === 0 ? "its capture site " : ""}${n.hex(etw)} (${n.where(etw, true)})`;
    const rest = `The walk goes on for ${plural(missing, "more frame")}: ${this.frames
      .slice(last + 1)
      .map((_, i) => n.frameFn(last + 1 + i))
      .join(", ")}`;
    if (stop.reason === "count") {
      return {
        diagnosis: { cause: "array-full", text: `${after}: the array is full; ETW records at most ${ETW_MAX_ADDRESSES} addresses (etw.md §2.1, §4). ${rest}` },
        short: `ETW's array was already full (${ETW_MAX_ADDRESSES} addresses)`,
      };
    }
    const who =
      holder.kind === "frame" ? garbageOrigin(this.snapshot, this.frames, n, holder.index) : `the chain was following a value read at ${n.hex(holder.slot)}, not a saved EBP`;
    const holderName = holder.kind === "frame" ? n.frameFn(holder.index) : undefined;
    const ebp = holderName !== undefined ? `the EBP ${holderName} held` : "the next frame pointer";
    let why: string;
    let brief: string;
    switch (stop.reason) {
      case "fp-out-of-bounds":
      case "next-out-of-bounds":
        why = `${ebp}, ${n.hex(stop.value)}, is ${stop.value === 0n ? "0" : "not a frame pointer"}: it is outside the stack ${n.hex(capture.bounds.limit)}..${n.hex(capture.bounds.base)}`;
        brief = `is outside the stack`;
        break;
      case "next-not-above":
        why = `${ebp}, ${n.hex(stop.value)}, is not above the slot ${n.hex(stop.fp)} it was saved at, so the chain cannot move outwards`;
        brief = `is not above the slot it was saved at`;
        break;
      case "fp-near-base":
        why = `${ebp}, ${n.hex(stop.value)}, leaves fewer than 8 bytes below StackBase ${n.hex(capture.bounds.base)}`;
        brief = `leaves fewer than 8 bytes below StackBase`;
        break;
      case "ra-in-stack":
        why = `above ${ebp}, ${n.hex(stop.fp)}, the word ${n.hex(stop.value)} is a stack address, not a return address`;
        brief = `has a stack address where a return address should be`;
        break;
      case "read-fault":
        why = `${ebp}, ${n.hex(stop.value)}, points at memory the snapshot does not hold`;
        brief = `points at memory the snapshot does not hold`;
        break;
    }
    const value = stop.reason === "ra-in-stack" ? stop.fp : stop.value;
    return {
      diagnosis: { cause: "truncated", text: `${after}: ${who}; ${why}, so the EBP-chain capture stopped there (x86-fpo.md §6, effect 2). ${rest}` },
      short: `the EBP-chain capture stopped at ${holderName ?? "a garbage frame pointer"}, whose EBP ${n.hex(value)} ${brief}, before reaching it`,
    };
  }

  /** A walked frame after the end of the chain. */
  afterEnd(k: number, cause: Cause, short: string): Diagnosis {
    const wrong = this.walkWrongForWalkOnly(k);
    if (wrong !== undefined) return wrong;
    return { cause, text: `${this.describe(k)} missing from ETW: ${short}` };
  }

  private walkStopWords(): string {
    return `${this.walk.stop.reason}: ${this.walk.stop.detail}`;
  }

  /** The walk ended while ETW has `count` more addresses. */
  walkEnd(count: number): Diagnosis {
    const text = `the walk ends (${this.walkStopWords()}) while ETW has ${plural(count, "more address", "more addresses")}`;
    if (this.truth !== undefined && this.truth.length > this.frames.length) return { cause: "walk-wrong", text: `${text}; the ground truth has ${this.truth.length} frames, so the walk stopped too early` };
    if (this.walk.stop.reason !== "end-of-stack") return { cause: "walk-stopped", text };
    return this.unexplained(`${text}, although the walk reached the end of the stack`);
  }

  /** ETW ended early and no chain model says why. */
  etwEndUnknown(lastEtw: number, lastWalk: number, missing: number, context: string): Diagnosis {
    const base = `ETW ends after ${lastEtw >= 0 && this.stack.addresses[lastEtw] !== undefined ? this.names.hex(this.stack.addresses[lastEtw]!) : "its first address"} while the walk goes on for ${plural(missing, "more frame")} after frame ${lastWalk}`;
    const truthLen = this.truth?.length;
    if (truthLen !== undefined && lastWalk + 1 >= truthLen) return { cause: "walk-wrong", text: `${base}: the ground truth also ends at frame ${truthLen - 1}, so the walk's extra frames are wrong` };
    return this.unexplained(`${base} (${context})`);
  }

  /** A walk-only frame the chain did not explain. */
  walkOnly(k: number, context: string): Diagnosis {
    const wrong = this.walkWrongForWalkOnly(k);
    if (wrong !== undefined) return wrong;
    const f = this.frames[k]!;
    const t = this.truthIndex(f.addrPC, f.addrStack);
    const truthWords = t !== undefined && t >= 0 ? ` it is truth frame ${t}, so ETW lacks a real frame;` : "";
    return this.unexplained(`${this.describe(k)} missing from ETW:${truthWords} ${context}`);
  }

  /** An ETW-only address the chain did not explain. */
  etwOnly(etwIndex: number, context: string): Diagnosis {
    const e = this.stack.addresses[etwIndex]!;
    const what = `${this.names.hex(e)} (${this.names.where(e, true)})`;
    const t = this.truthIndex(e);
    if (t !== undefined && t >= 0) return { cause: "walk-wrong", text: `${what} is truth frame ${t}: the walk missed it (${this.walkStopWords()})` };
    if (t !== undefined && t < 0) return this.unexplained(`${what} only in ETW, and not in the ground truth either: ${context}`);
    return this.unexplained(`${what} only in ETW: ${context}`);
  }

  private unexplained(text: string): Diagnosis {
    return { cause: "unexplained", text };
  }
}
