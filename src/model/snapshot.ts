/**
 * The one type every input produces and every walker reads: a machine, one or more thread
 * contexts, target memory, and the modules loaded in it (DESIGN.md "Data flow").
 */
import type { MemoryReader } from "../memory/reader.js";
import type { AddressRange } from "../memory/window-memory.js";
import type { FpoData } from "./fpo-data.js";
import type { FrameData, FrameDataIndex } from "./frame-data.js";
import type { InlineSites } from "./inline.js";
import type { Machine } from "./machine.js";
import type { BreakpadStackCfi, StackCfiIndex } from "./stack-cfi.js";

/**
 * A register file: lower-case CONTEXT register names to values.
 *
 * A walker makes the register sets of the caller frames it finds with a constructor (a small
 * class per shape, in the machine's folder), not an object literal: V8 moves an object literal's
 * allocation site to the old generation once most of what it made outlived a scavenge — as every
 * frame of a deep walk does, the walk keeping its frames — and from then on each frame is
 * allocated there, with a write barrier per fresh value stored in it and a full collection every
 * few walks, which slowed deep walks by a third to a half (`npm run bench`; `test/walk/young-frames.test.ts`).
 */
export type Registers = Record<string, bigint>;

/** A named code range inside a module (a function or a public symbol). */
export interface ModuleSymbol {
  name: string;
  /** Offset of the first byte from the module base. */
  rva: bigint;
  /** Length in bytes; undefined when only the start is known (a PUBLIC record). */
  size?: bigint;
  /**
   * Which Breakpad record the symbol came from (minidump.md §7): a FUNC covers [rva, rva + size)
   * and has line records; a PUBLIC has no size and applies only where no FUNC does. Undefined
   * for symbols from other sources (a PDB, a vector), which are looked up by start alone.
   */
  kind?: "func" | "public";
  /** Bytes of stack parameters, as the FUNC or PUBLIC record gives them. */
  paramSize?: number;
  /** A FUNC's line records, sorted by rva: each covers [rva, rva + size) of source line `line` in `file`. */
  lines?: SourceLine[];
  /** The calls inlined into a FUNC (Breakpad INLINE records, a PDB's inline sites), when the source has any. */
  inlines?: InlineSites;
}

/** One line record of a function (module-relative). */
export interface SourceLine {
  rva: bigint;
  size: bigint;
  line: number;
  /** The source file the record's FILE number names; undefined when no FILE record has that number. */
  file?: string;
}

/**
 * A module's symbols looked up by address without an object made for each: what a symbol file
 * read lazily gives (a `.sym` file's index). A module that has one makes `symbols` from it when
 * `symbols` is first read (assigning `symbols` drops it), and lookups ({@link symbolAt}, the
 * symbolizer) ask it instead, making only the symbols they return.
 */
export interface SymbolIndex {
  /** The number of symbols (`symbols.length`). */
  readonly count: number;
  /** Every symbol, in the order of `symbols` (made once). */
  all(): ModuleSymbol[];
  /** {@link symbolAt}'s answer: the last symbol starting at or below `rva`, within its size when it has one. */
  at(rva: bigint): ModuleSymbol | undefined;
  /**
   * Breakpad's resolver (unwind/symbolize.ts): the FUNC covering `rva` with, when `lines` is
   * true, its line record covering it; else the PUBLIC the address falls to.
   */
  resolve(rva: bigint, lines: boolean): { symbol: ModuleSymbol; line?: SourceLine } | undefined;
}

/** A loaded image. */
export interface Module {
  name: string;
  base: bigint;
  size: bigint;
  /** Functions sorted by rva (the order is established by the loader). */
  symbols: ModuleSymbol[];
  /** The symbols looked up without making them all, when a symbol file read lazily gave them (not enumerable; see {@link withSymbolIndex}). */
  symbolIndex?: SymbolIndex;
  /** Unwind records for the module that do not come from its mapped image (a vector, a PDB, a .sym file). */
  unwind?: ModuleUnwind;
  /** The full path of the image as the loader recorded it (a dump's module name); `name` is its file-name part. */
  path?: string;
  /** The PDB named by the image's CodeView record, as stored (possibly a full path; minidump.md §2.3). */
  debugFile?: string;
  /** Symbol-store identifier: CodeView GUID (or NB10 signature) in upper-case hex, then the age in lower-case hex (minidump.md §8). */
  debugId?: string;
  /** Code identifier: TimeDateStamp as `%08X` followed by SizeOfImage as `%x`, as Breakpad prints it. */
  codeId?: string;
  /** The file version `a.b.c.d` from the image's VS_FIXEDFILEINFO, when it has a valid one. */
  version?: string;
}

/** Unwind records attached to a module: x86 ones (each list sorted by start RVA) and STACK CFI. */
export interface ModuleUnwind {
  /** Old FPO_DATA records. */
  fpo: FpoData[];
  /** FrameData records with their program strings. */
  frameData: FrameData[];
  /**
   * The same records looked up by RVA without making them all, when a `.sym` file read lazily gave
   * them (not enumerable): the walkers ask it instead of `frameData`, which is then made only when
   * read.
   */
  frameDataIndex?: FrameDataIndex;
  /** Breakpad STACK CFI records (an INIT range with its delta rows), in file order (minidump.md §7). */
  stackCfi?: readonly BreakpadStackCfi[];
  /**
   * The same records looked up by address without reading them all, when a `.sym` file read
   * lazily gave them (not enumerable): the walk asks it instead of `stackCfi`, which is then made
   * only when read.
   */
  stackCfiIndex?: StackCfiIndex;
  /** Where the records came from, in words ("vector", "PDB x.pdb", "Breakpad x.sym"). */
  origin: string;
}

/**
 * One frame of ground truth, innermost first (DESIGN.md "Ground truth"): frame 0 is the
 * captured context; for k ≥ 1, `pc` is the return address into frame k and `sp` the address
 * just past its return-address slot. On ia64 `sp` is r12 and `bsp` the backing-store pointer.
 */
export interface TruthFrame {
  pc: bigint;
  sp: bigint;
  bsp?: bigint;
  function?: string;
}

/** One thread of a snapshot. */
export interface ThreadSnapshot {
  id: number;
  /** True for the thread that was executing when the snapshot was taken (dumps: the crashing one). */
  crashed: boolean;
  /** The thread's CONTEXT registers. */
  registers: Registers;
  /** Ground truth for this thread's stack, when the snapshot's producer knows it. */
  truth?: TruthFrame[];
  /** ETW events recorded for this thread at the snapshot, each with its extended data items. */
  etw?: EtwEvent[];
  /**
   * The only memory a walk of this thread reads the stack through, when the snapshot says which
   * it is: a dump thread's own stack region (and IA-64 backing store), as Breakpad's walker sees
   * it (minidump.md §4). Absent: the whole snapshot memory.
   */
  stackRanges?: readonly AddressRange[];
}

/**
 * The operating system a snapshot comes from (a dump's SystemInfo PlatformId, minidump.md §2.6).
 * Some unwind rules depend on it: x64 code on Windows keeps no frame-pointer chain (x64-unwind.md),
 * while System V x86-64 code usually does.
 */
export type OperatingSystem = "windows" | "linux" | "macos" | "ios" | "android" | "solaris" | "fuchsia" | "nacl" | "ps3" | "unix" | "unknown";

/** One ETW event's extended data: the on-disk item chain (etw.md §1.2), as it was logged. */
export interface EtwEvent {
  /** The chain of EVENT_HEADER_EXTENDED_DATA_ITEMs in on-disk form (8-byte headers, data inline). */
  items: Uint8Array;
  /** What was logged, in words ("user part", "kernel part", ...). */
  description?: string;
}

/** A memory snapshot of a process, from a vector, a minidump or the emulator. */
export interface Snapshot {
  machine: Machine;
  threads: ThreadSnapshot[];
  memory: MemoryReader;
  modules: Module[];
  /** What the snapshot is, in words (a vector's description, a dump's file name). */
  description?: string;
  /** The operating system; absent means Windows (vectors and the emulator's programs are Windows code). */
  os?: OperatingSystem;
}

/** Whether a snapshot's code follows Windows conventions (its `os` is absent or "windows"). */
export function isWindows(snapshot: { os?: OperatingSystem | undefined }): boolean {
  return snapshot.os === undefined || snapshot.os === "windows";
}

/**
 * The module containing `address`, if any: the first in the list's order when modules overlap.
 * A long list is searched through an index made on its first lookup (a scan asks for every
 * word of a stack, and a damaged dump can list tens of thousands of modules).
 */
export function moduleAt(modules: readonly Module[], address: bigint): Module | undefined {
  if (modules.length <= INDEXED_FROM) {
    for (const m of modules) if (address >= m.base && address - m.base < m.size) return m;
    return undefined;
  }
  let index = moduleIndexes.get(modules);
  if (index === undefined || index.length !== modules.length) moduleIndexes.set(modules, (index = indexModules(modules)));
  const { starts, owners } = index;
  let lo = 0;
  let hi = starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= address) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found < 0 ? undefined : owners[found];
}

/** Lists longer than this are searched through an index. */
const INDEXED_FROM = 32;

/** A module list cut into address segments: segment i starts at starts[i] and belongs to owners[i] (or to none). */
interface ModuleIndex {
  length: number;
  starts: bigint[];
  owners: (Module | undefined)[];
}

const moduleIndexes = new WeakMap<readonly Module[], ModuleIndex>();

/** Cuts the address space at every module's start and end; each piece goes to the first module in list order covering it. */
function indexModules(modules: readonly Module[]): ModuleIndex {
  const points = [...new Set(modules.flatMap((m) => [m.base, m.base + m.size]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const byBase = modules.map((_, i) => i).sort((a, b) => (modules[a]!.base < modules[b]!.base ? -1 : modules[a]!.base > modules[b]!.base ? 1 : a - b));
  // The modules begun so far, smallest list index on top; an ended one leaves when it surfaces.
  const heap: number[] = [];
  const push = (i: number): void => {
    let at = heap.push(i) - 1;
    while (at > 0) {
      const up = (at - 1) >> 1;
      if (heap[up]! <= i) break;
      heap[at] = heap[up]!;
      at = up;
    }
    heap[at] = i;
  };
  const pop = (): void => {
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let at = 0;
    for (;;) {
      const l = 2 * at + 1;
      if (l >= heap.length) break;
      const c = l + 1 < heap.length && heap[l + 1]! < heap[l]! ? l + 1 : l;
      if (heap[c]! >= last) break;
      heap[at] = heap[c]!;
      at = c;
    }
    heap[at] = last;
  };
  const starts: bigint[] = [];
  const owners: (Module | undefined)[] = [];
  let next = 0;
  for (const p of points) {
    while (next < byBase.length && modules[byBase[next]!]!.base <= p) push(byBase[next++]!);
    while (heap.length > 0 && modules[heap[0]!]!.base + modules[heap[0]!]!.size <= p) pop();
    const owner = heap.length > 0 ? modules[heap[0]!] : undefined;
    if (owners.length > 0 && owners[owners.length - 1] === owner) continue;
    starts.push(p);
    owners.push(owner);
  }
  return { length: modules.length, starts, owners };
}

/** The line record covering `rva` in a list sorted by rva (a symbol's {@link ModuleSymbol.lines}). */
export function lineAt(lines: readonly SourceLine[] | undefined, rva: bigint): SourceLine | undefined {
  if (lines === undefined) return undefined;
  let lo = 0;
  let hi = lines.length - 1;
  let found: SourceLine | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (lines[mid]!.rva <= rva) {
      found = lines[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found !== undefined && rva - found.rva < found.size ? found : undefined;
}

/** The symbols of `index`, in place on `module`: `symbols` is made from it when first read, and assigning `symbols` drops the index. */
export function withSymbolIndex(module: Module, index: SymbolIndex): Module {
  Object.defineProperty(module, "symbolIndex", { value: index, enumerable: false, configurable: true, writable: true });
  return Object.defineProperty(module, "symbols", SYMBOLS_OF_INDEX);
}

const SYMBOLS_OF_INDEX: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: Module): ModuleSymbol[] {
    return this.symbolIndex?.all() ?? [];
  },
  set(this: Module, value: ModuleSymbol[]): void {
    delete this.symbolIndex;
    Object.defineProperty(this, "symbols", { value, enumerable: true, configurable: true, writable: true });
  },
};

/** A copy of `module` whose properties made when read (symbols from an index) stay so. */
export function copyModule(module: Module): Module {
  return Object.defineProperties({}, Object.getOwnPropertyDescriptors(module)) as Module;
}

/** Whether `module` has symbols, without making them. */
export function hasSymbols(module: Module): boolean {
  return module.symbolIndex !== undefined ? module.symbolIndex.count > 0 : module.symbols.length > 0;
}

/** The symbol containing `rva` in `module` (the last one starting at or before it, within its size when known). */
export function symbolAt(module: Module, rva: bigint): ModuleSymbol | undefined {
  if (module.symbolIndex !== undefined) return module.symbolIndex.at(rva);
  const syms = module.symbols;
  let lo = 0;
  let hi = syms.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (syms[mid]!.rva <= rva) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found < 0) return undefined;
  const s = syms[found]!;
  if (s.size !== undefined && rva - s.rva >= s.size) return undefined;
  return s;
}
