/**
 * `walk --format json`: the document of src/render/walk.schema.json. The fields of DESIGN.md's contract
 * (machine, threads, frames with the STACKFRAME64 fields, trust, rule, registers, stop) and,
 * beside them, the crash, the system and the module list under the names rust-minidump's
 * `minidump-stackwalk --json` gives the same facts (crash_info, system_info, modules with
 * base_addr, debug_id, …; per frame `offset`, `module_offset`, `function_offset`, `file`, `line`,
 * `missing_symbols`), so that tools reading its output read this one.
 */
import { miscProcessId, type Minidump } from "../formats/minidump.js";
import { formatAddress, type Machine } from "../model/machine.js";
import type { Module, OperatingSystem } from "../model/snapshot.js";
import { ruleText } from "../unwind/rule-text.js";
import type { Frame } from "../walk/frame.js";
import { threadsOf, type ThreadWalk, type ThreadWalks } from "../walk/walk.js";
import { assertionText } from "../analysis/breakpad-report.js";
import { crashReason } from "../analysis/breakpad-crash.js";
import { chunked, collect } from "./chunks.js";
import { locate, sourceOf } from "../analysis/location.js";
import { dumpSystemInfo } from "../analysis/system-info.js";

const offset = (v: bigint): string => "0x" + v.toString(16);

/** Where a module's symbols came from, as a symbol search reports it (src/node's SymbolNote has this shape). */
export interface ModuleSymbolSource {
  /** The module's file name. */
  module: string;
  /** The symbol file used (a path), when one was. */
  file?: string;
  /** The URL it was downloaded from, when it came from a symbol server. */
  url?: string;
  /** The file used had malformed records, which were left out. */
  corrupt?: boolean;
}

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

/** rust-minidump's `cpu_arch` of each machine. */
const CPU_ARCH: Readonly<Record<Machine, string>> = { x86: "x86", x64: "amd64", ia64: "ia64", arm64: "arm64" };

/** Whether a module has symbols (names or unwind records) from its input or a symbol file. */
function hasSymbols(m: Module): boolean {
  return m.unwind !== undefined || m.symbols.length > 0;
}

/** One frame as a JSON value. */
export function frameJson(machine: Machine, modules: readonly Module[], frame: Frame): Record<string, unknown> {
  const a = (v: bigint): string => formatAddress(machine, v);
  const loc = locate(modules, frame);
  const source = sourceOf(loc);
  const registers: Record<string, string> = {};
  for (const [k, v] of Object.entries(frame.registers)) registers[k] = a(v);
  const moduleOffset = loc.moduleOffset === undefined ? null : offset(loc.moduleOffset);
  const functionOffset = loc.functionOffset === undefined ? null : offset(loc.functionOffset);
  return {
    index: frame.index,
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
        : { kind: frame.funcTableEntry.kind, beginRva: offset(frame.funcTableEntry.beginRva), endRva: offset(frame.funcTableEntry.endRva) },
    trust: frame.trust,
    rule: ruleText(frame.rule),
    registers,
    module: loc.module?.name ?? null,
    moduleOffset,
    function: loc.function ?? null,
    functionOffset,
    file: source?.file ?? null,
    line: source?.line ?? null,
    inlines: loc.inlines === undefined ? null : loc.inlines.map((f) => ({ function: f.function, file: f.file ?? null, line: f.line ?? null })),
    frame: frame.index,
    offset: a(frame.addrPC),
    module_offset: moduleOffset,
    function_offset: functionOffset,
    missing_symbols: loc.module !== undefined && !hasSymbols(loc.module),
  };
}

/** The thread's `stop` object. */
function stopJson(machine: Machine, walk: ThreadWalk["walk"]): Record<string, unknown> {
  const stop: Record<string, unknown> = { reason: walk.stop.reason };
  if (walk.stop.address !== undefined) stop["address"] = formatAddress(machine, walk.stop.address);
  stop["detail"] = walk.stop.detail;
  return stop;
}

/** The module list in rust-minidump's form, with this project's `size`. */
function modulesJson(machine: Machine, modules: readonly Module[], symbols: readonly ModuleSymbolSource[]): Record<string, unknown>[] {
  const a = (v: bigint): string => formatAddress(machine, v);
  // The first source with a file for each module name, found once: a lookup per module, not a search.
  const sources = new Map<string, ModuleSymbolSource>();
  for (const s of symbols) if (s.file !== undefined && !sources.has(s.module)) sources.set(s.module, s);
  return modules.map((m) => {
    const found = sources.get(m.name);
    const loaded = hasSymbols(m);
    return {
      filename: m.name,
      base_addr: a(m.base),
      end_addr: a(m.base + m.size),
      size: offset(m.size),
      code_id: m.codeId ?? null,
      debug_file: m.debugFile ?? null,
      debug_id: m.debugId ?? null,
      version: m.version ?? null,
      loaded_symbols: loaded,
      missing_symbols: !loaded,
      corrupt_symbols: found?.corrupt === true,
      symbol_url: found?.url ?? found?.file ?? null,
    };
  });
}

/** Everything before the threads: the contract's `machine` and `notes`, then crash, system and modules. */
function documentHead(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[] | ThreadWalks, context: JsonContext): Record<string, unknown> {
  const threads = threadsOf(walks);
  const { dump } = context;
  const notes = context.notes ?? dump?.notes;
  const a = (v: bigint): string => formatAddress(machine, v);
  const crashed = threads.findIndex((t) => t.crashed);
  const crash = dump === undefined ? undefined : crashReason(dump);
  const sys = dump === undefined || dump.systemInfo === undefined ? undefined : dumpSystemInfo(dump);
  return {
    ...(context.file === undefined ? {} : { file: context.file }),
    machine,
    ...(notes === undefined ? {} : { notes: [...notes] }),
    status: "OK",
    pid: miscProcessId(dump?.miscInfo) ?? null,
    crash_info: {
      type: crash?.reason ?? null,
      address: crash === undefined ? null : a(crash.address),
      crashing_thread: crashed < 0 ? null : crashed,
      assertion: dump?.assertion === undefined ? null : assertionText(dump.assertion),
    },
    system_info: {
      os: sys?.os ?? OS_TEXT[context.os ?? "windows"],
      os_ver: sys?.osVersion ?? null,
      cpu_arch: sys?.cpu ?? CPU_ARCH[machine],
      cpu_info: sys === undefined || sys.cpuInfo === "" ? null : sys.cpuInfo,
      cpu_count: sys?.cpuCount ?? null,
    },
    // A dump's first module is its main module (minidump.md §2.3); a vector does not say.
    main_module: dump !== undefined && modules.length > 0 ? 0 : null,
    modules: modulesJson(machine, modules, context.symbols ?? []),
    thread_count: threads.length,
  };
}

/** One thread without its frames. */
function threadHead({ thread, walk }: ThreadWalk): { id: number; crashed: boolean; frame_count: number } {
  return { id: thread.id, crashed: thread.crashed, frame_count: walk.frames.length };
}

/**
 * The whole walk document. `context` adds what a dump says (crash, system, module versions) and
 * where symbols came from; a string array (a minidump's notes) is taken as `{ notes }`.
 */
export function walkJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], context: JsonContext | readonly string[] = {}): Record<string, unknown> {
  const ctx = contextOf(context);
  return {
    ...documentHead(machine, modules, walks, ctx),
    threads: walks.map((w) => ({ ...threadHead(w), frames: w.walk.frames.map((f) => frameJson(machine, modules, f)), stop: stopJson(machine, w.walk) })),
  };
}

function contextOf(context: JsonContext | readonly string[] | undefined): JsonContext {
  if (context === undefined) return {};
  return Array.isArray(context) ? { notes: context as readonly string[] } : (context as JsonContext);
}

/** The walk document as text (two-space indented, newline-terminated). */
export function renderJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], context: JsonContext | readonly string[] = {}): string {
  return collect((write) => writeJson(machine, modules, walks, write, context));
}

/** Stands in for a list's items in a document laid out before them. */
const ITEMS = "\u0000items";
/** The line JSON.stringify gives {@link ITEMS} as an item of a list: its indent, then the quoted text. */
const ITEMS_LINE = /^( *)"\\u0000items"$/gm;

/**
 * `text` (JSON.stringify'd with a two-space indent) cut where its last list (the threads, the
 * frames) has {@link ITEMS} as its item: the text before the item, the item's indent, the text
 * after it. Last, because a list of notes before it could hold the same text.
 */
function around(text: string): { before: string; indent: string; after: string } {
  const m = [...text.matchAll(ITEMS_LINE)].at(-1)!;
  return { before: text.slice(0, m.index), indent: m[1]!, after: text.slice(m.index + m[0].length) };
}

/** `value` laid out by JSON.stringify with a two-space indent, every line starting at `indent`. */
function indented(value: unknown, indent: string): string {
  return indent + JSON.stringify(value, null, 2).replaceAll("\n", "\n" + indent);
}

/**
 * {@link renderJson}'s text, handed to `write` piece by piece as it is made: each frame is laid
 * out as JSON.stringify lays it out in the whole document, so the text is the same, but a walk of
 * 100,000 frames is never one object tree or one string. `indent: false` writes the same
 * document on one line (a JSON Lines record).
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
  if (options.indent === false) {
    const head = JSON.stringify(documentHead(machine, modules, walks, ctx));
    out.push(head.slice(0, -1) + ',"threads":[');
    let i = 0;
    for (const w of walks) {
      const t = JSON.stringify({ ...threadHead(w), frames: [] });
      out.push((i++ > 0 ? "," : "") + t.slice(0, -2));
      w.walk.frames.forEach((f, k) => out.push((k > 0 ? "," : "") + JSON.stringify(frameJson(machine, modules, f))));
      out.push(`],"stop":${JSON.stringify(stopJson(machine, w.walk))}}`);
    }
    out.push("]}\n");
    out.end();
    return;
  }
  const pushThread = (w: ThreadWalk, indent: string): void => {
    const text = indented({ ...threadHead(w), frames: w.walk.frames.length === 0 ? [] : [ITEMS], stop: stopJson(machine, w.walk) }, indent);
    if (w.walk.frames.length === 0) return out.push(text);
    const frames = around(text);
    out.push(frames.before);
    w.walk.frames.forEach((f, i) => out.push((i > 0 ? ",\n" : "") + indented(frameJson(machine, modules, f), frames.indent)));
    out.push(frames.after);
  };
  const none = threadsOf(walks).length === 0;
  const doc = JSON.stringify({ ...documentHead(machine, modules, walks, ctx), threads: none ? [] : [ITEMS] }, null, 2);
  if (none) out.push(doc);
  else {
    const threads = around(doc);
    out.push(threads.before);
    let i = 0;
    for (const w of walks) {
      if (i++ > 0) out.push(",\n");
      pushThread(w, threads.indent);
    }
    out.push(threads.after);
  }
  out.push("\n");
  out.end();
}
