/**
 * `explain`: every frame of a walk with the rule that found it and the memory that rule read, in
 * plain words with addresses and values, and why the frame-pointer chain (the walker ETW and
 * naive debuggers use) goes wrong where it does. The walk is run through a reader that records
 * each stack read and which frame's unwind made it (WalkOptions.onUnwind); reads inside module
 * images (code bytes, unwind tables) are the rules' own business and are left out.
 */
import { hex } from "../hex.js";
import type { FpoData } from "../model/fpo-data.js";
import { formatAddress, machineInfo, type Machine } from "../model/machine.js";
import type { FrameDataRule, Rule, UnwindOpStep } from "../unwind/rule.js";
import { pspText, ruleText, saveLocationText } from "../unwind/rule-text.js";
import { readPointer, type MemoryReader } from "../memory/reader.js";
import { moduleAt, type Registers, type Snapshot, type ThreadSnapshot } from "../model/snapshot.js";
import { compareWithTruth } from "../walk/compare.js";
import type { Frame, Walk, WalkStop } from "../walk/frame.js";
import { archWalker, type WalkerName } from "../walk/registry.js";
import { walkThread } from "../walk/walk.js";
import type { ExplainedFrame, ExplainedRead, ExplainedWalk, ReadRole, StackArea, StackWord } from "./explain-model.js";
import { locate, locateAddress, locationText } from "./location.js";

/** Options of {@link explainWalk}. */
export interface ExplainOptions {
  walker?: WalkerName;
  /** The input's name, for headings. */
  title?: string;
  maxFrames?: number;
}

/** The most stack (or backing-store) words an explanation lists; deeper stacks are cut with a note. */
export const MAX_DIAGRAM_WORDS = 16_384;

/** Words shown above the outermost frame's stack pointer (its caller's arguments, if any). */
const WORDS_ABOVE = 4;

interface RawRead {
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

/** IA-64 CONTEXT fields by the names the CONTEXT structure gives them. */
const IA64_CONTEXT_NAMES: Record<string, string> = {
  rspfs: "RsPFS", brrp: "BrRp", rsbspstore: "RsBSPSTORE", rsrnat: "RsRNAT", stifs: "StIFS", stipsr: "StIPSR",
};

/** The registers in display form: EIP, RSP, RsBSP. */
function registerName(machine: Machine, name: string): string {
  const role = machineInfo(machine).roles.find((r) => r.register === name);
  if (role !== undefined && machine === "ia64") return role.display;
  if (machine === "ia64" && IA64_CONTEXT_NAMES[name] !== undefined) return IA64_CONTEXT_NAMES[name]!;
  return name.toUpperCase();
}

/** Walks one thread and explains each frame. */
export function explainWalk(snapshot: Snapshot, thread: ThreadSnapshot, options: ExplainOptions = {}): ExplainedWalk {
  const machine = snapshot.machine;
  const wordSize = machineInfo(machine).pointerSize;
  const recorder = new RecordingReader(snapshot.memory, (a) => moduleAt(snapshot.modules, a) !== undefined);
  const recorded: Snapshot = { ...snapshot, memory: recorder };
  const walker = options.walker ?? "auto";
  const walk = walkThread(recorded, thread, {
    walker,
    ...(options.maxFrames !== undefined ? { maxFrames: options.maxFrames } : {}),
    onUnwind: (index) => {
      recorder.frame = index;
    },
  });
  recorder.frame = -1;
  const weak = weakerWalk(snapshot, thread, walker, options.maxFrames);
  const weakIndex = weak === undefined ? undefined : indexWeaker(walk, weak);
  const a = (v: bigint): string => formatAddress(machine, v);
  const frames: ExplainedFrame[] = walk.frames.map((frame, i) => {
    const loc = locate(snapshot.modules, frame);
    const e: ExplainedFrame = { index: i, frame, location: locationText(loc, a(frame.addrPC)), how: [], reads: [] };
    if (loc.function !== undefined) e.functionName = loc.function;
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
    e.reads = classifyReads(machine, wordSize, readsByFrame.get(i - 1) ?? [], callee.frame, e.frame, snapshot);
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
  if (walk.stop.reason !== "end-of-stack") notes.push(`The walk stopped before the end of the stack: ${stopText}`);
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
  if (machine === "ia64") out.backingStore = backingStoreWords(snapshot, frames, notes);
  if (truthSummary !== undefined) out.truth = truthSummary;
  return out;
}

/** Explains the chosen threads (default: all), the crashed thread first. */
export function explainSnapshot(snapshot: Snapshot, options: ExplainOptions & { thread?: number | "all" } = {}): ExplainedWalk[] {
  const choice = options.thread ?? "all";
  const threads = choice === "all" ? snapshot.threads : snapshot.threads.filter((t) => t.id === choice);
  const ordered = [...threads.filter((t) => t.crashed), ...threads.filter((t) => !t.crashed)];
  return ordered.map((t) => explainWalk(snapshot, t, options));
}

/** The frame-pointer walk of the same thread, when the machine has one and it is not the walk itself. */
function weakerWalk(snapshot: Snapshot, thread: ThreadSnapshot, walker: WalkerName, maxFrames: number | undefined): Walk | undefined {
  if (walker === "frame-pointer" || archWalker(snapshot.machine).walkers["frame-pointer"] === undefined) return undefined;
  return walkThread(snapshot, thread, { walker: "frame-pointer", ...(maxFrames !== undefined ? { maxFrames } : {}) });
}

function groupReads(reads: readonly RawRead[]): Map<number, RawRead[]> {
  const out = new Map<number, RawRead[]>();
  for (const r of reads) {
    let list = out.get(r.frame);
    if (list === undefined) out.set(r.frame, (list = []));
    // One entry per address: rules may read a slot twice (a check, then the value).
    if (!list.some((x) => x.address === r.address && x.size === r.size)) list.push(r);
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
function classifyReads(machine: Machine, wordSize: number, reads: readonly RawRead[], callee: Frame, caller: Frame, snapshot: Snapshot): ExplainedRead[] {
  const arch = archWalker(machine);
  const recovered = caller.registers;
  const w = BigInt(wordSize);
  // The return-address slot: the read of the caller's PC just below its SP, else the last read of that value.
  let raIndex = reads.findIndex((r) => r.value === caller.addrPC && r.address === caller.addrStack - w);
  if (raIndex < 0) {
    for (let i = reads.length - 1; i >= 0; i--) if (reads[i]!.value === caller.addrPC && reads[i]!.size === wordSize) { raIndex = i; break; }
  }
  const searched = caller.trust === "scan" || movedBy(caller.rule) > 0;
  const bstoreRange = machine === "ia64" ? backingStoreRange(snapshot, callee, caller) : undefined;
  const base = callee.unwindRegisters ?? callee.registers;
  // Registers already matched to a slot: two saved registers that hold the same value get one slot each.
  const taken = new Set<string>();
  return reads.map((r, i): ExplainedRead => {
    let role: ReadRole = searched ? "scanned" : "data";
    let register: string | undefined;
    if (i === raIndex) {
      role = "return-address";
      register = arch.pc;
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
  return machine === "x86" ? `${reg}+${best.offset}` : `${reg}+0x${best.offset.toString(16)}`;
}

/** Frame 0: where its registers came from. */
function contextLines(machine: Machine, frame: Frame): string[] {
  const arch = archWalker(machine);
  const a = (v: bigint): string => formatAddress(machine, v);
  const named = [arch.pc, arch.sp, arch.fp, arch.bstore].filter((n): n is string => n !== null);
  const values = named.map((n) => `${registerName(machine, n)} = ${frame.registers[n] !== undefined ? a(frame.registers[n]!) : "?"}`);
  return [`The context: the registers the thread stopped with (${values.join(", ")}). Nothing is unwound to find this frame.`];
}

/** Plain-words lines for frame `e`, found by unwinding `callee`. */
function howLines(machine: Machine, callee: ExplainedFrame, e: ExplainedFrame, wordSize: number): string[] {
  const a = (v: bigint): string => formatAddress(machine, v);
  const arch = archWalker(machine);
  const fn = callee.functionName ?? callee.location;
  const lines = [...strategyLines(machine, e.frame, fn)];
  lines.push(`Rule: ${ruleText(e.frame.rule)}`);
  const scanned = e.reads.filter((r) => r.role === "scanned");
  for (const r of e.reads) {
    if (r.role === "scanned") continue;
    const where = r.relative !== undefined ? `[${r.relative}] = [${a(r.address)}]` : `[${a(r.address)}]`;
    const target = r.register !== undefined ? registerName(machine, r.register) : undefined;
    switch (r.role) {
      case "return-address":
        lines.push(`${where} = ${a(r.value)} → return address: ${target} ← ${a(r.value)}`);
        break;
      case "saved-frame-pointer":
        lines.push(`${where} = ${a(r.value)} → the caller's saved frame pointer: ${target} ← ${a(r.value)}`);
        break;
      case "saved-register":
        lines.push(`${where} = ${a(r.value)} → ${target} ← ${a(r.value)}, saved by ${fn}`);
        break;
      default:
        lines.push(`${where} = ${a(r.value)} (read by the rule)`);
    }
  }
  if (scanned.length > 0) {
    const lo = scanned.reduce((m, r) => (r.address < m ? r.address : m), scanned[0]!.address);
    const hi = scanned.reduce((m, r) => (r.address > m ? r.address : m), scanned[0]!.address);
    lines.push(`Searched ${scanned.length} word${scanned.length === 1 ? "" : "s"} (${a(lo)}..${a(hi)}) that do not point just after a call instruction in a module.`);
  }
  const sp = registerName(machine, arch.sp);
  if (machine === "ia64") {
    lines.push(`${sp} ← ${a(e.frame.addrStack)}; ${bspNote(callee.frame, e.frame, a)}`);
  } else {
    const ra = e.reads.find((r) => r.role === "return-address");
    const why = ra !== undefined && ra.address + BigInt(wordSize) === e.frame.addrStack ? ", just above the return-address slot (what the return leaves)" : "";
    lines.push(`${sp} ← ${a(e.frame.addrStack)}${why}`);
  }
  return lines;
}

/** IA-64: how far BSP moved between two frames (the caller's sol), and the NaT collection slots it crossed. */
function bspNote(callee: Frame, caller: Frame, a: (v: bigint) => string): string {
  if (callee.addrBStore === 0n || caller.addrBStore === 0n || caller.addrBStore > callee.addrBStore) return `BSP ← ${a(caller.addrBStore)}`;
  const words = Number((callee.addrBStore - caller.addrBStore) / 8n);
  let nat = 0;
  for (let addr = caller.addrBStore; addr < callee.addrBStore; addr += 8n) if (((addr >> 3n) & 0x3fn) === 0x3fn) nat++;
  const sol = words - nat;
  const across = nat > 0 ? `, across ${nat} NaT collection slot${nat === 1 ? "" : "s"} (a word whose address has bits 8..3 all set holds NaT bits, not a register)` : "";
  return `BSP ← BSP − sol(${sol}) = ${a(caller.addrBStore)}: the caller's ${sol} input and local register${sol === 1 ? "" : "s"} lie just below on the backing store${across}`;
}

/** An unwind operation undone, in words. */
function unwindOpLine(o: UnwindOpStep): string {
  switch (o.op) {
    case "push":
      return `UWOP_PUSH_NONVOL ${o.register}: ${o.register.toUpperCase()} ← [RSP], RSP += 8`;
    case "alloc":
      return `${o.size <= 128 ? "UWOP_ALLOC_SMALL" : "UWOP_ALLOC_LARGE"} ${hex(o.size)}: RSP += ${hex(o.size)}`;
    case "set-frame":
      return `UWOP_SET_FPREG: RSP ← ${o.register.toUpperCase()} − ${hex(o.offset)} (the frame register marks the frame; the allocations below are undone from it)`;
    case "save-xmm":
      return `UWOP_SAVE_XMM128 xmm${o.register}: XMM${o.register} ← [frame base + ${hex(o.offset)}]`;
    case "save":
      return `UWOP_SAVE_NONVOL ${o.register}: ${o.register.toUpperCase()} ← [frame base + ${hex(o.offset)}] (relative to the establisher frame, not the live RSP)`;
    case "machframe":
      return `UWOP_PUSH_MACHFRAME${o.errorCode ? " (with an error code)" : ""}: RIP and RSP come from the machine frame the CPU pushed for an interrupt or exception`;
  }
}

/** The FPO_DATA record a frame's rule followed (its own, or its epilogue's), if any. */
function fpoRecordOf(rule: Rule): FpoData | undefined {
  if (rule.kind === "fpo") return rule.record;
  if (rule.kind === "x86-epilog" && "fpo" in rule.source) return rule.source.fpo;
  return undefined;
}

/** Where a FrameData rule found the return address, as a register offset, when it says. */
function frameDataReturn(rule: FrameDataRule): string | undefined {
  const ra = rule.ra;
  if (ra.at === "esp") return `ESP+${ra.offset}`;
  if (ra.at === "ebp+4") return "EBP+4";
  if (ra.base === "esp" && ra.offset !== undefined && ra.offset > 0) return `ESP+${ra.offset}`;
  if (ra.base === "ebp" && ra.offset === 4) return "EBP+4";
  return undefined;
}

/** Where an IA-64 value is, in words. */
function ia64Where(s: string): string {
  return /^r\d+$/.test(s) ? `in stacked register ${s} (read from its backing-store slot)` : s.startsWith("[") ? `in memory at ${s}` : s === "b0" ? "still in b0" : `in ${s}`;
}

/** What the strategy that found `frame` does, in words, with the values its rule names. */
function strategyLines(machine: Machine, frame: Frame, fn: string): string[] {
  const rule = frame.rule;
  const info = machineInfo(machine);
  switch (frame.trust) {
    case "frame-pointer": {
      const fp = (info.fp ?? "").toUpperCase();
      const w = info.pointerSize;
      return [`The frame-pointer chain: ${fn} began with push ${fp.toLowerCase()}; mov ${fp.toLowerCase()}, ${info.sp}, so the caller's ${fp} is at [${fp}] and the return address just above it, at [${fp}+${w}].`];
    }
    case "fpo": {
      const r = fpoRecordOf(rule);
      if (r === undefined) return [`FPO_DATA for ${fn}.`];
      const first = `FPO_DATA for ${fn} (rva ${hex(r.ulOffStart)}): ${r.cdwLocals * 4} bytes of locals, ${r.cbRegs} saved register${r.cbRegs === 1 ? "" : "s"}, ${r.cdwParams * 4} bytes of parameters`;
      if (rule.kind === "fpo" && rule.form === "non-fpo") return [`${first}; FRAME_NONFPO: an ordinary EBP frame, so the return address is at [EBP+4].`];
      const parts = [first];
      if (rule.kind === "fpo" && rule.form === "prolog") parts.push(`the PC is in its prolog, so only what the prolog has pushed so far lies above ESP`);
      if (rule.kind === "fpo") parts.push(`→ return address at ESP+${rule.form === "prolog" ? rule.pushed : rule.raOffset}`);
      if (r.fUseBP) parts.push(`(fUseBP: the function uses EBP as a general register after saving the caller's EBP among its saved registers)`);
      else parts.push(`(no frame pointer: EBP still holds whatever its caller left there)`);
      return [parts.join(" ") + "."];
    }
    case "frame-data": {
      if (rule.kind !== "frame-data") return [`FrameData for ${fn}.`];
      const d = rule.record;
      const ra = frameDataReturn(rule);
      return [`FrameData for ${fn} (rva ${hex(d.rvaStart)}, a PDB or Breakpad STACK WIN record): ${d.localSize} bytes of locals, ${d.savedRegsSize} bytes of saved registers, ${d.paramsSize} bytes of parameters; its program string computes the caller's registers${ra !== undefined ? `, with the return address at ${ra}` : ""}.`];
    }
    case "unwind-info": {
      if (rule.kind !== "unwind-info") return [];
      const lines = [`UNWIND_INFO for ${fn} (its RUNTIME_FUNCTION in .pdata): the prolog's operations are undone, the last one first${rule.epilog !== undefined ? "; the PC is in an epilogue, so the rest of the epilogue is run instead" : ""}:`];
      // The rule lists the operations in prolog order; they are undone from the last.
      const ops = rule.epilog === undefined ? (rule.parts[0]?.ops ?? []) : [];
      for (const op of [...ops].reverse()) lines.push(unwindOpLine(op));
      if (!rule.parts.some((p) => p.ops.some((o) => o.op === "machframe"))) lines.push("then the return: RIP ← [RSP], RSP += 8");
      return lines;
    }
    case "ia64-unwind": {
      const lines = [`IA-64 unwind descriptors for ${fn}: its prologue region says when and where rp (the return link, b0) and ar.pfs (the caller's frame marker) were saved and how large the memory-stack frame is; the caller's IP is rp, and the caller's stacked registers lie just below on the backing store.`];
      if (rule.kind === "ia64") {
        const rp = rule.rp.kind === "br" ? `b${rule.rp.reg}` : saveLocationText(rule.rp);
        const pfs = rule.pfs.kind === "live" ? "ar.pfs" : saveLocationText(rule.pfs);
        lines.push(`At this IP, rp is ${ia64Where(rp)}, ar.pfs ${ia64Where(pfs)}, and the previous SP (psp) is ${pspText(rule.psp).slice("psp=".length)}.`);
      }
      return lines;
    }
    case "cfi": {
      if (rule.kind !== "cfi") return [];
      return [
        `STACK CFI for ${fn} (a symbol file's call frame information, the range at rva ${hex(rule.rva)}): .cfa, the caller's stack pointer, and .ra, the return address, are computed from this frame's registers, and each saved register from .cfa.`,
        `Rules in effect here: ${rule.rules.map(([name, expression]) => `${name}: ${expression}`).join(" ")}`,
      ];
    }
    case "scan":
      if (rule.kind === "leaf") {
        return [`Found by simulating a return from a leaf function: the return address is at RSP or one word above, and every register is carried over unchanged (Breakpad's rule for a Windows context frame).`];
      }
      return [`Found by scanning the stack: the first word above that points just after a call instruction in a module is taken as the return address (the least trusted way).`];
    default:
      return [];
  }
}

/** Why the frame-pointer chain goes wrong at frame `i`, when it does. */
/** The frame-pointer walk, indexed for the per-frame questions {@link weakerText} asks. */
interface WeakerIndex {
  weak: Walk;
  /** `pc:sp` of every frame of the walk being explained, and of the frame-pointer walk. */
  walked: Set<string>;
  chain: Set<string>;
}

const frameKey = (f: Frame): string => `${f.addrPC}:${f.addrStack}`;

function indexWeaker(walk: Walk, weak: Walk): WeakerIndex {
  return { weak, walked: new Set(walk.frames.map(frameKey)), chain: new Set(weak.frames.map(frameKey)) };
}

/** The index of the last frame whose SP is below `sp` (frames' SPs only grow), −1 when none is. */
function lastBelow(frames: readonly Frame[], sp: bigint): number {
  let lo = 0;
  let hi = frames.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid]!.addrStack < sp) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

function weakerText(machine: Machine, walk: Walk, index: WeakerIndex | undefined, i: number, frames: readonly ExplainedFrame[], snapshot: Snapshot): string | undefined {
  if (machine === "ia64") {
    const fn = frames[i - 1]!.functionName ?? frames[i - 1]!.location;
    return `A walker without ${fn}'s unwind descriptors is lost here: IA-64 has no frame-pointer chain, and rp and ar.pfs may sit in any stacked register or memory slot the prologue chose.`;
  }
  if (index === undefined) return undefined;
  const weak = index.weak;
  const a = (v: bigint): string => formatAddress(machine, v);
  const f = walk.frames[i]!;
  const prev = walk.frames[i - 1]!;
  const fp = machine === "x86" ? "EBP" : "RBP";
  if (index.chain.has(frameKey(f))) {
    // Found by the chain too; mention frames it invents between this one and the one below.
    const invented: Frame[] = [];
    for (let k = lastBelow(weak.frames, f.addrStack); k >= 0 && weak.frames[k]!.addrStack > prev.addrStack; k--) {
      if (!index.walked.has(frameKey(weak.frames[k]!))) invented.unshift(weak.frames[k]!);
    }
    if (invented.length === 0) return undefined;
    return `The frame-pointer chain invents ${invented.length === 1 ? "a frame" : `${invented.length} frames`} below this one: ${invented.map((g) => `${locationText(locateAddress(snapshot.modules, g.addrPC, true), a(g.addrPC))} (SP ${a(g.addrStack)})`).join(", ")}, from a ${fp} that was not a frame pointer.`;
  }
  // The last chain frame below this one: the unwind from it went past (or stopped before) this frame.
  const j = lastBelow(weak.frames, f.addrStack);
  if (j < 0) return `The frame-pointer chain does not find this frame.`;
  const from = weak.frames[j]!;
  const fromLoc = locationText(locate(snapshot.modules, from), a(from.addrPC));
  const fpValue = from.addrFrame;
  const next = weak.frames[j + 1];
  const calleeFn = frames[i - 1]!.functionName ?? frames[i - 1]!.location;
  // The callee was unwound from a record that says it keeps no frame pointer.
  const omitted = (f.trust === "fpo" || f.trust === "frame-data" || f.trust === "unwind-info" || f.trust === "cfi") && !(f.rule.kind === "fpo" && f.rule.form === "non-fpo");
  const why = omitted
    ? `${calleeFn} does not set up ${fp} as a frame pointer (${machine === "x86" ? "frame-pointer omission" : "x64 code needs none"}), so ${fp} there still belonged to an outer frame`
    : `${fp} at ${fromLoc} was not this frame's frame pointer`;
  if (next === undefined) {
    return `The frame-pointer chain never reaches this frame: from ${fromLoc} with ${fp} = ${a(fpValue)} it stopped (${weak.stop.reason}: ${weak.stop.detail}); ${why}.`;
  }
  const nextLoc = locationText(locate(snapshot.modules, next), a(next.addrPC));
  const skipped = walk.frames[i + 1] !== undefined && walk.frames[i + 1]!.addrPC === next.addrPC && walk.frames[i + 1]!.addrStack === next.addrStack;
  const landing = skipped ? `, straight to ${calleeFn}'s caller's caller` : "";
  return `The frame-pointer chain misses this frame: from ${fromLoc} it followed ${fp} = ${a(fpValue)} to [${fp}+${machine === "x86" ? 4 : 8}] = ${a(next.addrPC)} (${nextLoc}, SP ${a(next.addrStack)})${landing}; ${why}.`;
}

/** A stop reason in words for readers who do not know the codes. */
export function stopInWords(stop: WalkStop, a: (v: bigint) => string): string {
  const at = stop.address !== undefined ? ` at ${a(stop.address)}` : "";
  const lead: Record<WalkStop["reason"], string> = {
    "end-of-stack": "The walk reached the outermost frame",
    "read-fault": `The walk stopped: memory it needed${at} is not in the snapshot`,
    "no-progress": "The walk stopped: the next frame's stack pointer would not move up the stack, so it would loop",
    "bad-pc": `The walk stopped: the next program counter${at} is not code`,
    "max-frames": "The walk stopped at its frame limit",
    unsupported: "The walk stopped: no rule applies to the next frame",
    "trap-frame": "The walk stopped at a kernel trap frame, which a user-mode walk does not follow",
    "tss-frame": "The walk stopped at a task-state segment, which a user-mode walk does not follow",
  };
  return `${lead[stop.reason]} (${stop.reason}: ${stop.detail}).`;
}

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

/** The explanation as text: one block per frame, then the stop and the truth. */
export function formatExplanation(e: ExplainedWalk): string {
  const a = (v: bigint): string => formatAddress(e.machine, v);
  const arch = archWalker(e.machine);
  const out: string[] = [`${e.title}: ${machineInfo(e.machine).title}, thread ${e.threadId}, walker ${e.walker}`];
  for (const n of e.notes) out.push(`note: ${n}`);
  for (const f of e.frames) {
    const regs = [`${registerName(e.machine, arch.pc)}=${a(f.frame.addrPC)}`, `${registerName(e.machine, arch.sp)}=${a(f.frame.addrStack)}`];
    if (arch.fp !== null) regs.push(`${registerName(e.machine, arch.fp)}=${a(f.frame.addrFrame)}`);
    if (arch.bstore !== null) regs.push(`${registerName(e.machine, arch.bstore)}=${a(f.frame.addrBStore)}`);
    out.push("");
    out.push(`frame ${f.index}  ${f.location}  [${f.frame.trust}]${f.truth !== undefined ? `  truth: ${f.truth}` : ""}`);
    out.push(`  ${regs.join("  ")}`);
    for (const line of f.how) out.push(`  ${line}`);
    if (f.weaker !== undefined) out.push(`  weaker walker: ${f.weaker}`);
  }
  out.push("");
  out.push(`stop: ${e.stopText}`);
  if (e.truth !== undefined) out.push(`truth: ${e.truth.text}`);
  return out.join("\n") + "\n";
}
