/**
 * The cross-check of a walk against an ETW stack (etw.md §3.1): align the walked frames with the
 * address array ETW recorded, and say for every difference why it exists.
 *
 * An ETW array holds, innermost first, the logging path's own frames (the event-write code,
 * the kernel part of a stitched stack), then the capture site (the return address of the call
 * that logged the event, in the function the walk's frame 0 is in; for a profile sample the
 * interrupted IP itself), then return addresses, which are compared with the walk's AddrPC
 * without any −1 adjustment (etw.md §3.1 step 2). The prefix before the first address the walk
 * knows is skipped.
 *
 * On x86 ETW follows the EBP chain (x86-fpo.md §6), so the cross-check re-runs that chain on the
 * snapshot from the capture site's EBP (ebp-chain.ts). When the re-run reproduces ETW's array,
 * every address is tied to the saved-EBP slot it was read from, which names the reason for each
 * difference: a caller skipped because its callee kept the caller's EBP (FPO), an address
 * invented by following an EBP used as a general register, the point where the chain stopped.
 * The ground truth, when the snapshot has it, says which side is right where the chain cannot.
 * A difference nothing explains is `unexplained`.
 */
import { callBefore } from "../arch/x86/code.js";
import { findFpo, outermostFrameData, x86Tables } from "../arch/x86/tables.js";
import { formatAddress, machineInfo, type Machine } from "../model/machine.js";
import { FRAME_FPO, FRAME_NONFPO, FRAME_TRAP, FRAME_TSS } from "../model/fpo-data.js";
import { moduleAt, type Snapshot, type ThreadSnapshot, type TruthFrame } from "../model/snapshot.js";
import { locateAddress, locationText } from "../analysis/location.js";
import { compareWithTruth, type TruthComparison } from "../walk/compare.js";
import type { Frame, Walk } from "../walk/frame.js";
import { lookupAddress } from "../walk/lookup-address.js";
import { ruleText } from "../unwind/rule-text.js";
import { ETW_MAX_ADDRESSES, stackBoundsAround, walkFrameChain, type ChainCapture, type ChainStep } from "./ebp-chain.js";
import { decodeDiskItems, decodeStackTrace, EVENT_HEADER_EXT_TYPE, extTypeName } from "./extended-data.js";
import { isKernelAddress, kernelThreshold, stitchStacks, type EtwStack, type EtwStackItem } from "./stitch.js";

/** What a row of the alignment is. */
export type RowKind = "prefix" | "matched" | "etw-only" | "walk-only";

/** Why a row is what it is. */
export type Cause =
  /** Prefix: a frame of the logging path, or before the first address the walk knows. */
  | "logging-path"
  /** Prefix: a kernel-mode address, which a user-mode walk has no counterpart for. */
  | "kernel"
  /** Matched: ETW's capture site (the logging call's return address) against the walk's frame 0. */
  | "capture-site"
  /** Walk-only: a caller the EBP chain skipped because its callee kept the caller's EBP. */
  | "fpo-skip"
  /** ETW-only: an address read by following an EBP that was not a frame pointer. */
  | "garbage-ebp"
  /** Walk-only: passed over while the chain followed garbage and came back to the frame chain. */
  | "rejoined"
  /** Walk-only: after the EBP chain stopped. */
  | "truncated"
  /** Walk-only: after the array reached its size limit. */
  | "array-full"
  /** ETW-only: beyond the end of the walk, which stopped for the reason it recorded. */
  | "walk-stopped"
  /** Either side: the ground truth sides with ETW; the walk is wrong here. */
  | "walk-wrong"
  /** Nothing explains it: a bug to fix. */
  | "unexplained";

/** A cause and the explanation in words. */
export interface Diagnosis {
  cause: Cause;
  text: string;
}

/** One row of an alignment, innermost first. */
export interface AlignedRow {
  kind: RowKind;
  /** Index in the ETW array (the stitched stack's addresses). */
  etwIndex?: number;
  etw?: bigint;
  /** Index of the walked frame. */
  walkIndex?: number;
  walk?: bigint;
  /** `module!function+0xoff` of the row (the walked frame's, when there is one). */
  location: string;
  diagnosis?: Diagnosis;
}

/** Where one side ends while the other goes on. */
export interface Truncation {
  /** The side that ends first. */
  side: "etw" | "walk";
  /** The last ETW index and walked frame both sides share. */
  afterEtw?: number;
  afterWalk?: number;
  /** How many rows the other side has beyond that point. */
  missing: number;
  diagnosis: Diagnosis;
}

/** The cross-check of one walk against one ETW stack. */
export interface StackCrossCheck {
  stack: EtwStack;
  /** False when there is nothing to align (an empty array, only kernel frames, no walk). */
  comparable: boolean;
  rows: AlignedRow[];
  prefix: number;
  matched: number;
  etwOnly: number;
  walkOnly: number;
  unexplained: number;
  truncation?: Truncation;
  /** True when, past the prefix, ETW and the walk have the same frames. */
  agrees: boolean;
  /** `ebp-chain`: aligned through the re-run EBP chain; `addresses`: by equal addresses; `none`. */
  method: "ebp-chain" | "addresses" | "none";
  /** What re-running the EBP chain on the snapshot showed (x86). */
  model?: string;
  notes: string[];
}

/** The cross-check of one walk against every ETW stack of its thread. */
export interface CrossCheckReport {
  machine: Machine;
  stacks: StackCrossCheck[];
  /** The walk against the snapshot's ground truth, when it has one. */
  truth?: TruthComparison;
  /** Notes about the ETW input itself (items that are not stacks, stack keys). */
  notes: string[];
  /** True when every comparable stack agrees with the walk past its prefix. */
  agrees: boolean;
  unexplained: number;
}

/** Options of {@link crossCheck}. */
export interface CrossCheckOptions {
  /** Ground truth of the walked thread: which side is right where the EBP chain cannot say. */
  truth?: readonly TruthFrame[];
  /** Notes about the ETW input, carried into the report. */
  notes?: readonly string[];
}

/** ETW stacks of a thread's events, stitched by MatchId, and notes about the items that are not stacks. */
export interface ThreadEtw {
  stacks: EtwStack[];
  notes: string[];
}

/**
 * The stack items of a thread's ETW events (on-disk item chains, etw.md §1.2), in logging order,
 * each named by event and item index.
 */
export function threadStackItems(thread: ThreadSnapshot, notes: string[] = []): EtwStackItem[] {
  const items: EtwStackItem[] = [];
  (thread.etw ?? []).forEach((event, e) => {
    decodeDiskItems(event.items).forEach((item, i) => {
      const source = `event ${e} item ${i}`;
      if (item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE32 || item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE64) {
        const stackItem: EtwStackItem = { trace: decodeStackTrace(item), source };
        if (event.description !== undefined) stackItem.description = event.description;
        items.push(stackItem);
      } else if (item.extType === EVENT_HEADER_EXT_TYPE.STACK_KEY32 || item.extType === EVENT_HEADER_EXT_TYPE.STACK_KEY64) {
        notes.push(`${source}: ${extTypeName(item.extType)} names a cached stack whose addresses only a trace's stack-key definitions give (etw.md §2.2): not compared`);
      }
    });
  });
  return items;
}

/** The thread's ETW stacks, stitched (etw.md §2.3), with the snapshot's pointer size for the kernel test. */
export function threadEtw(snapshot: Snapshot, thread: ThreadSnapshot): ThreadEtw {
  const notes: string[] = [];
  const items = threadStackItems(thread, notes);
  return { stacks: stitchStacks(items, { pointerSize: pointerSizeOf(snapshot.machine) }), notes };
}

function pointerSizeOf(machine: Machine): 4 | 8 {
  return machineInfo(machine).pointerSize === 4 ? 4 : 8;
}

/** Cross-checks a walk against every stack; the truth comparison is added when `options.truth` is given. */
export function crossCheck(snapshot: Snapshot, walk: Walk, stacks: readonly EtwStack[], options: CrossCheckOptions = {}): CrossCheckReport {
  const checks = stacks.map((s) => crossCheckStack(snapshot, walk, s, options));
  const report: CrossCheckReport = {
    machine: snapshot.machine,
    stacks: checks,
    notes: [...(options.notes ?? [])],
    agrees: checks.every((c) => c.agrees),
    unexplained: checks.reduce((n, c) => n + c.unexplained, 0),
  };
  if (options.truth !== undefined) report.truth = compareWithTruth(snapshot.machine, walk, options.truth);
  return report;
}

/** Names addresses and walked frames for the diagnoses. */
class Namer {
  constructor(
    private readonly snapshot: Snapshot,
    private readonly frames: readonly Frame[],
  ) {}

  /** The address padded to the machine's width; a wider value (a WOW64 frame in an x86 cross-check) in full. */
  hex(v: bigint): string {
    return v > (machineInfo(this.snapshot.machine).pointerSize === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn) ? `0x${v.toString(16)}` : formatAddress(this.snapshot.machine, v);
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
  const fd = outermostFrameData(tables.frameData, rva);
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

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Cross-checks a walk against one ETW stack. */
export function crossCheckStack(snapshot: Snapshot, walk: Walk, stack: EtwStack, options: CrossCheckOptions = {}): StackCrossCheck {
  const machine = snapshot.machine;
  const pointerSize = pointerSizeOf(machine);
  const W = walk.frames;
  const E = stack.addresses;
  const names = new Namer(snapshot, W);
  const truth = options.truth;
  const rows: AlignedRow[] = [];
  const notes = [...stack.notes];
  const result = (comparable: boolean, method: StackCrossCheck["method"], truncation?: Truncation, model?: string): StackCrossCheck => {
    const count = (k: RowKind): number => rows.filter((r) => r.kind === k).length;
    const check: StackCrossCheck = {
      stack,
      comparable,
      rows,
      prefix: count("prefix"),
      matched: count("matched"),
      etwOnly: count("etw-only"),
      walkOnly: count("walk-only"),
      unexplained: rows.filter((r) => r.diagnosis?.cause === "unexplained").length,
      agrees: !comparable || (count("etw-only") === 0 && count("walk-only") === 0),
      method,
      notes,
    };
    if (truncation !== undefined) check.truncation = truncation;
    if (model !== undefined) check.model = model;
    return check;
  };

  if (E.length === 0) {
    notes.push("the ETW array holds no address (an x86 capture whose read faulted returns 0 frames, x86-fpo.md §6): nothing to compare");
    return result(false, "none");
  }
  if (W.length === 0) {
    notes.push("the walk has no frame: nothing to compare");
    return result(false, "none");
  }

  // The anchor: the first ETW address the walk knows, skipping kernel addresses for a user-mode walk.
  const userWalk = !isKernelAddress(W[0]!.addrPC, pointerSize);
  const frame0 = W[0]!;
  const loc0 = locateAddress(snapshot.modules, frame0.addrPC, false);
  const isCaptureSite = (e: bigint): boolean => {
    if (e <= frame0.addrPC || e - frame0.addrPC > 64n) return false;
    const loc = locateAddress(snapshot.modules, e, true);
    if (loc.module === undefined || loc.module !== loc0.module) return false;
    if (loc0.symbol !== undefined && loc.symbol !== loc0.symbol) return false;
    return snapshot.memory.read(e - 1n, 1) === undefined || callBefore(snapshot.memory, e) !== undefined;
  };
  let anchorEtw = -1;
  let anchorWalk = -1;
  let viaSite = false;
  for (let i = 0; i < E.length && anchorEtw < 0; i++) {
    const e = E[i]!;
    if (userWalk && isKernelAddress(e, pointerSize)) continue;
    const k = W.findIndex((f) => f.addrPC === e);
    if (k >= 0) {
      anchorEtw = i;
      anchorWalk = k;
    } else if (isCaptureSite(e)) {
      anchorEtw = i;
      anchorWalk = 0;
      viaSite = true;
    }
  }

  const prefixRow = (i: number): AlignedRow => {
    const e = E[i]!;
    const where = names.where(e, true);
    const part = stack.parts.find((p) => i >= p.start && i < p.start + p.count);
    let diagnosis: Diagnosis;
    if (machine === "x86" && e > 0xffff_ffffn) {
      diagnosis = {
        cause: "logging-path",
        text: `${names.hex(e)} is a 64-bit address above a 32-bit process: a frame of the WOW64 layer, which logs the event from 64-bit code (etw.md §3, §3.1 step 1)`,
      };
    } else if (userWalk && isKernelAddress(e, pointerSize)) {
      diagnosis = {
        cause: "kernel",
        text: `${names.hex(e)} (${where}) is a kernel-mode address (at or above ${names.hex(kernelThreshold(pointerSize))})${part?.role === "kernel" ? `, from the kernel part of MatchId 0x${stack.matchId.toString(16)}` : ""}: a user-mode walk has no counterpart for it (etw.md §3.1 step 4)`,
      };
    } else if (moduleAt(snapshot.modules, e - 1n) !== undefined) {
      diagnosis = { cause: "logging-path", text: `${names.hex(e)} (${where}) is the logging path's own frame, called after the capture site, so no walked frame matches it (etw.md §3.1 step 1)` };
    } else {
      diagnosis = { cause: "logging-path", text: `${names.hex(e)} is in no module of the snapshot and comes before the first address the walk knows (etw.md §3.1 step 1)` };
    }
    return { kind: "prefix", etwIndex: i, etw: e, location: where, diagnosis };
  };

  if (anchorEtw < 0) {
    if (userWalk && E.every((e) => isKernelAddress(e, pointerSize))) {
      for (let i = 0; i < E.length; i++) rows.push(prefixRow(i));
      notes.push(
        stack.status === "kernel-half"
          ? "only the kernel part of this stack came: with no user-mode address there is nothing to compare with a user-mode walk"
          : "every address is kernel-mode: nothing to compare with a user-mode walk",
      );
      return result(false, "none");
    }
    const diag = new Diagnoser(snapshot, walk, stack, names, truth);
    for (let i = 0; i < E.length; i++) rows.push({ kind: "etw-only", etwIndex: i, etw: E[i]!, location: names.where(E[i]!, true), diagnosis: diag.etwOnly(i, "no address of the ETW array matches a walked frame or the capture site") });
    for (let k = 0; k < W.length; k++) rows.push({ kind: "walk-only", walkIndex: k, walk: W[k]!.addrPC, location: names.frameWhere(k), diagnosis: diag.walkOnly(k, "no address of the ETW array matches a walked frame or the capture site") });
    return result(true, "addresses");
  }

  for (let i = 0; i < anchorEtw; i++) rows.push(prefixRow(i));
  const diag = new Diagnoser(snapshot, walk, stack, names, truth);
  for (let k = 0; k < anchorWalk; k++) {
    rows.push({ kind: "walk-only", walkIndex: k, walk: W[k]!.addrPC, location: names.frameWhere(k), diagnosis: diag.walkOnly(k, `ETW's first known address matches walked frame ${anchorWalk}, so it has nothing for frame ${k}`) });
  }
  const anchorRow: AlignedRow = { kind: "matched", etwIndex: anchorEtw, etw: E[anchorEtw]!, walkIndex: anchorWalk, walk: W[anchorWalk]!.addrPC, location: names.frameWhere(anchorWalk) };
  if (viaSite) {
    const e = E[anchorEtw]!;
    anchorRow.diagnosis = {
      cause: "capture-site",
      text: `${names.hex(e)} (${names.where(e, true)}) is the return address of the logging call at the capture site ${names.hex(frame0.addrPC)} (${names.frameWhere(0)}): it stands for the walk's frame 0 (etw.md §3)`,
    };
  }
  rows.push(anchorRow);

  // x86: re-run the EBP chain from the capture site's EBP and align through it.
  const ebp0 = frame0.registers["ebp"];
  const sp0 = frame0.registers["esp"] ?? frame0.addrStack;
  const bounds = machine === "x86" && anchorWalk === 0 && ebp0 !== undefined ? stackBoundsAround(snapshot.memory, sp0) : undefined;
  if (bounds !== undefined) {
    const part = stack.parts.find((p) => anchorEtw >= p.start && anchorEtw < p.start + p.count);
    const before = anchorEtw + 1 - (part?.start ?? 0);
    const capture = walkFrameChain(snapshot.memory, ebp0!, bounds, Math.max(0, ETW_MAX_ADDRESSES - before));
    const rest = E.slice(anchorEtw + 1);
    let same = 0;
    while (same < rest.length && same < capture.steps.length && rest[same] === capture.steps[same]!.ra) same++;
    const reproduced = same === rest.length && same === capture.steps.length;
    const model = reproduced
      ? `re-running the EBP chain on the snapshot from the capture site's EBP ${names.hex(ebp0!)} ${rest.length === 0 ? "records nothing after the capture site, as ETW did" : `reproduces ETW's ${plural(rest.length, "address", "addresses")} after the capture site`}; it ends because ${capture.stop.detail}`
      : same < rest.length && same < capture.steps.length
        ? `re-running the EBP chain from EBP ${names.hex(ebp0!)} reproduces ${plural(same, "address", "addresses")} after the capture site, then gives ${names.hex(capture.steps[same]!.ra)} where ETW has ${names.hex(rest[same]!)}`
        : same === capture.steps.length
          ? `re-running the EBP chain from EBP ${names.hex(ebp0!)} reproduces ${plural(same, "address", "addresses")} after the capture site and ends there (${capture.stop.detail}), but ETW has ${plural(rest.length - same, "more address", "more addresses")}`
          : `re-running the EBP chain from EBP ${names.hex(ebp0!)} reproduces all ${plural(rest.length, "address", "addresses")} ETW has after the capture site, but would go on for ${plural(capture.steps.length - same, "more address", "more addresses")}`;
    const truncation = alignByChain(rows, diag, names, capture, same, reproduced, anchorEtw, E, W, stack);
    return result(true, "ebp-chain", truncation, model);
  }
  const truncation = alignByAddresses(rows, diag, names, anchorEtw + 1, anchorWalk + 1, E, W, stack);
  return result(true, "addresses", truncation);
}

/** Who held the EBP the chain follows next: a walked frame's function, or a garbage value read at `slot`. */
type Holder = { kind: "frame"; index: number } | { kind: "garbage"; slot: bigint };

/**
 * Aligns through the re-run chain: the first `same` steps equal ETW's addresses, and each is
 * tied to the walked frame whose saved-EBP slot it was read at (fp + 8 is the frame's
 * AddrStack: the return-address slot is fp + 4). The rest, if any, is aligned by addresses.
 */
function alignByChain(
  rows: AlignedRow[],
  diag: Diagnoser,
  names: Namer,
  capture: ChainCapture,
  same: number,
  reproduced: boolean,
  anchorEtw: number,
  E: readonly bigint[],
  W: readonly Frame[],
  stack: EtwStack,
): Truncation | undefined {
  const bySlot = new Map<bigint, number>();
  for (let j = 1; j < W.length; j++) if (!bySlot.has(W[j]!.addrStack)) bySlot.set(W[j]!.addrStack, j);
  let lastWalk = 0;
  let lastEtw = anchorEtw;
  let holder: Holder = { kind: "frame", index: 0 };
  const outermost = W[W.length - 1]!;
  for (let t = 0; t < same; t++) {
    const step = capture.steps[t]!;
    const etwIndex = anchorEtw + 1 + t;
    const w = bySlot.get(step.fp + 8n);
    if (w !== undefined && w > lastWalk && W[w]!.addrPC === step.ra) {
      for (let k = lastWalk + 1; k < w; k++) rows.push(walkOnlyRow(names, W, k, diag.skipped(k, lastWalk, w, holder, step)));
      rows.push({ kind: "matched", etwIndex, etw: step.ra, walkIndex: w, walk: step.ra, location: names.frameWhere(w) });
      lastWalk = w;
      lastEtw = etwIndex;
      holder = { kind: "frame", index: w };
    } else {
      const beyond = step.fp + 8n > outermost.addrStack;
      rows.push({ kind: "etw-only", etwIndex, etw: step.ra, location: names.where(step.ra, true), diagnosis: diag.invented(step, holder, beyond, w) });
      holder = { kind: "garbage", slot: step.fp };
    }
  }
  if (!reproduced) {
    return alignByAddresses(rows, diag, names, anchorEtw + 1 + same, lastWalk + 1, E, W, stack, {
      why: `ETW's array and the EBP chain re-run on the snapshot part here (${names.hex(E[anchorEtw + 1 + same] ?? 0n)} in ETW, ${capture.steps[same] !== undefined ? names.hex(capture.steps[same]!.ra) : "the end"} in the re-run)`,
      lastEtw,
      lastWalk,
    });
  }
  if (lastWalk < W.length - 1) {
    const missing = W.length - 1 - lastWalk;
    const { diagnosis, short } = diag.chainEnd(capture, holder, lastWalk, E[lastEtw]!, missing);
    for (let k = lastWalk + 1; k < W.length; k++) rows.push(walkOnlyRow(names, W, k, diag.afterEnd(k, diagnosis.cause, short)));
    return { side: "etw", afterEtw: lastEtw, afterWalk: lastWalk, missing, diagnosis };
  }
  const trailing = rows.filter((r) => r.kind === "etw-only" && r.etwIndex! > lastEtw).length;
  if (trailing > 0) {
    return { side: "walk", afterEtw: lastEtw, afterWalk: lastWalk, missing: trailing, diagnosis: diag.walkEnd(trailing) };
  }
  return undefined;
}

function walkOnlyRow(names: Namer, W: readonly Frame[], k: number, diagnosis: Diagnosis): AlignedRow {
  return { kind: "walk-only", walkIndex: k, walk: W[k]!.addrPC, location: names.frameWhere(k), diagnosis };
}

/** Where an address alignment continues from, after a chain alignment. */
interface Continuation {
  why: string;
  lastEtw: number;
  lastWalk: number;
}

/**
 * Aligns ETW[e0..] with walked frames [w0..] by equal addresses (the longest common
 * subsequence, so that the order is kept), and diagnoses the rest with the ground truth.
 */
function alignByAddresses(
  rows: AlignedRow[],
  diag: Diagnoser,
  names: Namer,
  e0: number,
  w0: number,
  E: readonly bigint[],
  W: readonly Frame[],
  stack: EtwStack,
  from?: Continuation,
): Truncation | undefined {
  const a = E.slice(e0);
  const b = W.slice(w0).map((f) => f.addrPC);
  const pairs = commonSubsequence(a, b);
  const context = from?.why ?? "they differ here";
  let i = 0;
  let j = 0;
  let lastEtw = from?.lastEtw ?? e0 - 1;
  let lastWalk = from?.lastWalk ?? w0 - 1;
  const flush = (untilA: number, untilB: number): void => {
    for (; j < untilB; j++) rows.push(walkOnlyRow(names, W, w0 + j, diag.walkOnly(w0 + j, context)));
    for (; i < untilA; i++) rows.push({ kind: "etw-only", etwIndex: e0 + i, etw: a[i]!, location: names.where(a[i]!, true), diagnosis: diag.etwOnly(e0 + i, context) });
  };
  for (const [pa, pb] of pairs) {
    flush(pa, pb);
    rows.push({ kind: "matched", etwIndex: e0 + pa, etw: a[pa]!, walkIndex: w0 + pb, walk: b[pb]!, location: names.frameWhere(w0 + pb) });
    i = pa + 1;
    j = pb + 1;
    lastEtw = e0 + pa;
    lastWalk = w0 + pb;
  }
  const walkLeft = b.length - j;
  const etwLeft = a.length - i;
  if (walkLeft > 0 && etwLeft === 0) {
    const part = stack.parts.find((p) => lastEtw >= p.start && lastEtw < p.start + p.count) ?? stack.parts[stack.parts.length - 1];
    const full = part !== undefined && part.count >= ETW_MAX_ADDRESSES;
    const diagnosis: Diagnosis = full
      ? { cause: "array-full", text: `ETW's array is full: the capture records at most ${ETW_MAX_ADDRESSES} addresses (etw.md §2.1, §4), so ${plural(walkLeft, "more walked frame")} are not in it` }
      : diag.etwEndUnknown(lastEtw, lastWalk, walkLeft, context);
    for (; j < b.length; j++) rows.push(walkOnlyRow(names, W, w0 + j, full ? { cause: "array-full", text: `${names.hex(b[j]!)} (${names.frameWhere(w0 + j)}) is past the end of a full ETW array` } : diag.walkOnly(w0 + j, context)));
    return { side: "etw", afterEtw: lastEtw, afterWalk: lastWalk, missing: walkLeft, diagnosis };
  }
  flush(a.length, b.length);
  if (etwLeft > 0 && walkLeft === 0) return { side: "walk", afterEtw: lastEtw, afterWalk: lastWalk, missing: etwLeft, diagnosis: diag.walkEnd(etwLeft) };
  return undefined;
}

/** The longest common subsequence of two address lists, as index pairs in order. */
export function commonSubsequence(a: readonly bigint[], b: readonly bigint[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return [];
  if (n * m > 4_000_000) {
    // Too large for the table: pair greedily in order.
    const out: [number, number][] = [];
    let j = 0;
    for (let i = 0; i < n && j < m; i++) {
      const k = b.indexOf(a[i]!, j);
      if (k >= 0) {
        out.push([i, k]);
        j = k + 1;
      }
    }
    return out;
  }
  const len = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      len[i]![j] = a[i] === b[j] ? len[i + 1]![j + 1]! + 1 : Math.max(len[i + 1]![j]!, len[i]![j + 1]!);
    }
  }
  const out: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push([i, j]);
      i++;
      j++;
    } else if (len[i + 1]![j]! >= len[i]![j + 1]!) i++;
    else j++;
  }
  return out;
}

/** Writes the diagnoses. */
class Diagnoser {
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
    return { cause: "walk-wrong", text: `${this.describe(k)} is not in the ground truth: the walk invented it (found by ${f.trust}: ${ruleText(f.rule)}); ETW is right not to have it` };
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

/** Renders a report as text: the truth line, then per stack its rows, differences and counts. */
export function crossCheckText(report: CrossCheckReport, title: string): string {
  const lines: string[] = [];
  const wide = machineInfo(report.machine).pointerSize === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const hex = (v: bigint | undefined): string => (v === undefined ? "-" : v > wide ? `0x${v.toString(16)}` : formatAddress(report.machine, v));
  const width = machineInfo(report.machine).pointerSize * 2 + 2;
  lines.push(title);
  if (report.truth !== undefined) lines.push(`  walk vs truth: ${report.truth.exact ? `exact (${report.truth.walkedFrames} frames)` : report.truth.difference!.text}`);
  for (const note of report.notes) lines.push(`  note: ${note}`);
  report.stacks.forEach((c, s) => {
    const st = c.stack;
    const parts = st.parts.map((p) => `${p.role} ${p.source}${p.description !== undefined ? ` "${p.description}"` : ""}`).join(" + ");
    lines.push("");
    lines.push(`ETW stack ${s + 1} of ${report.stacks.length}: MatchId 0x${st.matchId.toString(16)}, ${plural(st.addresses.length, "address", "addresses")}, ${st.status} (${parts})`);
    for (const note of c.notes) lines.push(`  note: ${note}`);
    if (c.rows.length > 0) {
      lines.push(`  ${"etw".padEnd(4)} ${"address".padEnd(width)}  ${"walk".padEnd(4)} ${"AddrPC".padEnd(width)}  ${"status".padEnd(12)}  location`);
      for (const r of c.rows) {
        const status = r.diagnosis?.cause === "capture-site" ? "capture site" : r.diagnosis?.cause === "unexplained" ? `${r.kind}!` : r.kind;
        lines.push(`  ${String(r.etwIndex ?? "-").padEnd(4)} ${hex(r.etw).padEnd(width)}  ${String(r.walkIndex ?? "-").padEnd(4)} ${hex(r.walk).padEnd(width)}  ${status.padEnd(12)}  ${r.location}`);
      }
    }
    if (c.prefix > 0) {
      const prefix = c.rows.filter((r) => r.kind === "prefix");
      const kernel = prefix.filter((r) => r.diagnosis?.cause === "kernel").length;
      const kinds = [kernel > 0 ? `${kernel} kernel-mode` : "", c.prefix - kernel > 0 ? `${c.prefix - kernel} of the logging path` : ""].filter((k) => k !== "");
      lines.push(`  prefix: ${plural(c.prefix, "frame")} skipped (${kinds.join(", ")}; etw.md §3.1)`);
    }
    if (c.model !== undefined) lines.push(`  EBP chain: ${c.model}`);
    // One line per difference; a run of rows with the same reason (a deep recursion, the frames
    // after a truncation) prints the first in full and the rest as one line.
    const diffs = c.rows.filter((r) => r.kind === "etw-only" || r.kind === "walk-only");
    for (let i = 0; i < diffs.length; ) {
      const r = diffs[i]!;
      let j = i + 1;
      while (j < diffs.length && diffs[j]!.kind === r.kind && diffs[j]!.diagnosis!.cause === r.diagnosis!.cause && reasonOf(diffs[j]!) === reasonOf(r)) j++;
      lines.push(`  ${r.diagnosis!.cause === "unexplained" ? "UNEXPLAINED" : r.kind} ${r.diagnosis!.text}`);
      if (j - i > 1) {
        const rest = diffs.slice(i + 1, j);
        const index = (x: AlignedRow): number => (r.kind === "walk-only" ? x.walkIndex! : x.etwIndex!);
        const names = [...new Set(rest.map((x) => x.location.replace(/\+0x[0-9a-f]+$/, "").replace(/^[^!]*!/, "")))];
        const shown = names.length > 6 ? `${names.slice(0, 6).join(", ")}, ...` : names.join(", ");
        lines.push(`    and ${plural(rest.length, `more ${r.kind} row`)} for the same reason (${r.kind === "walk-only" ? "walked frames" : "ETW addresses"} ${index(rest[0]!)}..${index(rest[rest.length - 1]!)}: ${shown})`);
      }
      i = j;
    }
    if (c.truncation !== undefined) lines.push(`  truncation: ${c.truncation.diagnosis.text}`);
    if (c.comparable) {
      const verdict = c.agrees ? "agree" : c.unexplained > 0 ? "differ, NOT all explained" : "differ, all explained";
      lines.push(`  ${c.matched} matched, ${c.etwOnly} etw-only, ${c.walkOnly} walk-only, ${c.unexplained} unexplained: ${verdict}`);
    } else lines.push("  not compared");
  });
  return lines.join("\n") + "\n";
}

/** A difference's reason without the address and place it starts with. */
function reasonOf(r: AlignedRow): string {
  const text = r.diagnosis?.text ?? "";
  const at = text.indexOf(" missing from ETW: ");
  return at >= 0 ? text.slice(at) : text.replace(/^0x[0-9a-f]+ \([^)]*\)/, "");
}

/** A report as plain JSON values (addresses as hex strings). */
export function crossCheckJson(report: CrossCheckReport): unknown {
  const wide = machineInfo(report.machine).pointerSize === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const hex = (v: bigint): string => (v > wide ? `0x${v.toString(16)}` : formatAddress(report.machine, v));
  return {
    machine: report.machine,
    agrees: report.agrees,
    unexplained: report.unexplained,
    truth: report.truth ?? null,
    notes: report.notes,
    stacks: report.stacks.map((c) => ({
      matchId: c.stack.matchId.toString(),
      status: c.stack.status,
      parts: c.stack.parts,
      addresses: c.stack.addresses.map(hex),
      comparable: c.comparable,
      method: c.method,
      model: c.model ?? null,
      prefix: c.prefix,
      matched: c.matched,
      etwOnly: c.etwOnly,
      walkOnly: c.walkOnly,
      unexplained: c.unexplained,
      agrees: c.agrees,
      truncation: c.truncation ?? null,
      notes: c.notes,
      rows: c.rows.map((r) => ({
        kind: r.kind,
        etwIndex: r.etwIndex ?? null,
        etw: r.etw === undefined ? null : hex(r.etw),
        walkIndex: r.walkIndex ?? null,
        walk: r.walk === undefined ? null : hex(r.walk),
        location: r.location,
        cause: r.diagnosis?.cause ?? null,
        diagnosis: r.diagnosis?.text ?? null,
      })),
    })),
  };
}
