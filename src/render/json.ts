/**
 * `walk --format json`: the document of src/render/walk.schema.json, rust-minidump's JSON schema
 * (minidump-processor/json-schema.md, the 0.14 schema with `inlines`) field for field, with its
 * value formats: hex strings zero-padded to the machine's pointer width, its trust words, a
 * caller frame's `offset` at the instruction rust-minidump reports (return address − the
 * machine's look-back), threads in the snapshot's order, the crashed thread again as the
 * top-level `crashing_thread`. What the project knows beyond the schema stays beside it under
 * camelCase names the schema does not use: the contract's `machine` and `notes`, per thread
 * `crashed` and `stop`, per frame the STACKFRAME64 fields, `foundBy` (the project's own trust)
 * and `rule`, per module `path` and `symbolFile`.
 */
import { miscProcessId, type Minidump, type MinidumpMacCrashInfoRecord, type MinidumpModule, type MinidumpProcLimit, type MinidumpUnloadedModule } from "../formats/minidump.js";
import { formatAddress, machineInfo, type Machine } from "../model/machine.js";
import { hexPadded } from "../hex.js";
import { hasSymbols as hasModuleSymbols, type Module, type OperatingSystem, type ThreadSnapshot } from "../model/snapshot.js";
import { ruleText } from "../arch/rule-text.js";
import type { Frame } from "../walk/frame.js";
import { threadsOf, type ThreadWalk, type ThreadWalks } from "../walk/walk.js";
import { assertionText } from "../analysis/breakpad-report.js";
import { crashReason } from "../analysis/breakpad-crash.js";
import { crashType } from "../analysis/crash-type.js";
import { chunked, collect, type ChunkedOutput } from "./chunks.js";
import { locateAddress, sourceOf, type Location } from "../analysis/location.js";
import { dumpSystemInfo } from "../analysis/system-info.js";
import { lookupAddress } from "../unwind/lookup-address.js";
import { lsbRelease, memoryMapCount, microcodeVersion } from "../analysis/linux-info.js";
import { analyzeCrash, type CrashAnalysis } from "../analysis/crash-info.js";
import type { InstructionDecoder } from "../analysis/instruction.js";
import type { ModuleSymbolSource } from "../analysis/walk-document.js";
import { lastErrorValue } from "../analysis/last-error.js";
import type { MemoryReader } from "../memory/reader.js";
import { fileNameOf } from "../path-name.js";

export type { ModuleSymbolSource };

/** What the document says beyond the walks: the dump's crash and system, where symbols came from. */
export interface JsonContext {
  /** The minidump walked: crash_info and system_info come from it, `notes` from its reader. */
  dump?: Minidump;
  /** The snapshot's operating system (a vector has none: Windows). */
  os?: OperatingSystem | undefined;
  /** What the symbol search found for each module it looked at. */
  symbols?: readonly ModuleSymbolSource[];
  /** What the reader passed over or repaired (a minidump's notes); defaults to the dump's. */
  notes?: readonly string[];
  /** The input file, written first (JSON Lines records name their dump). */
  file?: string;
  /**
   * The snapshot's threads in its own order (a dump's thread list): the walked ones are written
   * in this order whatever order they were walked in. Absent: the order they were walked in.
   */
  threadOrder?: readonly ThreadSnapshot[];
  /**
   * The snapshot's memory: the crashing instruction and the threads' TEBs (their last error) are
   * read from it. Absent: crash_info's analysis and last_error_value are null.
   */
  memory?: MemoryReader;
  /**
   * Disassembles the crashing instruction (x86-64) for crash_info's analysis; the core bundles
   * none (the command line hands in Capstone when it is installed).
   */
  decoder?: InstructionDecoder;
  /** Why no decoder is given: said in `notes` when the crashing instruction could have been disassembled. */
  decoderMissing?: string;
}

/** rust-minidump's (and Breakpad's) `os` for a snapshot that names its OS without a SystemInfo stream. */
const OS_TEXT: Readonly<Record<OperatingSystem, string>> = {
  windows: "Windows NT",
  linux: "Linux",
  macos: "Mac OS X",
  ios: "iOS",
  android: "Android",
  solaris: "Solaris",
  fuchsia: "Fuchsia",
  nacl: "NaCl",
  ps3: "PS3",
  unix: "Unix",
  unknown: "unknown",
};

/** rust-minidump's frame trust words, most trusted first (its FrameTrust). */
export type SchemaTrust = "context" | "prewalked" | "cfi" | "cfi_scan" | "frame_pointer" | "scan" | "inline" | "none";

/**
 * A frame's trust in rust-minidump's words. Unwind tables and symbol-file records (STACK WIN,
 * FrameData, FPO_DATA, UNWIND_INFO, ARM64 and IA-64 unwind data, STACK CFI) are `cfi`; a table
 * rule whose result a scan repaired (an x86 call-site check that scanned, an x64 rescan) is
 * `cfi_scan`, as Breakpad's CALL FRAME INFO WITH SCANNING; the frame-pointer chains (and the
 * ARM64 link register) `frame_pointer`; scanning, and Breakpad's leaf simulation (a one-word
 * scan, which rust-minidump does not have), `scan`.
 */
export function schemaTrust(frame: Frame): SchemaTrust {
  switch (frame.rule.kind) {
    case "context":
      return "context";
    case "site-check":
    case "rescan":
      return "cfi_scan";
    case "leaf":
    case "scan":
      return "scan";
    default:
      break;
  }
  switch (frame.trust) {
    case "context":
      return "context";
    case "frame-pointer":
      return "frame_pointer";
    case "scan":
      return "scan";
    default:
      return "cfi";
  }
}

/**
 * The instruction a frame is executing, as rust-minidump reports it in `offset`: the context
 * frame's PC; a caller's return address moved back into its call (− 1 on x86, x64 and IA-64,
 * − 4 on ARM64: the machine table's look-back), so that the module, function and line are the
 * call's.
 */
export function frameInstruction(machine: Machine, frame: Frame): bigint {
  return frame.index === 0 ? frame.addrPC : lookupAddress(frame.addrPC, true, machine);
}

/** Where a frame's instruction is: module, function, line, looked up at the instruction itself. */
function frameLocation(machine: Machine, modules: readonly Module[], frame: Frame): Location {
  return locateAddress(modules, frameInstruction(machine, frame), false);
}

/**
 * The unloaded modules an address lies in, as rust-minidump lists them for a frame outside every
 * loaded module: by module name (sorted), each with its offsets (sorted, without repeats); null
 * when none holds it.
 */
export function unloadedAt(machine: Machine, unloaded: readonly MinidumpUnloadedModule[], address: bigint): { module: string; offsets: string[] }[] | null {
  const byName = new Map<string, Set<bigint>>();
  for (const u of unloaded) {
    if (address < u.base || address >= u.base + BigInt(u.size)) continue;
    const offsets = byName.get(u.name) ?? byName.set(u.name, new Set()).get(u.name)!;
    offsets.add(address - u.base);
  }
  if (byName.size === 0) return null;
  return [...byName.keys()].sort().map((module) => ({
    module,
    offsets: [...byName.get(module)!].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)).map((v) => formatAddress(machine, v)),
  }));
}

/**
 * One frame as a JSON value; `loc` when the caller has already looked it up, `unloaded` the
 * dump's unloaded modules (listed for a frame outside every loaded module).
 */
export function frameJson(
  machine: Machine,
  modules: readonly Module[],
  frame: Frame,
  loc: Location = frameLocation(machine, modules, frame),
  unloaded: readonly MinidumpUnloadedModule[] = [],
): Record<string, unknown> {
  const a = (v: bigint): string => formatAddress(machine, v);
  const source = sourceOf(loc);
  const registers: Record<string, string> = {};
  const regs = frame.registers;
  for (const k in regs) registers[k] = a(regs[k]!);
  return {
    frame: frame.index,
    trust: schemaTrust(frame),
    registers,
    offset: a(frameInstruction(machine, frame)),
    module: loc.module?.name ?? null,
    module_offset: loc.moduleOffset === undefined ? null : a(loc.moduleOffset),
    unloaded_modules: loc.module === undefined ? unloadedAt(machine, unloaded, frameInstruction(machine, frame)) : null,
    function: loc.function ?? null,
    function_offset: loc.functionOffset === undefined ? null : a(loc.functionOffset),
    file: source?.file ?? null,
    line: source?.line ?? null,
    missing_symbols: loc.function === undefined,
    inlines: loc.inlines === undefined ? null : loc.inlines.map((f) => ({ function: f.function, file: f.file ?? null, line: f.line ?? null })),
    addrPC: a(frame.addrPC),
    addrReturn: a(frame.addrReturn),
    addrFrame: a(frame.addrFrame),
    addrStack: a(frame.addrStack),
    addrBStore: a(frame.addrBStore),
    params: frame.params.map(a),
    far: frame.far,
    virtual: frame.virtual,
    funcTableEntry:
      frame.funcTableEntry === undefined
        ? null
        : { kind: frame.funcTableEntry.kind, beginRva: a(frame.funcTableEntry.beginRva), endRva: a(frame.funcTableEntry.endRva) },
    foundBy: frame.trust,
    rule: ruleText(frame.rule),
  };
}

/** The thread's `stop` object. */
function stopJson(machine: Machine, walk: ThreadWalk["walk"]): Record<string, unknown> {
  const stop: Record<string, unknown> = { reason: walk.stop.reason };
  if (walk.stop.address !== undefined) stop["address"] = formatAddress(machine, walk.stop.address);
  stop["detail"] = walk.stop.detail;
  return stop;
}

/**
 * A module's code id as rust-minidump writes it (lower case): a Mach-O module's LC_UUID (the
 * GUID of the RSDS record its dump writer stores, without the age), an ELF module's build id,
 * else a Windows module's TimeDateStamp and SizeOfImage; null for a module of another OS that
 * has no record naming one.
 */
export function schemaCodeId(module: Module, dumpModule: MinidumpModule | undefined, os: OperatingSystem): string | null {
  if (dumpModule === undefined) return module.codeId?.toLowerCase() ?? null;
  const cv = dumpModule.codeView;
  if (cv !== undefined && cv.format === "RSDS" && (os === "macos" || os === "ios")) return cv.guid.toLowerCase();
  if (cv !== undefined || dumpModule.buildId !== undefined || os === "windows") return dumpModule.codeId.toLowerCase();
  return null;
}

/** Whether a module has symbols (names or unwind records) from its input or a symbol file. */
function hasSymbols(m: Module): boolean {
  return m.unwind !== undefined || hasModuleSymbols(m);
}

/**
 * The module list in rust-minidump's form. `missing_symbols` is true for a module a frame was in
 * that had no symbols (rust-minidump looks symbols up only for those); `path` and `symbolFile`
 * are the project's: the code file as the loader recorded it, the symbol file used.
 */
/** A module's JSON, for the `modules` list: made one module at a time as the list is written. */
function moduleJsonOf(machine: Machine, ctx: JsonContext, used: ReadonlySet<Module>): (m: Module) => Record<string, unknown> {
  const a = (v: bigint): string => formatAddress(machine, v);
  const symbols = ctx.symbols ?? [];
  const os = ctx.os ?? "windows";
  const byBase = new Map<bigint, MinidumpModule>();
  for (const m of ctx.dump?.modules ?? []) if (!byBase.has(m.base)) byBase.set(m.base, m);
  // The first source with a file for each module name, found once: a lookup per module, not a search.
  const sources = new Map<string, ModuleSymbolSource>();
  for (const s of symbols) if (s.file !== undefined && !sources.has(s.module)) sources.set(s.module, s);
  return (m) => {
    const found = sources.get(m.name);
    const loaded = hasSymbols(m);
    return {
      base_addr: a(m.base),
      end_addr: a(m.base + m.size),
      filename: m.name,
      code_id: schemaCodeId(m, byBase.get(m.base), os),
      debug_file: m.debugFile === undefined ? null : fileNameOf(m.debugFile),
      debug_id: m.debugId ?? null,
      version: m.version ?? null,
      cert_subject: null,
      missing_symbols: !loaded && used.has(m),
      loaded_symbols: loaded,
      corrupt_symbols: found?.corrupt === true,
      symbol_url: found?.url ?? null,
      path: m.path ?? null,
      symbolFile: found?.file ?? null,
    };
  };
}

/** MINIDUMP_MISC1_PROCESS_TIMES: Flags1 bit saying the process times are valid. */
const MISC1_PROCESS_TIMES = 0x2;

/** Seconds from the process's creation to the dump (header time − MiscInfo's ProcessCreateTime), null when the dump has no process times. */
export function processUptime(dump: Minidump | undefined): number | null {
  const misc = dump?.miscInfo;
  if (dump === undefined || misc === undefined || (misc.flags1 & MISC1_PROCESS_TIMES) === 0) return null;
  const uptime = (dump.header.timeDateStamp >>> 0) - (misc.processCreateTime >>> 0);
  return uptime >= 0 ? uptime : null;
}

/** Everything before the threads: the contract's `machine` and `notes`, then the process, crash and system. */
function documentHead(machine: Machine, crashed: ThreadSnapshot | undefined, crashedIndex: number, threadCount: number, context: JsonContext): Record<string, unknown> {
  const { dump } = context;
  const a = (v: bigint): string => formatAddress(machine, v);
  const crash = dump === undefined ? undefined : crashReason(dump);
  const analysis =
    dump === undefined || crashed === undefined || context.memory === undefined
      ? undefined
      : analyzeCrash({ dump, machine, registers: crashed.registers, memory: context.memory, decoder: context.decoder, decoderMissing: context.decoderMissing });
  const given = context.notes ?? dump?.notes;
  const notes = given === undefined ? undefined : analysis?.note === undefined ? [...given] : [...given, analysis.note];
  const sys = dump === undefined || dump.systemInfo === undefined ? undefined : dumpSystemInfo(dump);
  return {
    file: context.file,
    machine,
    notes,
    status: "OK",
    pid: miscProcessId(dump?.miscInfo) ?? null,
    process_uptime: processUptime(dump),
    crash_info: {
      type: dump === undefined ? null : (crashType(dump) ?? null),
      address: crash === undefined ? null : a(crash.address),
      ...analysisJson(machine, analysis),
      crashing_thread: crashedIndex < 0 ? null : crashedIndex,
      assertion: dump?.assertion === undefined ? null : assertionText(dump.assertion),
    },
    system_info: {
      os: sys?.os ?? OS_TEXT[context.os ?? "windows"],
      os_ver: sys?.osVersion ?? null,
      cpu_arch: sys?.cpu ?? machineInfo(machine).names.cpuArch,
      cpu_info: sys === undefined || sys.cpuInfo === "" ? null : sys.cpuInfo,
      cpu_count: sys?.cpuCount ?? null,
      cpu_microcode_version: dump?.linux?.cpuInfo === undefined ? null : microcodeVersion(dump.linux.cpuInfo),
    },
    linux_memory_map_count: dump?.linux?.maps === undefined ? null : memoryMapCount(dump.linux.maps),
    thread_count: threadCount,
  };
}

/**
 * crash_info's analysis fields in rust-minidump's form: each null when not known, an access's
 * `is_likely_guard_page` only when true, `possible_bit_flips` null when there are none.
 */
export function analysisJson(machine: Machine, analysis: CrashAnalysis | undefined): Record<string, unknown> {
  const a = (v: bigint): string => formatAddress(machine, v);
  const adjusted = analysis?.adjustedAddress;
  const update = analysis?.instructionPointerUpdate;
  return {
    adjusted_address: adjusted === undefined ? null : adjusted.kind === "null-pointer" ? { kind: adjusted.kind, offset: a(adjusted.offset) } : { kind: adjusted.kind, address: a(adjusted.address) },
    instruction: analysis?.instruction ?? null,
    memory_accesses:
      analysis?.memoryAccesses?.map((m) => ({
        address: a(m.address),
        size: m.size,
        ...(m.guard ? { is_likely_guard_page: true } : {}),
        ...(m.access === undefined ? {} : { access_type: m.access }),
      })) ?? null,
    instruction_pointer_update: update === undefined ? null : { address: a(update.address), ...(update.guard ? { is_likely_guard_page: true } : {}) },
    possible_bit_flips:
      analysis === undefined || analysis.possibleBitFlips.length === 0
        ? null
        : analysis.possibleBitFlips.map((f) => ({ address: a(f.address), details: f.details, confidence: f.confidence, source_register: f.sourceRegister })),
    crash_inconsistencies: analysis?.inconsistencies ?? [],
  };
}

/** The fields the schema gives a thread besides its frames: its name (ThreadNames stream) and last error (its TEB). */
function threadFields(machine: Machine, thread: ThreadSnapshot, ctx: JsonContext): Record<string, unknown> {
  return { thread_id: thread.id, thread_name: ctx.dump?.threadNames?.get(thread.id) ?? null, last_error_value: lastErrorValue(ctx.dump, machine, thread.id, ctx.memory) };
}

/** A dump's UnloadedModuleList in rust-minidump's form, in the dump's order. */
function unloadedModuleJson(machine: Machine, u: MinidumpUnloadedModule): Record<string, unknown> {
  return {
    base_addr: formatAddress(machine, u.base),
    end_addr: formatAddress(machine, u.base + BigInt(u.size)),
    filename: u.name,
    // rust-minidump gives every unloaded module the PE form, TimeDateStamp and SizeOfImage.
    code_id: `${(u.timeDateStamp >>> 0).toString(16).padStart(8, "0")}${u.size.toString(16)}`,
    cert_subject: null,
  };
}

/**
 * MozMacosCrashInfoStream's records in rust-minidump's form: each field null where the record's
 * version lacks it, a number is 0 or a string is empty, numbers in hex at the machine's width.
 */
function macCrashInfoJson(machine: Machine, records: readonly MinidumpMacCrashInfoRecord[]): Record<string, unknown> {
  // Zero-padded to the pointer width, as every hex string, but not cut to it: these are u64 fields.
  const width = machineInfo(machine).pointerSize * 2;
  const number = (v: bigint | undefined): string | null => (v === undefined || v === 0n ? null : hexPadded(v, width));
  const text = (v: string | undefined): string | null => (v === undefined || v === "" ? null : v);
  return {
    num_records: records.length,
    records: records.map((r) => ({
      thread: number(r.thread),
      dialog_mode: number(r.dialogMode),
      abort_cause: number(r.abortCause),
      module: text(r.modulePath),
      message: text(r.message),
      signature_string: text(r.signatureString),
      backtrace: text(r.backtrace),
      message2: text(r.message2),
    })),
  };
}

/** A limit's value as rust-minidump writes it: `"Unlimited"`, `{ "Limited": n }`, or `"Error"` for a value that is neither. */
function limitJson(value: string): unknown {
  if (value === "unlimited") return "Unlimited";
  return /^\d+$/.test(value) ? { Limited: Number(value) } : "Error";
}

/** MozLinuxLimits's limits in rust-minidump's form: name, soft and hard values, and unit (`n/a` for a limit without one). */
function procLimitsJson(limits: readonly MinidumpProcLimit[]): Record<string, unknown> {
  return { limits: limits.map((l) => ({ name: l.name, soft: limitJson(l.soft), hard: limitJson(l.hard), unit: l.unit ?? "n/a" })) };
}

function contextOf(context: JsonContext | readonly string[] | undefined): JsonContext {
  if (context === undefined) return {};
  return Array.isArray(context) ? { notes: context as readonly string[] } : (context as JsonContext);
}

/**
 * The whole walk document as one value (what {@link writeJson} writes, parsed). `context` adds
 * what a dump says (crash, system, module versions) and where symbols came from; a string array
 * (a minidump's notes) is taken as `{ notes }`.
 */
export function walkJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], context: JsonContext | readonly string[] = {}): Record<string, unknown> {
  return JSON.parse(renderJson(machine, modules, walks, context)) as Record<string, unknown>;
}

/** The walk document as text (two-space indented, newline-terminated). */
export function renderJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], context: JsonContext | readonly string[] = {}): string {
  return collect((write) => writeJson(machine, modules, walks, write, context));
}

/** A value written as it is made, at an indent (pretty) or on one line. */
type Streamed = (out: ChunkedOutput, indent: string) => void;

/** Writes JSON the way JSON.stringify lays it out (two-space indent, or one line), with some values made as they are written. */
class JsonWriter {
  constructor(
    readonly out: ChunkedOutput,
    readonly pretty: boolean,
  ) {}

  /** A plain value at `indent`. */
  value(v: unknown, indent: string): void {
    this.text(this.stringify(v), indent);
  }

  /** A plain value's text at no indent, for {@link text}. */
  stringify(v: unknown): string {
    return this.pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v);
  }

  /** A value's text from {@link stringify}, written at `indent`. */
  text(raw: string, indent: string): void {
    this.out.push(this.pretty ? raw.replaceAll("\n", "\n" + indent) : raw);
  }

  /** An object whose entries are plain values or streamed ones; entries whose value is undefined are left out. */
  object(entries: readonly (readonly [string, unknown])[], indent: string): void {
    const inner = indent + "  ";
    let n = 0;
    this.out.push("{");
    for (let i = 0; i < entries.length; i++) {
      // Read by index: destructuring runs the iteration protocol, an object or two per entry in code not yet optimised.
      const entry = entries[i]!;
      const key = entry[0];
      const v = entry[1];
      if (v === undefined) continue;
      this.out.push((n++ > 0 ? "," : "") + (this.pretty ? `\n${inner}${JSON.stringify(key)}: ` : `${JSON.stringify(key)}:`));
      if (typeof v === "function") (v as Streamed)(this.out, inner);
      else this.value(v, inner);
    }
    this.out.push(n > 0 && this.pretty ? `\n${indent}}` : "}");
  }

  /** An array whose items are written by `each` as they come. */
  array<T>(items: Iterable<T>, indent: string, each: (item: T, indent: string) => void): void {
    const inner = indent + "  ";
    let n = 0;
    this.out.push("[");
    for (const item of items) {
      this.out.push((n++ > 0 ? "," : "") + (this.pretty ? `\n${inner}` : ""));
      each(item, inner);
    }
    this.out.push(n > 0 && this.pretty ? `\n${indent}]` : "]");
  }
}

/**
 * The walks in the snapshot's order (`order`), yielded as soon as each one's turn comes: walks made
 * crashed-first are held only until their place, so at most the early ones are kept.
 */
function* inOrder(walks: Iterable<ThreadWalk>, order: readonly ThreadSnapshot[]): Generator<ThreadWalk> {
  const held: ThreadWalk[] = [];
  let next = 0;
  for (const w of walks) {
    held.push(w);
    for (let i = held.findIndex((h) => h.thread === order[next]); i >= 0; i = held.findIndex((h) => h.thread === order[next])) {
      yield held.splice(i, 1)[0]!;
      next++;
    }
  }
  yield* held;
}

/** The most frames of a crashed thread whose texts are kept for `crashing_thread` (about 4 MB of text). */
const KEPT_FRAME_TEXTS = 4096;

/**
 * {@link renderJson}'s text, handed to `write` piece by piece as it is made: each thread is
 * walked and written in turn, so a walk of 100,000 frames is never one object tree or one
 * string; only the crashed thread's walk is kept, for `crashing_thread` after the threads.
 * `indent: false` writes the same document on one line (a JSON Lines record).
 */
export function writeJson(
  machine: Machine,
  modules: readonly Module[],
  walks: readonly ThreadWalk[] | ThreadWalks,
  write: (text: string) => void,
  context: JsonContext | readonly string[] = {},
  options: { indent?: boolean } = {},
): void {
  const ctx = contextOf(context);
  const out = chunked(write);
  const w = new JsonWriter(out, options.indent !== false);
  const walked = threadsOf(walks);
  const listed = new Set(ctx.threadOrder);
  const chosen = new Set(walked);
  const order = ctx.threadOrder === undefined ? [...walked] : [...ctx.threadOrder.filter((t) => chosen.has(t)), ...walked.filter((t) => !listed.has(t))];
  const crashedIndex = order.findIndex((t) => t.crashed);
  const used = new Set<Module>();
  const unloaded = ctx.dump?.unloadedModules ?? [];
  let crashed: ThreadWalk | undefined;
  // `crashing_thread` repeats the crashed thread's frames: their texts, made for `threads`, are
  // kept for it when there are few enough; a deeper walk's frames are made again instead.
  let crashedTexts: string[] | undefined;
  const frames = (thread: ThreadWalk, note: boolean, keep: string[] | undefined): Streamed => (_, indent) =>
    w.array(thread.walk.frames, indent, (f, at) => {
      const loc = frameLocation(machine, modules, f);
      if (note && loc.module !== undefined) used.add(loc.module);
      const raw = w.stringify(frameJson(machine, modules, f, loc, unloaded));
      keep?.push(raw);
      w.text(raw, at);
    });
  const threads: Streamed = (_, indent) =>
    w.array(ctx.threadOrder === undefined ? walks : inOrder(walks, order), indent, (t, at) => {
      let keep: string[] | undefined;
      if (t.thread.crashed && crashed === undefined) {
        crashed = t;
        if (t.walk.frames.length <= KEPT_FRAME_TEXTS) keep = crashedTexts = [];
      }
      w.object([...Object.entries(threadFields(machine, t.thread, ctx)), ["frame_count", t.walk.frames.length], ["frames", frames(t, true, keep)], ["crashed", t.thread.crashed], ["stop", stopJson(machine, t.walk)]], at);
    });
  const crashingThread: Streamed = (_, indent) => {
    if (crashed === undefined) return w.value(null, indent);
    const kept = crashedTexts;
    const crashedFrames: Streamed = kept === undefined ? frames(crashed, false, undefined) : (_, at) => w.array(kept, at, (raw, itemAt) => w.text(raw, itemAt));
    w.object([["threads_index", crashedIndex], ...Object.entries(threadFields(machine, crashed.thread, ctx)), ["frame_count", crashed.walk.frames.length], ["frames", crashedFrames]], indent);
  };
  const dump = ctx.dump;
  w.object(
    [
      ...Object.entries(documentHead(machine, order[crashedIndex], crashedIndex, order.length, ctx)),
      ["threads", threads],
      ["crashing_thread", crashingThread],
      // A dump's first module is its main module (minidump.md §2.3); a vector does not say.
      ["main_module", dump !== undefined && modules.length > 0 ? 0 : null],
      ["modules_contains_cert_info", false],
      // The module lists (up to 65,536 entries each) are written an entry at a time, never held as one value.
      [
        "modules",
        ((_, indent) => {
          const json = moduleJsonOf(machine, ctx, used);
          w.array(modules, indent, (m, at) => w.value(json(m), at));
        }) as Streamed,
      ],
      ["unloaded_modules", ((_, indent) => w.array(unloaded, indent, (u, at) => w.value(unloadedModuleJson(machine, u), at))) as Streamed],
      [
        "handles",
        ((_, indent) => {
          const handles = ctx.dump?.handles;
          if (handles === undefined) return w.value(null, indent);
          w.array(handles, indent, (h, at) => w.value({ handle: Number(h.handle), type_name: h.typeName ?? null, object_name: h.objectName ?? null }, at));
        }) as Streamed,
      ],
      ["lsb_release", ctx.dump?.linux?.lsbRelease === undefined ? null : lsbRelease(ctx.dump.linux.lsbRelease)],
      ["mac_crash_info", dump?.macCrashInfo === undefined ? null : macCrashInfoJson(machine, dump.macCrashInfo)],
      ["mac_boot_args", ctx.dump?.macBootArgs ?? null],
      ["soft_errors", ctx.dump?.softErrors ?? null],
      ["proc_limits", dump?.procLimits === undefined ? null : procLimitsJson(dump.procLimits)],
    ],
    "",
  );
  out.push("\n");
  out.end();
}
