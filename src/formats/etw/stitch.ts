/**
 * Kernel/user stitching of ETW stack items by MatchId (etw.md §2.3). An event raised in kernel
 * mode gets its kernel frames at once; the user frames are logged later, when the thread returns
 * to user mode, as a second item. Per the documentation, MatchId is 0 when both were captured in
 * one item, and otherwise a nonzero id shared by the two parts. The project rule: join the parts
 * kernel first, then user; keep every unmatched half, flagged, rather than guessing.
 */
import { hex } from "../../hex.js";
import type { StackTrace } from "./extended-data.js";

/** A stack item and where it came from. */
export interface EtwStackItem {
  trace: StackTrace;
  /** Where the item came from, in words: "event 0 item 1", "trace.bin offset 0x40". */
  source: string;
  /** What the event was, when the producer said so. */
  description?: string;
  /** The thread that logged it, when known: a second key beside MatchId. */
  thread?: number;
}

/** What part of a stitched stack an item supplied. */
export type StackPartRole = "whole" | "kernel" | "user";

/** One item's share of a stitched stack. */
export interface StackPart {
  role: StackPartRole;
  source: string;
  description?: string;
  /** Index of the part's first address in {@link EtwStack.addresses}. */
  start: number;
  count: number;
}

/**
 * A stack ready to compare: one MatchId-0 item, a kernel part joined with its user part, or an
 * unmatched half.
 */
export interface EtwStack {
  matchId: bigint;
  /** The widest address size among the parts. */
  addressSize: 4 | 8;
  /** Innermost first: the kernel part's addresses, then the user part's. */
  addresses: bigint[];
  parts: StackPart[];
  /** `complete`: MatchId 0, or both halves; `kernel-half` / `user-half`: the other half never came. */
  status: "complete" | "kernel-half" | "user-half";
  /** What is unusual about the stack, in words (an empty array, an unmatched half). */
  notes: string[];
}

/**
 * The lowest kernel-mode address for a pointer size (etw.md §2.3, TraceEvent's
 * IsWindowsKernelAddress): 0x80000000 for 4-byte pointers, 0xFFFF000000000000 for 8-byte ones.
 */
export function kernelThreshold(pointerSize: 4 | 8): bigint {
  return pointerSize === 4 ? 0x8000_0000n : 0xffff_0000_0000_0000n;
}

/** Whether `address` is a kernel-mode address for the trace's pointer size (etw.md §2.3: classify by the trace, not the provider). */
export function isKernelAddress(address: bigint, pointerSize: 4 | 8): boolean {
  return address >= kernelThreshold(pointerSize);
}

/** Options of {@link stitchStacks}. */
export interface StitchOptions {
  /** The trace's pointer size, for the kernel test; defaults to each item's own address size. */
  pointerSize?: 4 | 8;
}

interface Pending {
  stack: EtwStack;
  key: string;
}


/**
 * Stitches items, given in the order they were logged. MatchId 0 is a complete stack. An item
 * with a nonzero MatchId is a kernel part when its outermost address is kernel-mode (TraceEvent's
 * pending rule, etw.md §2.3), and a user part otherwise; an empty one is the user part when a
 * kernel part with its MatchId is waiting, else a kernel part. A user part completes the waiting
 * kernel part with the same MatchId (and thread, when known); halves that find no partner are
 * returned as `kernel-half` / `user-half` with a note. Stacks come out in the order of their
 * first item.
 */
export function stitchStacks(items: readonly EtwStackItem[], options: StitchOptions = {}): EtwStack[] {
  const out: EtwStack[] = [];
  const pending = new Map<string, Pending>();
  for (const item of items) {
    const { trace } = item;
    const pointerSize = options.pointerSize ?? trace.addressSize;
    const notes: string[] = [];
    if (trace.addresses.length === 0) notes.push(`${item.source}: the address array is empty (DataSize 8: MatchId only)`);
    if (trace.matchId === 0n) {
      out.push({ matchId: 0n, addressSize: trace.addressSize, addresses: [...trace.addresses], parts: [part("whole", item, 0)], status: "complete", notes });
      continue;
    }
    const key = `${trace.matchId}/${item.thread ?? "-"}`;
    const last = trace.addresses[trace.addresses.length - 1];
    const waiting = pending.get(key);
    const isKernel = last === undefined ? waiting === undefined : isKernelAddress(last, pointerSize);
    if (isKernel) {
      if (waiting !== undefined) {
        waiting.stack.notes.push(`a second kernel part with MatchId ${hex(trace.matchId)} (${item.source}) came before this one's user part`);
        pending.delete(key);
      }
      const stack: EtwStack = { matchId: trace.matchId, addressSize: trace.addressSize, addresses: [...trace.addresses], parts: [part("kernel", item, 0)], status: "kernel-half", notes };
      out.push(stack);
      pending.set(key, { stack, key });
      continue;
    }
    if (waiting !== undefined) {
      const stack = waiting.stack;
      stack.parts.push(part("user", item, stack.addresses.length));
      for (const a of trace.addresses) stack.addresses.push(a);
      stack.addressSize = stack.addressSize === 8 || trace.addressSize === 8 ? 8 : 4;
      stack.status = "complete";
      stack.notes.push(...notes);
      pending.delete(key);
      continue;
    }
    notes.push(`user part with MatchId ${hex(trace.matchId)}: no kernel part with that MatchId came before it`);
    out.push({ matchId: trace.matchId, addressSize: trace.addressSize, addresses: [...trace.addresses], parts: [part("user", item, 0)], status: "user-half", notes });
  }
  for (const { stack } of pending.values()) {
    stack.notes.push(`kernel part with MatchId ${hex(stack.matchId)}: its user part never came (the kernel does not always log it, etw.md §4)`);
  }
  return out;
}

function part(role: StackPartRole, item: EtwStackItem, start: number): StackPart {
  const p: StackPart = { role, source: item.source, start, count: item.trace.addresses.length };
  if (item.description !== undefined) p.description = item.description;
  return p;
}
