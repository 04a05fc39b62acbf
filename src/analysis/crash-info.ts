/**
 * The crash analysis of a dump, gathered for rust-minidump's `crash_info` (crash-analysis.ts has
 * each part): the crashing instruction disassembled by the decoder the caller hands in (none is
 * bundled: without one the instruction and what depends on it are null, and a note says why),
 * its memory accesses and instruction-pointer update, the adjusted address, the possible bit
 * flips and the inconsistencies, each access marked when it falls in a likely guard page.
 */
import type { Minidump } from "../formats/minidump.js";
import type { Machine } from "../model/machine.js";
import type { Registers } from "../model/snapshot.js";
import type { MemoryReader } from "../memory/reader.js";
import { crashReason } from "./breakpad-crash.js";
import { crashKind } from "./crash-kind.js";
import {
  adjustedAddress,
  crashInconsistencies,
  instructionPointerUpdate,
  memoryAccesses,
  possibleBitFlips,
  withGuardPages,
  type AccessType,
  type AdjustedAddress,
  type CrashInconsistency,
  type PossibleBitFlip,
} from "./crash-analysis.js";
import { parseInstruction, type InstructionDecoder, type Instruction } from "./instruction.js";
import { dumpRegions, isLikelyGuardPage } from "./memory-regions.js";

/** The longest x86 instruction. */
const MAX_INSTRUCTION = 15;

/** What the analysis found, ready for the JSON. */
export interface CrashAnalysis {
  /** The crashing instruction's text; undefined when it was not disassembled. */
  instruction?: string;
  memoryAccesses?: { address: bigint; size: number | null; access?: AccessType; guard: boolean }[];
  instructionPointerUpdate?: { address: bigint; guard: boolean };
  adjustedAddress?: AdjustedAddress;
  possibleBitFlips: PossibleBitFlip[];
  inconsistencies: CrashInconsistency[];
  /** Why the instruction was not disassembled where it could have been. */
  note?: string;
}

/** The bytes at `pc`, as many as the dump holds up to the longest instruction. */
function instructionBytes(memory: MemoryReader, pc: bigint): Uint8Array | undefined {
  for (let n = MAX_INSTRUCTION; n > 0; n--) {
    const bytes = memory.read(pc, n);
    if (bytes !== undefined) return bytes;
  }
  return undefined;
}

/** What the caller gives the analysis. */
export interface CrashAnalysisInput {
  dump: Minidump;
  machine: Machine;
  /** The crashing thread's registers (the exception's context). */
  registers: Registers;
  memory: MemoryReader;
  decoder?: InstructionDecoder | undefined;
  /** Why no decoder was given (the note when one was needed). */
  decoderMissing?: string | undefined;
}

/**
 * Whether {@link analyzeCrash} disassembles the crashing instruction of `dump` (an x86-64 dump
 * with an Exception stream): a caller loads a decoder for it only then.
 */
export function decodesCrashInstruction(dump: Minidump, machine: Machine): boolean {
  return machine === "x64" && crashReason(dump) !== undefined;
}

/** The crash analysis of a dump with an Exception stream; undefined without one. */
export function analyzeCrash(input: CrashAnalysisInput): CrashAnalysis | undefined {
  const { dump, machine, registers, memory, decoder } = input;
  const crash = crashReason(dump);
  if (crash === undefined) return undefined;
  const kind = crashKind(dump, crash.address);
  const regions = dumpRegions(dump);
  const result: CrashAnalysis = { possibleBitFlips: [], inconsistencies: [] };
  let instruction: Instruction | undefined;
  const pc = registers["rip"];
  if (decodesCrashInstruction(dump, machine) && pc !== undefined) {
    const bytes = instructionBytes(memory, pc);
    if (bytes !== undefined && decoder === undefined) result.note = `crash_info.instruction and the analysis of it are null: ${input.decoderMissing ?? "no disassembler was given"}`;
    const decoded = bytes === undefined ? undefined : decoder?.decode(bytes, pc, machine);
    instruction = decoded === undefined ? undefined : parseInstruction(decoded);
  }
  if (instruction !== undefined && pc !== undefined) {
    result.instruction = instruction.text;
    const accesses = memoryAccesses(instruction, registers);
    if (accesses !== undefined) result.memoryAccesses = withGuardPages(accesses, regions).map(({ address, size, access, guard }) => (access === undefined ? { address, size, guard } : { address, size, access, guard }));
    const target = instructionPointerUpdate(instruction, registers, memory);
    if (target !== undefined) result.instructionPointerUpdate = { address: target, guard: regions !== undefined && isLikelyGuardPage(regions, target) };
    const adjusted = adjustedAddress(accesses, kind, machine);
    if (adjusted !== undefined) result.adjustedAddress = adjusted;
    if (kind !== undefined) result.inconsistencies = crashInconsistencies({ kind, address: crash.address, pc, instruction, accesses, regions });
  }
  result.possibleBitFlips = possibleBitFlips(machine, crash.address, result.adjustedAddress, kind, instruction, registers, regions ?? []);
  return result;
}
