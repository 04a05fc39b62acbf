/**
 * Intel-syntax x86/x64 assembly and GNU-syntax AArch64 and Thumb-2 assembly to machine code, with the Keystone assembler compiled to
 * WebAssembly (`@alexaltea/keystone-js`). Load it once with {@link loadAssembler} (the
 * WebAssembly module initialises asynchronously); after that, assembling is synchronous.
 *
 * Source is one statement per line (`;` also separates statements, as in GNU as), comments
 * start with `#` or `//`, labels end with `:`, and `$` stands for the current statement's
 * address as in MASM and NASM (`jmp $` is a one-instruction loop). Numbers are decimal unless
 * written `0x10` or `10h`; a leading zero means octal, as in GNU as. Keystone does not accept a
 * label plus an offset as a branch target (`jmp $+2`, `jmp done+1`), and it silently drops
 * some malformed operands (`[ebx+` assembles as `[ebx]`), so check bytes that matter.
 */
import { createRequire } from "node:module";
import { assertAddress, assertCpuMode, pointerWidth, type CpuMode } from "./cpu-mode.js";

/** What {@link Assembler.assemble} needs besides the source. */
export interface AssembleOptions {
  /** 32 for x86, 64 for x64, "arm64" for AArch64, "arm" for 32-bit ARM (Thumb-2). */
  readonly mode: CpuMode;
  /** The address of the first byte, which relative branches and `$` are computed from (default 0). */
  readonly address?: bigint;
}

/** Source that Keystone could not assemble; names the first bad line when it can be found. */
export class AssemblyError extends Error {
  /** 1-based line number of the first line that does not assemble, when known. */
  readonly line: number | undefined;
  /** That line's text, when known. */
  readonly lineText: string | undefined;
  /** Keystone's error number (`ks_errno`), or undefined when the assembler itself threw. */
  readonly code: number | undefined;
  /** The error number's name, e.g. `KS_ERR_ASM_MNEMONICFAIL`. */
  readonly codeName: string | undefined;
  /** Keystone's text for the error. */
  readonly description: string;

  constructor(
    description: string,
    code: number | undefined,
    codeName: string | undefined,
    where: { line: number; text: string } | undefined,
    options?: { cause: unknown },
  ) {
    super(
      where === undefined ? `cannot assemble: ${description}` : `line ${where.line}: ${description}: ${where.text.trim()}`,
      options,
    );
    this.name = "AssemblyError";
    this.description = description;
    this.code = code;
    this.codeName = codeName;
    this.line = where?.line;
    this.lineText = where?.text;
  }
}

/** Machine code and where each label of the source ended up. */
export interface AssembledProgram {
  readonly bytes: Uint8Array;
  /** The address of every label the source defines. */
  readonly labels: ReadonlyMap<string, bigint>;
}

/** A ready assembler: turns source into bytes synchronously. */
export interface Assembler {
  /** Assembles `source` at `options.address`; throws {@link AssemblyError} on bad source. */
  assemble(source: string, options: AssembleOptions): Uint8Array;
  /** Like {@link assemble}, and also reports the address of each label. */
  assembleProgram(source: string, options: AssembleOptions): AssembledProgram;
}

/** The part of keystone-js's module object used here. */
interface KeystoneModule {
  readonly ARCH_X86: number;
  readonly ARCH_ARM64: number;
  readonly ARCH_ARM: number;
  readonly MODE_THUMB: number;
  readonly MODE_32: number;
  readonly MODE_64: number;
  readonly MODE_LITTLE_ENDIAN: number;
  strerror(code: number): string;
  readonly Keystone: new (arch: number, mode: number) => KeystoneEngine;
}

/** One Keystone handle (`ks_engine`), fixed to an architecture and mode. */
interface KeystoneEngine {
  asm(source: string, address: bigint): { mc: Uint8Array; count: number; failed: boolean };
  errno(): number;
}

/** The outcome of one call into Keystone. */
type Attempt =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly code: number | undefined; readonly description: string; readonly cause?: unknown };

let loading: Promise<Assembler> | undefined;

/** Initialises Keystone once per process and returns the assembler. */
export function loadAssembler(): Promise<Assembler> {
  loading ??= initialise();
  return loading;
}

/** Assembles `source` (loading Keystone on first use); see {@link Assembler.assemble}. */
export async function assemble(source: string, options: AssembleOptions): Promise<Uint8Array> {
  return (await loadAssembler()).assemble(source, options);
}

async function initialise(): Promise<Assembler> {
  // keystone-js is an Emscripten CommonJS bundle without type declarations; its export is a
  // factory whose promise resolves once the WebAssembly module is compiled.
  const require = createRequire(import.meta.url);
  const factory = require("@alexaltea/keystone-js") as () => Promise<KeystoneModule>;
  const ks = await factory();
  const engines = new Map<CpuMode, KeystoneEngine>();
  const engineFor = (mode: CpuMode): KeystoneEngine => {
    let engine = engines.get(mode);
    if (engine === undefined) {
      // Keystone's x86 default is already Intel syntax with decimal numbers. Setting
      // KS_OPT_SYNTAX to KS_OPT_SYNTAX_INTEL explicitly would switch the default radix to 16
      // (`add eax, 35` would add 0x35), so the option is left alone.
      // AArch64 is assembled little-endian, in GNU syntax (`#` immediates, `//` comments); 32-bit
      // ARM likewise, as Thumb-2 (labels are plain addresses, without the Thumb bit).
      engine =
        mode === "arm64"
          ? new ks.Keystone(ks.ARCH_ARM64, ks.MODE_LITTLE_ENDIAN)
          : mode === "arm"
            ? new ks.Keystone(ks.ARCH_ARM, ks.MODE_THUMB)
            : new ks.Keystone(ks.ARCH_X86, mode === 64 ? ks.MODE_64 : ks.MODE_32);
      engines.set(mode, engine);
    }
    return engine;
  };

  const attempt = (engine: KeystoneEngine, source: string, address: bigint): Attempt => {
    try {
      const result = engine.asm(source, address);
      if (!result.failed) return { ok: true, bytes: result.mc };
      const code = engine.errno();
      return { ok: false, code, description: ks.strerror(code) };
    } catch (error) {
      // The bundle passes the source on the WebAssembly stack; a very long line overflows it.
      const text = error instanceof Error ? error.message : String(error);
      return { ok: false, code: undefined, description: `the assembler failed (${text})`, cause: error };
    }
  };

  const assemble = (source: string, options: AssembleOptions): Uint8Array => {
    assertCpuMode(options.mode);
    const address = options.address ?? 0n;
    assertAddress(address, options.mode);
    const engine = engineFor(options.mode);
    const lines = source.split(/\r?\n/).map(currentAddressToDot);
    const whole = attempt(engine, lines.join("\n"), address);
    if (whole.ok) return whole.bytes;
    const bad = firstBadLine(lines, (text) => attempt(engine, text, address));
    const failure = bad?.failure ?? whole;
    const where = bad === undefined ? undefined : { line: bad.index + 1, text: source.split(/\r?\n/)[bad.index] ?? "" };
    throw new AssemblyError(
      failure.description,
      failure.code,
      /\((KS_ERR_[A-Z_0-9]+)\)/.exec(failure.description)?.[1],
      where,
      failure.cause === undefined ? undefined : { cause: failure.cause },
    );
  };

  /**
   * Keystone keeps its symbol table to itself, but a data directive naming a label assembles to
   * the label's address. One `.long`/`.quad` per label is appended after the code, where it
   * cannot change the layout of anything before it, and read back from the end of the output.
   */
  const assembleProgram = (source: string, options: AssembleOptions): AssembledProgram => {
    const bytes = assemble(source, options);
    const names = [...new Set(source.split(/\r?\n/).flatMap(labelsOf))];
    const width = pointerWidth(options.mode);
    const directive = width === 8 ? ".quad" : ".long";
    const address = options.address ?? 0n;
    const engine = engineFor(options.mode);
    const lines = source.split(/\r?\n/).map(currentAddressToDot);
    const labels = new Map<string, bigint>();
    const readBack = (wanted: readonly string[]): boolean => {
      const text = [...lines, ...wanted.map((name) => `${directive} ${name}`)].join("\n");
      const result = attempt(engine, text, address);
      if (!result.ok || result.bytes.length !== bytes.length + wanted.length * width) return false;
      const view = new DataView(result.bytes.buffer, result.bytes.byteOffset + bytes.length);
      wanted.forEach((name, i) => {
        labels.set(name, width === 8 ? view.getBigUint64(i * 8, true) : BigInt(view.getUint32(i * 4, true)));
      });
      return true;
    };
    // Something that only looks like a label (say, a segment prefix on its own) makes the
    // combined attempt fail; then each name is tried alone and the impostors are left out.
    if (names.length > 0 && !readBack(names)) for (const name of names) readBack([name]);
    return { bytes, labels };
  };

  return { assemble, assembleProgram };
}

/**
 * Keystone reads `.` as the current address (GNU as) but rejects MASM/NASM's `$`; a `$` that
 * stands alone (not part of a name, nor `$$`) becomes `.`, which keeps every line in place.
 */
function currentAddressToDot(line: string): string {
  return line.replace(/(?<![\w$.@?])\$(?![\w$.@?])/g, ".");
}

/** Labels a line defines: a name followed by `:` at the start of a statement. */
function labelsOf(line: string): string[] {
  const code = line.replace(/(#|\/\/).*$/, "");
  const labels: string[] = [];
  for (const statement of code.split(";")) {
    let rest = statement;
    for (;;) {
      const match = /^\s*([A-Za-z_.@?][\w.@?$]*)\s*:(?!:)/.exec(rest);
      if (match === null || match[1] === undefined) break;
      labels.push(match[1]);
      rest = rest.slice(match[0].length);
    }
  }
  return labels;
}

/**
 * Keystone reports an error number but not where it happened. The first bad line is the
 * smallest prefix of the source that fails to assemble, where labels defined further down are
 * declared at the end of the prefix so forward references still resolve. Adding lines never
 * repairs an earlier error, so the prefixes are searched by bisection.
 */
function firstBadLine(
  lines: readonly string[],
  attempt: (source: string) => Attempt,
): { index: number; failure: Extract<Attempt, { ok: false }> } | undefined {
  const labels = lines.map(labelsOf);
  const prefixFailure = (last: number): Extract<Attempt, { ok: false }> | undefined => {
    const defined = new Set(labels.slice(0, last + 1).flat());
    const later = [...new Set(labels.slice(last + 1).flat())].filter((label) => !defined.has(label));
    const text = [...lines.slice(0, last + 1), ...later.map((label) => `${label}:`)].join("\n");
    const result = attempt(text);
    return result.ok ? undefined : result;
  };
  let low = 0;
  let high = lines.length - 1;
  let found: { index: number; failure: Extract<Attempt, { ok: false }> } | undefined;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const failure = prefixFailure(mid);
    if (failure === undefined) {
      low = mid + 1;
    } else {
      found = { index: mid, failure };
      high = mid - 1;
    }
  }
  return found;
}
