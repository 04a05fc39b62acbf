/**
 * x86/x64 machine code to Intel-syntax text (AArch64 and Thumb-2 code to Arm syntax), with the Capstone disassembler compiled to
 * WebAssembly (`@alexaltea/capstone-js`). Load it once with {@link loadDisassembler}; after that,
 * disassembling is synchronous, so error paths can describe the instruction at a faulting PC.
 */
import { createRequire } from "node:module";
import { assertAddress, assertCpuMode, pointerWidth, type CpuMode } from "./cpu-mode.js";

/** The longest x86 instruction: the CPU refuses anything over 15 bytes. */
export const MAX_INSTRUCTION_LENGTH = 15;

/** One decoded instruction. */
export interface Instruction {
  readonly address: bigint;
  /** Length in bytes. */
  readonly size: number;
  readonly bytes: Uint8Array;
  /** E.g. `mov`. */
  readonly mnemonic: string;
  /** The operands, e.g. `ebp, esp` (empty when there are none). */
  readonly opStr: string;
  /** Mnemonic and operands, e.g. `mov ebp, esp`. */
  readonly text: string;
}

/** A ready disassembler: all calls are synchronous. */
export interface Disassembler {
  /**
   * Decodes `bytes` placed at `address`, up to `count` instructions (default: all). Decoding
   * stops at the first byte sequence that is not an instruction.
   */
  disassemble(bytes: Uint8Array, address: bigint, mode: CpuMode, count?: number): Instruction[];
  /** Decodes the instruction that starts at `bytes[0]`, or undefined if there is none. */
  disassembleOne(bytes: Uint8Array, address: bigint, mode: CpuMode): Instruction | undefined;
  /**
   * One line for an error message: `0x401000: 55  push ebp`, or the bytes and
   * `(not an instruction)` when they do not decode. Pass up to {@link MAX_INSTRUCTION_LENGTH}
   * bytes from `address`.
   */
  describe(bytes: Uint8Array, address: bigint, mode: CpuMode): string;
}

/** The part of capstone-js's module object used here. */
interface CapstoneModule {
  readonly ARCH_X86: number;
  readonly ARCH_ARM64: number;
  readonly ARCH_ARM: number;
  readonly MODE_THUMB: number;
  readonly MODE_32: number;
  readonly MODE_64: number;
  readonly MODE_ARM: number;
  readonly OPT_SYNTAX: number;
  readonly OPT_SYNTAX_INTEL: number;
  readonly Capstone: new (arch: number, mode: number) => CapstoneEngine;
}

/** One Capstone handle (`csh`), fixed to an architecture and mode. */
interface CapstoneEngine {
  option(option: number, value: number): void;
  disasm(bytes: Uint8Array, address: bigint, count?: number): CapstoneInstruction[];
  errno(): number;
}

/** Capstone's `cs_insn` as the bundle copies it out of WebAssembly memory. */
interface CapstoneInstruction {
  readonly address: bigint;
  readonly size: number;
  readonly bytes: readonly number[];
  readonly mnemonic: string;
  readonly op_str: string;
}

let loading: Promise<Disassembler> | undefined;

/** Initialises Capstone once per process and returns the disassembler. */
export function loadDisassembler(): Promise<Disassembler> {
  loading ??= initialise();
  return loading;
}

/** Decodes `bytes` at `address` (loading Capstone on first use); see {@link Disassembler.disassemble}. */
export async function disassemble(
  bytes: Uint8Array,
  address: bigint,
  mode: CpuMode,
  count?: number,
): Promise<Instruction[]> {
  return (await loadDisassembler()).disassemble(bytes, address, mode, count);
}

/** Decodes the one instruction at `address` (loading Capstone on first use). */
export async function disassembleOne(
  bytes: Uint8Array,
  address: bigint,
  mode: CpuMode,
): Promise<Instruction | undefined> {
  return (await loadDisassembler()).disassembleOne(bytes, address, mode);
}

async function initialise(): Promise<Disassembler> {
  // capstone-js is an Emscripten CommonJS bundle without type declarations; its export is a
  // factory whose promise resolves once the WebAssembly module is compiled.
  const require = createRequire(import.meta.url);
  const factory = require("@alexaltea/capstone-js") as () => Promise<CapstoneModule>;
  const cs = await factory();
  const engines = new Map<CpuMode, CapstoneEngine>();
  const engineFor = (mode: CpuMode): CapstoneEngine => {
    let engine = engines.get(mode);
    if (engine === undefined) {
      if (mode === "arm64") engine = new cs.Capstone(cs.ARCH_ARM64, cs.MODE_ARM);
      else if (mode === "arm") engine = new cs.Capstone(cs.ARCH_ARM, cs.MODE_THUMB);
      else {
        engine = new cs.Capstone(cs.ARCH_X86, mode === 64 ? cs.MODE_64 : cs.MODE_32);
        engine.option(cs.OPT_SYNTAX, cs.OPT_SYNTAX_INTEL);
      }
      engines.set(mode, engine);
    }
    return engine;
  };

  const disassemble = (bytes: Uint8Array, address: bigint, mode: CpuMode, count = 0): Instruction[] => {
    assertCpuMode(mode);
    assertAddress(address, mode);
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`count must be a whole number, not ${count}`);
    if (bytes.length === 0) return [];
    const engine = engineFor(mode);
    let decoded: CapstoneInstruction[];
    try {
      decoded = engine.disasm(bytes, address, count);
    } catch (thrown) {
      // The bundle throws a string when not even the first instruction decodes; with
      // cs_errno() still CS_ERR_OK that only means the bytes are not an instruction.
      if (engine.errno() === 0) return [];
      throw new Error(String(thrown), { cause: thrown });
    }
    return decoded.map((insn) => ({
        address: BigInt(insn.address),
        size: insn.size,
        bytes: Uint8Array.from(insn.bytes),
        mnemonic: insn.mnemonic,
        opStr: insn.op_str,
        text: insn.op_str === "" ? insn.mnemonic : `${insn.mnemonic} ${insn.op_str}`,
      }));
  };

  const disassembleOne = (bytes: Uint8Array, address: bigint, mode: CpuMode): Instruction | undefined =>
    disassemble(bytes.subarray(0, MAX_INSTRUCTION_LENGTH), address, mode, 1)[0];

  return {
    disassemble,
    disassembleOne,
    describe(bytes: Uint8Array, address: bigint, mode: CpuMode): string {
      const width = 2 * pointerWidth(mode);
      const at = `0x${address.toString(16).padStart(width, "0")}`;
      const insn = disassembleOne(bytes, address, mode);
      if (insn !== undefined) return `${at}: ${hexBytes(insn.bytes)}  ${insn.text}`;
      if (bytes.length === 0) return `${at}: (no bytes)`;
      return `${at}: ${hexBytes(bytes.subarray(0, MAX_INSTRUCTION_LENGTH))}  (not an instruction)`;
    },
  };
}

function hexBytes(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");
}
