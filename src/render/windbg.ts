/**
 * WinDbg `kb`-style stacks: x86 `ChildEBP RetAddr  Args to Child` with three stack arguments;
 * x64 `Child-SP RetAddr Call Site` with the debugger's backquoted 64-bit addresses; IA-64 adds
 * the frame's backing-store pointer (Child-BSP). Module names lose their extension, as WinDbg's do.
 *
 * On x86 each call site is followed by the FPO note `kv` prints from the function's FPO_DATA
 * record (x86-fpo.md §1): `(FPO: [params,locals,registers])` with the counts as the record stores
 * them (DWORDs, DWORDs, saved registers); `(FPO: [EBP 0x…] [p,l,r])` when the function allocates
 * EBP (fUseBP), with the EBP value it saved, i.e. the caller's; `(FPO: [p,l] TrapFrame @ …)`
 * for a kernel trap frame, at the frame's EBP; and `(FPO: [Non-Fpo])` for an EBP frame
 * (FRAME_NONFPO) or a function without a record. Frames outside every module get no note.
 *
 * Several threads are printed as `~*k` prints them, in the debugger's thread order, each stack
 * under the thread's `~` line:
 * `.  0  Id: f5c.bf4 Suspend: 1 Teb: 7ffdf000 Unfrozen` — a `.` marking the current thread (a
 * dump's exception thread, else its first), the debugger's decimal thread number (the thread's
 * position in the dump's thread list) right-aligned in three columns, then the process and thread
 * ids in hex, and the suspend count and TEB address the dump records for the thread.
 */
import { findFpo, x86Tables } from "../arch/x86/index.js";
import type { MemoryReader } from "../memory/reader.js";
import { miscProcessId, type Minidump } from "../formats/minidump.js";
import { FRAME_NONFPO, FRAME_TRAP, type FpoData } from "../model/fpo-data.js";
import { machineInfo, type Machine } from "../model/machine.js";
import { moduleAt, type Module, type ThreadSnapshot } from "../model/snapshot.js";
import type { Frame } from "../walk/frame.js";
import { hexPadded } from "../hex.js";
import { UnwindCache } from "../unwind/cache.js";
import { lookupAddress } from "../unwind/lookup-address.js";
import { threadsOf, type ThreadWalk, type ThreadWalks } from "../walk/walk.js";
import { chunked, collect } from "./chunks.js";
import { inlineLocationText, locate, locationText } from "../analysis/location.js";

/** WinDbg's 32-bit address: eight digits, no prefix. */
const h32 = (v: bigint): string => hexPadded(v & 0xffff_ffffn, 8).slice(2);
/** WinDbg's 64-bit address: sixteen digits, no prefix, a backquote between the halves. */
const h64 = (v: bigint): string => {
  const s = hexPadded(v, 16).slice(2);
  return `${s.slice(0, 8)}\`${s.slice(8)}`;
};

/**
 * The FPO_DATA record of a frame's function: from the module's x86 tables (attached records and
 * the mapped image's debug directory) when `images` is given, else from the attached records.
 */
function fpoRecord(modules: readonly Module[], frame: Frame, images: MemoryReader | undefined, cache: UnwindCache | undefined): { module: Module; record: FpoData | undefined } | undefined {
  const at = lookupAddress(frame.addrPC, frame.index > 0);
  const module = moduleAt(modules, at);
  if (module === undefined) return undefined;
  const fpo = (images !== undefined ? x86Tables(module, images, cache)?.fpo : module.unwind?.fpo) ?? [];
  return { module, record: findFpo(fpo, Number(at - module.base)) };
}

/**
 * The `kv` FPO note of an x86 frame (see the file comment); empty outside every module. `cache`
 * keeps the images' tables between the frames of one stack.
 */
export function fpoNote(modules: readonly Module[], frame: Frame, caller: Frame | undefined, images?: MemoryReader, cache?: UnwindCache): string {
  const found = fpoRecord(modules, frame, images, cache);
  if (found === undefined) return "";
  const r = found.record;
  if (r === undefined || r.cbFrame === FRAME_NONFPO) return " (FPO: [Non-Fpo])";
  if (r.cbFrame === FRAME_TRAP) return ` (FPO: [${r.cdwParams},${r.cdwLocals}] TrapFrame @ ${h32(frame.registers["ebp"] ?? frame.addrFrame)})`;
  const counts = `[${r.cdwParams},${r.cdwLocals},${r.cbRegs}]`;
  if (r.fUseBP) return ` (FPO: [EBP 0x${h32(caller?.addrFrame ?? frame.addrFrame)}] ${counts})`;
  return ` (FPO: ${counts})`;
}

/** One thread as WinDbg's `~` line describes it. */
export interface WindbgThread {
  id: number;
  /** The suspend count a dump records (MINIDUMP_THREAD.SuspendCount). */
  suspendCount?: number;
  /** The address of the thread's TEB, as a dump records it (MINIDUMP_THREAD.Teb). */
  teb?: bigint;
}

/** What WinDbg's `~` lines say besides the stacks: the process id and the threads in the debugger's order. */
export interface WindbgProcess {
  /** The process id (a minidump's MiscInfo stream); 0 is printed when the input records none. */
  processId?: number;
  /** Every thread of the process, in the order the debugger numbers them (a dump's thread list order). */
  threads: readonly WindbgThread[];
}

/** The `~` facts of a minidump: MiscInfo's process id, the thread list's order, suspend counts and TEBs. */
export function windbgProcess(dump: Minidump): WindbgProcess {
  const processId = miscProcessId(dump.miscInfo);
  const threads = dump.threads.map((t) => ({ id: t.id, suspendCount: t.suspendCount, teb: t.teb }));
  return processId === undefined ? { threads } : { processId, threads };
}

/** Each thread id's place in a process's thread list (its first), made once per list: a lookup per thread, not a search. */
const POSITIONS = new WeakMap<readonly WindbgThread[], Map<number, number>>();

function positionsOf(process: WindbgProcess): Map<number, number> {
  let map = POSITIONS.get(process.threads);
  if (map === undefined) {
    map = new Map();
    for (let i = 0; i < process.threads.length; i++) if (!map.has(process.threads[i]!.id)) map.set(process.threads[i]!.id, i);
    POSITIONS.set(process.threads, map);
  }
  return map;
}

/**
 * WinDbg's `~` line of a thread: `.` for the current thread (else a space), its number in three
 * columns, `Id: pid.tid` in hex, then `Suspend: n Teb: addr Unfrozen` when the dump records them.
 */
export function windbgThreadLine(machine: Machine, process: WindbgProcess, thread: ThreadSnapshot, current: boolean): string {
  const index = positionsOf(process).get(thread.id) ?? -1;
  const known = process.threads[index];
  const id = `${((process.processId ?? 0) >>> 0).toString(16)}.${(thread.id >>> 0).toString(16)}`;
  const line = `${current ? "." : " "}${(index < 0 ? "?" : String(index)).padStart(3)}  Id: ${id}`;
  if (known?.suspendCount === undefined || known.teb === undefined) return line;
  const teb = machineInfo(machine).pointerSize === 4 ? h32(known.teb) : h64(known.teb);
  return `${line} Suspend: ${known.suspendCount} Teb: ${teb} Unfrozen`;
}

/**
 * Renders walks the way WinDbg's `kb` prints them, with `kv`'s FPO notes on x86; several threads
 * as `~*k` does, each under its `~` line. `images` (the snapshot's memory) lets the notes use
 * FPO_DATA from mapped images' debug directories; `process` gives the `~` lines their numbers and
 * ids (default: the threads walked, in the order given, in a process whose id is not known).
 */
export function renderWindbg(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[] | ThreadWalks, images?: MemoryReader, process?: WindbgProcess): string {
  return collect((write) => writeWindbg(machine, modules, walks, write, images, process));
}

/**
 * {@link renderWindbg}'s text, handed to `write` piece by piece as it is made. Walks made as they
 * are read (ThreadWalks) are written as they come when their threads are already in the
 * debugger's order (walkThreads with `listed`), else gathered and sorted first.
 */
export function writeWindbg(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[] | ThreadWalks, write: (text: string) => void, images?: MemoryReader, process?: WindbgProcess): void {
  const out = chunked(write);
  const cache = new UnwindCache();
  const listed = threadsOf(walks);
  const threads = process ?? { threads: listed };
  // The debugger's current thread: the exception thread, else the first thread of the process.
  const current = listed.find((t) => t.crashed)?.id ?? threads.threads[0]?.id;
  // `~*k` goes through the threads in the debugger's order.
  const positions = positionsOf(threads);
  const position = (id: number): number => positions.get(id) ?? threads.threads.length;
  const inOrder = listed.every((t, i) => i === 0 || position(listed[i - 1]!.id) <= position(t.id));
  const ordered = inOrder ? walks : [...walks].sort((a, b) => position(a.thread.id) - position(b.thread.id));
  let first = true;
  for (const { thread, walk } of ordered) {
    if (!first) out.push("\n");
    first = false;
    if (listed.length > 1) out.push(`${windbgThreadLine(machine, threads, thread, thread.id === current)}\n`);
    for (const line of STACK_LINES[machine]({ modules, frames: walk.frames, images, cache })) out.push(`${line}\n`);
  }
  out.end();
}

/** What a machine's `kb` lines are made from. */
interface KbInput {
  modules: readonly Module[];
  frames: readonly Frame[];
  images: MemoryReader | undefined;
  cache: UnwindCache;
}

/**
 * A frame's lines: its inline frames first, as WinDbg prints them (`(Inline Function)` or, in
 * 32-bit columns, `(Inline)`, then dashes in the address columns: an inline frame has no stack of
 * its own), then the frame's own line from `physical`.
 */
function* withInlines(modules: readonly Module[], frames: readonly Frame[], wide: boolean, columns: number, physical: (f: Frame, i: number) => string): Generator<string> {
  const label = wide ? "(Inline Function)" : "(Inline)";
  const dashes = wide ? "--------`--------" : "--------";
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i]!;
    const loc = locate(modules, f);
    for (const inline of loc.inlines ?? []) yield `${label} ${`${dashes} `.repeat(columns - 1)}${inlineLocationText(loc, inline, f.addrPC, true)}`;
    yield physical(f, i);
  }
}

/** x64: `Child-SP RetAddr Call Site`, addresses as WinDbg writes 64-bit ones. */
function* x64Lines({ modules, frames }: KbInput): Generator<string> {
  yield "Child-SP          RetAddr           Call Site";
  yield* withInlines(modules, frames, true, 2, (f) => `${h64(f.addrStack)} ${h64(f.addrReturn)} ${locationText(locate(modules, f), `0x${h64(f.addrPC)}`, true)}`);
}

/** A machine's `kb` header and frame lines, made as they are written (a thread may have 120,000 frames). */
const STACK_LINES: Record<Machine, (input: KbInput) => Iterable<string>> = {
  // x86: ChildEBP, RetAddr, three stack arguments, the call site and `kv`'s FPO note.
  *x86({ modules, frames, images, cache }) {
    yield "ChildEBP RetAddr  Args to Child              ";
    yield* withInlines(modules, frames, false, 5, (f, i) => {
      const site = locationText(locate(modules, f), `0x${h32(f.addrPC)}`, true);
      return `${h32(f.addrFrame)} ${h32(f.addrReturn)} ${f.params.slice(0, 3).map(h32).join(" ")} ${site}${fpoNote(modules, f, frames[i + 1], images, cache)}`;
    });
  },
  x64: x64Lines,
  // IA-64: the frame's backing-store pointer beside its stack pointer.
  *ia64({ modules, frames }) {
    yield "Child-SP          Child-BSP         RetAddr           Call Site";
    yield* withInlines(modules, frames, true, 3, (f) => `${h64(f.addrStack)} ${h64(f.addrBStore)} ${h64(f.addrReturn)} ${locationText(locate(modules, f), `0x${h64(f.addrPC)}`, true)}`);
  },
  // ARM64: WinDbg prints the x64 columns.
  arm64: x64Lines,
  // ARM: the same columns with 32-bit addresses.
  *arm({ modules, frames }) {
    yield "Child-SP RetAddr  Call Site";
    yield* withInlines(modules, frames, false, 2, (f) => `${h32(f.addrStack)} ${h32(f.addrReturn)} ${locationText(locate(modules, f), `0x${h32(f.addrPC)}`, true)}`);
  },
};
