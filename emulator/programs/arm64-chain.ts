/**
 * ARM64 call-chain programs: functions written in AArch64 assembly, each with the `.pdata` entry
 * a Windows ARM64 compiler would give it (packed, an `.xdata` record, or none for a leaf that
 * saves nothing), assembled with Keystone at the image's code address and wrapped in a PE32+
 * image for machine 0xAA64: `.text`, `.xdata`, `.pdata` (the exception directory) and `.rdata` (a
 * debug directory with a CodeView record naming `<name>.pdb`, its GUID hashed from the code and
 * unwind data, so the emulator's symbol store can file a `.sym` for it).
 *
 * A function's unwind data is written from the spec, instruction by instruction (arm64.md
 * §1.2–§1.6): FunctionLength and the epilog offsets are taken from where the assembled code
 * ended, never from the walker's decoder. A function may be split into fragments, each with its
 * own `.pdata` entry (Flag 2 packed, or an `.xdata` record starting with `end_c` whose parent
 * prolog codes follow, §1.11); fragments have no symbol of their own.
 *
 * The entry point is the first function; it is entered with LR = 0 (the sentinel), and the run
 * ends when it returns there.
 */
import { loadAssembler, type AssembledProgram } from "../assemble.js";
import { createHash } from "node:crypto";
import { SECTION_CHARACTERISTICS, DIRECTORY_INDEX, FIRST_SECTION_RVA, SECTION_ALIGNMENT, debugSection, writePeImage, type SectionSpec } from "../image-writer.js";
import { packedWord, xdataBytes, type PackedUnwind } from "./arm64-unwind-encode.js";
import type { ModuleSymbol } from "../../src/index.js";

/** How a function's (or fragment's) `.pdata` entry describes it. */
export type Arm64UnwindSpec =
  | { kind: "none" }
  | ({ kind: "packed" } & PackedUnwind)
  | {
      kind: "xdata";
      /** The prolog's codes in stored order (the last prolog instruction's first), each one instruction's bytes; `end` is added. */
      prolog: readonly (readonly number[])[];
      /**
       * The epilogs: each starts at a label; its codes are the prolog's from `index` on (shared)
       * or its own (`codes`, appended after the prolog's, `end` added). `single` writes one
       * epilog at the function's end in the header (E = 1).
       */
      epilogs?: readonly ({ at: string; index: number } | { at: string; codes: readonly (readonly number[])[] })[];
      single?: boolean;
      /** Codes after an `end_c` (a fragment's parent prolog, stored order). */
      parent?: readonly (readonly number[])[];
    };

/** One function or fragment: its code and its unwind data. */
export interface Arm64FunctionSpec {
  /** The label at its first instruction; a symbol unless `fragment`. */
  name: string;
  /** Assembly lines (GNU syntax, `//` comments); labels must be unique in the program. */
  lines: readonly string[];
  unwind: Arm64UnwindSpec;
  /** A fragment of the function before it: no symbol, its own `.pdata` entry. */
  fragment?: boolean;
}

/** A program: its functions in address order (the first is the entry point). */
export interface Arm64ProgramSpec {
  name: string;
  description: string;
  functions: readonly Arm64FunctionSpec[];
  /**
   * Labels where snapshots are taken (break names); absent, the program is swept (a snapshot
   * before every instruction).
   */
  captures?: readonly string[];
  /** Functions entered through a machine frame {interrupted SP, interrupted PC} at SP. */
  interruptHandlers?: readonly string[];
}

/** A built program, ready for the emulator's runImage. */
export interface Arm64BuiltProgram {
  name: string;
  description: string;
  image: Uint8Array;
  symbols: ModuleSymbol[];
  labels: ReadonlyMap<string, bigint>;
  /** The assembly source, one function after another. */
  source: string;
  /** Where the interrupt handlers begin. */
  interruptHandlers: bigint[];
}

/** Where the program loads: the default ImageBase of 64-bit executables. */
export const ARM64_IMAGE_BASE = 0x1_4000_0000n;
/** The `.xdata` and `.pdata` sections follow `.text`, each given a page here. */
const MAX_TEXT = SECTION_ALIGNMENT * 4;

/** An assembled program's code: its bytes, its labels, and where each function begins and ends. */
export interface AssembledFunctions {
  program: AssembledProgram;
  source: string;
  /** The address of a label; a RangeError names a missing one. */
  at: (label: string) => bigint;
  /** The label just past function `i`. */
  endLabel: (i: number) => string;
}

/** Assembles the functions one after another at the image's first section (AArch64 or Thumb-2), each followed by an end label. */
export async function assembleFunctions(
  spec: { name: string; functions: readonly { name: string; lines: readonly string[] }[] },
  mode: "arm64" | "arm",
  imageBase: bigint,
): Promise<AssembledFunctions> {
  const asm = await loadAssembler();
  const endLabel = (i: number): string => `${spec.functions[i]!.name}__end`;
  const source = spec.functions.flatMap((f, i) => [`${f.name}:`, ...f.lines.map((l) => `    ${l}`), `${endLabel(i)}:`]).join("\n");
  const program = asm.assembleProgram(source, { mode, address: imageBase + BigInt(FIRST_SECTION_RVA) });
  if (program.bytes.length > MAX_TEXT) throw new RangeError(`${spec.name}: ${program.bytes.length} bytes of code, more than ${MAX_TEXT}`);
  const at = (label: string): bigint => {
    const address = program.labels.get(label);
    if (address === undefined) throw new RangeError(`${spec.name}: no label ${label}`);
    return address;
  };
  return { program, source, at, endLabel };
}

/** Assembles the program and writes its image. */
export async function buildArm64Program(spec: Arm64ProgramSpec): Promise<Arm64BuiltProgram> {
  const { program, source, at, endLabel } = await assembleFunctions(spec, "arm64", ARM64_IMAGE_BASE);

  const records: UnwindRecord[] = [];
  spec.functions.forEach((f, i) => {
    const begin = Number(at(f.name) - ARM64_IMAGE_BASE);
    const length = Number(at(endLabel(i)) - at(f.name)) / 4;
    const u = f.unwind;
    if (u.kind === "none") return;
    if (u.kind === "packed") {
      records.push({ begin, packed: packedWord(length, u) });
      return;
    }
    const codes: number[] = u.prolog.flat();
    if (u.parent !== undefined) codes.push(0xe5, ...u.parent.flat());
    codes.push(0xe4);
    const scopes: { start: number; index: number }[] = [];
    for (const e of u.epilogs ?? []) {
      const start = Number(at(e.at) - at(f.name)) / 4;
      if ("index" in e) scopes.push({ start, index: e.index });
      else {
        scopes.push({ start, index: codes.length });
        codes.push(...e.codes.flat(), 0xe4);
      }
    }
    if (u.single === true) {
      if (scopes.length !== 1) throw new RangeError(`${f.name}: a single packed epilog needs exactly one epilog`);
      records.push({ begin, xdata: xdataBytes({ length, codes, epilogIndex: scopes[0]!.index }) });
    } else records.push({ begin, xdata: xdataBytes({ length, codes, scopes }) });
  });

  const image = writeUnwoundImage({ machine: "arm64", imageBase: ARM64_IMAGE_BASE, name: spec.name, code: program.bytes, records });

  const starts = spec.functions.filter((f) => f.fragment !== true).map((f) => ({ name: f.name, rva: at(f.name) - ARM64_IMAGE_BASE }));
  const end = BigInt(FIRST_SECTION_RVA + program.bytes.length);
  const symbols: ModuleSymbol[] = starts.map((s, i) => ({ name: s.name, rva: s.rva, size: (starts[i + 1]?.rva ?? end) - s.rva }));
  const interruptHandlers = (spec.interruptHandlers ?? []).map(at);
  return { name: spec.name, description: spec.description, image, symbols, labels: program.labels, source, interruptHandlers };
}

/** One `.pdata` entry: a function's start (RVA) and its packed word or `.xdata` record. */
export interface UnwindRecord {
  begin: number;
  xdata?: Uint8Array;
  packed?: number;
}

/**
 * Writes the image of a link-register machine's program (ARM64, ARM): `.text` at the first
 * section, the `.xdata` records, `.pdata` (the exception directory, sorted by start) and a debug
 * directory whose CodeView record names `<name>.pdb`, its GUID hashed from the code and unwind data.
 */
export function writeUnwoundImage(spec: { machine: "arm64" | "arm"; imageBase: bigint; name: string; code: Uint8Array; records: readonly UnwindRecord[] }): Uint8Array {
  const { records } = spec;
  const text: SectionSpec = { name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: spec.code } };
  const xdataOffsets: number[] = [];
  const xdataBlob = (() => {
    const parts: Uint8Array[] = [];
    let size = 0;
    for (const r of records) {
      xdataOffsets.push(size);
      if (r.xdata === undefined) continue;
      parts.push(r.xdata);
      size += r.xdata.length;
    }
    const out = new Uint8Array(Math.max(size, 4));
    let offset = 0;
    for (const p of parts) {
      out.set(p, offset);
      offset += p.length;
    }
    return out;
  })();
  const xdata: SectionSpec = { name: ".xdata", characteristics: SECTION_CHARACTERISTICS.rdata, content: { bytes: xdataBlob } };
  const pdata: SectionSpec = {
    name: ".pdata",
    characteristics: SECTION_CHARACTERISTICS.rdata,
    content: (placed, earlier) => {
      const xdataRva = earlier.get(".xdata")!.rva;
      const sorted = records.map((r, i) => ({ r, i })).sort((a, b) => a.r.begin - b.r.begin);
      const bytes = new Uint8Array(Math.max(8 * sorted.length, 8));
      const view = new DataView(bytes.buffer);
      sorted.forEach(({ r, i }, k) => {
        view.setUint32(8 * k, r.begin, true);
        view.setUint32(8 * k + 4, r.packed ?? xdataRva + xdataOffsets[i]!, true);
      });
      return { bytes, directories: [{ index: DIRECTORY_INDEX.EXCEPTION, rva: placed.rva, size: 8 * sorted.length }] };
    },
  };
  const hash = createHash("sha256").update(spec.code).update(xdataBlob).update(JSON.stringify(records.map((r) => [r.begin, r.packed ?? -1]))).digest();
  const debug = debugSection({ codeView: { guid: Uint8Array.from(hash.subarray(0, 16)), age: 1, pdbName: `${spec.name}.pdb` } });
  return writePeImage({ machine: spec.machine, imageBase: spec.imageBase, entryRva: FIRST_SECTION_RVA, sections: [text, xdata, pdata, debug] }).bytes;
}
