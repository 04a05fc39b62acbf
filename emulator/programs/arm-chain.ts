/**
 * ARM (ARMNT, Thumb-2) call-chain programs: functions written in Thumb-2 assembly, each with the
 * `.pdata` entry a Windows ARM compiler would give it (a packed word, or none for a leaf that saves
 * nothing and allocates nothing), assembled with Keystone in Thumb mode at
 * the image's code address and wrapped in a PE32 image for machine 0x1C4 (the same sections as
 * an ARM64 program: `.text`, `.xdata`, `.pdata` and a debug directory naming `<name>.pdb`).
 *
 * Unwind data is written from Microsoft's "ARM exception handling" encodings
 * (arm-unwind-encode.ts): Function Length and epilog starts come from where the assembled code
 * ended, never from the walker's decoder. `.pdata` function starts carry the Thumb bit.
 *
 * The entry point is the first function; it is entered with LR = 0 (the sentinel), and the run
 * ends when it returns there.
 */
import { FIRST_SECTION_RVA } from "../image-writer.js";
import { armPackedWord, type ArmPackedUnwind } from "./arm-unwind-encode.js";
import { assembleFunctions, writeUnwoundImage, type Arm64BuiltProgram, type UnwindRecord } from "./arm64-chain.js";
import type { ModuleSymbol } from "../../src/index.js";

/** How a function's `.pdata` entry describes it. */
export type ArmChainUnwind = { kind: "none" } | ({ kind: "packed" } & ArmPackedUnwind);

/** One function: its code and its unwind data. */
export interface ArmChainFunction {
  /** The label at its first instruction, and its symbol. */
  name: string;
  /** Thumb-2 assembly lines (GNU syntax); labels must be unique in the program. */
  lines: readonly string[];
  unwind: ArmChainUnwind;
}

/** A program: its functions in address order (the first is the entry point). */
export interface ArmProgramSpec {
  name: string;
  description: string;
  functions: readonly ArmChainFunction[];
}

/** A built program, ready for the emulator's runImage (no interrupt handlers). */
export type ArmBuiltProgram = Arm64BuiltProgram;

/** Where the program loads: the default ImageBase of 32-bit executables. */
export const ARM_IMAGE_BASE = 0x40_0000n;

/** Assembles the program and writes its image. */
export async function buildArmProgram(spec: ArmProgramSpec): Promise<ArmBuiltProgram> {
  const { program, source, at, endLabel } = await assembleFunctions(spec, "arm", ARM_IMAGE_BASE);
  const records: UnwindRecord[] = [];
  spec.functions.forEach((f, i) => {
    // A Thumb function's .pdata start has bit 0 set.
    const begin = Number(at(f.name) - ARM_IMAGE_BASE) | 1;
    const length = Number(at(endLabel(i)) - at(f.name));
    const u = f.unwind;
    if (u.kind === "none") return;
    records.push({ begin, packed: armPackedWord(length, u) });
  });
  const image = writeUnwoundImage({ machine: "arm", imageBase: ARM_IMAGE_BASE, name: spec.name, code: program.bytes, records });
  const starts = spec.functions.map((f) => ({ name: f.name, rva: at(f.name) - ARM_IMAGE_BASE }));
  const end = BigInt(FIRST_SECTION_RVA + program.bytes.length);
  const symbols: ModuleSymbol[] = starts.map((s, i) => ({ name: s.name, rva: s.rva, size: (starts[i + 1]?.rva ?? end) - s.rva }));
  return { name: spec.name, description: spec.description, image, symbols, labels: program.labels, source, interruptHandlers: [] };
}
