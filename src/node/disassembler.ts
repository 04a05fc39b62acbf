/**
 * The disassembler the JSON's crash analysis uses, from the Node side: Capstone compiled to
 * WebAssembly (`@alexaltea/capstone-js`), an optional dependency of the package. The core has no
 * disassembler of its own and takes one as an {@link InstructionDecoder}; this loads Capstone when
 * it is installed and says why not when it is not.
 */
import { createRequire } from "node:module";
import type { DecodedInstruction, InstructionDecoder } from "../analysis/instruction.js";
import type { Machine } from "../model/machine.js";

/** The part of capstone-js's module used here. */
interface Capstone {
  readonly ARCH_X86: number;
  readonly MODE_64: number;
  readonly OPT_SYNTAX: number;
  readonly OPT_SYNTAX_INTEL: number;
  readonly Capstone: new (arch: number, mode: number) => {
    option(option: number, value: number): void;
    disasm(bytes: Uint8Array, address: bigint, count?: number): { size: number; mnemonic: string; op_str: string }[];
  };
}

/** The package that serves disassembly. */
export const DISASSEMBLER_PACKAGE = "@alexaltea/capstone-js";

/** A decoder, or why there is none. */
export type DecoderLoad = { decoder: InstructionDecoder } | { missing: string };

let loading: Promise<DecoderLoad> | undefined;

/** Loads Capstone once per process (x86-64 only, Intel syntax); without it, says why. */
export function loadInstructionDecoder(): Promise<DecoderLoad> {
  loading ??= load();
  return loading;
}

async function load(): Promise<DecoderLoad> {
  let factory: () => Promise<Capstone>;
  try {
    factory = createRequire(import.meta.url)(DISASSEMBLER_PACKAGE) as () => Promise<Capstone>;
  } catch {
    return { missing: `the disassembler ${DISASSEMBLER_PACKAGE} (an optional dependency) is not installed` };
  }
  let cs: Capstone;
  try {
    cs = await factory();
  } catch (e) {
    return { missing: `the disassembler ${DISASSEMBLER_PACKAGE} did not load: ${e instanceof Error ? e.message : String(e)}` };
  }
  const engine = new cs.Capstone(cs.ARCH_X86, cs.MODE_64);
  engine.option(cs.OPT_SYNTAX, cs.OPT_SYNTAX_INTEL);
  return {
    decoder: {
      decode(bytes: Uint8Array, address: bigint, machine: Machine): DecodedInstruction | undefined {
        if (machine !== "x64" || bytes.length === 0) return undefined;
        try {
          const [insn] = engine.disasm(bytes, address, 1);
          return insn === undefined ? undefined : { length: insn.size, mnemonic: insn.mnemonic, operands: insn.op_str };
        } catch {
          // The bundle throws when not even the first instruction decodes.
          return undefined;
        }
      },
    },
  };
}
