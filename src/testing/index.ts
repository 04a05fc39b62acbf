/**
 * stackwalk-emu/testing: stacks in tests. {@link walkDump} walks a minidump from its bytes (with
 * symbol files from their bytes) into plain data, and {@link stackMatchers} holds `toHaveStack`
 * for Vitest's and Jest's `expect.extend` (both call a matcher the same way: `this.isNot`, a
 * result of `{ pass, message }`), so this entry imports neither. Like the core entry it runs in
 * a browser: no Node built-ins.
 */
import { bytesSource, minidumpSnapshot, readMinidump } from "../formats/minidump.js";
import { attachSymbolFile, parseSymbolFile, type SymbolFile } from "../formats/symbol-file.js";
import { formatAddress, type Machine } from "../model/machine.js";
import type { Snapshot } from "../model/snapshot.js";
import { locate, locationText, sourceOf } from "../analysis/location.js";
import { ruleText } from "../arch/rule-text.js";
import type { Trust, WalkStop } from "../walk/frame.js";
import type { WalkerName } from "../walk/registry.js";
import { walkSnapshot, type ThreadWalk } from "../walk/walk.js";

/** One frame as a test sees it. */
export interface StackFrameView {
  index: number;
  /** The function covering the PC (callers looked up at return address − 1), or null. */
  function: string | null;
  /** The module's file name, or null. */
  module: string | null;
  /** `module!function+0xoff`, `module+0xoff` or the bare PC. */
  location: string;
  /** The source file and line of the PC, when a .sym file's line records give them. */
  file: string | null;
  line: number | null;
  /** How the frame was found, and the rule with the values it used. */
  trust: Trust;
  rule: string;
  /** AddrPC and AddrStack. */
  pc: bigint;
  sp: bigint;
}

/** One walked thread. */
export interface ThreadStack {
  id: number;
  crashed: boolean;
  frames: StackFrameView[];
  stop: WalkStop;
}

/** Every walked thread of a snapshot, the crashed one first. */
export interface WalkedStacks {
  machine: Machine;
  threads: ThreadStack[];
  /** The crashed thread, else the first: what `toHaveStack` looks at unless told a thread. */
  thread: ThreadStack;
}

/** Options of {@link walkDump} and {@link walkStacks}. */
export interface WalkDumpOptions {
  /** Symbol files: Breakpad `.sym` files, PDBs or PE images, as bytes or already parsed. Each must belong to a module of the dump. */
  symbols?: readonly (Uint8Array | ArrayBuffer | SymbolFile)[];
  walker?: WalkerName;
  maxFrames?: number;
}

const asBytes = (b: Uint8Array | ArrayBuffer): Uint8Array => (b instanceof Uint8Array ? b : new Uint8Array(b));

/** Walks every thread of a snapshot (symbol files attached first) into {@link WalkedStacks}. */
export function walkStacks(snapshot: Snapshot, options: WalkDumpOptions = {}): WalkedStacks {
  for (const s of options.symbols ?? []) {
    const file = s instanceof Uint8Array || s instanceof ArrayBuffer ? parseSymbolFile(asBytes(s), { skipMalformed: true }) : s;
    attachSymbolFile(snapshot, file, { names: "keep" });
  }
  const walks = walkSnapshot(snapshot, { ...(options.walker === undefined ? {} : { walker: options.walker }), ...(options.maxFrames === undefined ? {} : { maxFrames: options.maxFrames }) });
  return stacksOf(snapshot, walks);
}

/** Walks a minidump from its bytes; errors are the core's InputErrors naming the byte offset. */
export async function walkDump(bytes: Uint8Array | ArrayBuffer, options: WalkDumpOptions = {}): Promise<WalkedStacks> {
  return walkStacks(minidumpSnapshot(readMinidump(bytesSource(asBytes(bytes)))), options);
}

/** {@link WalkedStacks} of walks already made. */
export function stacksOf(snapshot: Snapshot, walks: readonly ThreadWalk[]): WalkedStacks {
  const threads = walks.map(({ thread, walk }): ThreadStack => ({
    id: thread.id,
    crashed: thread.crashed,
    stop: walk.stop,
    frames: walk.frames.map((f): StackFrameView => {
      const loc = locate(snapshot.modules, f);
      const source = sourceOf(loc);
      return {
        index: f.index,
        function: loc.function ?? null,
        module: loc.module?.name ?? null,
        location: locationText(loc, formatAddress(snapshot.machine, f.addrPC)),
        file: source?.file ?? null,
        line: source?.line ?? null,
        trust: f.trust,
        rule: ruleText(f.rule),
        pc: f.addrPC,
        sp: f.addrStack,
      };
    }),
  }));
  if (threads.length === 0) throw new Error("the snapshot has no threads");
  return { machine: snapshot.machine, threads, thread: threads.find((t) => t.crashed) ?? threads[0]! };
}

/**
 * What an expected frame may be: a function name (the whole name, `module!function`, or its
 * last `::` part without a parameter list, so "CrashFunction" matches
 * "`anonymous namespace'::CrashFunction"), a RegExp tested against `module!function`, or fields
 * that must all match.
 */
export type StackPattern = string | RegExp | { function?: string | RegExp; module?: string | RegExp; trust?: Trust; file?: string | RegExp; line?: number };

/** Options of `toHaveStack`. */
export interface StackOptions {
  /** The stack must have exactly these frames (default: these frames innermost, any below them). */
  exact?: boolean;
  /** The thread to look at, by id (default: the crashed one, else the first). */
  thread?: number;
}

/** `toHaveStack` on Vitest's or Jest's Assertion/Matchers (docs/library.md shows the declaration). */
export interface StackMatchers<R = unknown> {
  toHaveStack(expected: readonly StackPattern[], options?: StackOptions): R;
}

/** The last `::` part of a name, without its parameter list. */
function shortName(name: string): string {
  const bare = name.replace(/\(.*\)\s*(const)?$/, "");
  return bare.slice(bare.lastIndexOf("::") + (bare.includes("::") ? 2 : 0));
}

const test = (p: string | RegExp, value: string | null): boolean => value !== null && (typeof p === "string" ? p === value : p.test(value));

/** Whether a frame matches a pattern. */
export function frameMatches(frame: StackFrameView, pattern: StackPattern): boolean {
  const qualified = frame.function === null ? null : frame.module === null ? frame.function : `${frame.module}!${frame.function}`;
  if (typeof pattern === "string") return frame.function !== null && (pattern === frame.function || pattern === qualified || pattern === shortName(frame.function));
  if (pattern instanceof RegExp) return pattern.test(qualified ?? frame.location);
  if (pattern.function !== undefined && !(typeof pattern.function === "string" ? frame.function !== null && (pattern.function === frame.function || pattern.function === shortName(frame.function)) : test(pattern.function, frame.function))) return false;
  if (pattern.module !== undefined && !test(pattern.module, frame.module)) return false;
  if (pattern.trust !== undefined && pattern.trust !== frame.trust) return false;
  if (pattern.file !== undefined && !test(pattern.file, frame.file)) return false;
  if (pattern.line !== undefined && pattern.line !== frame.line) return false;
  return true;
}

/** A pattern in words. */
function patternText(p: StackPattern): string {
  if (typeof p === "string") return p;
  if (p instanceof RegExp) return String(p);
  return `{ ${Object.entries(p).map(([k, v]) => `${k}: ${typeof v === "string" ? JSON.stringify(v) : String(v)}`).join(", ")} }`;
}

/** The comparison of a thread's frames with the patterns: the first frame that differs (or -1), and the table the messages show. */
function compare(thread: ThreadStack, expected: readonly StackPattern[], exact: boolean): { mismatch: number; table: string } {
  let mismatch = -1;
  const rows = Math.max(thread.frames.length, expected.length);
  const width = Math.max(5, ...thread.frames.map((f) => f.location.length + (f.file === null ? 0 : f.file.length + String(f.line).length + 4)));
  const lines = [`      ${"frame".padEnd(width)}  ${"trust".padEnd(13)}  rule`];
  for (let i = 0; i < rows; i++) {
    const f = thread.frames[i];
    const p = expected[i];
    const ok = f !== undefined && p !== undefined ? frameMatches(f, p) : p === undefined ? !exact : false;
    if (!ok && mismatch < 0) mismatch = i;
    const mark = p === undefined && !exact ? " " : ok ? "✓" : "✗";
    const where = f === undefined ? "(no frame)" : `${f.location}${f.file === null ? "" : ` [${f.file}:${f.line}]`}`;
    let row = `  ${mark} ${String(i).padStart(2)} ${where.padEnd(width)}`;
    if (f !== undefined) row += `  ${f.trust.padEnd(13)}  ${f.rule}`;
    if (!ok && p !== undefined) row += `   ← expected ${patternText(p)}`;
    if (!ok && p === undefined) row += "   ← not expected (exact)";
    lines.push(row.trimEnd());
  }
  lines.push(`  stop: ${thread.stop.reason}: ${thread.stop.detail}`);
  return { mismatch, table: lines.join("\n") };
}

/** The thread a walk result stands for: {@link WalkedStacks} (its crashed thread, or `options.thread`) or a {@link ThreadStack}. */
function threadOf(received: unknown, options: StackOptions): ThreadStack | string {
  if (typeof received !== "object" || received === null) return `expected the result of walkDump (or a thread of it), got ${String(received)}`;
  if ("threads" in received && Array.isArray((received as WalkedStacks).threads)) {
    const stacks = received as WalkedStacks;
    if (options.thread === undefined) return stacks.thread;
    return stacks.threads.find((t) => t.id === options.thread) ?? `no thread with id ${options.thread} (threads: ${stacks.threads.map((t) => t.id).join(", ")})`;
  }
  if ("frames" in received && Array.isArray((received as ThreadStack).frames)) return received as ThreadStack;
  return "expected the result of walkDump (or a thread of it)";
}

/**
 * The matchers, for `expect.extend(stackMatchers)` in Vitest or Jest. `toHaveStack(patterns)`
 * passes when the thread's innermost frames match the patterns in order (all of its frames with
 * `{ exact: true }`); its message shows every frame with its trust and rule, marks the frames
 * that match and names what was expected where one does not.
 */
export const stackMatchers = {
  toHaveStack(this: { isNot?: boolean } | undefined, received: unknown, expected: readonly StackPattern[], options: StackOptions = {}): { pass: boolean; message: () => string } {
    const thread = threadOf(received, options);
    if (typeof thread === "string") return { pass: false, message: () => thread };
    const { mismatch, table } = compare(thread, expected, options.exact === true);
    const pass = mismatch < 0;
    const which = `thread ${thread.id}${thread.crashed ? " (crashed)" : ""}`;
    const wanted = `${options.exact === true ? "exactly " : ""}[${expected.map(patternText).join(", ")}]`;
    return {
      pass,
      message: () =>
        pass
          ? `expected ${which} not to have the stack ${wanted}, but it does:\n${table}`
          : `expected ${which} to have the stack ${wanted}; frame ${mismatch} differs:\n${table}`,
    };
  },
};
