/**
 * The alignment of a walk with an ETW address array (crosscheck.ts): through the EBP chain
 * re-run on the snapshot (x86-fpo.md §6), which ties every ETW address to the saved-EBP slot it
 * was read from, or by equal addresses, in order.
 */
import type { Frame } from "../walk/frame.js";
import type { EtwStack } from "../formats/etw.js";
import type { AlignedRow, Diagnosis, Truncation } from "./crosscheck.js";
import { plural, type Diagnoser, type Holder, type Namer } from "./crosscheck-diagnose.js";
import { ETW_MAX_ADDRESSES, type ChainCapture } from "./ebp-chain.js";

/** What both alignments work on: the rows they append to, ETW's addresses and the walked frames. */
export interface Alignment {
  /** The aligned rows so far; an alignment appends to them. */
  rows: AlignedRow[];
  diag: Diagnoser;
  names: Namer;
  /** ETW's addresses, innermost first. */
  E: readonly bigint[];
  /** The walked frames, innermost first. */
  W: readonly Frame[];
  stack: EtwStack;
}

/** The EBP chain re-run from the capture site, and how far it agrees with ETW's array. */
export interface ChainMatch {
  capture: ChainCapture;
  /** How many of the chain's steps equal ETW's addresses after the anchor. */
  same: number;
  /** The chain gives exactly ETW's addresses after the anchor, no more and no fewer. */
  reproduced: boolean;
  /** ETW's index of the capture site's address. */
  anchorEtw: number;
}

/**
 * Aligns through the re-run chain: the first `same` steps equal ETW's addresses, and each is
 * tied to the walked frame whose saved-EBP slot it was read at (fp + 8 is the frame's
 * AddrStack: the return-address slot is fp + 4). The rest, if any, is aligned by addresses.
 */
export function alignByChain(al: Alignment, chain: ChainMatch): Truncation | undefined {
  const { rows, diag, names, E, W } = al;
  const { capture, same, reproduced, anchorEtw } = chain;
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
    return alignByAddresses(al, anchorEtw + 1 + same, lastWalk + 1, {
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
export function alignByAddresses(al: Alignment, e0: number, w0: number, from?: Continuation): Truncation | undefined {
  const { rows, diag, names, E, W, stack } = al;
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
