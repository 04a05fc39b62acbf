/**
 * A Breakpad `.sym` writer (minidump.md §7, x86-fpo.md §5.1): what `dump_syms` would write for a
 * module of a snapshot, from the symbols and x86 unwind records the project has for it.
 *
 *     MODULE windows x86|x86_64 <debug id> <debug file>
 *     INFO CODE_ID <TimeDateStamp %08X><SizeOfImage %x> <code file>
 *     FILE <number> <name>                               the files of the lines and inline data
 *     INLINE_ORIGIN <id> <name>                          the inlined functions
 *     FUNC [m] <rva> <size> <param size> <name>          symbols with a size
 *     INLINE <depth> <call line> <call file> <origin> <rva> <size>...
 *                                                        a FUNC's inlined calls ({@link inlineRecords})
 *     <rva> <size> <line> <file>                         a FUNC's source lines (with inline sites: the innermost line)
 *     PUBLIC [m] <rva> <param size> <name>               symbols without one
 *     STACK WIN <cbFrame> <rva> <size> <prolog> 0 <params> <saved regs> <locals> 0 0 <fUseBP>
 *                                                        one per FPO_DATA record
 *     STACK WIN 4 <rva> <size> <prolog> 0 <params> <saved regs> <locals> <max stack> 1 <program>
 *                                                        one per FrameData record
 *     STACK CFI INIT <rva> <size> <rules>                one per STACK CFI range
 *     STACK CFI <rva> <rules>                            its delta rows
 *
 * Numbers are lower-case hex without `0x`, sizes in bytes. A FUNC's or PUBLIC's parameter size
 * is the one given for it ({@link SymFileInput.paramSizes}), else that of the unwind record that
 * starts at the symbol (the outermost FrameData record, then FPO_DATA), else 0. (dump_syms takes
 * it from the PDB's parameter symbols and stdcall decorations instead, which mostly agree.) Symbols that
 * share an address become one record with the `m` flag, named by the first of them.
 *
 * STACK WIN types are Breakpad's StackFrameTypeEnum, which FPO_DATA's cbFrame follows: FRAME_FPO
 * is type 0, FRAME_TRAP 1, FRAME_TSS 2 and FRAME_NONFPO 3. Breakpad looks up types 0 and 4 only,
 * so a FRAME_NONFPO function is walked by its EBP chain, as it should be; stackWinToFpoData (breakpad-sym.ts)
 * reads all four FPO types back. What the format cannot carry is lost on the way: FPO_DATA's
 * fHasSEH and reserved bits, and FrameData's flags and FrameFunc offset. Zero-length records are
 * left out (Breakpad refuses to store them). Line breaks in names and programs become spaces.
 *
 * No Node APIs; the file goes through {@link breakpadSymLines} or {@link formatBreakpadSym}.
 */
import { hex } from "../hex.js";
import { InputError } from "../errors.js";
import type { MemoryReader } from "../memory/reader.js";
import { FRAME_FPO, FRAME_NONFPO, type FpoData } from "../model/fpo-data.js";
import { MACHINES, machineInfo, type Machine } from "../model/machine.js";
import { inlineChain } from "../model/inline.js";
import { lineAt, type Module, type ModuleSymbol } from "../model/snapshot.js";
import { STACK_WIN_TYPE, symbolStorePath, type BreakpadStackCfi } from "./breakpad-sym.js";
import type { FrameData } from "./frame-data.js";
import { moduleCodeId, moduleCodeView } from "./minidump-write.js";
import { readMappedImage } from "./pe-mapped.js";
import { fileNameOf } from "../path-name.js";

/** What a `.sym` file says about one module. */
export interface SymFileInput {
  /** MODULE os; default `windows`. */
  os?: string;
  /** MODULE arch: `x86`, `x86_64`, … */
  arch: string;
  /** Symbol-store identifier (hex): GUID and age, minidump.md §8. */
  debugId: string;
  /** The PDB; only its file name is written. */
  debugFile: string;
  /** `INFO CODE_ID`: TimeDateStamp and SizeOfImage as Breakpad prints them. */
  codeId?: string;
  /** The executable's file name, written after the code id. */
  codeFile?: string;
  /** Functions (with a size) and public symbols (without); module-relative. */
  symbols?: readonly ModuleSymbol[];
  /**
   * Parameter sizes of FUNC and PUBLIC records by symbol RVA, where they are known some other way
   * (a parsed .sym, decorated names); they win over those worked out from the unwind records.
   */
  paramSizes?: ReadonlyMap<number, number>;
  /** FPO_DATA records: STACK WIN 0 (and 1–3 for other cbFrame values). */
  fpo?: readonly FpoData[];
  /** FrameData records: STACK WIN 4. */
  frameData?: readonly FrameData[];
  /** STACK CFI ranges with their delta rows (for x64, from the image's unwind tables). */
  stackCfi?: readonly BreakpadStackCfi[];
}

/** MODULE arch names per machine, as dump_syms writes them (the machine table's `names.breakpadSym`). */
export const BREAKPAD_ARCH: Readonly<Record<Machine, string>> = Object.fromEntries(MACHINES.map((m) => [m, machineInfo(m).names.breakpadSym])) as Record<Machine, string>;

const U32_MAX = 0xffff_ffff;

/** A text that ends a record: on one line, without the leading spaces a reader would skip. */
function lastField(text: string): string {
  return text.replace(/[\r\n]/g, " ").replace(/^ +/, "");
}

function hexField(value: number | bigint, what: string, max: number = Number.MAX_SAFE_INTEGER): string {
  const n = typeof value === "bigint" ? value : BigInt(value);
  if (n < 0n || n > BigInt(max) || (typeof value === "number" && !Number.isInteger(value))) {
    throw new RangeError(`.sym writer: ${what} ${value} is not a whole number from 0 to ${hex(max)}`);
  }
  return n.toString(16);
}

/** Parameter sizes by start RVA: the outermost FrameData record starting there, else an FPO_DATA record starting there. */
function paramSizes(fpo: readonly FpoData[], frameData: readonly FrameData[]): Map<number, number> {
  const sizes = new Map<number, number>();
  const outer = new Map<number, number>();
  for (const r of fpo) if (!sizes.has(r.ulOffStart)) sizes.set(r.ulOffStart, r.cdwParams * 4);
  for (const r of frameData) {
    const held = outer.get(r.rvaStart);
    if (held === undefined || r.codeSize > held) {
      outer.set(r.rvaStart, r.codeSize);
      sizes.set(r.rvaStart, r.paramsSize);
    }
  }
  return sizes;
}

/** Symbols grouped by address (sorted), each group in its original order. */
function byAddress(symbols: readonly ModuleSymbol[]): ModuleSymbol[][] {
  const sorted = symbols.map((s, i) => ({ s, i })).sort((a, b) => (a.s.rva < b.s.rva ? -1 : a.s.rva > b.s.rva ? 1 : a.i - b.i));
  const groups: ModuleSymbol[][] = [];
  for (const { s } of sorted) {
    const last = groups[groups.length - 1];
    if (last !== undefined && last[0]!.rva === s.rva) last.push(s);
    else groups.push([s]);
  }
  return groups;
}

/** The lines of a `.sym` file, without line ends, in the order dump_syms writes them. */
export function* breakpadSymLines(input: SymFileInput): Generator<string> {
  if (!/^[0-9A-Fa-f]+$/.test(input.debugId)) throw new InputError("bad-value", `.sym writer: debug id "${input.debugId}" is not hex`);
  const debugFile = lastField(fileNameOf(input.debugFile));
  if (debugFile === "") throw new InputError("bad-value", `.sym writer: debug file "${input.debugFile}" has no file name`);
  const os = input.os ?? "windows";
  if (!/^\S+$/.test(os) || !/^\S+$/.test(input.arch)) throw new InputError("bad-value", `.sym writer: os "${os}" and arch "${input.arch}" must be single words`);
  yield `MODULE ${os} ${input.arch} ${input.debugId} ${debugFile}`;
  if (input.codeId !== undefined && /^\S+$/.test(input.codeId)) {
    const file = input.codeFile === undefined ? "" : lastField(fileNameOf(input.codeFile));
    yield `INFO CODE_ID ${input.codeId}${file === "" ? "" : ` ${file}`}`;
  }

  const fpo = input.fpo ?? [];
  const frameData = input.frameData ?? [];
  const params = paramSizes(fpo, frameData);
  for (const [rva, size] of input.paramSizes ?? []) params.set(rva, size);
  const groups = byAddress(input.symbols ?? []);
  const name = (s: ModuleSymbol): string => lastField(s.name) || "<name omitted>";
  const paramOf = (rva: bigint): string => hexField(rva <= BigInt(U32_MAX) ? (params.get(Number(rva)) ?? 0) : 0, "parameter size", U32_MAX);
  // FUNCs' INLINE and line records, with the FILE and INLINE_ORIGIN numbers they use, first.
  const numbers = { files: new Map<string, number>(), origins: new Map<string, number>() };
  const inlines = new Map<ModuleSymbol, string[]>();
  for (const group of groups) {
    const first = group.find((s) => s.size !== undefined);
    if (first?.inlines !== undefined) inlines.set(first, inlineRecords(first, numbers));
    else if (first?.lines !== undefined && first.lines.length > 0) inlines.set(first, lineRecords(first, numbers.files));
  }
  for (const [file, n] of numbers.files) yield `FILE ${n} ${lastField(file)}`;
  for (const [origin, n] of numbers.origins) yield `INLINE_ORIGIN ${n} ${lastField(origin) || "<name omitted>"}`;
  for (const group of groups) {
    const sized = group.filter((s) => s.size !== undefined);
    if (sized.length === 0) continue;
    const first = sized[0]!;
    yield `FUNC ${sized.length > 1 ? "m " : ""}${hexField(first.rva, "FUNC address")} ${hexField(first.size!, "FUNC size")} ${paramOf(first.rva)} ${name(first)}`;
    yield* inlines.get(first) ?? [];
  }
  for (const group of groups) {
    const bare = group.filter((s) => s.size === undefined);
    if (bare.length === 0) continue;
    const first = bare[0]!;
    yield `PUBLIC ${bare.length > 1 ? "m " : ""}${hexField(first.rva, "PUBLIC address")} ${paramOf(first.rva)} ${name(first)}`;
  }

  const h = (v: number, what: string): string => hexField(v, what, U32_MAX);
  const fpoSorted = [...fpo].sort((a, b) => a.ulOffStart - b.ulOffStart || b.cbProcSize - a.cbProcSize);
  for (const r of fpoSorted) {
    if (r.cbProcSize === 0) continue;
    if (r.cbFrame < FRAME_FPO || r.cbFrame > FRAME_NONFPO) throw new RangeError(`.sym writer: FPO_DATA at rva ${hex(r.ulOffStart)} has cbFrame ${r.cbFrame}, not 0..3`);
    yield `STACK WIN ${r.cbFrame} ${h(r.ulOffStart, "FPO_DATA start")} ${h(r.cbProcSize, "FPO_DATA size")} ${h(r.cbProlog, "prolog size")} 0 ` +
      `${h(r.cdwParams * 4, "parameter size")} ${h(r.cbRegs * 4, "saved register size")} ${h(r.cdwLocals * 4, "locals size")} 0 0 ${r.fUseBP ? 1 : 0}`;
  }
  const fdSorted = [...frameData].sort((a, b) => a.rvaStart - b.rvaStart || b.codeSize - a.codeSize);
  for (const r of fdSorted) {
    if (r.codeSize === 0) continue;
    const program = r.program === undefined ? "" : lastField(r.program);
    yield `STACK WIN ${STACK_WIN_TYPE.FRAME_DATA} ${h(r.rvaStart, "FrameData start")} ${h(r.codeSize, "FrameData size")} ${h(r.prologSize, "prolog size")} 0 ` +
      `${h(r.paramsSize, "parameter size")} ${h(r.savedRegsSize, "saved register size")} ${h(r.localSize, "locals size")} ${h(r.maxStackSize, "max stack size")} ` +
      (program === "" ? "0 0" : `1 ${program}`);
  }
  for (const r of input.stackCfi ?? []) {
    if (r.size === 0) continue;
    yield `STACK CFI INIT ${h(r.address, "STACK CFI start")} ${h(r.size, "STACK CFI size")} ${lastField(r.init)}`;
    for (const d of r.deltas) yield `STACK CFI ${h(d.address, "STACK CFI address")} ${lastField(d.rules)}`;
  }
}

/** The number of `file` in `numbers`, given the next one when it has none yet. */
function numberOf(numbers: Map<string, number>, file: string): number {
  let n = numbers.get(file);
  if (n === undefined) numbers.set(file, (n = numbers.size));
  return n;
}

/** A FUNC's line records as its symbol has them: `<rva> <size> <line> <file>`, each inside the FUNC. */
function lineRecords(func: ModuleSymbol, files: Map<string, number>): string[] {
  const end = func.rva + (func.size ?? 0n);
  return func.lines!.filter((l) => l.size > 0n && l.rva >= func.rva && l.rva + l.size <= end).map((l) => `${l.rva.toString(16)} ${l.size.toString(16)} ${l.line} ${l.file === undefined ? 0 : numberOf(files, l.file)}`);
}

/** The largest FUNC whose inline sites are written byte by byte. */
const MAX_INLINE_FUNC = 1 << 20;

/**
 * A FUNC's inline sites as INLINE records and line records, worked out byte by byte from its
 * inline chain at each address (../model/inline.ts): a run of bytes with the same call at a
 * depth (function, call file and line, and every call outside it) is one INLINE record of that
 * depth, written after the record it lies in; a run with the same innermost position is one
 * line record (the FUNC's own line where no site covers the byte). Read back, the records give
 * the chain the sites give at every byte, whatever their source (a PDB's annotations). A FUNC
 * larger than 1 MiB is written without them.
 */
function inlineRecords(func: ModuleSymbol, numbers: { files: Map<string, number>; origins: Map<string, number> }): string[] {
  const sites = func.inlines!;
  const size = func.size ?? 0n;
  if (size === 0n || size > BigInt(MAX_INLINE_FUNC)) return [];
  const number = numberOf;
  interface Run {
    depth: number;
    key: string;
    start: number;
    end: number;
    text: string;
  }
  const open: Run[] = [];
  const done: Run[] = [];
  const lines: string[] = [];
  let lineKey = "";
  let lineStart = 0;
  const closeLine = (at: number): void => {
    if (lineKey !== "") lines.push(`${(Number(func.rva) + lineStart).toString(16)} ${(at - lineStart).toString(16)} ${lineKey}`);
  };
  const n = Number(size);
  for (let i = 0; i <= n; i++) {
    const rva = func.rva + BigInt(i);
    const chain = i < n ? inlineChain(sites.at(rva), rva, undefined) : undefined;
    // Outermost first: each depth's key holds the calls outside it, so a run never crosses its parent's.
    const frames = chain === undefined ? [] : [...chain.frames].reverse();
    let prefix = "";
    const keys = frames.map((f) => {
      const site = f.site;
      const callFile = site.callFile === undefined ? -1 : number(numbers.files, site.callFile);
      const origin = number(numbers.origins, site.function);
      const text = `${site.callLine} ${callFile} ${origin}`;
      prefix += `|${text}`;
      return { key: prefix, text };
    });
    let d = 0;
    while (d < open.length && d < keys.length && open[d]!.key === keys[d]!.key) d++;
    for (const run of open.splice(d)) {
      run.end = i;
      done.push(run);
    }
    for (let k = d; k < keys.length; k++) open.push({ depth: k, key: keys[k]!.key, start: i, end: i, text: keys[k]!.text });
    const inner = i < n ? (chain?.frames[0] ?? lineAt(func.lines, rva)) : undefined;
    const key = inner?.line === undefined ? "" : `${inner.line} ${inner.file === undefined ? 0 : number(numbers.files, inner.file)}`;
    if (key !== lineKey || i === n) {
      closeLine(i);
      lineKey = key;
      lineStart = i;
    }
  }
  // Each record after the one it lies in: by start, the outer one first.
  done.sort((a, b) => a.start - b.start || a.depth - b.depth);
  const base = Number(func.rva);
  const records = done.map((r) => `INLINE ${r.depth} ${r.text} ${(base + r.start).toString(16)} ${(r.end - r.start).toString(16)}`);
  return [...records, ...lines];
}

/** A whole `.sym` file: {@link breakpadSymLines}, each ended by LF. */
export function formatBreakpadSym(input: SymFileInput): string {
  let out = "";
  for (const line of breakpadSymLines(input)) out += line + "\n";
  return out;
}

/** Where the file goes in a symbol store, relative to its root: `<pdb>/<debug id>/<name>.sym` (minidump.md §8). */
export function symFileStorePath(input: SymFileInput): string {
  return symbolStorePath(fileNameOf(input.debugFile), input.debugId);
}

/**
 * What the `.sym` file of a module of a snapshot says: its identity as the dump writer records it
 * ({@link moduleCodeView}: the module's debug file and id, else its mapped image's RSDS record),
 * its symbols, its FrameData, and its FPO_DATA: the module's own records, else (x86) those in its
 * mapped image's debug directory. Undefined when the module has no identity to file it under.
 */
export function symFileInput(module: Module, machine: Machine, memory: MemoryReader): SymFileInput | undefined {
  const cv = moduleCodeView(module, memory);
  if (cv === undefined) return undefined;
  const input: SymFileInput = {
    arch: BREAKPAD_ARCH[machine],
    debugId: cv.debugId,
    debugFile: fileNameOf(cv.pdbName),
    codeId: moduleCodeId(module, memory),
    codeFile: module.name,
    symbols: module.symbols,
  };
  if (machineInfo(machine).stackWin) {
    const own = module.unwind?.fpo ?? [];
    input.fpo = own.length > 0 ? own : (readMappedImage(memory, module.base)?.fpo ?? []);
    input.frameData = module.unwind?.frameData ?? [];
  }
  return input;
}

