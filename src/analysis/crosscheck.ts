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
import { hex } from "../hex.js";
import { machineInfo, maskAddress, type Machine } from "../model/machine.js";
import { moduleAt, type Snapshot, type ThreadSnapshot, type TruthFrame } from "../model/snapshot.js";
import { decodeDiskItems, decodeStackTrace, EVENT_HEADER_EXT_TYPE, extTypeName, isKernelAddress, kernelThreshold, stitchStacks, type EtwStack, type EtwStackItem } from "../formats/etw.js";
import { callBefore } from "../arch/x86/index.js";
import { compareWithTruth, type TruthComparison } from "../walk/compare.js";
import type { Walk } from "../walk/frame.js";
import { alignByAddresses, alignByChain } from "./crosscheck-align.js";
import { Diagnoser, Namer, plural } from "./crosscheck-diagnose.js";
import { ETW_MAX_ADDRESSES, stackBoundsAround, walkFrameChain } from "./ebp-chain.js";
import { locateAddress } from "./location.js";


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
  return { stacks: stitchStacks(items, { pointerSize: machineInfo(snapshot.machine).pointerSize }), notes };
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

/** Cross-checks a walk against one ETW stack. */
export function crossCheckStack(snapshot: Snapshot, walk: Walk, stack: EtwStack, options: CrossCheckOptions = {}): StackCrossCheck {
  const machine = snapshot.machine;
  const pointerSize = machineInfo(machine).pointerSize;
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
    if (maskAddress(machine, e) !== e) {
      diagnosis = {
        cause: "logging-path",
        text: `${names.hex(e)} is a 64-bit address above a 32-bit process: a frame of the WOW64 layer, which logs the event from 64-bit code (etw.md §3, §3.1 step 1)`,
      };
    } else if (userWalk && isKernelAddress(e, pointerSize)) {
      diagnosis = {
        cause: "kernel",
        text: `${names.hex(e)} (${where}) is a kernel-mode address (at or above ${names.hex(kernelThreshold(pointerSize))})${part?.role === "kernel" ? `, from the kernel part of MatchId ${hex(stack.matchId)}` : ""}: a user-mode walk has no counterpart for it (etw.md §3.1 step 4)`,
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

  // Re-run the EBP chain from the capture site's EBP and align through it.
  const ebp0 = frame0.registers["ebp"];
  const sp0 = frame0.registers["esp"] ?? frame0.addrStack;
  const bounds = machineInfo(machine).etwFramePointerCapture && anchorWalk === 0 && ebp0 !== undefined ? stackBoundsAround(snapshot.memory, sp0) : undefined;
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
    const truncation = alignByChain({ rows, diag, names, E, W, stack }, { capture, same, reproduced, anchorEtw });
    return result(true, "ebp-chain", truncation, model);
  }
  const truncation = alignByAddresses({ rows, diag, names, E, W, stack }, anchorEtw + 1, anchorWalk + 1);
  return result(true, "addresses", truncation);
}
