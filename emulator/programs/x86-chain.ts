/**
 * x86 call-chain programs built from a small declarative spec: main → f1 → … → innermost, each
 * function with the frame a compiler would give it (an EBP frame, or an FPO frame with locals,
 * saved registers and parameters), and the FPO_DATA record the compiler would emit for it
 * (x86-fpo.md §1.1, §1.2). The generator writes readable Intel-syntax assembly, assembles it
 * with Keystone at the image's code address, and wraps the code in a PE32 image whose debug
 * directory carries the FPO_DATA table and a CodeView record (x86-fpo.md §1.3).
 *
 * The shapes follow MSVC, the compiler that emits FPO_DATA:
 * - An EBP frame is `push ebp; mov ebp, esp; sub esp, 4·locals; push saved…`. Its record is
 *   FRAME_NONFPO; cbRegs counts the registers pushed after the frame is set up (EBP itself is the
 *   frame link, not a saved register), and fUseBP is 0.
 * - An FPO frame is `sub esp, 4·locals; push saved…` (locals above the saved registers, which is
 *   what the fUseBP slot rule of x86-fpo.md §1.4 step 3 assumes). Its record is FRAME_FPO. An
 *   FPO function that saves EBP does so to use it as a general register: its body loads EBP with
 *   garbage, and its record has fUseBP = 1. That garbage is what breaks EBP-chain capture
 *   (x86-fpo.md §6, effect 2); an FPO function that never touches EBP leaves its caller's EBP in
 *   place, which makes EBP-chain capture skip that caller (§6, effect 1).
 * - cbProlog runs from the first byte to the end of the last prolog push, so a context inside it
 *   can be decoded with the table of x86-fpo.md §1.4 step 4.
 * - `alloca` (`sub esp, eax` in the body) is only allowed in an EBP frame: once ESP moves by a
 *   run-time amount, only a frame pointer can find the return address, which is why compilers
 *   force a frame for it.
 *
 * The entry point is `main`, entered with a return address of 0 pushed by whoever runs the
 * program; every function returns normally, so the run ends when `main` returns to 0.
 *
 * A spec with `etw` logs an ETW event at each capture label: right after the label the function
 * calls a logging module (emulator/etw-modules.ts) at its fixed address, and that module's
 * machine code records the stack the way ETW's EBP-chain capture does (x86-fpo.md §6). A snapshot
 * at the label sees the stack just before the logging call. Specs without `etw` generate exactly
 * what they did before.
 */
import { createHash } from "node:crypto";
import { loadAssembler } from "../assemble.js";
import { ETW_EVENT_WRITE, ETW_MODULE_NAMES, ETW_SYSTEM_SERVICE } from "../etw-modules.js";
import { FIRST_SECTION_RVA, SECTION_CHARACTERISTICS, debugSection, writePeImage } from "../image-writer.js";
import { type FpoData, FRAME_FPO, FRAME_NONFPO } from "../../src/entry/dbghelp.js";

/** A callee-saved register a function may push in its prolog. */
export type X86SavedRegister = "ebx" | "esi" | "edi" | "ebp";

/** How a function's frame is built. */
export type X86FrameStyle = "ebp" | "fpo";

/** Who removes the arguments: the caller (`add esp, n` after the call) or the callee (`ret n`). */
export type X86CallingConvention = "cdecl" | "stdcall";

/** One function of an x86 call chain. */
export interface X86FunctionSpec {
  /** Symbol name and assembly label: a C identifier, unique within the program. */
  readonly name: string;
  /** "ebp": `push ebp; mov ebp, esp` (FRAME_NONFPO). "fpo": no frame pointer (FRAME_FPO). */
  readonly frame: X86FrameStyle;
  /** Fixed locals in DWORDs (cdwLocals), allocated by `sub esp, 4·locals` in the prolog; under 4 KiB in all (default 0). */
  readonly locals?: number;
  /**
   * Callee-saved registers pushed in the prolog, in push order (default none); their count is
   * cbRegs. "ebp" is only for FPO functions, where it means the function allocates EBP (fUseBP):
   * the body then loads EBP with garbage. MSVC pushes in the order ebx, ebp, esi, edi.
   */
  readonly saved?: readonly X86SavedRegister[];
  /** Parameters in DWORDs (cdwParams) that the caller pushes before the call (default 0; must be 0 for the entry function). */
  readonly params?: number;
  /** "cdecl" (default): the caller pops the arguments. "stdcall": the function returns with `ret 4·params`. */
  readonly convention?: X86CallingConvention;
  /** EBP frames only: bytes allocated at run time by `sub esp, eax` in the body (alloca), a positive multiple of 4. */
  readonly alloca?: number;
  /**
   * The function calls itself this many times before going deeper, so `recursion + 1` activations
   * of it are on the stack at the deepest point. The remaining depth is passed in the first
   * parameter, so `params` must be at least 1.
   */
  readonly recursion?: number;
  /**
   * A label in the body of the deepest activation, where a snapshot shows this function as the
   * innermost frame: before it calls the next function, or, in the innermost function, before it
   * returns. The innermost function gets "capture" unless it names another.
   */
  readonly capture?: string;
}

/**
 * How a program logs ETW events at its capture labels: "user" calls `etwlog.dll!EtwEventWrite`,
 * which logs the whole stack in one item (MatchId 0); "kernel-user" calls the kernel's
 * `etwkrnl.sys!KiSystemService`, which logs a kernel part and a user part sharing one nonzero
 * MatchId (etw.md §2.3).
 */
export type X86EtwMode = "user" | "kernel-user";

/** A whole program: a chain of functions, the outermost (the entry point) first. */
export interface X86ProgramSpec {
  /** File-name-safe program name (kebab-case), e.g. "ebp-chain-5". */
  readonly name: string;
  /** What the program shows, in one or two sentences. */
  readonly description: string;
  /** functions[0] is the entry point, each function calls the next, and the last one is a leaf (it calls nothing but the logger). */
  readonly functions: readonly X86FunctionSpec[];
  /** Log an ETW event with a stack at every capture label (default: no logging). */
  readonly etw?: X86EtwMode;
}

/** A function's symbol: its name, RVA and size in bytes (the size excludes alignment padding). */
export interface X86Symbol {
  readonly name: string;
  readonly rva: number;
  readonly size: number;
}

/** A built program: its image, its source and what it means. */
export interface X86Program {
  readonly name: string;
  readonly description: string;
  readonly machine: "x86";
  /** The PE32 file bytes. */
  readonly image: Uint8Array;
  /** ImageBase: where the image must be mapped (it has no relocations). */
  readonly base: bigint;
  /** RVA of `main`, the entry point. */
  readonly entryRva: number;
  /** SizeOfStackReserve: the stack the program is built to fit in. */
  readonly stackReserve: number;
  /** The Intel-syntax source that was assembled, comments included. */
  readonly asm: string;
  /** One FPO_DATA record per function, sorted by ulOffStart, as stored in the image. */
  readonly fpo: readonly FpoData[];
  /** One symbol per function, in address order. */
  readonly symbols: readonly X86Symbol[];
  /** Every label of the source at its virtual address (function names, `<fn>_body`, `<fn>_end`, capture labels, …). */
  readonly labels: Readonly<Record<string, bigint>>;
  /** The capture labels, outermost function first; each is reached exactly once per run. */
  readonly captures: readonly string[];
  /** How the program logs ETW events at its capture labels, when it does. */
  readonly etw?: X86EtwMode;
}

/** ImageBase of every generated x86 program (the usual default for x86 executables). */
export const X86_IMAGE_BASE = 0x0040_0000n;
/** SizeOfStackReserve of every generated program: 1 MiB, which a 1000-deep recursion fits in easily. */
export const X86_STACK_RESERVE = 0x10_0000;

/** The most stack the deepest point of a program may use: the reserve less one page of head room. */
const FRAME_STACK_LIMIT = X86_STACK_RESERVE - 0x1000;
/** Locals, alloca and parameters stay under one page: larger frames need __chkstk probes (x86-fpo.md §7). */
const PAGE = 4096;
const MAX_RECURSION = 100_000;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names Keystone would read as registers or operand keywords, not as labels. */
const RESERVED = new Set([
  "eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "eip", "ax", "bx", "cx", "dx", "si", "di", "bp", "sp",
  "al", "ah", "bl", "bh", "cl", "ch", "dl", "dh", "cs", "ds", "es", "fs", "gs", "ss",
  "byte", "word", "dword", "qword", "ptr", "offset", "short", "near", "far",
]);

/** The checked, defaulted form of a function spec. */
interface Func {
  readonly index: number;
  readonly name: string;
  readonly frame: X86FrameStyle;
  readonly locals: number;
  readonly saved: readonly X86SavedRegister[];
  readonly params: number;
  readonly convention: X86CallingConvention;
  readonly alloca: number;
  readonly recursion: number;
  readonly capture: string | undefined;
  readonly useBP: boolean;
}

/** Builds a program: assembly, image, FPO_DATA, symbols and labels. A bad spec throws a RangeError naming the field. */
export async function buildX86Program(spec: X86ProgramSpec): Promise<X86Program> {
  const funcs = checkProgram(spec);
  const assembler = await loadAssembler();
  const textAddress = X86_IMAGE_BASE + BigInt(FIRST_SECTION_RVA);
  const bodies = funcs.map((f) => functionLines(f, funcs[f.index + 1], spec.etw));

  // First pass: the bare code, to learn every function's extent. The final source adds comments
  // that quote those numbers; comments do not change the bytes, which the second pass checks.
  const bare = assembler.assembleProgram(joinFunctions(bodies, funcs.map(() => [])), { mode: 32, address: textAddress });
  const fpo = funcs.map((f) => fpoRecord(f, bare.labels, textAddress));
  const source = [
    ...programHeader(spec, funcs),
    joinFunctions(bodies, funcs.map((f, i) => functionHeader(f, fpo[i]!))),
  ].join("\n");
  const final = assembler.assembleProgram(source, { mode: 32, address: textAddress });
  if (!sameBytes(final.bytes, bare.bytes)) throw new Error(`${spec.name}: the commented source assembled differently from the bare one`);

  const code = final.bytes;
  const digest = createHash("sha256").update(spec.name).update(code).update(JSON.stringify(fpo)).digest();
  const timeDateStamp = digest.readUInt32LE(16);
  const entryRva = fpo[0]!.ulOffStart;
  const written = writePeImage({
    machine: "x86",
    imageBase: X86_IMAGE_BASE,
    entryRva,
    timeDateStamp,
    stackReserve: X86_STACK_RESERVE,
    sections: [
      { name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: code } },
      debugSection({
        codeView: { guid: new Uint8Array(digest.subarray(0, 16)), age: 1, pdbName: `${spec.name}.pdb` },
        fpo,
        timeDateStamp,
      }),
    ],
  });

  const labels: Record<string, bigint> = {};
  for (const [name, address] of [...final.labels].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))) labels[name] = address;
  return {
    name: spec.name,
    description: spec.description,
    machine: "x86",
    image: written.bytes,
    base: X86_IMAGE_BASE,
    entryRva,
    stackReserve: X86_STACK_RESERVE,
    asm: `${source}\n`,
    fpo: [...fpo].sort((a, b) => a.ulOffStart - b.ulOffStart),
    symbols: funcs.map((f, i) => ({ name: f.name, rva: fpo[i]!.ulOffStart, size: fpo[i]!.cbProcSize })),
    labels,
    captures: funcs.flatMap((f) => (f.capture === undefined ? [] : [f.capture])),
    ...(spec.etw === undefined ? {} : { etw: spec.etw }),
  };
}

/** Checks a program spec without building it; throws the RangeError {@link buildX86Program} would. */
export function checkX86Program(spec: X86ProgramSpec): void {
  checkProgram(spec);
}

/** Validates a program spec and fills in the defaults; throws a RangeError naming the program, function and field. */
function checkProgram(spec: X86ProgramSpec): Func[] {
  const where = `program ${JSON.stringify(spec.name)}`;
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(spec.name)) throw new RangeError(`${where}: the name must be kebab-case`);
  if (spec.functions.length === 0) throw new RangeError(`${where}: needs at least one function`);
  if (spec.etw !== undefined && spec.etw !== "user" && spec.etw !== "kernel-user") throw new RangeError(`${where}: etw must be "user" or "kernel-user"`);
  const funcs = spec.functions.map((f, index): Func => {
    const at = `${where}, function ${JSON.stringify(f.name)}`;
    const count = (field: string, value: number | undefined, max: number): number => {
      const v = value ?? 0;
      if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`${at}: ${field} = ${v} is not an integer in 0..${max}`);
      return v;
    };
    if (!IDENTIFIER.test(f.name) || RESERVED.has(f.name.toLowerCase())) throw new RangeError(`${at}: the name must be a C identifier that is not a register`);
    if (f.frame !== "ebp" && f.frame !== "fpo") throw new RangeError(`${at}: frame must be "ebp" or "fpo"`);
    const locals = count("locals", f.locals, PAGE / 4 - 1);
    const params = count("params", f.params, PAGE / 4 - 1);
    const alloca = count("alloca", f.alloca, PAGE - 4);
    const recursion = count("recursion", f.recursion, MAX_RECURSION);
    const saved = [...(f.saved ?? [])];
    const convention = f.convention ?? "cdecl";
    if (convention !== "cdecl" && convention !== "stdcall") throw new RangeError(`${at}: convention must be "cdecl" or "stdcall"`);
    if (new Set(saved).size !== saved.length) throw new RangeError(`${at}: saved lists a register twice`);
    for (const r of saved) if (!["ebx", "esi", "edi", "ebp"].includes(r)) throw new RangeError(`${at}: ${r} is not a callee-saved register`);
    if (f.frame === "ebp" && saved.includes("ebp")) throw new RangeError(`${at}: an EBP frame saves EBP as its frame link; do not list it in saved`);
    if (alloca % 4 !== 0) throw new RangeError(`${at}: alloca must be a multiple of 4`);
    if (alloca > 0 && f.frame !== "ebp") throw new RangeError(`${at}: alloca needs an EBP frame: after sub esp, eax only EBP locates the return address`);
    if (recursion > 0 && params === 0) throw new RangeError(`${at}: recursion passes the remaining depth as the first parameter, so params must be at least 1`);
    if (index === 0 && params !== 0) throw new RangeError(`${at}: the entry function is entered with only a return address; params must be 0`);
    if (f.capture !== undefined && (!IDENTIFIER.test(f.capture) || RESERVED.has(f.capture.toLowerCase()))) {
      throw new RangeError(`${at}: capture label ${JSON.stringify(f.capture)} must be a C identifier that is not a register`);
    }
    const innermost = index === spec.functions.length - 1;
    return {
      index,
      name: f.name,
      frame: f.frame,
      locals,
      saved,
      params,
      convention,
      alloca,
      recursion,
      capture: f.capture ?? (innermost ? "capture" : undefined),
      useBP: f.frame === "fpo" && saved.includes("ebp"),
    };
  });

  // Every label the generator emits must be unique, or Keystone would resolve calls wrongly.
  const seen = new Set<string>();
  for (const f of funcs) {
    for (const label of [f.name, ...ownLabels(f)]) {
      if (seen.has(label)) throw new RangeError(`${where}: label ${JSON.stringify(label)} is defined twice`);
      seen.add(label);
    }
  }

  // The deepest point of the run must fit in the stack the image asks for.
  const deepest = funcs.reduce((sum, f) => sum + frameBytes(f) * (f.recursion + 1), 0);
  if (deepest > FRAME_STACK_LIMIT) {
    throw new RangeError(`${where}: the deepest stack needs ${deepest} bytes, more than the ${FRAME_STACK_LIMIT} that fit in the ${X86_STACK_RESERVE}-byte reserve`);
  }
  return funcs;
}

/** Labels the generator defines inside a function besides its name. */
function ownLabels(f: Func): string[] {
  return [
    `${f.name}_body`,
    `${f.name}_end`,
    ...(f.recursion > 0 ? [`${f.name}_base`, `${f.name}_exit`] : []),
    ...(f.capture === undefined ? [] : [f.capture]),
  ];
}

/** Stack bytes one activation occupies: its arguments, return address, EBP link, locals, saved registers and alloca. */
function frameBytes(f: Func): number {
  return 4 * f.params + 4 + (f.frame === "ebp" ? 4 : 0) + 4 * f.locals + 4 * f.saved.length + f.alloca;
}

/** The garbage an fUseBP function keeps in EBP: not a stack address, and different per function. */
function garbageFor(f: Func): number {
  return 0xbad0_00ef + (f.index << 8);
}

/** The value of argument k passed to function `callee`: recognisable in a memory dump. */
function argumentValue(callee: Func, k: number): number {
  return 0xa000_0000 + (callee.index << 8) + k;
}

const hex = (n: number): string => `0x${n.toString(16).toUpperCase()}`;
const pad = (instruction: string, comment: string): string => `    ${instruction.padEnd(36)} # ${comment}`;
const dwords = (n: number): string => `${n} dword${n === 1 ? "" : "s"}`;

/** The address of local k (k = 0 at the lowest address) in the function's own terms. */
function localOperand(f: Func, k: number): string {
  if (f.frame === "ebp") return `dword ptr [ebp - ${4 * (f.locals - k)}]`;
  const offset = 4 * f.saved.length + 4 * k;
  return offset === 0 ? "dword ptr [esp]" : `dword ptr [esp + ${offset}]`;
}

/** The first parameter, read at the top of the body (no pushes outstanding). */
function firstParamOperand(f: Func): string {
  if (f.frame === "ebp") return "dword ptr [ebp + 8]";
  return `dword ptr [esp + ${4 * f.locals + 4 * f.saved.length + 4}]`;
}

/**
 * Pushes arguments right to left and calls `callee`; a cdecl caller then removes them. A
 * recursive callee's first argument is its remaining depth: `recursion` when entered from its
 * caller, `firstArgument` (a register) when it calls itself.
 */
function callLines(callee: Func, firstArgument?: string): string[] {
  const lines: string[] = [];
  for (let k = callee.params - 1; k >= 0; k--) {
    const depth = firstArgument ?? String(callee.recursion);
    const value = k === 0 && callee.recursion > 0 ? depth : hex(argumentValue(callee, k));
    const what = k === 0 && callee.recursion > 0 ? "argument 1: recursion depth" : `argument ${k + 1} of ${callee.params}`;
    lines.push(pad(`push ${value}`, what));
  }
  lines.push(`    call ${callee.name}`);
  if (callee.convention === "cdecl" && callee.params > 0) lines.push(pad(`add esp, ${4 * callee.params}`, "cdecl: the caller removes the arguments"));
  return lines;
}

/** The call that logs an ETW event at a capture label: into the logging module at its fixed address. */
function etwLines(mode: X86EtwMode): string[] {
  return mode === "user"
    ? [pad(`call ${hex32(ETW_EVENT_WRITE)}`, `${ETW_MODULE_NAMES.user}!EtwEventWrite: log an event with the stack`)]
    : [pad(`call ${hex32(ETW_SYSTEM_SERVICE)}`, `${ETW_MODULE_NAMES.kernel}!KiSystemService: enter the kernel, which logs the event`)];
}

/** The instructions of one function, from its label to its `ret`, with short comments. */
function functionLines(f: Func, next: Func | undefined, etw: X86EtwMode | undefined): string[] {
  const lines: string[] = [`${f.name}:`];
  // Prolog (x86-fpo.md §1.4 step 4 decodes exactly these forms).
  if (f.frame === "ebp") {
    lines.push(pad("push ebp", "save the caller's frame pointer"));
    lines.push(pad("mov ebp, esp", "EBP frame: [ebp] = caller's EBP, [ebp+4] = return address"));
  }
  if (f.locals > 0) lines.push(pad(`sub esp, ${4 * f.locals}`, `locals: ${dwords(f.locals)}`));
  for (const r of f.saved) lines.push(pad(`push ${r}`, r === "ebp" && f.useBP ? "save the caller's EBP: this function allocates EBP (fUseBP)" : "save a callee-saved register"));
  lines.push(`${f.name}_body:`);

  // Body.
  if (f.useBP) lines.push(pad(`mov ebp, ${hex(garbageFor(f))}`, "EBP is now a general register holding garbage"));
  const touched = f.locals === 0 ? [] : f.locals === 1 ? [0] : [0, f.locals - 1];
  for (const k of touched) lines.push(pad(`mov ${localOperand(f, k)}, ${hex(0x4c00_0000 + (f.index << 8) + k)}`, `local ${k}`));
  if (f.alloca > 0) {
    lines.push(pad(`mov eax, ${f.alloca}`, "alloca: a size known only at run time"));
    lines.push(pad("sub esp, eax", "ESP moves by a run-time amount; only EBP locates the frame now"));
    lines.push(pad("mov dword ptr [esp], eax", "touch the allocation"));
  }
  if (f.recursion > 0) {
    lines.push(pad(`mov eax, ${firstParamOperand(f)}`, "remaining recursion depth (argument 1)"));
    lines.push("    test eax, eax");
    lines.push(pad(`jz ${f.name}_base`, "depth 0: this is the deepest activation"));
    lines.push("    dec eax");
    lines.push(...callLines(f, "eax"));
    lines.push(`    jmp ${f.name}_exit`);
    lines.push(`${f.name}_base:`);
  }
  if (f.capture !== undefined) lines.push(`${f.capture}:`);
  if (f.capture !== undefined && etw !== undefined) lines.push(...etwLines(etw));
  if (next !== undefined) lines.push(...callLines(next));
  lines.push(pad(`mov eax, ${f.index}`, "return value"));
  if (f.recursion > 0) lines.push(`${f.name}_exit:`);

  // Epilog (x86-fpo.md §1.4 step 5 simulates exactly these forms).
  if (f.frame === "ebp" && f.alloca > 0 && f.saved.length > 0) {
    lines.push(pad(`lea esp, [ebp - ${4 * f.locals + 4 * f.saved.length}]`, "drop the alloca area: ESP back at the saved registers"));
  }
  for (const r of [...f.saved].reverse()) lines.push(`    pop ${r}`);
  if (f.frame === "ebp") {
    lines.push(pad("mov esp, ebp", f.locals > 0 ? "drop the locals" : "restore ESP from the frame pointer"));
    lines.push("    pop ebp");
  } else if (f.locals > 0) {
    lines.push(pad(`add esp, ${4 * f.locals}`, "drop the locals"));
  }
  lines.push(f.convention === "stdcall" && f.params > 0 ? pad(`ret ${4 * f.params}`, "stdcall: the callee removes the arguments") : "    ret");
  lines.push(`${f.name}_end:`);
  return lines;
}

/** Joins the functions, each preceded by its comment block, with int3 padding to 16 bytes between them (as MSVC pads). */
function joinFunctions(bodies: readonly string[][], headers: readonly string[][]): string {
  return bodies
    .map((body, i) => [...(headers[i] ?? []), ...body, ...(i < bodies.length - 1 ? ["    .align 16, 0xcc"] : [])].join("\n"))
    .join("\n\n");
}

/** The comment block at the top of the source. */
function programHeader(spec: X86ProgramSpec, funcs: readonly Func[]): string[] {
  return [
    `# ${spec.name}: ${spec.description}`,
    "#",
    "# x86 (32-bit), Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,",
    "# and comments start with '#'. Built by buildX86Program (emulator/programs/x86-chain.ts),",
    `# assembled at ${hex32(X86_IMAGE_BASE + BigInt(FIRST_SECTION_RVA))} (.text at RVA ${hex(FIRST_SECTION_RVA)} of an image based at ${hex32(X86_IMAGE_BASE)}).`,
    "# Entry point: main, entered with a return address of 0; every function returns normally.",
    `# Call chain: ${funcs.map((f) => (f.recursion > 0 ? `${f.name} (x${f.recursion + 1})` : f.name)).join(" -> ")}.`,
    "# Each function's FPO_DATA record (x86-fpo.md §1.1) is quoted above it.",
    ...(spec.etw === undefined
      ? []
      : [
          spec.etw === "user"
            ? `# ETW: each capture label calls ${ETW_MODULE_NAMES.user}!EtwEventWrite at ${hex32(ETW_EVENT_WRITE)}, which logs the stack (x86-fpo.md §6).`
            : `# ETW: each capture label calls ${ETW_MODULE_NAMES.kernel}!KiSystemService at ${hex32(ETW_SYSTEM_SERVICE)}, which logs a kernel and a user part (etw.md §2.3).`,
          `# Run beside the logging modules (emulator/etw-capture.ts), where ${ETW_MODULE_NAMES.user}!RtlUserThreadStart calls main.`,
        ]),
    "",
  ];
}

/** The comment block above one function: its shape and its FPO_DATA record. */
function functionHeader(f: Func, r: FpoData): string[] {
  const shape = [
    f.frame === "ebp" ? "EBP frame" : "FPO frame",
    `locals ${f.locals}`,
    `saved [${f.saved.join(", ")}]`,
    `params ${f.params} (${f.convention})`,
    ...(f.alloca > 0 ? [`alloca ${f.alloca} bytes`] : []),
    ...(f.recursion > 0 ? [`calls itself ${f.recursion} times`] : []),
  ].join(", ");
  return [
    `# ${f.name}: ${shape}`,
    `# FPO_DATA: ulOffStart=${hex(r.ulOffStart)} cbProcSize=${r.cbProcSize} cdwLocals=${r.cdwLocals} cdwParams=${r.cdwParams}` +
      ` cbProlog=${r.cbProlog} cbRegs=${r.cbRegs} fUseBP=${r.fUseBP ? 1 : 0} cbFrame=${r.cbFrame === FRAME_NONFPO ? "FRAME_NONFPO" : "FRAME_FPO"}`,
  ];
}

/** The FPO_DATA record a compiler emits for the function (x86-fpo.md §1.1, §1.2), from its assembled extent. */
function fpoRecord(f: Func, labels: ReadonlyMap<string, bigint>, textAddress: bigint): FpoData {
  const at = (label: string): number => {
    const address = labels.get(label);
    if (address === undefined) throw new Error(`label ${label} was not assembled`);
    return Number(address - textAddress);
  };
  const start = at(f.name);
  const prolog = at(`${f.name}_body`) - start;
  if (prolog > 0xff) throw new RangeError(`function ${f.name}: the prolog is ${prolog} bytes, more than cbProlog can hold`);
  return {
    ulOffStart: FIRST_SECTION_RVA + start,
    cbProcSize: at(`${f.name}_end`) - start,
    cdwLocals: f.locals,
    cdwParams: f.params,
    cbProlog: prolog,
    cbRegs: f.saved.length,
    fHasSEH: false,
    fUseBP: f.useBP,
    reserved: 0,
    cbFrame: f.frame === "ebp" ? FRAME_NONFPO : FRAME_FPO,
  };
}

function hex32(value: bigint): string {
  return `0x${value.toString(16).toUpperCase().padStart(8, "0")}`;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
