/**
 * ETW stack address arrays for the emulator's snapshots, made the way Windows makes them and
 * never by this project's walkers:
 * - x86: executed machine code. The program calls a logging module (emulator/etw-modules.ts)
 *   whose `RtlWalkFrameChain` follows the EBP chain (x86-fpo.md §6) into a record in its .data;
 *   the runner reads the record where the module's log site is reached and encodes it as an
 *   EVENT_EXTENDED_ITEM_STACK_TRACE32 item in on-disk form (etw.md §1.2, §1.5).
 * - x64: ETW unwinds with the images' unwind data, which is exact at every instruction boundary,
 *   so what it yields is the shadow stack's return addresses. The runner takes them from the
 *   ground truth at the log site (or at a sample point) as a STACK_TRACE64 item.
 *
 * A capture point is a snapshot for the walkers; the events logged after it, up to the next
 * capture point, belong to it. For the x86 programs the capture point is the program's own
 * capture label, just before the call into the logger, so the snapshot shows only the program's
 * frames while the array starts with the logging path's frames, as real arrays do (etw.md §3):
 * the return addresses of the calls made after the snapshot, innermost first, into EtwpLogStack,
 * into EtwEventWrite and into the program's function just after its logging call. Between the
 * capture point and the walk the logger only pushes below the snapshot's stack pointer, so every
 * frame the snapshot shows is unchanged when it is walked. With "kernel-user" the user part
 * starts where user mode left off, the trap frame's Eip (the return into the system-call stub,
 * etw.md §3), which is on no EBP chain and so is recorded first; the rest is walked from the
 * trap frame's Ebp (x86-fpo.md §6 step 1).
 */
import type { ModuleSymbol, Vector } from "../src/index.js";
import { type EtwEvent, parsePe, replaySweep, type SweepStep } from "../src/entry/formats.js";
import { decodeDiskItems, decodeStackTrace, encodeDiskItems, encodeStackTrace, EVENT_HEADER_EXT_TYPE, type StackTrace } from "../src/entry/etw.js";
import { loadDisassembler } from "./disassemble.js";
import {
  buildEtwKernelModule,
  buildEtwUser64Module,
  buildEtwUserModule,
  ETW_STACK_RECORD,
  ETW_TEB,
  ETW_USER_DATA,
  NT_TIB32,
  type EtwLogSite,
  type EtwModule,
} from "./etw-modules.js";
import { mapPeImage, PAGE_SIZE } from "./pe-loader.js";
import { buildX86Program, type X86ProgramSpec } from "./programs/x86-chain.js";
import { DEFAULT_STACKS, emulate, mapStack, runImage, vectorsOf, type EmulationSetup, type ImageSource, type RecordedRegion, type RunResult, type StackLayout } from "./run.js";
import { UC_PROT, Unicorn } from "./unicorn.js";

/** What a log point sees: its snapshot, and memory as it was then. */
export interface EtwLogView {
  readonly step: SweepStep;
  /** Reads recorded memory as it was at this snapshot; undefined outside the recorded regions. */
  read(address: bigint, size: number): Uint8Array | undefined;
}

/** A place where events are complete, and how to turn its snapshot into them. */
export interface EtwLogPoint {
  /** A break spec (label, function, `module!function+0xN` or 0x-address). */
  readonly at: string;
  /** The events logged there. */
  events(view: EtwLogView): EtwEvent[];
}

/** Which snapshots are capture points and where their events are logged. */
export interface EtwPlan {
  /** Break specs of the capture points: the snapshots that get vectors. */
  readonly captures: readonly string[];
  readonly logPoints: readonly EtwLogPoint[];
}

/** The breaks a run needs for `plan`: its capture points and its log points. */
export function etwBreaks(plan: EtwPlan): string[] {
  return [...new Set([...plan.captures, ...plan.logPoints.map((p) => p.at)])];
}

/**
 * Gives every capture snapshot of `result` (run with {@link etwBreaks}) the events logged from
 * it up to the next capture snapshot (a log point at the capture point itself logs into it),
 * and returns one vector per capture snapshot, `etw` included. The snapshots of the log points
 * stay in the sweep, labelled by their break spec.
 */
export function attachEtw(result: RunResult, plan: EtwPlan): Vector[] {
  const captures = new Set(plan.captures);
  const points = new Map(plan.logPoints.map((p) => [p.at, p]));
  const captured: number[] = [];
  let current: SweepStep | undefined;
  let index = 0;
  for (const replayed of replaySweep(result.sweep)) {
    const step = result.sweep.steps[index]!;
    const read = (address: bigint, size: number): Uint8Array | undefined => replayed.memory.read(address, size)?.slice();
    const labels = step.label?.split(",") ?? [];
    if (labels.some((l) => captures.has(l))) {
      current = step;
      captured.push(index);
    }
    for (const label of labels) {
      const point = points.get(label);
      if (point === undefined) continue;
      if (current === undefined) throw new Error(`${label}: an event was logged after ${step.step} instructions, before any capture point`);
      current.etw = [...(current.etw ?? []), ...point.events({ step, read })];
    }
    index++;
  }
  const vectors = vectorsOf(result);
  return captured.map((i) => vectors[i]!);
}

/** One event whose extended data is a single stack item, in on-disk form. */
export function stackEvent(trace: StackTrace, description: string): EtwEvent {
  return { items: encodeDiskItems([encodeStackTrace(trace)]), description };
}

/**
 * The log point of an x86 log site: reads the stack record the logging code has just filled
 * (MatchId, count, addresses; emulator/etw-modules.ts) and makes it a STACK_TRACE32 item.
 */
export function recordLogPoint(site: EtwLogSite): EtwLogPoint {
  const record = site.record;
  if (record === undefined) throw new RangeError(`${site.breakSpec}: this log site has no stack record`);
  return {
    at: site.breakSpec,
    events: ({ read, step }) => {
      const header = read(record, ETW_STACK_RECORD.addresses);
      if (header === undefined) throw new Error(`${site.breakSpec}: the stack record at 0x${record.toString(16)} is not in recorded memory`);
      const view = new DataView(header.buffer, header.byteOffset);
      const matchId = view.getBigUint64(ETW_STACK_RECORD.matchId, true);
      const count = view.getUint32(ETW_STACK_RECORD.count, true);
      const bytes = read(record + BigInt(ETW_STACK_RECORD.addresses), 4 * count);
      if (bytes === undefined) throw new Error(`${site.breakSpec}: ${count} addresses do not fit the record (after ${step.step} instructions)`);
      const words = new DataView(bytes.buffer, bytes.byteOffset);
      const addresses = Array.from({ length: count }, (_, i) => BigInt(words.getUint32(4 * i, true)));
      return [stackEvent({ matchId, addressSize: 4, addresses }, site.description)];
    },
  };
}

/**
 * A log point that logs the shadow stack at its snapshot as a STACK_TRACE64 item (MatchId 0):
 * the snapshot's PC, then every return address in progress, innermost first. At an x64 log
 * site this is the unwinding capture's result (frame 0 the syscall return); at any other break
 * it is a profile sample's stack (frame 0 the interrupted IP, etw.md §3).
 */
export function truthLogPoint(at: string, description: string): EtwLogPoint {
  return {
    at,
    events: ({ step }) => {
      if (step.truth === undefined) throw new Error(`${at}: the snapshot after ${step.step} instructions has no ground truth`);
      return [stackEvent({ matchId: 0n, addressSize: 8, addresses: step.truth.map((f) => f.pc) }, description)];
    },
  };
}

/** Maps the x86 TEB at {@link ETW_TEB}: NT_TIB with the stack's bounds, which RtlWalkFrameChain reads (x86-fpo.md §6). */
export function mapTeb32(uc: Unicorn, stack: StackLayout): void {
  uc.memMap(ETW_TEB, PAGE_SIZE, UC_PROT.READ | UC_PROT.WRITE);
  const tib = new Uint8Array(Number(PAGE_SIZE));
  const view = new DataView(tib.buffer);
  view.setUint32(NT_TIB32.exceptionList, 0xffff_ffff, true);
  view.setUint32(NT_TIB32.stackBase, Number(stack.base + stack.size), true);
  view.setUint32(NT_TIB32.stackLimit, Number(stack.base), true);
  view.setUint32(NT_TIB32.self, Number(ETW_TEB), true);
  uc.memWrite(ETW_TEB, tib);
}

/** Options of {@link captureVectors}. */
export interface CaptureOptions {
  /** Instruction limit of the run. */
  maxInstructions?: number;
}

/**
 * Builds an x86 program spec that has `etw`, runs it on the emulated CPU beside the logging
 * modules, and returns one vector per capture label, each with its ground truth and the ETW
 * events its logging call produced: one STACK_TRACE32 item (MatchId 0) for "user"; for
 * "kernel-user", a kernel part and a user part sharing one nonzero MatchId, the documented but
 * unverified pairing of etw.md §2.3.
 *
 * The thread starts in `etwlog.dll!RtlUserThreadStart`, which calls `main`: as on Windows, the
 * outermost frame is the thread-start thunk, whose return address ends every EBP chain (the
 * thunk keeps EBP at 0), so the truth's last frame is in it too.
 */
export async function captureVectors(spec: X86ProgramSpec, options: CaptureOptions = {}): Promise<Vector[]> {
  if (spec.etw === undefined) throw new RangeError(`program ${JSON.stringify(spec.name)} does not log: give its spec an etw mode`);
  const [program, user, kernel, disassembler] = await Promise.all([
    buildX86Program(spec),
    buildEtwUserModule(),
    spec.etw === "kernel-user" ? buildEtwKernelModule() : undefined,
    loadDisassembler(),
  ]);
  const logging = kernel === undefined ? [user] : [user, kernel];
  const plan: EtwPlan = { captures: program.captures, logPoints: logging.flatMap((m) => m.logSites.map(recordLogPoint)) };
  const uc = Unicorn.open(32);
  try {
    const images: { name: string; image: Uint8Array; symbols: readonly ModuleSymbol[] }[] = [
      { name: `${program.name}.exe`, image: program.image, symbols: program.symbols.map((s) => ({ name: s.name, rva: BigInt(s.rva), size: BigInt(s.size) })) },
      ...logging.map((m) => ({ name: m.name, image: m.image, symbols: m.symbols })),
    ];
    const loaded = images.map((i) => mapPeImage(uc, parsePe(i.image), { name: i.name, symbols: i.symbols }));
    const stack = DEFAULT_STACKS[32];
    mapStack(uc, stack);
    mapTeb32(uc, stack);
    const start = new Uint8Array(4);
    new DataView(start.buffer).setUint32(0, Number(program.base) + program.entryRva, true);
    uc.memWrite(ETW_USER_DATA.startAddress, start);
    const regions: RecordedRegion[] = [
      ...loaded.map((l) => ({ base: l.base, size: ((l.size + PAGE_SIZE - 1n) / PAGE_SIZE) * PAGE_SIZE, name: l.name })),
      { base: stack.base, size: stack.size, name: "stack" },
    ];
    const setup: EmulationSetup = {
      uc,
      entry: user.labels["RtlUserThreadStart"]!,
      modules: loaded.map((l) => l.module),
      regions,
      stack,
      labels: new Map(Object.entries(program.labels)),
    };
    const result = emulate(
      setup,
      {
        breaks: etwBreaks(plan),
        ...(options.maxInstructions === undefined ? {} : { maxInstructions: options.maxInstructions }),
        description: `${program.name}: snapshots at ${program.captures.join(", ")}, each with the ETW events its logging call produced`,
        provenance: `emulator: captureVectors(${program.name}) (Unicorn 2; truth from the shadow call stack; ETW stacks from ${logging.map((m) => `${m.name}!RtlWalkFrameChain`).join(" and ")} executed on the emulated CPU)`,
      },
      (bytes, address, mode) => disassembler.describe(bytes, address, mode),
    );
    const vectors = attachEtw(result, plan);
    const expected = spec.etw === "user" ? 1 : 2;
    for (const v of vectors) {
      const logged = v.threads[0]!.etw?.length ?? 0;
      if (logged !== expected) throw new Error(`${program.name}: ${v.description ?? "a capture"} got ${logged} ETW event(s), expected ${expected}`);
    }
    return vectors;
  } finally {
    uc.close();
  }
}

/** Options of {@link captureX64Vectors}. */
export interface CaptureX64Options {
  /** Break specs of the capture points (functions, `module!function+0xN`, 0x-addresses). */
  captures: readonly string[];
  /** Also log a profile sample at each capture point: its PC and return addresses (etw.md §3). */
  sample?: boolean;
  /** More images to map beside the program. */
  extraModules?: readonly ImageSource[];
  maxInstructions?: number;
  provenance?: string;
}

/**
 * Runs an x64 image with `etwlog64.dll` mapped beside it and returns one vector per capture
 * point, each with the STACK_TRACE64 events logged after it: one per call the program makes to
 * `etwlog64.dll!EtwEventWrite` (at {@link ETW_EVENT_WRITE64}), and with `sample`, a profile
 * sample at the capture point itself. Works with any image `runImage` runs.
 */
export async function captureX64Vectors(main: ImageSource, options: CaptureX64Options): Promise<Vector[]> {
  const logger = await buildEtwUser64Module();
  const plan: EtwPlan = {
    captures: options.captures,
    logPoints: [
      ...x64LogPoints(logger),
      ...(options.sample === true ? options.captures.map((c) => truthLogPoint(c, "profile sample: frame 0 is the interrupted IP, then the return addresses (etw.md §3)")) : []),
    ],
  };
  const result = await runImage(main, {
    extraModules: [...(options.extraModules ?? []), { name: logger.name, image: logger.image, symbols: logger.symbols }],
    breaks: etwBreaks(plan),
    ...(options.maxInstructions === undefined ? {} : { maxInstructions: options.maxInstructions }),
    ...(options.provenance === undefined ? {} : { provenance: options.provenance }),
  });
  return attachEtw(result, plan);
}

/** The log points of `etwlog64.dll`: the shadow stack where NtTraceEvent would execute `syscall`. */
export function x64LogPoints(logger: EtwModule): EtwLogPoint[] {
  return logger.logSites.map((s) => truthLogPoint(s.breakSpec, s.description));
}

/** The stack items of a vector's ETW events, decoded: each event's chain is walked for its STACK_TRACE32/64 items (etw.md §1.2). */
export function etwStacks(vector: Vector): StackTrace[] {
  return (vector.threads[0]?.etw ?? []).flatMap((e) =>
    decodeDiskItems(e.items)
      .filter((item) => item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE32 || item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE64)
      .map(decodeStackTrace),
  );
}
