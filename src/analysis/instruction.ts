/**
 * The crashing instruction as the crash analysis reads it (crash-analysis.ts): a disassembler the
 * caller hands in (the core bundles none: the command line uses Capstone, an optional dependency,
 * when it is installed) turns bytes into Intel-syntax text, and this module reads that text back
 * into operands: registers, immediates and memory operands with their size, segment, base,
 * index, scale and displacement. The text is Capstone's Intel syntax (`mov rax, qword ptr [rbx +
 * rcx*8 + 0x10]`); any disassembler that writes the same syntax can stand in for it.
 */
import type { Machine } from "../model/machine.js";

/** One decoded instruction, as a disassembler gives it. */
export interface DecodedInstruction {
  /** Length in bytes. */
  length: number;
  /** The mnemonic with its prefixes (`mov`, `rep movsb`, `lock xadd`). */
  mnemonic: string;
  /** The operands in Intel syntax, comma-separated (empty when there are none). */
  operands: string;
}

/**
 * Decodes the instruction at the start of `bytes` (placed at `address`), or returns undefined
 * when they are not one. Handed to the JSON writer by the caller: the core has no disassembler.
 */
export interface InstructionDecoder {
  decode(bytes: Uint8Array, address: bigint, machine: Machine): DecodedInstruction | undefined;
}

/** A memory operand: `size ptr segment:[base + index*scale + disp]`. */
export interface MemoryOperand {
  kind: "memory";
  /** Bytes accessed, from the size keyword (`qword` 8); undefined when the text has none (`lea`'s). */
  size?: number;
  /** A segment override (`fs`, `gs`), when written. */
  segment?: string;
  base?: string;
  index?: string;
  scale: number;
  disp: bigint;
}

/** One operand of an instruction. */
export type Operand = { kind: "register"; name: string } | { kind: "immediate"; value: bigint } | MemoryOperand;

/** The parsed instruction: its text and its operands in order (the destination first). */
export interface Instruction {
  /** Mnemonic without prefixes (`movsb` for `rep movsb`). */
  mnemonic: string;
  /** The operands, destination first; undefined when one is in a form not understood (the text stays). */
  operands?: Operand[];
  length: number;
  /** The instruction as written: mnemonic and operands, operand sizes without Intel's `ptr`, numbers in hex and scales spaced (`qword [rax + rcx * 8 + 0x10]`), as rust-minidump writes them. */
  text: string;
}

/** Intel size keywords and the bytes they name. */
const SIZES: Readonly<Record<string, number>> = {
  byte: 1, word: 2, dword: 4, fword: 6, qword: 8, tbyte: 10, xword: 10, xmmword: 16, ymmword: 32, zmmword: 64,
};

/** Prefixes a mnemonic can carry. */
const PREFIXES = new Set(["rep", "repe", "repz", "repne", "repnz", "lock", "notrack", "bnd", "xacquire", "xrelease", "data16", "addr32"]);

/** A number as Intel syntax writes it: `0x1f`, `31`, with an optional sign. */
function parseNumber(text: string): bigint | undefined {
  const m = /^(-)?(0x[0-9a-f]+|[0-9]+)$/i.exec(text.trim());
  if (m === null) return undefined;
  const v = BigInt(m[2]!);
  return m[1] === undefined ? v : -v;
}

/** The inside of `[...]`: terms joined by ` + ` and ` - `. */
function parseAddress(inner: string, operand: MemoryOperand): boolean {
  const terms = inner.replace(/\s+/g, "").replace(/-/g, "+-").split("+").filter((t) => t !== "");
  for (const term of terms) {
    const number = parseNumber(term);
    if (number !== undefined) {
      operand.disp += number;
      continue;
    }
    const scaled = /^([a-z][a-z0-9]*)\*([1248])$/.exec(term);
    if (scaled !== null) {
      if (operand.index !== undefined) return false;
      operand.index = scaled[1]!;
      operand.scale = Number(scaled[2]);
      continue;
    }
    if (!/^[a-z][a-z0-9]*$/.test(term)) return false;
    if (operand.base === undefined) operand.base = term;
    else if (operand.index === undefined) operand.index = term;
    else return false;
  }
  return true;
}

/** One operand's text, or undefined when it is none of the three forms. */
export function parseOperand(text: string): Operand | undefined {
  const t = text.trim().toLowerCase();
  const mem = /^(?:([a-z]+) ptr )?(?:([a-z]s):)?\[(.*)\]$/.exec(t);
  if (mem !== null) {
    const operand: MemoryOperand = { kind: "memory", scale: 1, disp: 0n };
    if (mem[1] !== undefined) {
      const size = SIZES[mem[1]];
      if (size === undefined) return undefined;
      operand.size = size;
    }
    if (mem[2] !== undefined) operand.segment = mem[2];
    return parseAddress(mem[3]!, operand) ? operand : undefined;
  }
  const number = parseNumber(t);
  if (number !== undefined) return { kind: "immediate", value: number };
  if (/^[a-z][a-z0-9()]*$/.test(t)) return { kind: "register", name: t };
  return undefined;
}

/** The operands split at the commas outside brackets. */
function splitOperands(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "[") depth++;
    else if (ch === "]") depth--;
    else if (ch === "," && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (text.trim() !== "") out.push(text.slice(start));
  return out;
}

/** rust-minidump's way of writing an operand list: sizes without `ptr`, numbers in hex, scales as `rcx * 8`. */
function schemaText(operands: string): string {
  return operands
    .replace(/ ptr /g, " ")
    .replace(/(?<![\w*.(])\d+(?![\w.])/g, (n) => `0x${BigInt(n).toString(16)}`)
    .replace(/([a-z0-9])\*([1248])/g, "$1 * $2");
}

/** Reads a decoded instruction: its mnemonic, its operands (undefined when one is not understood) and its text. */
export function parseInstruction(decoded: DecodedInstruction): Instruction {
  const words = decoded.mnemonic.trim().toLowerCase().split(/\s+/);
  const mnemonic = words.filter((w) => !PREFIXES.has(w)).pop() ?? "";
  let operands: Operand[] | undefined = [];
  for (const text of splitOperands(decoded.operands)) {
    const operand = parseOperand(text);
    if (operand === undefined) {
      operands = undefined;
      break;
    }
    operands.push(operand);
  }
  const ops = schemaText(decoded.operands.trim());
  const instruction: Instruction = { mnemonic, length: decoded.length, text: ops === "" ? words.join(" ") : `${words.join(" ")} ${ops}` };
  if (operands !== undefined) instruction.operands = operands;
  return instruction;
}
