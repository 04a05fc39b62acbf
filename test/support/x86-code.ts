/**
 * Assembled x86 code for walker tests: a module at 0x00400000 whose code (assembled with
 * Keystone at 0x00401000) is in the snapshot, so return addresses really follow call
 * instructions, plus builders for the FPO_DATA and FrameData records that describe it.
 */
import { loadAssembler, type Assembler } from "../../emulator/assemble.js";
import type { FrameData } from "../../src/formats/frame-data.js";
import type { MemoryRegion } from "../../src/memory/region-memory.js";
import type { FpoData } from "../../src/model/fpo-data.js";
import type { Module } from "../../src/model/snapshot.js";

/** The module's base. */
export const MODULE_BASE = 0x0040_0000n;
/** Where the code is assembled. */
export const CODE_BASE = 0x0040_1000n;
/** The module's size. */
export const MODULE_SIZE = 0x4000n;

/** Assembled code and its labels. */
export interface X86Code {
  bytes: Uint8Array;
  base: bigint;
  /** The address of a label (throws for an unknown one). */
  at(label: string): bigint;
  /** The RVA of a label in the module at {@link MODULE_BASE}. */
  rva(label: string): number;
  /** The code as a snapshot memory region: a whole page, the bytes after the code filled with `int3` (0xCC) as a linker pads a section. */
  region: MemoryRegion;
}

let assembler: Assembler | undefined;

/** Loads Keystone once; call before {@link assembleX86} (e.g. with top-level await). */
export async function loadX86Assembler(): Promise<Assembler> {
  assembler ??= await loadAssembler();
  return assembler;
}

/** Assembles Intel-syntax 32-bit `lines` at `base` (Keystone must be loaded). */
export function assembleX86(lines: readonly string[], base: bigint = CODE_BASE): X86Code {
  if (assembler === undefined) throw new Error("call loadX86Assembler() first");
  const program = assembler.assembleProgram(lines.join("\n"), { mode: 32, address: base });
  const at = (label: string): bigint => {
    const address = program.labels.get(label);
    if (address === undefined) throw new Error(`no label ${label}`);
    return address;
  };
  return {
    bytes: program.bytes,
    base,
    at,
    rva: (label) => Number(at(label) - MODULE_BASE),
    region: { base, bytes: padded(program.bytes), origin: "test code" },
  };
}

/** The code followed by `int3` up to the end of its page. */
function padded(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(Math.max(bytes.length, 1) / 0x1000) * 0x1000).fill(0xcc);
  out.set(bytes);
  return out;
}

/** An FPO_DATA record for the code from label `start` up to label `end`; unset fields are 0/false. */
export function fpoRecord(code: X86Code, start: string, end: string, fields: Partial<Omit<FpoData, "ulOffStart" | "cbProcSize">> = {}): FpoData {
  return {
    ulOffStart: code.rva(start),
    cbProcSize: Number(code.at(end) - code.at(start)),
    cdwLocals: 0,
    cdwParams: 0,
    cbProlog: 0,
    cbRegs: 0,
    fHasSEH: false,
    fUseBP: false,
    reserved: 0,
    cbFrame: 0,
    ...fields,
  };
}

/** A FrameData record for the code from label `start` up to label `end`; unset sizes are 0. */
export function frameDataRecord(
  code: X86Code,
  start: string,
  end: string,
  fields: Partial<Omit<FrameData, "rvaStart" | "codeSize">> = {},
): FrameData {
  return {
    rvaStart: code.rva(start),
    codeSize: Number(code.at(end) - code.at(start)),
    localSize: 0,
    paramsSize: 0,
    maxStackSize: 0,
    frameFunc: 0,
    prologSize: 0,
    savedRegsSize: 0,
    flags: 0,
    hasSEH: false,
    hasEH: false,
    isFunctionStart: false,
    ...fields,
  };
}

/**
 * The module holding `code`, with a symbol per `[name, endLabel]` function (the name is also
 * the start label) and the given records attached as `origin: "test"`.
 */
export function x86Module(
  code: X86Code,
  functions: readonly (readonly [string, string])[],
  unwind: { fpo?: FpoData[]; frameData?: FrameData[] },
): Module {
  const fpo = [...(unwind.fpo ?? [])].sort((a, b) => a.ulOffStart - b.ulOffStart);
  const frameData = [...(unwind.frameData ?? [])].sort((a, b) => a.rvaStart - b.rvaStart || b.codeSize - a.codeSize);
  return {
    name: "app.exe",
    base: MODULE_BASE,
    size: MODULE_SIZE,
    symbols: functions
      .map(([name, end]) => ({ name, rva: BigInt(code.rva(name)), size: code.at(end) - code.at(name) }))
      .sort((a, b) => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0)),
    unwind: { fpo, frameData, origin: "test" },
  };
}

/** `0x`-prefixed lower-case hex, as walker rule texts print RVAs. */
export const hexOf = (v: number | bigint): string => "0x" + v.toString(16);
