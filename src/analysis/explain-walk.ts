/**
 * `explain`: every frame of a walk with the rule that found it and the memory that rule read, in
 * plain words with addresses and values, and why the frame-pointer chain (the walker ETW and
 * naive debuggers use) goes wrong where it does. The walk is run through a reader that records
 * each stack read and which frame's unwind made it (WalkOptions.onUnwind); reads inside module
 * images (code bytes, unwind tables) are the rules' own business and are left out. The words are
 * explain-words.ts's; render/explain.ts, svg.ts and html.ts draw the result.
 */
import { pacStripper, stripPac, type PacStrip } from "../arch/arm64/index.js";
import { formatAddress, machineInfo, type Machine } from "../model/machine.js";
import { readPointer, type MemoryReader } from "../memory/reader.js";
import { moduleAt, type Registers, type Snapshot, type ThreadSnapshot } from "../model/snapshot.js";
import { hex } from "../hex.js";
import { UnwindCache } from "../unwind/cache.js";
import type { Rule } from "../arch/rule.js";
import { compareWithTruth } from "../walk/compare.js";
import type { Frame, Walk } from "../walk/frame.js";
import { archWalker, type WalkerName } from "../walk/registry.js";
import { frameBudgetOf, walkThread, workBudgetOf, type FrameBudget, type WorkBudget } from "../walk/walk.js";
import type { ExplainedFrame, ExplainedInline, ExplainedRead, ExplainedWalk, ReadRole, StackArea, StackWord } from "./explain-model.js";
import { contextLines, howLines, indexWeaker, registerName, stopInWords, weakerText } from "./explain-words.js";
import { inlineLocationText, locate, locationText, sourceOf } from "./location.js";

/** Options of {@link explainWalk}. */
export interface ExplainOptions {
  walker?: WalkerName;
  /** The input's name, for headings. */
  title?: string;
  maxFrames?: number;
  /** ARM64: the virtual-address size pointer authentication codes are stripped at (the walk's {@link WalkOptions.pacVaBits}). */
  pacVaBits?: number;
  /**
   * The frames the explained walks may have together ({@link explainSnapshot}: every chosen
   * thread): a walk that would go past what is left stops with `frame-budget`. Default
   * {@link EXPLAIN_FRAME_BUDGET}; `Infinity` for none. A single {@link explainWalk} call counts
   * against it only when given a {@link FrameBudget}.
   */
  frameBudget?: number | FrameBudget;
  /** The work the explained walks may do together (as {@link WalkOptions.workBudget}; default {@link DEFAULT_WORK_BUDGET}). */
  workBudget?: number | WorkBudget;
}

/**
 * The default frame budget of the walks explained together: 2^14 = 16,384 frames. An explained
 * frame holds its reads and sentences, some 10 KB with the text made of it, so this keeps an
 * explanation of every thread under about 200 MB, and a hundred threads that all list one
 * 120,000-deep stack end in seconds (unbounded, they took the process past 4 GB). The real dumps
 * of the tests have 2,049 frames at most, over 164 threads.
 */
export const EXPLAIN_FRAME_BUDGET = 1 << 14;

/** The most stack (or backing-store) words an explanation lists; deeper stacks are cut with a note. */
export const MAX_DIAGRAM_WORDS = 16_384;

/** Words shown above the outermost frame's stack pointer (its caller's arguments, if any). */
const WORDS_ABOVE = 4;

export interface RawRead {
  frame: number;
  address: bigint;
  size: number;
  value: bigint;
}

/** A reader that records the stack reads made while each frame's caller is sought. */
class RecordingReader implements MemoryReader {
  readonly reads: RawRead[] = [];
  frame = -1;

  constructor(
    private readonly inner: MemoryReader,
    private readonly inImage: (address: bigint) => boolean,
  ) {}

  read(address: bigint, size: number): Uint8Array | undefined {
    const bytes = this.inner.read(address, size);
    if (bytes !== undefined && this.frame >= 0 && size <= 8 && !this.inImage(address)) {
      let value = 0n;
      for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]!);
      this.reads.push({ frame: this.frame, address, size, value });
    }
    return bytes;
  }
}

/** Walks one thread and explains each frame. */
export function explainWalk(snapshot: Snapshot, thread: ThreadSnapshot, options: ExplainOptions = {}): ExplainedWalk {
  const machine = snapshot.machine;
  const wordSize = machineInfo(machine).pointerSize;
  const recorder = new RecordingReader(snapshot.memory, (a) => moduleAt(snapshot.modules, a) !== undefined);
  const recorded: Snapshot = { ...snapshot, memory: recorder };
  const walker = options.walker ?? "auto";
  const cache = new UnwindCache();
  const walk = walkThread(recorded, thread, {
    walker,
    cache,
    // A hostile rule or stack ends the explained walk as it ends `walk`'s.
    workBudget: workBudgetOf(options),
    ...(typeof options.frameBudget === "object" ? { frameBudget: options.frameBudget } : {}),
    ...(options.maxFrames !== undefined ? { maxFrames: options.maxFrames } : {}),
    ...(options.pacVaBits !== undefined ? { pacVaBits: options.pacVaBits } : {}),
    onUnwind: (index) => {
      recorder.frame = index;
    },
  });
  recorder.frame = -1;
  const weak = weakerWalk(snapshot, thread, walker, walk, options, cache);
  // The walk has checked the size: it throws on one out of range.
  const strip = options.pacVaBits === undefined ? stripPac : pacStripper(options.pacVaBits);
  const weakIndex = weak === undefined ? undefined : indexWeaker(walk, weak);
  const a = (v: bigint): string => formatAddress(machine, v);
  const frames: ExplainedFrame[] = walk.frames.map((frame, i) => {
    const loc = locate(snapshot.modules, frame);
    const e: ExplainedFrame = { index: i, frame, location: locationText(loc, a(frame.addrPC)), how: [], reads: [] };
    if (loc.function !== undefined) e.functionName = loc.function;
    const source = sourceOf(loc);
    if (source?.file !== undefined) e.source = { file: source.file, line: source.line };
    if (loc.inlines !== undefined) {
      e.inlines = loc.inlines.map((inline): ExplainedInline => {
        const x: ExplainedInline = { location: inlineLocationText(loc, inline, frame.addrPC), functionName: inline.function };
        if (inline.file !== undefined) x.source = { file: inline.file, line: inline.line ?? 0 };
        return x;
      });
    }
    return e;
  });
  const readsByFrame = groupReads(recorder.reads);
  for (let i = 0; i < frames.length; i++) {
    const e = frames[i]!;
    if (i === 0) {
      e.how = contextLines(machine, e.frame);
      continue;
    }
    const callee = frames[i - 1]!;
    e.reads = classifyReads(machine, wordSize, readsByFrame.get(i - 1) ?? [], callee.frame, e.frame, snapshot, strip);
    e.how = howLines(machine, callee, e, wordSize);
    const weaker = weakerText(machine, walk, weakIndex, i, frames, snapshot);
    if (weaker !== undefined) e.weaker = weaker;
  }
  const truth = thread.truth;
  const notes: string[] = [];
  let truthSummary: ExplainedWalk["truth"];
  if (truth === undefined) notes.push("The input has no ground truth: the frames below are what the walker found, unchecked.");
  else {
    const c = compareWithTruth(machine, walk, truth);
    truthSummary = { exact: c.exact, text: c.exact ? `exact: all ${c.walkedFrames} frames equal the ground truth` : `differs from the ground truth: ${c.difference?.text ?? ""}` };
    for (const e of frames) {
      const t = truth[e.index];
      if (t === undefined) e.truth = "extra";
      else e.truth = t.pc === e.frame.addrPC && t.sp === e.frame.addrStack && (t.bsp === undefined || t.bsp === e.frame.addrBStore) ? "exact" : "differs";
    }
  }
  const stopText = stopInWords(walk.stop, a);
  const stack = stackWords(snapshot, walk, frames, wordSize, notes);
  const out: ExplainedWalk = {
    machine,
    title: options.title ?? snapshot.description ?? "snapshot",
    threadId: thread.id,
    crashed: thread.crashed,
    walker,
    frames,
    stop: walk.stop,
    stopText,
    wordSize,
    stack,
    notes,
  };
  if (machineInfo(machine).bstore !== null) out.backingStore = backingStoreWords(snapshot, frames, notes);
  if (truthSummary !== undefined) out.truth = truthSummary;
  return out;
}

/** Explains the chosen threads (default: all), the crashed thread first. */
export function explainSnapshot(snapshot: Snapshot, options: ExplainOptions & { thread?: number | "all" } = {}): ExplainedWalk[] {
  return [...explainThreads(snapshot, options)];
}

/**
 * The explanations of {@link explainSnapshot}, made one thread at a time as they are read (a
 * command that writes each as it comes holds one at a time). The walks share one frame budget
 * and one work budget.
 */
export function* explainThreads(snapshot: Snapshot, options: ExplainOptions & { thread?: number | "all" } = {}): Generator<ExplainedWalk> {
  const choice = options.thread ?? "all";
  const threads = choice === "all" ? snapshot.threads : snapshot.threads.filter((t) => t.id === choice);
  const ordered = [...threads.filter((t) => t.crashed), ...threads.filter((t) => !t.crashed)];
  const shared: ExplainOptions = { ...options, frameBudget: frameBudgetOf({ frameBudget: options.frameBudget ?? EXPLAIN_FRAME_BUDGET }), workBudget: workBudgetOf(options) };
  for (const t of ordered) yield explainWalk(snapshot, t, shared);
}

/**
 * The frame-pointer walk of the same thread, when the machine has one and it is not the walk
 * itself: as far as the walk went and a little further (what the sentences compare), within the
 * same work budget.
 */
function weakerWalk(snapshot: Snapshot, thread: ThreadSnapshot, walker: WalkerName, walk: Walk, options: ExplainOptions, cache: UnwindCache): Walk | undefined {
  if (walker === "frame-pointer" || archWalker(snapshot.machine).walkers["frame-pointer"] === undefined) return undefined;
  const { pacVaBits } = options;
  const maxFrames = Math.min(options.maxFrames ?? Infinity, 2 * walk.frames.length + 16);
  return walkThread(snapshot, thread, { walker: "frame-pointer", cache, maxFrames, workBudget: workBudgetOf(options), ...(pacVaBits !== undefined ? { pacVaBits } : {}) });
}

/** The recorded reads by frame, each (address, size) once per frame, in the order first read; linear in the reads. */
export function groupReads(reads: readonly RawRead[]): Map<number, RawRead[]> {
  const out = new Map<number, RawRead[]>();
  // The (frame, address, size) triples already taken: one lookup per read, however many a frame has.
  const seen = new Set<string>();
  for (const r of reads) {
    const frame = r.frame;
    const address = r.address;
    const size = r.size;
    let list = out.get(frame);
    if (list === undefined) out.set(frame, (list = []));
    // One entry per address: rules may read a slot twice (a check, then the value).
    const key = `${frame}:${address}:${size}`;
    if (seen.has(key)) continue;
    seen.add(key);
    list.push(r);
  }
  return out;
}

/** How far up a rule moved the return-address slot by a short scan (FPO_DATA, FrameData), 0 when it did not. */
function movedBy(rule: Rule): number {
  if (rule.kind === "fpo" && rule.form === "body") return rule.moved;
  if (rule.kind === "frame-data" && rule.ra.at === "esp") return rule.ra.moved;
  return 0;
}

/** Names each read by what it became in the caller frame. */
function classifyReads(machine: Machine, wordSize: number, reads: readonly RawRead[], callee: Frame, caller: Frame, snapshot: Snapshot, strip: PacStrip): ExplainedRead[] {
  const arch = archWalker(machine);
  const recovered = caller.registers;
  const w = BigInt(wordSize);
  // The return-address slot: the read of the caller's PC just below its SP, else the last read of that value.
  // An ARM64 return address read from memory may carry a pointer authentication code the walk stripped.
  const isPc = machineInfo(machine).pointerAuthentication ? (v: bigint): boolean => strip(v) === caller.addrPC : (v: bigint): boolean => v === caller.addrPC;
  let raIndex = reads.findIndex((r) => isPc(r.value) && r.address === caller.addrStack - w);
  if (raIndex < 0) {
    for (let i = reads.length - 1; i >= 0; i--) if (isPc(reads[i]!.value) && reads[i]!.size === wordSize) { raIndex = i; break; }
  }
  const searched = caller.trust === "scan" || movedBy(caller.rule) > 0;
  const bstoreRange = machineInfo(machine).bstore !== null ? backingStoreRange(snapshot, callee, caller) : undefined;
  const base = callee.unwindRegisters ?? callee.registers;
  // Registers already matched to a slot: two saved registers that hold the same value get one slot each.
  const taken = new Set<string>();
  const named = savedInOrder(caller.rule, reads, raIndex, recovered);
  return reads.map((r, i): ExplainedRead => {
    let role: ReadRole = searched ? "scanned" : "data";
    let register: string | undefined;
    const known = named?.[i];
    if (i === raIndex) {
      role = "return-address";
      register = arch.pc;
    } else if (named !== undefined) {
      // The rule says which register each read restores.
      if (known !== undefined) {
        role = known === arch.fp ? "saved-frame-pointer" : "saved-register";
        register = known;
      }
    } else if (arch.fp !== null && recovered[arch.fp] !== undefined && recovered[arch.fp] === r.value && r.size === wordSize) {
      role = "saved-frame-pointer";
      register = arch.fp;
    } else {
      for (const [name, v] of Object.entries(recovered)) {
        if (name === arch.pc || name === arch.sp || name === arch.fp || name === arch.bstore || taken.has(name)) continue;
        if (v === r.value) {
          taken.add(name);
          role = "saved-register";
          register = name;
          break;
        }
      }
    }
    const read: ExplainedRead = { address: r.address, size: r.size, value: r.value, role, area: "stack" };
    if (register !== undefined) read.register = register;
    if (bstoreRange !== undefined && r.address >= bstoreRange.low && r.address < bstoreRange.high) read.area = "backing-store";
    const rel = relativeTo(machine, base, r.address, read.area);
    if (rel !== undefined) read.relative = rel;
    return read;
  });
}

/**
 * The register each read restored, by read, when the rule names them in the order they are read:
 * x64 UNWIND_INFO's pushes and saves, undone last first, entry by entry down the chain. Only when
 * the reads besides the return address are exactly those and each read's value is the register's
 * recovered value; otherwise undefined, and the reads are matched by value (two registers that
 * held the same value are then told apart only by the order they are found in).
 */
function savedInOrder(rule: Rule, reads: readonly RawRead[], raIndex: number, recovered: Registers): (string | undefined)[] | undefined {
  if (rule.kind !== "unwind-info" || rule.epilog !== undefined || rule.jumped !== undefined || rule.machineFrameSlot !== undefined) return undefined;
  const order = rule.parts.flatMap((p) => [...p.ops].reverse()).flatMap((op) => (op.op === "push" || op.op === "save" ? [op.register] : []));
  const others = reads.map((_, i) => i).filter((i) => i !== raIndex);
  if (order.length === 0 || others.length !== order.length) return undefined;
  const out: (string | undefined)[] = reads.map(() => undefined);
  for (const [k, i] of others.entries()) {
    const register = order[k]!;
    if (recovered[register] !== reads[i]!.value) return undefined;
    out[i] = register;
  }
  return out;
}

/** The backing-store addresses between two frames (IA-64: the callee's BSP is above the caller's). */
function backingStoreRange(snapshot: Snapshot, callee: Frame, caller: Frame): { low: bigint; high: bigint } | undefined {
  const high = callee.addrBStore !== 0n ? callee.addrBStore : snapshot.threads[0]?.registers["rsbsp"];
  if (high === undefined || caller.addrBStore === 0n) return undefined;
  // Reads of the callee's own stacked registers lie just above its BSP; allow one full frame (96 registers + NaT words).
  return { low: caller.addrBStore, high: high + 8n * 100n };
}

/** `esp+24`, `ebp+4`, `rsp+0x28`: an address as an offset from a register of the frame being unwound. */
function relativeTo(machine: Machine, registers: Registers, address: bigint, area: "stack" | "backing-store"): string | undefined {
  const arch = archWalker(machine);
  const order = area === "backing-store" && arch.bstore !== null ? [arch.bstore] : [arch.sp, ...(arch.fp !== null ? [arch.fp] : [])];
  let best: { name: string; offset: bigint } | undefined;
  for (const name of order) {
    const v = registers[name];
    if (v === undefined) continue;
    const d = address - v;
    if (d >= 0n && d < 0x10_0000n && (best === undefined || d < best.offset)) best = { name, offset: d };
  }
  if (best === undefined) return undefined;
  const reg = registerName(machine, best.name);
  if (best.offset === 0n) return reg;
  return `${reg}+${OFFSET_TEXT[machine](best.offset)}`;
}

/** How an offset from a register is written: decimal on x86, as its FPO_DATA and FrameData sizes are; hex elsewhere. */
const OFFSET_TEXT: Record<Machine, (offset: bigint) => string> = {
  x86: (offset) => offset.toString(),
  x64: hex,
  ia64: hex,
  arm64: hex,
  arm: hex,
};

/** The memory-stack words from the context frame's SP up past the outermost frame's. */
function stackWords(snapshot: Snapshot, walk: Walk, frames: readonly ExplainedFrame[], wordSize: 4 | 8, notes: string[]): StackWord[] {
  const w = BigInt(wordSize);
  const first = walk.frames[0]!.addrStack;
  let last = first;
  for (const f of walk.frames) if (f.addrStack > last) last = f.addrStack;
  let end = last + w * BigInt(WORDS_ABOVE);
  const cap = first + w * BigInt(MAX_DIAGRAM_WORDS);
  if (end > cap) {
    end = cap;
    notes.push(`The stack spans ${((last - first) / w).toString()} words; the first ${MAX_DIAGRAM_WORDS} are listed.`);
  }
  const roles = namedReads(frames, "stack");
  const out: StackWord[] = [];
  let k = 0;
  for (let addr = first; addr < end; addr += w) {
    while (k + 1 < walk.frames.length && walk.frames[k + 1]!.addrStack <= addr) k++;
    const owner = addr < walk.frames[k]!.addrStack ? -1 : k;
    out.push(stackWord(snapshot, addr, wordSize, owner, roles));
  }
  return out;
}

/** IA-64: the backing-store words from the outermost frame's BSP up to the context frame's. */
function backingStoreWords(snapshot: Snapshot, frames: readonly ExplainedFrame[], notes: string[]): StackWord[] {
  const bsps = frames.map((e) => e.frame.addrBStore).filter((b) => b !== 0n);
  if (bsps.length === 0) return [];
  const top = bsps[0]!;
  let low = top;
  for (const b of bsps) if (b < low) low = b;
  if ((top - low) / 8n > BigInt(MAX_DIAGRAM_WORDS)) {
    low = top - 8n * BigInt(MAX_DIAGRAM_WORDS);
    notes.push(`The backing store spans more than ${MAX_DIAGRAM_WORDS} words; the ${MAX_DIAGRAM_WORDS} nearest the context frame are listed.`);
  }
  const roles = namedReads(frames, "backing-store");
  const out: StackWord[] = [];
  for (let addr = low; addr < top; addr += 8n) {
    // Frame k's stacked registers lie from its BSP up to its callee's (frame k−1's) BSP.
    let owner = -1;
    for (let k = frames.length - 1; k >= 1; k--) {
      const bsp = frames[k]!.frame.addrBStore;
      if (addr >= bsp && addr < frames[k - 1]!.frame.addrBStore) {
        owner = k;
        break;
      }
    }
    const word = stackWord(snapshot, addr, 8, owner, roles);
    if (((addr >> 3n) & 0x3fn) === 0x3fn) word.natCollection = true;
    out.push(word);
  }
  return out;
}

/** The reads of one stack area that became something (a return address, a saved register), by address. */
function namedReads(frames: readonly ExplainedFrame[], area: StackArea): Map<bigint, ExplainedRead> {
  const roles = new Map<bigint, ExplainedRead>();
  for (const e of frames) for (const r of e.reads) if (r.area === area && r.role !== "scanned" && r.role !== "data") roles.set(r.address, r);
  return roles;
}

/** One word of a diagram, with what an unwind read it as. */
function stackWord(snapshot: Snapshot, address: bigint, size: 4 | 8, frame: number, roles: ReadonlyMap<bigint, ExplainedRead>): StackWord {
  const word: StackWord = { address, value: readPointer(snapshot.memory, address, size), frame };
  const r = roles.get(address);
  if (r !== undefined) {
    word.role = r.role;
    if (r.register !== undefined) word.register = r.register;
  }
  return word;
}
