/**
 * Runs a program on the emulated CPU and records what a stack walker needs to be checked:
 * register snapshots, the memory they see, and the ground truth from the shadow call stack
 * (emulator/trace.ts).
 *
 * The thread starts as if its entry function had just been called (vectors/programs/c/README.md,
 * "Loader contract"): a stack is mapped, a sentinel return address of 0 sits at [SP] (on AArch64
 * in LR, where `bl` leaves it), and every general register is 0 except the stack pointer (so on
 * x86 the EBP chain ends at EBP = 0, on AArch64 the frame-record chain at x29 = 0). The
 * run ends when the entry function returns to the sentinel. Reaching the instruction limit,
 * touching unmapped memory, or executing something the CPU refuses stops the run with an
 * {@link EmulationError} that names the address and the instruction there.
 *
 * Snapshots are taken before an instruction executes: at every instruction (`sweep`) or each
 * time execution reaches a break address (`breaks`). They come back as a {@link Sweep}: the
 * recorded memory as it was before the first snapshot (every image, and the stack from the
 * lowest page the run used up to its top), and per snapshot exactly the bytes written since
 * the previous one.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { hex, InputError, type Machine, type MemoryRegion, type Module, type ModuleSymbol, RegionMemory, type Registers, type Vector } from "../src/index.js";
import { type MemoryWrite, type ModuleUnwind, parsePe, type PeImage, replaySweep, type Sweep, type SweepStep } from "../src/entry/formats.js";
import { cpuName, linkRegisterCalls, pointerWidth, type CpuMode } from "./cpu-mode.js";
import { loadDisassembler, MAX_INSTRUCTION_LENGTH } from "./disassemble.js";
import { cpuModeOfImage, mapPeImage, PAGE_SIZE, type MapPeOptions } from "./pe-loader.js";
import { loadModuleDebugInfo } from "./symbols.js";
import { ShadowStack, TraceError, type InterruptHandler } from "./trace.js";
import { UC_PROT, Unicorn, UnicornError, type InvalidMemoryAccess, type RegisterName, type StopInfo } from "./unicorn.js";

/** The return address the entry function is called with: reaching it ends the run. */
export const SENTINEL = 0n;

/** Where the thread's stack lives and where its stack pointer starts. */
export interface StackLayout {
  /** Lowest address of the stack region (page-aligned). */
  base: bigint;
  /** Bytes in the region (whole pages). */
  size: bigint;
  /**
   * The stack pointer at the first instruction: it points at the sentinel return address. Below
   * the page holding it the stack is zero when a run starts ({@link mapStack}).
   */
  initialSp: bigint;
}

/**
 * Where stacks end, per CPU: the top of the thread's stack when its reserve fits below it. A
 * 1 MiB reserve (the linkers' default) then spans 0x00030000..0x00130000 on x86, where 32-bit
 * Windows put a main thread's stack, and 0x00200000..0x00300000 on x64; both are clear of the
 * default image bases 0x00400000 and 0x140000000.
 */
export const STACK_TOP: Readonly<Record<CpuMode, bigint>> = { 32: 0x0013_0000n, 64: 0x0030_0000n, arm64: 0x0030_0000n, arm: 0x0013_0000n };

/**
 * Bytes between the initial stack pointer and the stack's top. On x86 ESP starts ≡ 12 (mod 16),
 * as after a call from 16-byte-aligned code, with 16 bytes above the return address. On x64 RSP
 * starts ≡ 8 (mod 16), as after a call, with the caller's 32-byte home area above the return
 * address and 16 more bytes above that. On AArch64 SP is 16-byte aligned at all times and the
 * return address is in LR, so SP starts 64 bytes below the top (room for stacked arguments); on
 * 32-bit ARM likewise (SP 8-byte aligned at calls, the return address in LR).
 */
const ABOVE_INITIAL_SP: Readonly<Record<CpuMode, bigint>> = { 32: 0x14n, 64: 0x38n, arm64: 0x40n, arm: 0x40n };

/** The largest SizeOfStackReserve the emulator maps a stack for: 256 MiB. */
export const MAX_STACK_RESERVE = 0x1000_0000n;

/** Windows reserves address space in 64 KiB units; a stack's size and base are multiples of it. */
const ALLOCATION_GRANULARITY = 0x1_0000n;

/** The lowest and one past the highest user-mode address a stack may take (the first 64 KiB is never mapped). */
const USER_SPACE: Readonly<Record<CpuMode, { low: bigint; high: bigint }>> = {
  32: { low: 0x1_0000n, high: 0x7fff_0000n },
  64: { low: 0x1_0000n, high: 0x7fff_ffff_0000n },
  arm64: { low: 0x1_0000n, high: 0x7fff_ffff_0000n },
  arm: { low: 0x1_0000n, high: 0x7fff_0000n },
};

/**
 * The stack of a thread whose image asks for `reserve` bytes (SizeOfStackReserve): the reserve
 * rounded up to 64 KiB (at least 64 KiB), ending at {@link STACK_TOP} when it fits there, else
 * at the lowest 64 KiB-aligned base where it fits, as Windows reserves a stack in the first free
 * range. 64 KiB below the stack stay unmapped, so that an overflow faults instead of writing into
 * whatever lies below. `taken` is the memory already mapped (the images, with inclusive ends, as
 * Unicorn lists its regions); the stack overlaps none of it. A reserve above {@link MAX_STACK_RESERVE},
 * or one no free range holds, is an {@link InputError} ("unsupported").
 */
export function stackFor(mode: CpuMode, reserve: bigint, taken: readonly { begin: bigint; end: bigint }[]): StackLayout {
  if (reserve > MAX_STACK_RESERVE) {
    throw new InputError(
      "unsupported",
      `SizeOfStackReserve ${hex(reserve)} (${reserve} bytes) is more than the emulator maps for a stack: at most ${hex(MAX_STACK_RESERVE)} (256 MiB)`,
    );
  }
  const size = reserve <= ALLOCATION_GRANULARITY ? ALLOCATION_GRANULARITY : alignTo(reserve, ALLOCATION_GRANULARITY);
  const space = USER_SPACE[mode];
  // Free when nothing mapped lies in [base - 64 KiB, base + size): the stack and the gap below it.
  const free = (base: bigint): boolean =>
    base - ALLOCATION_GRANULARITY >= space.low && base + size <= space.high && taken.every((t) => t.end < base - ALLOCATION_GRANULARITY || t.begin >= base + size);
  const layout = (base: bigint): StackLayout => ({ base, size, initialSp: base + size - ABOVE_INITIAL_SP[mode] });
  const preferred = STACK_TOP[mode] - size;
  if (preferred >= 0n && free(preferred)) return layout(preferred);
  // Candidates: the lowest base, and the first granule past the gap above each mapped range.
  const candidates = [space.low + ALLOCATION_GRANULARITY, ...taken.map((t) => alignTo(t.end + 1n, ALLOCATION_GRANULARITY) + ALLOCATION_GRANULARITY)].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const base = candidates.find(free);
  if (base === undefined) throw new InputError("unsupported", `no free ${hex(size)}-byte range for a stack of SizeOfStackReserve ${hex(reserve)} in the ${cpuName(mode)} address space`);
  return layout(base);
}

/** Rounds `value` up to a multiple of `unit`. */
function alignTo(value: bigint, unit: bigint): bigint {
  return ((value + unit - 1n) / unit) * unit;
}

/**
 * The 64 KiB stacks of hand-built runs (assembled snippets, the ETW harness): the 64 KiB just
 * below {@link STACK_TOP}, with the stack pointer placed as {@link stackFor} places it.
 */
export const DEFAULT_STACKS: Readonly<Record<CpuMode, StackLayout>> = {
  32: { base: STACK_TOP[32] - ALLOCATION_GRANULARITY, size: ALLOCATION_GRANULARITY, initialSp: STACK_TOP[32] - ABOVE_INITIAL_SP[32] },
  64: { base: STACK_TOP[64] - ALLOCATION_GRANULARITY, size: ALLOCATION_GRANULARITY, initialSp: STACK_TOP[64] - ABOVE_INITIAL_SP[64] },
  arm64: { base: STACK_TOP.arm64 - ALLOCATION_GRANULARITY, size: ALLOCATION_GRANULARITY, initialSp: STACK_TOP.arm64 - ABOVE_INITIAL_SP.arm64 },
  arm: { base: STACK_TOP.arm - ALLOCATION_GRANULARITY, size: ALLOCATION_GRANULARITY, initialSp: STACK_TOP.arm - ABOVE_INITIAL_SP.arm },
};

/** The default instruction limit. */
export const DEFAULT_MAX_INSTRUCTIONS = 1_000_000;

/** The registers each snapshot records, in CONTEXT order of importance (lower-case CONTEXT names). */
export const SNAPSHOT_REGISTERS: Readonly<Record<CpuMode, readonly string[]>> = {
  32: ["eip", "esp", "ebp", "eax", "ebx", "ecx", "edx", "esi", "edi", "eflags"],
  64: ["rip", "rsp", "rbp", "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "eflags"],
  arm64: ["pc", "sp", "fp", "lr", ...Array.from({ length: 29 }, (_, i) => `x${i}`), ...Array.from({ length: 8 }, (_, i) => `d${i + 8}`), "cpsr"],
  arm: [...Array.from({ length: 13 }, (_, i) => `r${i}`), ...Array.from({ length: 8 }, (_, i) => `d${i + 8}`), "sp", "lr", "pc", "cpsr"],
};

/** General registers cleared before the run (everything but the stack pointer). */
const CLEARED: Readonly<Record<CpuMode, readonly string[]>> = {
  32: ["eax", "ebx", "ecx", "edx", "esi", "edi", "ebp"],
  64: ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"],
  // LR is the sentinel return address ({@link SENTINEL} is 0).
  arm64: ["fp", "lr", ...Array.from({ length: 29 }, (_, i) => `x${i}`)],
  arm: ["lr", ...Array.from({ length: 13 }, (_, i) => `r${i}`)],
};

/** CPSR of a user-mode ARM thread in Thumb state: M = User (0x10), T (0x20), flags clear. */
const ARM_USER_THUMB = 0x30n;

/** The machine each CPU's snapshots are of. */
const MACHINE_OF: Readonly<Record<CpuMode, Machine>> = { 32: "x86", 64: "x64", arm64: "arm64", arm: "arm" };
/** The stack pointer's register name on each CPU. */
const SP_NAME: Readonly<Record<CpuMode, string>> = { 32: "esp", 64: "rsp", arm64: "sp", arm: "sp" };

/** Why a run stopped without reaching the sentinel. */
export type EmulationErrorKind = "runaway" | "fault" | "trace" | "cpu" | "bad-exit";

/** A run that did not end by returning to the sentinel; the message names the address and the instruction. */
export class EmulationError extends Error {
  readonly kind: EmulationErrorKind;
  /** Where the CPU was (for a fetch fault: the address it tried to run). */
  readonly pc: bigint;
  /** Instructions executed before the stop; undefined for an untraced run. */
  readonly executed: number | undefined;
  /** The refused access, for a fault. */
  readonly access: InvalidMemoryAccess | undefined;

  constructor(kind: EmulationErrorKind, message: string, where: { pc: bigint; executed: number | undefined; access?: InvalidMemoryAccess }, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "EmulationError";
    this.kind = kind;
    this.pc = where.pc;
    this.executed = where.executed;
    this.access = where.access;
  }
}

/** A range of memory that snapshots record. */
export interface RecordedRegion {
  base: bigint;
  size: bigint;
  /** What it is: a module name or "stack". */
  name: string;
}

/** A prepared engine: code and data mapped, ready to start at `entry`. */
export interface EmulationSetup {
  uc: Unicorn;
  entry: bigint;
  /** The loaded images, for symbols in truth and for break names. */
  modules: readonly Module[];
  /** Everything snapshots record; must include the stack. */
  regions: readonly RecordedRegion[];
  stack: StackLayout;
  /** Extra break names (labels of an assembly program) to addresses. */
  labels?: ReadonlyMap<string, bigint>;
}

/** What to record and how long to let the program run. */
export interface RunOptions {
  /**
   * Function names, labels (optionally `+0xN`) or 0x-addresses: one snapshot each time
   * execution reaches one. With `sweep` every instruction is snapshotted anyway, and the
   * breaks only label their snapshots.
   */
  breaks?: readonly string[];
  /** A snapshot before every instruction, from the entry's first to its final `ret`. */
  sweep?: boolean;
  /** Instruction limit (default {@link DEFAULT_MAX_INSTRUCTIONS}). */
  maxInstructions?: number;
  /**
   * Follow calls and returns (default true). Without it nothing is hooked, the CPU runs at
   * full speed, and no snapshot can be taken: only the final registers come back.
   */
  trace?: boolean;
  description?: string;
  provenance?: string;
  /** Interrupt handlers: entering one finds a machine frame at SP, whose interrupted frame joins the truth. */
  interruptHandlers?: readonly InterruptHandler[];
  /** Called with the instruction count every {@link PROGRESS_INTERVAL} instructions. */
  onProgress?: (executed: number) => void;
}

/** How often {@link RunOptions.onProgress} is called, in instructions. */
export const PROGRESS_INTERVAL = 1 << 16;

/** What a completed run gives back. */
export interface RunResult {
  /** The snapshots (one per instruction for a sweep, one per break hit otherwise). */
  sweep: Sweep;
  /**
   * Instructions executed, the final `ret` included; undefined for an untraced run (nothing
   * counted them). A `rep` string instruction counts once per iteration: the CPU can stop
   * between iterations, and each such point gets its own snapshot.
   */
  instructions: number | undefined;
  /** The registers after the final `ret` (at the sentinel), names as in snapshots. */
  registers: Registers;
  /** The stack region, so vectors can leave out its unused lower pages. */
  stack: StackLayout;
}

/**
 * Maps a read/write stack and stores the sentinel return address at its initial SP (on AArch64
 * the sentinel goes into LR when the run starts, and the stack is left as mapped). Unicorn maps
 * memory zero-filled, and the pages stay untouched (and take no host memory) until the program
 * uses them: a run records the stack below the page of the initial SP as zeros without reading it.
 */
export function mapStack(uc: Unicorn, stack: StackLayout = DEFAULT_STACKS[uc.mode]): void {
  uc.memMap(stack.base, stack.size, UC_PROT.READ | UC_PROT.WRITE);
  if (!linkRegisterCalls(uc.mode)) uc.memWrite(stack.initialSp, pointerBytes(SENTINEL, uc.mode));
}

/**
 * Runs a prepared engine from `setup.entry` until the entry function returns to the sentinel.
 * `describe` turns code bytes into one line for error messages (the disassembler's `describe`).
 */
export function emulate(setup: EmulationSetup, options: RunOptions, describe: (bytes: Uint8Array, address: bigint, mode: CpuMode) => string): RunResult {
  const { uc, modules, stack } = setup;
  const mode = uc.mode;
  const machine = MACHINE_OF[mode];
  const width = pointerWidth(mode);
  const maxInstructions = options.maxInstructions ?? DEFAULT_MAX_INSTRUCTIONS;
  if (!Number.isSafeInteger(maxInstructions) || maxInstructions < 1) throw new RangeError(`maxInstructions must be a whole number ≥ 1, not ${maxInstructions}`);
  const trace = options.trace ?? true;
  const sweepAll = options.sweep === true;
  const breaks = resolveBreaks(options.breaks ?? [], modules, setup.labels);
  if (!trace && (sweepAll || breaks.size > 0)) throw new RangeError("snapshots need tracing: sweep and breaks cannot be used with trace: false");

  const spName = SP_NAME[mode] as RegisterName<typeof mode>;
  // An ARM thread runs in User mode (CPSR.M 0x10) in Thumb state (T, 0x20); Unicorn starts in
  // Supervisor mode, whose banked SP and LR the program must not use. The mode comes first, as it
  // selects the bank the writes below go to.
  if (mode === "arm") uc.regWrite("cpsr" as RegisterName<typeof mode>, ARM_USER_THUMB);
  for (const name of CLEARED[mode]) uc.regWrite(name as RegisterName<typeof mode>, 0n);
  uc.regWrite(spName, stack.initialSp);
  // Windows runs ARM threads with VFP on (FPEXC.EN, bit 30); Unicorn starts with it off.
  if (mode === "arm") uc.regWrite("fpexc" as RegisterName<typeof mode>, 0x4000_0000n);

  const regions = [...setup.regions].sort((a, b) => (a.base < b.base ? -1 : 1));
  // Memory as the run starts. The stack is read from the page of the initial SP up: below it is
  // zero ({@link mapStack}), and only the part the run uses is recorded (see lowestUsed), so a
  // stack of many MiB costs what the program uses of it.
  const stackEnd = stack.base + stack.size;
  const spPage = stack.initialSp - (stack.initialSp % PAGE_SIZE);
  const memory: MemoryRegion[] = regions.map((r) =>
    r.base === stack.base ? { base: spPage, bytes: uc.memRead(spPage, Number(stackEnd - spPage)) } : { base: r.base, bytes: uc.memRead(r.base, Number(r.size)) },
  );
  const registerNames = SNAPSHOT_REGISTERS[mode] as readonly RegisterName<typeof mode>[];
  const readPointer = (address: bigint): bigint => readLittleEndian(uc.memRead(address, width));
  const readRegister = (n: number): bigint => uc.regRead((mode === "arm" ? (n === 14 ? "lr" : `r${n}`) : `x${n}`) as RegisterName<typeof mode>);
  const shadow = new ShadowStack(mode, readPointer, options.interruptHandlers, linkRegisterCalls(mode) ? readRegister : undefined);
  const steps: SweepStep[] = [];
  const written: { address: bigint; size: number }[] = [];
  let compactAt = COMPACT_WRITES;
  let executed = 0;
  let previousPc: bigint | undefined;
  // The lowest stack address the program used (SP or any access): the pages below it were
  // never part of the run, so the sweep leaves them out.
  let lowestUsed = stack.initialSp;
  const onProgress = options.onProgress;

  if (trace) {
    if (sweepAll || breaks.size > 0) {
      uc.hookMemory((access) => {
        if (access.kind === "write") {
          written.push({ address: access.address, size: access.size });
          // Between two snapshots (a deep run before its first break) the writes could grow
          // without bound; the ranges they cover cannot, so the list is merged now and then.
          if (written.length >= compactAt) compactAt = Math.max(COMPACT_WRITES, 2 * mergeWrites(written));
        }
        if (access.address < lowestUsed && access.address >= stack.base && access.address < stackEnd) lowestUsed = access.address;
      });
    }
    uc.hookCode((pc, size) => {
      const step = executed++;
      const label = breaks.get(pc);
      const snapshot = sweepAll || label !== undefined;
      const registers: Registers = {};
      if (snapshot) for (const name of registerNames) registers[name] = uc.regRead(name);
      const sp = snapshot ? registers[spName]! : uc.regRead(spName);
      if (sp < lowestUsed && sp >= stack.base) lowestUsed = sp;
      shadow.before(pc, sp, uc.memRead(pc, size));
      if (snapshot) {
        const s: SweepStep = { step, registers, writes: collectWrites(uc, regions, written.splice(0)) };
        if (label !== undefined) s.label = label;
        s.truth = shadow.truth(pc, sp, modules);
        steps.push(s);
      }
      if (onProgress !== undefined && step % PROGRESS_INTERVAL === 0 && step > 0) onProgress(step);
      previousPc = pc;
    });
  }

  const codeLine = (address: bigint): string => describe(readCode(uc, address), address, mode);
  const where = (pc: bigint, access?: InvalidMemoryAccess) =>
    access === undefined ? { pc, executed: trace ? executed : undefined } : { pc, executed: trace ? executed : undefined, access };
  let stop: StopInfo;
  try {
    // A Thumb entry point starts the CPU in Thumb state: the address with bit 0 set.
    stop = uc.start(mode === "arm" ? setup.entry | 1n : setup.entry, SENTINEL, { count: maxInstructions });
  } catch (e) {
    if (e instanceof TraceError) {
      throw new EmulationError("trace", `the shadow stack lost track: ${e.message} (${codeLine(e.address)})`, where(e.address), e);
    }
    if (e instanceof UnicornError) {
      const pc = e.pc ?? uc.pc();
      const access = e.access;
      if (access !== undefined && access.kind === "fetch") {
        const from = previousPc === undefined ? "" : `, reached from ${codeLine(previousPc)}`;
        throw new EmulationError("fault", `cannot execute at 0x${access.address.toString(16)}: ${access.cause} memory${from}`, where(pc, access), e);
      }
      if (access !== undefined) {
        throw new EmulationError(
          "fault",
          `${access.kind} of ${access.size} byte(s) at 0x${access.address.toString(16)} (${access.cause} memory) by ${codeLine(pc)}`,
          where(pc, access),
          e,
        );
      }
      throw new EmulationError("cpu", `the CPU stopped with ${e.codeName} (${e.description}) at ${codeLine(pc)}`, where(pc), e);
    }
    throw e;
  }
  const registers: Registers = {};
  for (const name of registerNames) registers[name] = uc.regRead(name);
  const sp = registers[spName]!;
  if (stop.reason === "count") {
    throw new EmulationError("runaway", `still running after ${maxInstructions} instructions; the next one is ${codeLine(stop.pc)}`, where(stop.pc));
  }
  if (stop.reason !== "until") {
    throw new EmulationError("cpu", `the CPU stopped by itself (${stop.reason}) at ${codeLine(stop.pc)}`, where(stop.pc));
  }
  // Reaching address 0 is the end only when it is the entry function's return: the sentinel
  // slot has been popped and no call made during the run is still open.
  // x86 and x64 pop the sentinel (SP ends above its slot); AArch64 and ARM return with SP as it began.
  const returnedSp = linkRegisterCalls(mode) ? sp === stack.initialSp : sp > stack.initialSp;
  if (!returnedSp || shadow.entries.length > 0) {
    const from = previousPc === undefined ? "" : ` from ${codeLine(previousPc)}`;
    throw new EmulationError("bad-exit", `jumped to address 0${from} without returning from the entry point (SP 0x${sp.toString(16)})`, where(stop.pc));
  }
  const sweep: Sweep = {
    machine,
    modules: modules.map((m) => ({ ...m, symbols: [...m.symbols] })),
    memory: memory.map((r) => {
      if (r.base !== spPage) return { base: r.base, bytes: r.bytes };
      const from = lowestUsed - (lowestUsed % PAGE_SIZE);
      if (from >= spPage) return { base: r.base, bytes: r.bytes };
      const bytes = new Uint8Array(Number(stackEnd - from));
      bytes.set(r.bytes, Number(spPage - from));
      return { base: from, bytes };
    }),
    steps,
  };
  const description = options.description ?? defaultDescription(modules[0]?.name ?? "the program", sweepAll, [...breaks.values()]);
  if (description !== undefined) sweep.description = description;
  if (options.provenance !== undefined) sweep.provenance = options.provenance;
  return { sweep, instructions: trace ? executed : undefined, registers, stack };
}

/** What a run's snapshots show, in words, when the caller gave no description. */
function defaultDescription(name: string, sweep: boolean, breaks: readonly string[]): string | undefined {
  if (sweep && breaks.length === 0) return `${name}: a snapshot before every instruction, from the entry point to its return`;
  if (sweep) return `${name}: a snapshot before every instruction, from the entry point to its return; breaks labelled: ${breaks.join(", ")}`;
  if (breaks.length > 0) return `${name}: a snapshot each time execution reaches ${breaks.join(", ")}`;
  return undefined;
}

/** Recorded writes before {@link mergeWrites} first runs between two snapshots. */
const COMPACT_WRITES = 1 << 16;

/**
 * Merges recorded writes in place into the ranges they cover (sorted, overlapping and adjacent
 * ones joined) and returns how many remain. {@link collectWrites} gives the same result for the
 * merged list as for the original: it clips to regions and joins what touches anyway.
 */
function mergeWrites(writes: { address: bigint; size: number }[]): number {
  writes.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  let n = 0;
  for (const w of writes) {
    const last = n > 0 ? writes[n - 1]! : undefined;
    const end = w.address + BigInt(w.size);
    if (last !== undefined && w.address <= last.address + BigInt(last.size)) {
      const lastEnd = last.address + BigInt(last.size);
      if (end > lastEnd) last.size = Number(end - last.address);
    } else writes[n++] = { address: w.address, size: w.size };
  }
  writes.length = n;
  return n;
}

/**
 * The bytes written since the previous snapshot, as the memory now holds them: each recorded
 * write clipped to its region, overlapping and adjacent ranges merged, in address order.
 */
function collectWrites(uc: Unicorn, regions: readonly RecordedRegion[], writes: readonly { address: bigint; size: number }[]): MemoryWrite[] {
  if (writes.length === 0) return [];
  const ranges: { begin: bigint; end: bigint }[] = [];
  for (const w of writes) {
    const begin = w.address;
    const end = w.address + BigInt(w.size);
    for (const r of regions) {
      const rEnd = r.base + r.size;
      const b = begin > r.base ? begin : r.base;
      const e = end < rEnd ? end : rEnd;
      if (b < e) ranges.push({ begin: b, end: e });
    }
  }
  ranges.sort((a, b) => (a.begin < b.begin ? -1 : a.begin > b.begin ? 1 : 0));
  const merged: { begin: bigint; end: bigint }[] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    // Two regions can be adjacent; ranges merge only within one region, so that every write
    // stays inside one region of the sweep's memory.
    if (last !== undefined && r.begin <= last.end && sameRegion(regions, last.begin, r.begin)) {
      if (r.end > last.end) last.end = r.end;
    } else merged.push({ ...r });
  }
  return merged.map((r) => ({ address: r.begin, bytes: uc.memRead(r.begin, Number(r.end - r.begin)) }));
}

function sameRegion(regions: readonly RecordedRegion[], a: bigint, b: bigint): boolean {
  const of = (x: bigint) => regions.findIndex((r) => x >= r.base && x < r.base + r.size);
  return of(a) === of(b);
}

/**
 * Resolves break specs to addresses: `0x...` is an address; otherwise a label, or a function
 * of any module (by its symbol name or `module!name`), optionally followed by `+0xN`. Several
 * specs at one address share one snapshot whose label lists them.
 */
export function resolveBreaks(specs: readonly string[], modules: readonly Module[], labels?: ReadonlyMap<string, bigint>): Map<bigint, string> {
  const out = new Map<bigint, string>();
  for (const spec of specs) {
    const address = resolveBreak(spec, modules, labels);
    const held = out.get(address);
    if (held === undefined) out.set(address, spec);
    else if (!held.split(",").includes(spec)) out.set(address, `${held},${spec}`);
  }
  return out;
}

function resolveBreak(spec: string, modules: readonly Module[], labels?: ReadonlyMap<string, bigint>): bigint {
  if (/^0x[0-9a-f]+$/i.test(spec)) return BigInt(spec);
  const match = /^(?:([^!]+)!)?([^+]+?)(?:\+(0x[0-9a-f]+|\d+))?$/i.exec(spec);
  if (match === null) throw new InputError("bad-value", `--break "${spec}": expected a function, a label, NAME+0xOFFSET or a 0x-address`);
  const [, moduleName, name, offsetText] = match;
  const offset = offsetText === undefined ? 0n : BigInt(offsetText);
  if (moduleName === undefined) {
    const label = labels?.get(name!);
    if (label !== undefined) return label + offset;
  }
  for (const m of modules) {
    if (moduleName !== undefined && m.name.toLowerCase() !== moduleName.toLowerCase()) continue;
    const symbol = m.symbols.find((s) => s.name === name);
    if (symbol !== undefined) return m.base + symbol.rva + offset;
  }
  const known = [...(labels?.keys() ?? []), ...modules.flatMap((m) => m.symbols.map((s) => s.name))];
  const list = known.length === 0 ? "there are no symbols (no PDB beside the image?)" : `known: ${known.slice(0, 40).join(", ")}${known.length > 40 ? ", ..." : ""}`;
  throw new InputError("bad-value", `--break "${spec}": no function or label of that name; ${list}`);
}

/** Up to {@link MAX_INSTRUCTION_LENGTH} bytes of code at `address`, fewer where the mapping ends. */
function readCode(uc: Unicorn, address: bigint): Uint8Array {
  const bytes: number[] = [];
  for (let i = 0; i < MAX_INSTRUCTION_LENGTH; i++) {
    try {
      bytes.push(uc.memRead(address + BigInt(i), 1)[0]!);
    } catch {
      break;
    }
  }
  return Uint8Array.from(bytes);
}

function readLittleEndian(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]!);
  return value;
}

function pointerBytes(value: bigint, mode: CpuMode): Uint8Array {
  const width = pointerWidth(mode);
  const bytes = new Uint8Array(width);
  for (let i = 0; i < width; i++) bytes[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return bytes;
}

/** A PE image to run: its file bytes and, when known, its symbols. */
export interface ImageSource {
  /** The module name, e.g. `app.exe`. */
  name: string;
  /** The file as read from disk (parsed here), or an already parsed image. */
  image: Uint8Array | PeImage;
  symbols?: readonly ModuleSymbol[];
  /** Unwind records for the module (from its PDB). */
  unwind?: ModuleUnwind;
}

/** Options of {@link runImage}: a run's options plus images mapped beside the main one. */
export interface RunImageOptions extends RunOptions {
  /** More images (DLLs) to map at their preferred bases; they are not called by the loader. */
  extraModules?: readonly ImageSource[];
  /** The stack (default: the main image's SizeOfStackReserve, placed by {@link stackFor}). */
  stack?: StackLayout;
  /** Labels of the program's source, usable as break names. */
  labels?: ReadonlyMap<string, bigint>;
}

/**
 * Runs a PE image from its entry point on a fresh engine (x86, x64 or AArch64 from the image's
 * machine) and returns its snapshots. Bad images are {@link InputError}s, failed runs
 * {@link EmulationError}s.
 */
export async function runImage(main: ImageSource, options: RunImageOptions = {}): Promise<RunResult> {
  const disassembler = await loadDisassembler();
  const pe = main.image instanceof Uint8Array ? parseImage(main.image, main.name) : main.image;
  const mode: CpuMode = cpuModeOfImage(pe, main.name);
  const uc = Unicorn.open(mode);
  try {
    const images = [main, ...(options.extraModules ?? [])].map((source) => {
      const parsed = source === main ? pe : source.image instanceof Uint8Array ? parseImage(source.image, source.name) : source.image;
      const mapOptions: MapPeOptions = { name: source.name };
      if (source.symbols !== undefined) mapOptions.symbols = source.symbols;
      if (source.unwind !== undefined) mapOptions.unwind = source.unwind;
      return mapPeImage(uc, parsed, mapOptions);
    });
    const stack = options.stack ?? stackFor(mode, pe.sizeOfStackReserve, uc.memRegions());
    for (const image of images) {
      if (image.base < stack.base + stack.size && stack.base < image.base + image.size) {
        throw new InputError("unsupported", `${image.name}: the image overlaps the emulator's stack at 0x${stack.base.toString(16)}`);
      }
    }
    mapStack(uc, stack);
    const setup: EmulationSetup = {
      uc,
      entry: images[0]!.base + BigInt(pe.entryRva),
      modules: images.map((i) => i.module),
      regions: [
        ...images.map((i) => ({ base: i.base, size: ((i.size + PAGE_SIZE - 1n) / PAGE_SIZE) * PAGE_SIZE, name: i.name })),
        { base: stack.base, size: stack.size, name: "stack" },
      ],
      stack,
    };
    if (options.labels !== undefined) setup.labels = options.labels;
    return emulate(setup, options, (bytes, address, m) => disassembler.describe(bytes, address, m));
  } finally {
    uc.close();
  }
}

/**
 * Runs the PE image at `path`, with symbols from the PDB beside it (see emulator/symbols.ts).
 * Errors in the image or the PDB name the file.
 */
export async function runImageFile(path: string, options: RunImageOptions = {}): Promise<RunResult> {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new InputError("io", `cannot read: ${code === "ENOENT" ? "no such file" : e instanceof Error ? e.message : String(e)}`, { file: path });
  }
  const pe = parseImage(bytes, path);
  try {
    return await runImage({ name: basename(path), image: pe, ...loadModuleDebugInfo(path, pe) }, options);
  } catch (e) {
    if (e instanceof InputError && e.file === undefined) throw e.inFile(path);
    throw e;
  }
}

function parseImage(bytes: Uint8Array, file: string): PeImage {
  try {
    return parsePe(bytes);
  } catch (e) {
    if (e instanceof InputError) throw e.file === undefined ? e.inFile(file) : e;
    throw e;
  }
}

/**
 * One vector per snapshot of a run, with the memory as it was at that snapshot. The stack
 * region starts at the page holding SP: the pages below it are not part of any frame.
 */
export function vectorsOf(result: RunResult): Vector[] {
  const { sweep, stack } = result;
  const spName = sweep.machine === "x64" ? "rsp" : sweep.machine === "arm64" || sweep.machine === "arm" ? "sp" : "esp";
  const vectors: Vector[] = [];
  let index = 0;
  for (const replayed of replaySweep(sweep)) {
    const s = sweep.steps[index++]!;
    const sp = s.registers[spName]!;
    const regions: MemoryRegion[] = replayed.memory.regions.map((r) => {
      if (r.base !== stack.base || sp < stack.base || sp >= stack.base + stack.size) return { base: r.base, bytes: r.bytes.slice() };
      const from = sp - (sp % PAGE_SIZE);
      return { base: from, bytes: r.bytes.slice(Number(from - r.base)) };
    });
    const thread: Vector["threads"][number] = { id: 0, crashed: true, registers: { ...s.registers } };
    if (s.truth !== undefined) thread.truth = s.truth;
    if (s.etw !== undefined) thread.etw = s.etw;
    const v: Vector = { machine: sweep.machine, threads: [thread], memory: new RegionMemory(regions), modules: sweep.modules };
    const name = sweep.modules[0]?.name ?? "the program";
    v.description = s.label !== undefined ? `${name}: at ${s.label}, after ${s.step} instructions` : `${name}: after ${s.step} instructions`;
    if (sweep.provenance !== undefined) v.provenance = sweep.provenance;
    vectors.push(v);
  }
  return vectors;
}
