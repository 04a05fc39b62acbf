/**
 * A model of the x86 EBP-chain capture ETW performs (`RtlWalkFrameChain`, x86-fpo.md §6), run on
 * a snapshot's memory. The cross-check re-runs it from the capture site's EBP to explain an ETW
 * array address by address: which saved-EBP slot each address was read from, and why the chain
 * skipped or invented frames or stopped.
 *
 * The rules, as §6 states them:
 * 1. Start at an EBP value, within the thread's stack bounds StackLimit..StackBase.
 * 2. Each step reads `next = [fp]` and `ra = [fp+4]`; it stops when fp leaves the bounds or fewer
 *    than 8 bytes remain, or when ra lies inside the stack.
 * 3. It records ra, and goes on only when `next > fp` and next is below StackBase.
 * 4. No FPO data or FrameData is consulted.
 */
import { hexPadded } from "../hex.js";
import type { MemoryReader } from "../memory/reader.js";

/** The most return addresses a capture records (the StackWalk event's MOF declares up to 192, etw.md §2.1, §4). */
export const ETW_MAX_ADDRESSES = 192;

/** NT_TIB's stack bounds: StackLimit is the lowest stack address, StackBase one past the highest. */
export interface StackBounds {
  limit: bigint;
  base: bigint;
}

/**
 * The stack bounds a snapshot shows around `sp`: the contiguous readable range containing it,
 * found page by page (the snapshot has no TEB to read them from). Undefined when `sp` itself is
 * unreadable.
 */
export function stackBoundsAround(memory: MemoryReader, sp: bigint, pageSize = 0x1000n, maxPages = 4096): StackBounds | undefined {
  const readable = (at: bigint, size: bigint): boolean => size === 0n || (at >= 0n && memory.read(at, Number(size)) !== undefined);
  if (!readable(sp, 1n)) return undefined;
  let base = sp + 1n;
  for (let i = 0; i < maxPages && readable(base, pageSize); i++) base += pageSize;
  base += longestReadable((n) => readable(base, n), pageSize);
  let limit = sp;
  for (let i = 0; i < maxPages && readable(limit - pageSize, pageSize); i++) limit -= pageSize;
  limit -= longestReadable((n) => readable(limit - n, n), pageSize);
  return { limit, base };
}

/** The largest n below `max` for which `ok(n)` holds, when ok is true up to some n and false after. */
function longestReadable(ok: (n: bigint) => boolean, max: bigint): bigint {
  let lo = 0n;
  let hi = max;
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** One recorded address: the frame pointer it was read at, the address, and the next frame pointer. */
export interface ChainStep {
  /** The frame pointer: [fp] was taken as the caller's EBP, [fp+4] as the return address. */
  fp: bigint;
  /** The recorded address, [fp+4]. */
  ra: bigint;
  /** [fp]: where the chain would go next. */
  next: bigint;
}

/** Why the chain ended (x86-fpo.md §6 steps 2 and 3). */
export type ChainStopReason =
  /** The array is full. */
  | "count"
  /** A frame pointer below StackLimit or at or above StackBase. */
  | "fp-out-of-bounds"
  /** Fewer than 8 bytes between the frame pointer and StackBase. */
  | "fp-near-base"
  /** [fp] or [fp+4] could not be read (Windows' SEH guard would discard the whole array). */
  | "read-fault"
  /** [fp+4] is a stack address, not code. */
  | "ra-in-stack"
  /** The saved EBP is not above the frame pointer: the chain would not move outwards. */
  | "next-not-above"
  /** The saved EBP is at or above StackBase. */
  | "next-out-of-bounds";

/** How the chain ended. */
export interface ChainStop {
  reason: ChainStopReason;
  /** The value that ended it: the frame pointer that failed, the stack address taken for ra, or the saved EBP. */
  value: bigint;
  /** The frame pointer of the step that ended it (for `next-*`, the one whose [fp] was read). */
  fp: bigint;
  /** The same in words. */
  detail: string;
}

/** The result of a modelled capture. */
export interface ChainCapture {
  start: bigint;
  bounds: StackBounds;
  steps: ChainStep[];
  stop: ChainStop;
}

function readU32(memory: MemoryReader, address: bigint): bigint | undefined {
  const b = memory.read(address, 4);
  if (b === undefined || b.length < 4) return undefined;
  return BigInt((b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0);
}

/** Follows the EBP chain from `start` as ETW's x86 capture does (x86-fpo.md §6); at most `maxCount` addresses. */
export function walkFrameChain(memory: MemoryReader, start: bigint, bounds: StackBounds, maxCount = ETW_MAX_ADDRESSES): ChainCapture {
  const steps: ChainStep[] = [];
  const range = `${hexPadded(bounds.limit, 8)}..${hexPadded(bounds.base, 8)}`;
  const end = (reason: ChainStopReason, value: bigint, fp: bigint, detail: string): ChainCapture => ({ start, bounds, steps, stop: { reason, value, fp, detail } });
  let fp = start;
  for (;;) {
    if (steps.length >= maxCount) return end("count", BigInt(steps.length), fp, `the array is full: the capture records at most ${maxCount} addresses`);
    if (fp < bounds.limit || fp >= bounds.base) return end("fp-out-of-bounds", fp, fp, `frame pointer ${hexPadded(fp, 8)} is outside the stack ${range}`);
    if (bounds.base - fp < 8n) return end("fp-near-base", fp, fp, `frame pointer ${hexPadded(fp, 8)} leaves fewer than 8 bytes below StackBase ${hexPadded(bounds.base, 8)}`);
    const ra = readU32(memory, fp + 4n);
    const next = readU32(memory, fp);
    if (ra === undefined || next === undefined) return end("read-fault", fp, fp, `[${hexPadded(fp, 8)}] cannot be read`);
    if (ra > bounds.limit && ra < bounds.base) return end("ra-in-stack", ra, fp, `[${hexPadded(fp + 4n, 8)}] = ${hexPadded(ra, 8)} is a stack address, not a return address`);
    steps.push({ fp, ra, next });
    if (next <= fp) return end("next-not-above", next, fp, `the saved EBP [${hexPadded(fp, 8)}] = ${hexPadded(next, 8)} is not above ${hexPadded(fp, 8)}`);
    if (next >= bounds.base) return end("next-out-of-bounds", next, fp, `the saved EBP [${hexPadded(fp, 8)}] = ${hexPadded(next, 8)} is at or above StackBase ${hexPadded(bounds.base, 8)}`);
    fp = next;
  }
}
