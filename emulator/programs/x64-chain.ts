/**
 * x64 call-chain programs built from a small declarative spec: main → f1 → … → innermost, each
 * function with the prolog, epilog and unwind data a Windows x64 compiler would give it. The
 * generator writes readable Intel-syntax assembly, assembles it with Keystone at the image's code
 * address, derives every UNWIND_CODE from where the prolog instructions actually ended, and wraps
 * the code in a PE32+ image: `.text`, `.xdata` (UNWIND_INFO), `.pdata` (RUNTIME_FUNCTIONs, the
 * exception directory) and `.rdata` (a debug directory with a CodeView record).
 *
 * The shapes follow the x64 ABI and x64-unwind.md:
 * - At every function entry RSP ≡ 8 (mod 16); a function that calls reserves at least the
 *   32-byte home area and keeps RSP ≡ 0 (mod 16) at its calls.
 * - A prolog runs in the order the unwinder expects: pushes of nonvolatile registers
 *   (PUSH_NONVOL), the fixed allocation (ALLOC_SMALL, or ALLOC_LARGE in its 16-bit or 32-bit
 *   form, §1.3), the frame register (`lea fp, [rsp + 16·FrameOffset]`, SET_FPREG), then saves to
 *   the frame (`mov [rsp + off], reg`: SAVE_NONVOL/_FAR; `movaps [rsp + off], xmmN`:
 *   SAVE_XMM128/_FAR). Save offsets are from the establisher frame (§1.4): the RSP right after
 *   the fixed allocation.
 * - Frames of a page or more are allocated as MSVC does: `mov eax, size; call __chkstk;
 *   sub rsp, rax`, so a return address lies inside the prolog (§1.8, W2). `__chkstk` touches
 *   every page of the new frame and is a leaf without pdata.
 * - An epilog is `add rsp, n` or `lea rsp, [fp + d]`, the pops, and `ret` (or `rep ret`, or a
 *   tail-call `jmp`), the forms version-1 epilog detection recognises (§1.5). Version-2 unwind
 *   info lists the epilogs in EPILOG codes instead (§1.6).
 * - A chained function is split as shrink-wrapping compilers split it: the primary
 *   RUNTIME_FUNCTION covers the prolog and epilog, and a separate fragment, placed after or
 *   before every other function, saves one more register into the home area and does the call.
 *   Its UNWIND_INFO has that SAVE_NONVOL and CHAININFO pointing at the primary (§1.7, W4).
 * - A function entered through a machine frame is an interrupt handler: its caller simulates the
 *   interrupt by aligning RSP to 16, pushing SS, RSP, RFLAGS, CS, RIP (and an error code) as the
 *   CPU would, and jumping to it. Its unwind codes start with PUSH_MACHFRAME at offset 0 (§1.3,
 *   W5). It returns by popping that frame by hand (Unicorn cannot run `iretq` without a GDT).
 *
 * Ground truth at a capture inside a handler (and in anything it calls): below the handler's
 * frame comes the interrupted frame, whose pc is the RIP in the machine frame (the caller's
 * `<caller>_resume` label, where execution continues afterwards) and whose sp is the RSP in the
 * machine frame (the caller's RSP at `<caller>_interrupt`); below that, the caller's own return
 * address as usual. The interrupted pc is not a return address (§1.8). From `<caller>_interrupt`
 * up to the handler's entry, and from the handler's epilog to `<caller>_resume`, the stack is in
 * a state no unwind info describes, as around a real interrupt; captures are never placed there.
 *
 * The entry point is `main`, entered with a return address of 0 pushed by whoever runs the
 * program; every function returns (or tail-calls) normally, so the run ends when `main` returns
 * to 0. The stack must be at least `stackReserve` bytes (SizeOfStackReserve), below the initial
 * RSP.
 */
import { hex } from "../../src/index.js";
import type { RuntimeFunction } from "../../src/entry/formats.js";
import { X64_CALLEE_SAVED } from "../../src/entry/arch.js";
import { createHash } from "node:crypto";
import { loadAssembler } from "../assemble.js";
import {
  DIRECTORY_INDEX,
  FIRST_SECTION_RVA,
  SECTION_ALIGNMENT,
  SECTION_CHARACTERISTICS,
  debugSection,
  writePeImage,
  type SectionSpec,
} from "../image-writer.js";
import {
  allocCode,
  encodeRuntimeFunctions,
  encodeUnwindInfo,
  formatEpilogCodes,
  formatUnwindCode,
  hexBytes,
  saveNonvolCode,
  saveXmm128Code,
  type EpilogCodes,
  type UnwindCode,
  type UnwindInfoSpec,
} from "./unwind-encode.js";

/** The general registers the x64 ABI makes callee-saved (nonvolatile): the machine table's. */
export const X64_NONVOLATILE = X64_CALLEE_SAVED;

/** A callee-saved general register. */
export type X64NonvolatileRegister = (typeof X64_NONVOLATILE)[number];

/** How an epilog gives back the fixed allocation: `add rsp, n` (imm8 up to 127, else imm32) or `lea rsp, [fp + d]`. */
export type X64EpilogForm = "add" | "lea";

/**
 * How a function leaves: `ret` (C3), `rep ret` (F3 C3), or a tail call to the next function
 * after its epilog: `jmp next` (EB/E9) or `jmp rax` with a REX.W prefix (48 FF E0), x64-unwind.md §1.5 D.
 */
export type X64Exit = "ret" | "rep-ret" | "tail-jmp" | "tail-jmp-rax";

/** A nonvolatile register saved with `mov [rsp + offset], reg` (SAVE_NONVOL, or SAVE_NONVOL_FAR past 0xFFFF·8). */
export interface X64SaveSpec {
  readonly register: X64NonvolatileRegister;
  /** Bytes from the establisher frame (RSP after the fixed allocation); a multiple of 8. */
  readonly offset: number;
}

/** A nonvolatile XMM register saved with `movaps [rsp + offset], xmmN` (SAVE_XMM128, or SAVE_XMM128_FAR past 0xFFFF·16). */
export interface X64XmmSaveSpec {
  /** 6..15: XMM6–XMM15 are the nonvolatile ones. */
  readonly xmm: number;
  /** Bytes from the establisher frame; a multiple of 16. */
  readonly offset: number;
}

/** A frame register set with `lea reg, [rsp + offset]` after the fixed allocation (SET_FPREG). */
export interface X64FrameSpec {
  /** Must also be pushed. R12 is refused: `lea rsp, [r12 + d]` needs a SIB byte that epilog detection misreads (§1.5). */
  readonly register: X64NonvolatileRegister;
  /** FrameOffset in bytes: a multiple of 16 in 0..240, at most the fixed allocation. */
  readonly offset: number;
}

/** The body of a function split into a chained fragment (x64-unwind.md §1.7, W4). */
export interface X64ChainedSpec {
  /** The register the fragment saves into the function's home area (SAVE_NONVOL) and uses. */
  readonly register: X64NonvolatileRegister;
  /** Where the fragment goes: after every function, or before them all (a negative prolog offset, §1.7). */
  readonly placement: "after" | "before";
}

/** One function of an x64 call chain. */
export interface X64FunctionSpec {
  /** Symbol name and assembly label: a C identifier, unique within the program. */
  readonly name: string;
  /** Nonvolatile registers pushed first in the prolog, in push order (PUSH_NONVOL each). */
  readonly pushes?: readonly X64NonvolatileRegister[];
  /** The fixed allocation in bytes, a multiple of 8 (default 0). 4096 or more goes through `__chkstk`. */
  readonly alloc?: number;
  /** A frame register (SET_FPREG). */
  readonly frame?: X64FrameSpec;
  /** Nonvolatile registers saved with mov after the allocation. */
  readonly saves?: readonly X64SaveSpec[];
  /** XMM registers saved with movaps after the allocation. */
  readonly xmmSaves?: readonly X64XmmSaveSpec[];
  /** Bytes allocated at run time in the body (`sub rsp, rax`), a positive multiple of 16; needs a frame register. */
  readonly alloca?: number;
  /** The epilog's first instruction (default "lea" with alloca, else "add"). */
  readonly epilog?: X64EpilogForm;
  /** How the function leaves (default "ret"). A tail call jumps to the next function instead of calling it. */
  readonly exit?: X64Exit;
  /** UNWIND_INFO version (default 1). Version 2 adds EPILOG codes describing every epilog (§1.6). */
  readonly version?: 1 | 2;
  /** A leaf function without a RUNTIME_FUNCTION: no prolog, RSP never moves (§1.1). Only the innermost function. */
  readonly leaf?: boolean;
  /** Split the body into a chained fragment that does the call. */
  readonly chained?: X64ChainedSpec;
  /** Entered through a machine frame built by its caller: "plain", or "error-code" with an error code pushed last. */
  readonly machineFrame?: "plain" | "error-code";
  /** Give the function a second epilog: an early return, taken in this run, before the one at its end. */
  readonly earlyReturn?: boolean;
  /**
   * The function calls itself this many times before going deeper, so `recursion + 1` activations
   * are on the stack at the deepest point. The remaining depth travels in ECX.
   */
  readonly recursion?: number;
  /** A body label in the deepest activation, before the call (the innermost function gets "capture" unless it names another). */
  readonly capture?: string;
  /** Capture before every prolog instruction and at the prolog's end: `<name>_prolog_<k>`, and `<name>_chained_prolog_<k>` in a chained fragment. */
  readonly captureProlog?: boolean;
  /** Capture before every instruction of the epilog that runs: `<name>_epilog_<k>`, k = 0 at `add`/`lea` (or the first pop). */
  readonly captureEpilog?: boolean;
  /** Capture inside `__chkstk` while it probes for this function (label `chkstk_capture`); this must be the only function that probes. */
  readonly captureProbe?: boolean;
}

/** A whole program: a chain of functions, the outermost (the entry point) first. */
export interface X64ProgramSpec {
  /** File-name-safe program name (kebab-case), e.g. "push-nonvol". */
  readonly name: string;
  /** What the program shows, in one or two sentences. */
  readonly description: string;
  /** functions[0] is `main`, each function calls (or tail-calls, or interrupts into) the next, and the last calls nothing. */
  readonly functions: readonly X64FunctionSpec[];
}

/** A symbol: a function, a chained fragment (`<name>_chained`) or `__chkstk`, with its RVA and size (no alignment padding). */
export interface X64Symbol {
  readonly name: string;
  readonly rva: number;
  readonly size: number;
}

/** One RUNTIME_FUNCTION with the UNWIND_INFO it points at. */
export interface X64UnwindEntry {
  /** The function the entry belongs to. */
  readonly function: string;
  /** "primary" for the function's own entry, "chained" for its chained fragment. */
  readonly fragment: "primary" | "chained";
  readonly runtimeFunction: RuntimeFunction;
  /** What the UNWIND_INFO was encoded from (codes in prolog order). */
  readonly info: UnwindInfoSpec;
  /** The UNWIND_INFO bytes as stored at `runtimeFunction.unwindData`. */
  readonly bytes: Uint8Array;
}

/** A simulated interrupt: where it happens and which handler it enters through a machine frame. */
export interface X64MachineFrame {
  /** The handler function, entered by `jmp` with the machine frame on the stack. */
  readonly handler: string;
  /** Whether an error code sits below the machine frame (PUSH_MACHFRAME OpInfo 1). */
  readonly errorCode: boolean;
  /** Label where the caller starts building the frame; its RSP there is the frame's saved RSP. */
  readonly interrupt: string;
  /** Label of the interrupted instruction: the frame's saved RIP, where execution resumes. */
  readonly resume: string;
}

/** A built program: its image, its source and what it means. */
export interface X64Program {
  readonly name: string;
  readonly description: string;
  readonly machine: "x64";
  /** The PE32+ file bytes. */
  readonly image: Uint8Array;
  /** ImageBase: where the image must be mapped (it has no relocations). */
  readonly base: bigint;
  /** RVA of `main`, the entry point. */
  readonly entryRva: number;
  /** SizeOfStackReserve: the stack the runner must map below the initial RSP, in bytes. */
  readonly stackReserve: number;
  /** Bytes of stack the deepest point of the run uses, from the sentinel's slot down. */
  readonly deepestStack: number;
  /** The Intel-syntax source that was assembled, comments included. */
  readonly asm: string;
  /** One symbol per function, fragment and helper, in address order. */
  readonly symbols: readonly X64Symbol[];
  /** Every label of the source at its virtual address. */
  readonly labels: Readonly<Record<string, bigint>>;
  /** The capture labels in the order the run reaches them; each is reached exactly once, and no two share an address. */
  readonly captures: readonly string[];
  /** The exception directory as stored: sorted by BeginAddress. */
  readonly runtimeFunctions: readonly RuntimeFunction[];
  /** Each RUNTIME_FUNCTION with its UNWIND_INFO, in the same order. */
  readonly unwind: readonly X64UnwindEntry[];
  /** The simulated interrupts, outermost first. */
  readonly machineFrames: readonly X64MachineFrame[];
}

/** ImageBase of every generated x64 program (the usual default for x64 executables). */
export const X64_IMAGE_BASE = 0x1_4000_0000n;
/** The smallest SizeOfStackReserve a program gets: 1 MiB, as link.exe's default. */
export const X64_MIN_STACK_RESERVE = 0x10_0000;
/** Stack the runner keeps above the sentinel: the home area of main's caller and 16 bytes (emulator/run.ts). */
export const X64_ABOVE_SENTINEL = 48;

/** Frames of a page or more are probed page by page through `__chkstk`, as MSVC does. */
const PAGE = 4096;
/** Head room added to the deepest point before rounding the reserve up to whole MiB. */
const STACK_HEADROOM = 0x1_0000;
const MAX_ALLOC = 0x100_0000;
const MAX_STACK = 0x400_0000;
const MAX_RECURSION = 100_000;
const HOME_AREA = 32;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names Keystone would read as registers or operand keywords, not as labels. */
const RESERVED = new Set([
  ...["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "rip", "eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "eip"],
  ...["ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "al", "ah", "bl", "bh", "cl", "ch", "dl", "dh", "sil", "dil", "bpl", "spl"],
  ...Array.from({ length: 8 }, (_, i) => [`r${i + 8}`, `r${i + 8}d`, `r${i + 8}w`, `r${i + 8}b`]).flat(),
  ...Array.from({ length: 16 }, (_, i) => `xmm${i}`),
  ...["cs", "ds", "es", "fs", "gs", "ss", "byte", "word", "dword", "qword", "xmmword", "ptr", "offset", "short", "near", "far", "rel"],
]);

/** The checked, defaulted form of a function spec. */
interface Func {
  readonly index: number;
  readonly name: string;
  readonly pushes: readonly X64NonvolatileRegister[];
  readonly alloc: number;
  readonly frame: X64FrameSpec | undefined;
  readonly saves: readonly X64SaveSpec[];
  readonly xmmSaves: readonly X64XmmSaveSpec[];
  readonly alloca: number;
  readonly epilog: X64EpilogForm;
  readonly exit: X64Exit;
  readonly version: 1 | 2;
  readonly leaf: boolean;
  readonly chained: X64ChainedSpec | undefined;
  readonly machineFrame: "plain" | "error-code" | undefined;
  readonly earlyReturn: boolean;
  readonly recursion: number;
  readonly capture: string | undefined;
  readonly captureProlog: boolean;
  readonly captureEpilog: boolean;
  readonly captureProbe: boolean;
  /** The fixed allocation goes through `__chkstk`. */
  readonly probe: boolean;
  /** The function makes a call (or simulates an interrupt), so it needs the home area and an aligned RSP. */
  readonly calls: boolean;
  /** RSP mod 16 at entry: 8 after a call or a plain machine frame, 0 after a machine frame with error code. */
  readonly entryResidue: 0 | 8;
}

/** A line of source: a label, an instruction or a directive. Marker labels only exist in the measuring pass. */
type Item =
  | { readonly kind: "label"; readonly name: string; readonly keep: boolean }
  | { readonly kind: "insn"; readonly text: string; readonly comment?: string }
  | { readonly kind: "directive"; readonly text: string };

/** A prolog instruction and the unwind code it earns, once its end offset is known. */
interface Step {
  readonly text: string;
  readonly comment: string;
  readonly code?: (codeOffset: number) => UnwindCode;
  /** The `call __chkstk` of a probed allocation. */
  readonly probe?: true;
}

/** A run of source between alignment padding: a function, a chained fragment or `__chkstk`. */
interface Block {
  readonly kind: "function" | "fragment" | "helper";
  readonly func: Func | undefined;
  readonly items: readonly Item[];
}

/** Builds a program: assembly, image, unwind data, symbols and labels. A bad spec throws a RangeError naming the field. */
export async function buildX64Program(spec: X64ProgramSpec): Promise<X64Program> {
  const funcs = checkProgram(spec);
  const blocks = programBlocks(funcs);
  checkLabels(spec, blocks);
  const assembler = await loadAssembler();
  const textAddress = X64_IMAGE_BASE + BigInt(FIRST_SECTION_RVA);

  // First pass: the bare code with marker labels after every prolog and epilog instruction, to
  // learn every CodeOffset and extent. The final source quotes the unwind data in comments and
  // keeps only the labels worth naming; the second pass checks it assembles to the same bytes.
  const bare = assembler.assembleProgram(renderBare(blocks), { mode: 64, address: textAddress });
  const rva = (label: string): number => {
    const address = bare.labels.get(label);
    if (address === undefined) throw new Error(`label ${label} was not assembled`);
    return Number(address - X64_IMAGE_BASE);
  };
  const xdataRva = FIRST_SECTION_RVA + alignUp(bare.bytes.length, SECTION_ALIGNMENT);
  const unwind = unwindEntries(funcs, rva, xdataRva);
  const xdata = xdataBytes(unwind, xdataRva);
  const runtimeFunctions = unwind.map((u) => u.runtimeFunction).sort((a, b) => a.beginRva - b.beginRva);
  const pdata = encodeRuntimeFunctions(runtimeFunctions);
  const pdataRva = xdataRva + alignUp(Math.max(xdata.length, 1), SECTION_ALIGNMENT);
  const deepestStack = stackDepth(funcs);
  const stackReserve = Math.max(X64_MIN_STACK_RESERVE, alignUp(deepestStack + STACK_HEADROOM, 0x10_0000));

  const source = [
    ...programHeader(spec, funcs, { xdataRva, pdataRva, deepestStack, stackReserve, hasUnwind: unwind.length > 0 }),
    renderFinal(blocks, (block) => blockHeader(block, unwind, block.func === undefined ? undefined : funcs[block.func.index - 1])),
  ].join("\n");
  const final = assembler.assembleProgram(source, { mode: 64, address: textAddress });
  if (!sameBytes(final.bytes, bare.bytes)) throw new Error(`${spec.name}: the commented source assembled differently from the bare one`);

  const code = final.bytes;
  const digest = createHash("sha256").update(spec.name).update(code).update(xdata).update(pdata).digest();
  const timeDateStamp = digest.readUInt32LE(16);
  const entryRva = rva(funcs[0]!.name);
  const sections: SectionSpec[] = [{ name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: code } }];
  if (unwind.length > 0) {
    sections.push(
      { name: ".xdata", characteristics: SECTION_CHARACTERISTICS.rdata, content: { bytes: xdata } },
      {
        name: ".pdata",
        characteristics: SECTION_CHARACTERISTICS.rdata,
        content: { bytes: pdata, directories: [{ index: DIRECTORY_INDEX.EXCEPTION, rva: pdataRva, size: pdata.length }] },
      },
    );
  }
  const written = writePeImage({
    machine: "x64",
    imageBase: X64_IMAGE_BASE,
    entryRva,
    timeDateStamp,
    stackReserve,
    sections: [
      ...sections,
      debugSection({ codeView: { guid: new Uint8Array(digest.subarray(0, 16)), age: 1, pdbName: `${spec.name}.pdb` }, timeDateStamp }),
    ],
  });
  const placed = new Map(written.sections.map((s) => [s.name, s.rva]));
  if (unwind.length > 0 && (placed.get(".xdata") !== xdataRva || placed.get(".pdata") !== pdataRva)) {
    throw new Error(`${spec.name}: .xdata/.pdata landed at ${String(placed.get(".xdata"))}/${String(placed.get(".pdata"))}, not where the unwind data points`);
  }

  const labels: Record<string, bigint> = {};
  for (const [name, address] of [...final.labels].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))) labels[name] = address;
  const byBegin = new Map(unwind.map((u) => [u.runtimeFunction.beginRva, u]));
  return {
    name: spec.name,
    description: spec.description,
    machine: "x64",
    image: written.bytes,
    base: X64_IMAGE_BASE,
    entryRva,
    stackReserve,
    deepestStack,
    asm: `${source}\n`,
    symbols: programSymbols(funcs, blocks, rva),
    labels,
    captures: distinctCaptures(captureOrder(funcs), final.labels, new Set(funcs.flatMap((f) => (f.capture === undefined ? [] : [f.capture])))),
    runtimeFunctions,
    unwind: runtimeFunctions.map((rf) => byBegin.get(rf.beginRva)!),
    machineFrames: funcs.flatMap((f) =>
      f.machineFrame === undefined
        ? []
        : [{ handler: f.name, errorCode: f.machineFrame === "error-code", interrupt: `${funcs[f.index - 1]!.name}_interrupt`, resume: `${funcs[f.index - 1]!.name}_resume` }],
    ),
  };
}

/** Checks a program spec without building it; throws the RangeError {@link buildX64Program} would. */
export function checkX64Program(spec: X64ProgramSpec): void {
  checkLabels(spec, programBlocks(checkProgram(spec)));
}

/** Validates a program spec and fills in the defaults; throws a RangeError naming the program, function and field. */
function checkProgram(spec: X64ProgramSpec): Func[] {
  const where = `program ${JSON.stringify(spec.name)}`;
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(spec.name)) throw new RangeError(`${where}: the name must be kebab-case`);
  if (spec.functions.length === 0) throw new RangeError(`${where}: needs at least one function`);
  const last = spec.functions.length - 1;
  const funcs = spec.functions.map((f, index): Func => {
    const at = `${where}, function ${JSON.stringify(f.name)}`;
    function fail(message: string): never {
      throw new RangeError(`${at}: ${message}`);
    }
    const count = (field: string, value: number | undefined, max: number, multiple = 1): number => {
      const v = value ?? 0;
      if (!Number.isInteger(v) || v < 0 || v > max || v % multiple !== 0) fail(`${field} = ${v} is not a multiple of ${multiple} in 0..${max}`);
      return v;
    };
    const nonvolatile = (field: string, r: string): void => {
      if (!(X64_NONVOLATILE as readonly string[]).includes(r)) fail(`${field}: ${r} is not a nonvolatile general register`);
    };
    if (!IDENTIFIER.test(f.name) || RESERVED.has(f.name.toLowerCase())) fail("the name must be a C identifier that is not a register");
    if (index === 0 && f.name !== "main") fail("the entry function must be called main");
    const pushes = [...(f.pushes ?? [])];
    pushes.forEach((r) => nonvolatile("pushes", r));
    if (new Set(pushes).size !== pushes.length) fail("pushes lists a register twice");
    const alloc = count("alloc", f.alloc, MAX_ALLOC, 8);
    const alloca = count("alloca", f.alloca, PAGE, 16);
    const recursion = count("recursion", f.recursion, MAX_RECURSION);
    const leaf = f.leaf ?? false;
    const version = f.version ?? 1;
    if (version !== 1 && version !== 2) fail("version must be 1 or 2");
    const exit = f.exit ?? "ret";
    if (!["ret", "rep-ret", "tail-jmp", "tail-jmp-rax"].includes(exit)) fail(`exit ${String(exit)} is not ret, rep-ret, tail-jmp or tail-jmp-rax`);
    const tail = exit === "tail-jmp" || exit === "tail-jmp-rax";
    const next = spec.functions[index + 1];
    const machineFrame = f.machineFrame;
    if (machineFrame !== undefined && machineFrame !== "plain" && machineFrame !== "error-code") fail('machineFrame must be "plain" or "error-code"');
    const entryResidue = machineFrame === "error-code" ? 0 : 8;
    const earlyReturn = f.earlyReturn ?? false;
    const captureProlog = f.captureProlog ?? false;
    const captureEpilog = f.captureEpilog ?? false;
    const captureProbe = f.captureProbe ?? false;
    const probe = alloc >= PAGE;

    const frame = f.frame;
    if (frame !== undefined) {
      nonvolatile("frame.register", frame.register);
      if (frame.register === "r12") fail("frame.register r12 needs a SIB byte in lea rsp, [r12 + d], which epilog detection misreads (x64-unwind.md §1.5)");
      if (!pushes.includes(frame.register)) fail(`the frame register ${frame.register} must be pushed first: it is nonvolatile`);
      count("frame.offset", frame.offset, 240, 16);
      if (frame.offset > alloc) fail(`frame.offset ${frame.offset} must not exceed the fixed allocation ${alloc}`);
    }
    const epilog = f.epilog ?? (alloca > 0 ? "lea" : "add");
    if (epilog !== "add" && epilog !== "lea") fail('epilog must be "add" or "lea"');
    if (alloca > 0 && frame === undefined) fail("alloca needs a frame register: after sub rsp, rax only it locates the frame");
    if (epilog === "lea" && frame === undefined) fail("a lea epilog needs a frame register");
    if (alloca > 0 && epilog !== "lea") fail("alloca needs a lea epilog: add rsp, n cannot undo a run-time allocation");

    const chained = f.chained;
    if (chained !== undefined) {
      nonvolatile("chained.register", chained.register);
      if (chained.placement !== "after" && chained.placement !== "before") fail('chained.placement must be "after" or "before"');
      if (next === undefined || tail) fail("a chained fragment does the call, so the function must call a next one");
      if (recursion > 0 || alloca > 0 || machineFrame !== undefined) fail("a chained function cannot recurse, use alloca or be a handler");
    }

    // Saves: into the function's own frame above the callees' home area, or into the home area
    // its caller reserved above the return address (as MSVC saves registers there).
    const calls = (next !== undefined && !tail) || recursion > 0;
    const framed = 8 * pushes.length + alloc;
    const ownLow = calls ? HOME_AREA : 0;
    const homeLow = framed + 8;
    const taken: { from: number; to: number; what: string }[] = [];
    const place = (what: string, offset: number, size: number): void => {
      const inOwn = offset >= ownLow && offset + size <= alloc;
      const inHome = machineFrame === undefined && offset >= homeLow && offset + size <= homeLow + HOME_AREA;
      if (!inOwn && !inHome) {
        fail(`${what} at ${offset} lies neither in the frame (${ownLow}..${alloc}) nor in the caller's home area (${homeLow}..${homeLow + HOME_AREA})`);
      }
      for (const t of taken) if (offset < t.to && t.from < offset + size) fail(`${what} at ${offset} overlaps ${t.what}`);
      taken.push({ from: offset, to: offset + size, what });
    };
    const saves = [...(f.saves ?? [])];
    for (const s of saves) {
      nonvolatile("saves", s.register);
      if (pushes.includes(s.register)) fail(`saves: ${s.register} is already pushed`);
      count(`saves ${s.register} offset`, s.offset, MAX_ALLOC, 8);
      place(`the save of ${s.register}`, s.offset, 8);
    }
    if (new Set(saves.map((s) => s.register)).size !== saves.length) fail("saves lists a register twice");
    const xmmSaves = [...(f.xmmSaves ?? [])];
    for (const x of xmmSaves) {
      if (!Number.isInteger(x.xmm) || x.xmm < 6 || x.xmm > 15) fail(`xmmSaves: xmm${x.xmm} is not one of the nonvolatile XMM6..XMM15`);
      count(`xmmSaves xmm${x.xmm} offset`, x.offset, MAX_ALLOC, 16);
      place(`the save of xmm${x.xmm}`, x.offset, 16);
    }
    if (new Set(xmmSaves.map((x) => x.xmm)).size !== xmmSaves.length) fail("xmmSaves lists a register twice");
    if (chained !== undefined) {
      if (pushes.includes(chained.register) || saves.some((s) => s.register === chained.register)) fail(`chained.register ${chained.register} is already saved by the prolog`);
      place(`the chained save of ${chained.register}`, homeLow, 8);
    }

    if (leaf) {
      if (index !== last) fail("a leaf function without pdata cannot call anything, so it must be the innermost");
      if (pushes.length > 0 || alloc > 0 || frame !== undefined || saves.length > 0 || xmmSaves.length > 0 || alloca > 0) {
        fail("a leaf function without pdata must not touch the stack: no pushes, allocation, frame register or saves");
      }
      if (version !== 1 || chained !== undefined || machineFrame !== undefined || recursion > 0 || earlyReturn || tail) {
        fail("a leaf function without pdata has no unwind info: no version 2, chaining, machine frame, recursion, early return or tail call");
      }
      if (captureProlog || captureEpilog) fail("a leaf function has no prolog or epilog to capture");
    }
    if (tail) {
      if (next === undefined) fail("a tail call needs a next function to jump to");
      if (next.machineFrame !== undefined) fail("a tail call cannot enter a handler: the handler is entered through a machine frame");
      if (earlyReturn || recursion > 0 || machineFrame !== undefined) fail("a tail-calling function cannot have an early return, recurse or be a handler");
    }
    if (machineFrame !== undefined) {
      if (index === 0) fail("main is entered by a call, not through a machine frame");
      if (version !== 1 || earlyReturn || captureEpilog || recursion > 0 || alloca > 0) {
        fail("a handler returns through its machine frame, which no epilog form describes: no version 2, early return, epilog captures, recursion or alloca");
      }
    }
    if (recursion > 0 && (captureProlog || captureEpilog)) fail("a recursive function runs its prolog and epilog many times; prolog and epilog captures would be reached more than once");
    if (captureProbe && !probe) fail("captureProbe needs an allocation of a page or more (which goes through __chkstk)");
    if (captureProbe && recursion > 0) fail("captureProbe in a recursive function would be reached more than once");

    // The x64 ABI: RSP ≡ 0 (mod 16) at every call, with the 32-byte home area reserved.
    const aligned = (entryResidue - framed) % 16 === 0;
    if ((calls || xmmSaves.length > 0) && !aligned) {
      fail(`pushes (${pushes.length}) and alloc (${alloc}) leave RSP ≡ ${(((entryResidue - framed) % 16) + 16) % 16} (mod 16); calls and movaps need it 16-aligned`);
    }
    if (calls && alloc < HOME_AREA) fail(`a function that calls must reserve the ${HOME_AREA}-byte home area: alloc ${alloc} is too small`);
    if (f.capture !== undefined && (!IDENTIFIER.test(f.capture) || RESERVED.has(f.capture.toLowerCase()))) {
      fail(`capture label ${JSON.stringify(f.capture)} must be a C identifier that is not a register`);
    }
    return {
      index,
      name: f.name,
      pushes,
      alloc,
      frame,
      saves,
      xmmSaves,
      alloca,
      epilog,
      exit,
      version,
      leaf,
      chained,
      machineFrame,
      earlyReturn,
      recursion,
      capture: f.capture ?? (index === last ? "capture" : undefined),
      captureProlog,
      captureEpilog,
      captureProbe,
      probe,
      calls,
      entryResidue,
    };
  });
  const probing = funcs.filter((f) => f.probe);
  if (funcs.some((f) => f.captureProbe) && (probing.length !== 1 || probing[0]!.recursion > 0)) {
    throw new RangeError(`${where}: captureProbe needs exactly one function that probes the stack, and it must not recurse`);
  }
  const deepest = stackDepth(funcs);
  if (deepest > MAX_STACK) throw new RangeError(`${where}: the deepest stack needs ${deepest} bytes, more than ${MAX_STACK}`);
  return funcs;
}

/** Every label the generator emits, markers included, must be unique, or Keystone would resolve branches wrongly. */
function checkLabels(spec: X64ProgramSpec, blocks: readonly Block[]): void {
  const seen = new Set<string>();
  for (const block of blocks) {
    for (const item of block.items) {
      if (item.kind !== "label") continue;
      if (seen.has(item.name)) throw new RangeError(`program ${JSON.stringify(spec.name)}: label ${JSON.stringify(item.name)} is defined twice`);
      seen.add(item.name);
    }
  }
}

/** Stack bytes one activation occupies: return address (or machine frame), pushes, fixed allocation and alloca. */
function frameBytes(f: Func): number {
  const entry = f.machineFrame === undefined ? 8 : f.machineFrame === "plain" ? 40 : 48;
  return entry + 8 * f.pushes.length + f.alloc + f.alloca;
}

/** Bytes from the top of the stack (above the sentinel) to the deepest point of the run, `__chkstk`'s return address included. */
function stackDepth(funcs: readonly Func[]): number {
  return X64_ABOVE_SENTINEL + funcs.reduce((sum, f) => sum + frameBytes(f) * (f.recursion + 1), 0) + 8;
}

/** An immediate as the source writes it: hex from 10 up, as Windows disassemblers show offsets and sizes. */
const imm = (n: number): string => (n < 10 ? String(n) : hex(n));
const pad = (instruction: string, comment: string): string => `    ${instruction.padEnd(44)} # ${comment}`;
const label = (name: string, keep = true): Item => ({ kind: "label", name, keep });
const insn = (text: string, comment?: string): Item => (comment === undefined ? { kind: "insn", text } : { kind: "insn", text, comment });
const alignUp = (value: number, alignment: number): number => Math.ceil(value / alignment) * alignment;

/** The garbage a function loads into a register it saved: recognisable, and different per function and register. */
function garbageFor(f: Func, register: string): string {
  const n = [...X64_NONVOLATILE].indexOf(register as X64NonvolatileRegister);
  return `0x${(0xbad0_0000_0000_0000n | (BigInt(f.index) << 8n) | BigInt(n)).toString(16).toUpperCase()}`;
}

/** A memory operand for a frame slot: RSP-relative, or frame-register-relative once alloca has moved RSP. */
function slot(f: Func, offset: number, width: "qword" | "xmmword"): string {
  if (f.alloca === 0) return `${width} ptr [rsp + ${imm(offset)}]`;
  const d = offset - f.frame!.offset;
  return `${width} ptr [${f.frame!.register} ${d < 0 ? "-" : "+"} ${imm(Math.abs(d))}]`;
}

/** The prolog instructions, in order, with the unwind code each one earns (x64-unwind.md §1.3). */
function prologSteps(f: Func): Step[] {
  const steps: Step[] = [];
  for (const r of f.pushes) {
    steps.push({ text: `push ${r}`, comment: formatUnwindCode({ op: "push-nonvol", codeOffset: 0, register: r }), code: (end) => ({ op: "push-nonvol", codeOffset: end, register: r }) });
  }
  if (f.alloc > 0) {
    const alloc = formatUnwindCode(allocCode(0, f.alloc));
    if (f.probe) {
      steps.push({ text: `mov eax, ${imm(f.alloc)}`, comment: "frame size for __chkstk" });
      steps.push({ text: "call __chkstk", comment: "touch every page of the new frame; the return address lies inside this prolog (§1.8)", probe: true });
      steps.push({ text: "sub rsp, rax", comment: alloc, code: (end) => allocCode(end, f.alloc) });
    } else {
      steps.push({ text: `sub rsp, ${imm(f.alloc)}`, comment: alloc, code: (end) => allocCode(end, f.alloc) });
    }
  }
  if (f.frame !== undefined) {
    const { register, offset } = f.frame;
    steps.push({
      text: offset === 0 ? `mov ${register}, rsp` : `lea ${register}, [rsp + ${imm(offset)}]`,
      comment: `UWOP_SET_FPREG: FrameRegister ${register}, FrameOffset ${hex(offset)}`,
      code: (end) => ({ op: "set-fpreg", codeOffset: end }),
    });
  }
  for (const s of f.saves) {
    steps.push({
      text: `mov qword ptr [rsp + ${imm(s.offset)}], ${s.register}`,
      comment: formatUnwindCode(saveNonvolCode(0, s.register, s.offset)),
      code: (end) => saveNonvolCode(end, s.register, s.offset),
    });
  }
  for (const x of f.xmmSaves) {
    steps.push({
      text: `movaps xmmword ptr [rsp + ${imm(x.offset)}], xmm${x.xmm}`,
      comment: formatUnwindCode(saveXmm128Code(0, x.xmm, x.offset)),
      code: (end) => saveXmm128Code(end, x.xmm, x.offset),
    });
  }
  return steps;
}

/** Where the chained fragment saves its register: slot 0 of the home area its function's caller reserved. */
function chainedSlot(f: Func): number {
  return 8 * f.pushes.length + f.alloc + 8;
}

/** Prolog items: each step preceded by its marker label `<prefix>_prolog_<k>`, then the last marker and the body label. */
function prologItems(prefix: string, steps: readonly Step[], keep: boolean): Item[] {
  const items: Item[] = [];
  steps.forEach((step, k) => {
    items.push(label(`${prefix}_prolog_${k}`, keep), insn(step.text, step.comment));
  });
  items.push(label(`${prefix}_prolog_${steps.length}`, keep), label(`${prefix}_body`));
  return items;
}

/** The instructions that enter `callee`: an argument in ECX and a call, or a simulated interrupt for a handler. */
function callItems(caller: Func, callee: Func): Item[] {
  if (callee.machineFrame === undefined) {
    const argument = callee.recursion > 0 ? String(callee.recursion) : hex(0xa000 + callee.index);
    return [insn(`mov ecx, ${argument}`, callee.recursion > 0 ? "argument 1: remaining recursion depth" : "argument 1"), insn(`call ${callee.name}`)];
  }
  // The CPU's interrupt entry in 64-bit mode, done by hand (x64-unwind.md §1.3, machine frame).
  const items: Item[] = [
    label(`${caller.name}_interrupt`),
    insn("mov r10, rsp", "simulated interrupt: the RSP of the interrupted code"),
    insn("and rsp, -16", "the CPU aligns RSP to 16 before pushing the frame"),
    insn("push 0x2b", "SS (x64 Windows' user data selector)"),
    insn("push r10", "RSP"),
    insn("pushfq", "RFLAGS"),
    insn("push 0x33", "CS (x64 Windows' user code selector)"),
    insn(`lea r10, [rip + ${caller.name}_resume]`, "RIP: the interrupted instruction"),
    insn("push r10", "RIP"),
  ];
  if (callee.machineFrame === "error-code") items.push(insn("push 6", "error code (a page fault's: user-mode write)"));
  items.push(insn(`jmp ${callee.name}`, "enter the handler with the machine frame on the stack"), label(`${caller.name}_resume`));
  return items;
}

/** Body instructions that load garbage into every register the prolog saved, so a wrong unwind shows. */
function clobberItems(f: Func): Item[] {
  const items: Item[] = [];
  for (const r of [...f.pushes, ...f.saves.map((s) => s.register)]) {
    if (r !== f.frame?.register) items.push(insn(`mov ${r}, ${garbageFor(f, r)}`, `${r} is saved; use it`));
  }
  for (const x of f.xmmSaves) items.push(insn(`pcmpeqd xmm${x.xmm}, xmm${x.xmm}`, `xmm${x.xmm} is saved; use it`));
  return items;
}

/** Loads of every register saved with mov/movaps, before the epilog proper. */
function restoreItems(f: Func): Item[] {
  return [
    ...f.saves.map((s) => insn(`mov ${s.register}, ${slot(f, s.offset, "qword")}`, "restore the saved register")),
    ...f.xmmSaves.map((x) => insn(`movaps xmm${x.xmm}, ${slot(f, x.offset, "xmmword")}`, "restore the saved XMM register")),
  ];
}

/** The epilog instructions proper (x64-unwind.md §1.5): the stack adjustment, the pops and the terminator. */
function epilogInstructions(f: Func, next: Func | undefined): Item[] {
  const items: Item[] = [];
  if (f.epilog === "lea") {
    const d = f.alloc - f.frame!.offset;
    items.push(insn(`lea rsp, [${f.frame!.register} + ${imm(d)}]`, `RSP = ${f.frame!.register} - FrameOffset + alloc: back at the pushes`));
  } else if (f.alloc > 0) {
    items.push(insn(`add rsp, ${imm(f.alloc)}`, f.alloc <= 127 ? "add rsp, imm8" : "add rsp, imm32"));
  }
  for (const r of [...f.pushes].reverse()) items.push(insn(`pop ${r}`));
  switch (f.exit) {
    case "ret":
      items.push(insn("ret"));
      break;
    case "rep-ret":
      items.push(insn("rep ret", "F3 C3"));
      break;
    case "tail-jmp":
      items.push(insn(`jmp ${next!.name}`, "tail call: the return address stays for the callee"));
      break;
    case "tail-jmp-rax":
      items.push(insn("rex64 jmp rax", "tail call through REX.W FF /4 (48 FF E0)"));
      break;
  }
  return items;
}

/** An epilog with a marker label before each instruction and one after the last: `<prefix>_<k>`. */
function epilogItems(prefix: string, instructions: readonly Item[], keep: boolean): Item[] {
  const items: Item[] = [];
  instructions.forEach((item, k) => items.push(label(`${prefix}_${k}`, keep), item));
  items.push(label(`${prefix}_${instructions.length}`, false));
  return items;
}

/** The blocks of a program in address order: fragments placed before, functions, fragments placed after, `__chkstk`. */
function programBlocks(funcs: readonly Func[]): Block[] {
  const blocks: Block[] = [];
  const fragment = (f: Func): Block => ({ kind: "fragment", func: f, items: fragmentItems(f, funcs[f.index + 1]!) });
  for (const f of funcs) if (f.chained?.placement === "before") blocks.push(fragment(f));
  for (const f of funcs) blocks.push({ kind: "function", func: f, items: functionItems(f, funcs[f.index + 1]) });
  for (const f of funcs) if (f.chained?.placement === "after") blocks.push(fragment(f));
  if (funcs.some((f) => f.probe)) blocks.push({ kind: "helper", func: undefined, items: chkstkItems(funcs.some((f) => f.captureProbe)) });
  return blocks;
}

/** The items of one function, from its label to `<name>_end`. */
function functionItems(f: Func, next: Func | undefined): Item[] {
  const items: Item[] = [label(f.name)];
  if (f.leaf) {
    items.push(label(`${f.name}_body`));
    if (f.capture !== undefined) items.push(label(f.capture));
    items.push(insn(`mov eax, ${f.index}`, "return value; RSP has not moved: the return address is at [rsp]"));
    items.push(insn(f.exit === "rep-ret" ? "rep ret" : "ret"), label(`${f.name}_end`));
    return items;
  }
  items.push(...prologItems(f.name, prologSteps(f), f.captureProlog));

  const tail = f.exit === "tail-jmp" || f.exit === "tail-jmp-rax";
  items.push(...clobberItems(f));
  if (f.alloca > 0) {
    items.push(insn(`mov eax, ${f.alloca}`, "alloca: a size known only at run time"));
    items.push(insn("sub rsp, rax", `RSP moves by a run-time amount; only ${f.frame!.register} locates the frame now`));
    items.push(insn("mov qword ptr [rsp], rax", "touch the allocation"));
  }
  if (f.recursion > 0) {
    items.push(insn("test ecx, ecx", "remaining recursion depth (argument 1)"));
    items.push(insn(`jz ${f.name}_base`, "depth 0: this is the deepest activation"));
    items.push(insn("dec ecx"));
    items.push(insn(`call ${f.name}`, "ECX = the remaining depth - 1"));
    items.push(insn(`jmp ${f.name}_exit`));
    items.push(label(`${f.name}_base`));
  }
  if (f.chained !== undefined) {
    items.push(insn(`jmp ${f.name}_chained`, "continue in the chained fragment: not an epilog (§1.5 D)"));
    items.push(label(`${f.name}_rejoin`));
  } else {
    if (f.capture !== undefined) items.push(label(f.capture));
    if (next !== undefined && !tail) items.push(...callItems(f, next));
    if (next !== undefined && tail) items.push(insn(`mov ecx, ${hex(0xa000 + next.index)}`, `argument 1 for ${next.name}, entered by the tail call`));
  }
  if (!tail) items.push(insn(`mov eax, ${f.index}`, "return value"));
  if (f.recursion > 0) items.push(label(`${f.name}_exit`));

  if (f.machineFrame !== undefined) {
    items.push(...restoreItems(f), ...handlerReturn(f));
    items.push(label(`${f.name}_end`));
    return items;
  }
  if (f.earlyReturn) {
    items.push(insn(`cmp eax, ${f.index}`, "the early return is taken in this run"));
    items.push(insn(`jne ${f.name}_slow`));
  }
  items.push(...restoreItems(f));
  if (f.exit === "tail-jmp-rax") items.push(insn(`lea rax, [rip + ${next!.name}]`, "the tail-call target"));
  items.push(...epilogItems(`${f.name}_epilog`, epilogInstructions(f, next), f.captureEpilog));
  if (f.earlyReturn) {
    items.push(label(`${f.name}_slow`), insn("mov eax, -1", "not reached in this run"), ...restoreItems(f));
    items.push(...epilogItems(`${f.name}_slow_epilog`, epilogInstructions(f, next), false));
  }
  items.push(label(`${f.name}_end`));
  return items;
}

/** A handler's way out: its own epilog, then what `iretq` would do, popping the machine frame by hand. */
function handlerReturn(f: Func): Item[] {
  const items: Item[] = [];
  if (f.alloc > 0) items.push(insn(`add rsp, ${imm(f.alloc)}`));
  for (const r of [...f.pushes].reverse()) items.push(insn(`pop ${r}`));
  if (f.machineFrame === "error-code") items.push(insn("add rsp, 8", "drop the error code"));
  items.push(
    insn("pop r11", "RIP of the interrupted code (r11 is volatile there)"),
    insn("add rsp, 8", "CS"),
    insn("popfq", "RFLAGS"),
    insn("pop rsp", "RSP of the interrupted code; SS stays behind"),
    insn("jmp r11", "resume: iretq without reloading selectors"),
  );
  return items;
}

/** The chained fragment of `f`: it saves one more register into the home area, does the call and jumps back. */
function fragmentItems(f: Func, next: Func): Item[] {
  const { register } = f.chained!;
  const offset = chainedSlot(f);
  const name = `${f.name}_chained`;
  const items: Item[] = [label(name)];
  items.push(
    ...prologItems(
      name,
      [
        {
          text: `mov qword ptr [rsp + ${imm(offset)}], ${register}`,
          comment: `${formatUnwindCode(saveNonvolCode(0, register, offset))}: home area slot 0`,
          code: (end) => saveNonvolCode(end, register, offset),
        },
      ],
      f.captureProlog,
    ),
  );
  items.push(insn(`mov ${register}, ${garbageFor(f, register)}`, `${register} is saved; use it`));
  if (f.capture !== undefined) items.push(label(f.capture));
  items.push(...callItems(f, next));
  items.push(insn(`mov ${register}, qword ptr [rsp + ${imm(offset)}]`, "restore it"));
  items.push(insn(`jmp ${f.name}_rejoin`, `back into ${f.name}: not an epilog (§1.5 D)`));
  items.push(label(`${name}_end`));
  return items;
}

/** `__chkstk`: probes every page between RSP and the bottom of the frame being allocated, RAX bytes below the caller's RSP. */
function chkstkItems(capture: boolean): Item[] {
  return [
    label("__chkstk"),
    insn("lea r10, [rsp + 8]", "the caller's RSP once this returns"),
    insn("sub r10, rax", "the lowest byte of the frame it allocates"),
    insn("and r10, -4096", "that byte's page"),
    insn("mov r11, rsp"),
    insn("and r11, -4096", "the page RSP is in, already touched"),
    label("__chkstk_loop"),
    insn("cmp r11, r10"),
    insn("je __chkstk_done"),
    insn("sub r11, 4096"),
    insn("test qword ptr [r11], r11", "touch the next page down"),
    insn("jmp __chkstk_loop"),
    label("__chkstk_done"),
    ...(capture ? [label("chkstk_capture")] : []),
    insn("ret", "RSP never moved: a leaf without pdata"),
    label("__chkstk_end"),
  ];
}

/** Source for the measuring pass: every label, markers included, and no comments. */
function renderBare(blocks: readonly Block[]): string {
  return blocks
    .map((block) => block.items.map((item) => (item.kind === "label" ? `${item.name}:` : `    ${item.text}`)).join("\n"))
    .join("\n    .align 16, 0xcc\n");
}

/** The final source: each block under its comment header, marker labels dropped unless they are captures. */
function renderFinal(blocks: readonly Block[], header: (block: Block) => string[]): string {
  return blocks
    .map((block, i) => {
      const lines = [...header(block)];
      for (const item of block.items) {
        if (item.kind === "label") {
          if (item.keep) lines.push(`${item.name}:`);
        } else if (item.kind === "insn" && item.comment !== undefined) {
          lines.push(pad(item.text, item.comment));
        } else {
          lines.push(`    ${item.text}`);
        }
      }
      if (i < blocks.length - 1) lines.push("    .align 16, 0xcc");
      return lines.join("\n");
    })
    .join("\n\n");
}

/** The RUNTIME_FUNCTIONs and UNWIND_INFOs of every function with pdata, from the measured labels; UNWIND_INFOs are laid out in function order. */
function unwindEntries(funcs: readonly Func[], rva: (label: string) => number, xdataRva: number): X64UnwindEntry[] {
  const entries: X64UnwindEntry[] = [];
  let cursor = xdataRva;
  const add = (f: Func, fragment: "primary" | "chained", beginRva: number, endRva: number, info: UnwindInfoSpec): RuntimeFunction => {
    const bytes = encodeUnwindInfo(info);
    const runtimeFunction = { beginRva, endRva, unwindData: cursor };
    entries.push({ function: f.name, fragment, runtimeFunction, info, bytes });
    cursor += alignUp(bytes.length, 4);
    return runtimeFunction;
  };
  for (const f of funcs) {
    if (f.leaf) continue;
    const begin = rva(f.name);
    const end = rva(`${f.name}_end`);
    const steps = prologSteps(f);
    const codes: UnwindCode[] = f.machineFrame === undefined ? [] : [{ op: "push-machframe", codeOffset: 0, errorCode: f.machineFrame === "error-code" }];
    steps.forEach((step, k) => {
      if (step.code !== undefined) codes.push(step.code(rva(`${f.name}_prolog_${k + 1}`) - begin));
    });
    const frame = f.frame === undefined ? {} : { frameRegister: f.frame.register, frameOffset: f.frame.offset };
    const epilogs = f.version === 2 ? { epilogs: v2Epilogs(f, rva, end) } : {};
    const primary = add(f, "primary", begin, end, { version: f.version, sizeOfProlog: rva(`${f.name}_body`) - begin, prolog: codes, ...frame, ...epilogs });
    if (f.chained !== undefined) {
      const name = `${f.name}_chained`;
      const fragmentBegin = rva(name);
      const save = saveNonvolCode(rva(`${name}_prolog_1`) - fragmentBegin, f.chained.register, chainedSlot(f));
      add(f, "chained", fragmentBegin, rva(`${name}_end`), {
        version: f.version,
        sizeOfProlog: rva(`${name}_body`) - fragmentBegin,
        prolog: [save],
        ...frame,
        chained: primary,
      });
    }
  }
  return entries;
}

/**
 * The EPILOG codes of a version-2 function (x64-unwind.md §1.6): an epilog region runs from its
 * first pop through its terminator; the one that ends at EndAddress is the header's, and the early
 * return's is listed by its distance back from EndAddress.
 */
function v2Epilogs(f: Func, rva: (label: string) => number, end: number): EpilogCodes {
  const count = (f.epilog === "lea" || f.alloc > 0 ? 1 : 0) + f.pushes.length + 1;
  const first = count - f.pushes.length - 1;
  const region = (prefix: string): { start: number; size: number; end: number } => {
    const start = rva(`${prefix}_${first}`);
    const stop = rva(`${prefix}_${count}`);
    return { start, size: stop - start, end: stop };
  };
  const last = region(f.earlyReturn ? `${f.name}_slow_epilog` : `${f.name}_epilog`);
  if (last.end !== end) throw new Error(`${f.name}: the last epilog does not end at the function's end`);
  if (!f.earlyReturn) return { size: last.size, atEnd: true, offsets: [] };
  const early = region(`${f.name}_epilog`);
  if (early.size !== last.size) throw new Error(`${f.name}: its epilogs differ in size`);
  return { size: last.size, atEnd: true, offsets: [end - early.start] };
}

/** The `.xdata` section: each UNWIND_INFO at its DWORD-aligned RVA. */
function xdataBytes(entries: readonly X64UnwindEntry[], xdataRva: number): Uint8Array {
  const size = entries.reduce((max, e) => Math.max(max, e.runtimeFunction.unwindData - xdataRva + alignUp(e.bytes.length, 4)), 0);
  const out = new Uint8Array(size);
  for (const e of entries) out.set(e.bytes, e.runtimeFunction.unwindData - xdataRva);
  return out;
}

/** Symbols in address order: functions, chained fragments and `__chkstk`. */
function programSymbols(funcs: readonly Func[], blocks: readonly Block[], rva: (label: string) => number): X64Symbol[] {
  const symbols: X64Symbol[] = funcs.map((f) => ({ name: f.name, rva: rva(f.name), size: rva(`${f.name}_end`) - rva(f.name) }));
  for (const f of funcs) {
    if (f.chained !== undefined) {
      const name = `${f.name}_chained`;
      symbols.push({ name, rva: rva(name), size: rva(`${name}_end`) - rva(name) });
    }
  }
  if (blocks.some((b) => b.kind === "helper")) symbols.push({ name: "__chkstk", rva: rva("__chkstk"), size: rva("__chkstk_end") - rva("__chkstk") });
  return symbols.sort((a, b) => a.rva - b.rva);
}

/** The capture labels in the order a run reaches them: prologs on the way in, bodies, then epilogs on the way out. */
function captureOrder(funcs: readonly Func[]): string[] {
  const out: string[] = [];
  const epilogLabels = (f: Func): string[] => {
    if (!f.captureEpilog) return [];
    const count = (f.epilog === "lea" || f.alloc > 0 ? 1 : 0) + f.pushes.length + 1;
    return Array.from({ length: count }, (_, k) => `${f.name}_epilog_${k}`);
  };
  const visit = (i: number): void => {
    const f = funcs[i];
    if (f === undefined) return;
    if (!f.leaf) {
      prologSteps(f).forEach((step, k) => {
        if (f.captureProlog) out.push(`${f.name}_prolog_${k}`);
        if (f.captureProbe && step.probe === true) out.push("chkstk_capture");
      });
      if (f.captureProlog) out.push(`${f.name}_prolog_${prologSteps(f).length}`);
    }
    if (f.chained !== undefined && f.captureProlog) out.push(`${f.name}_chained_prolog_0`, `${f.name}_chained_prolog_1`);
    if (f.capture !== undefined) out.push(f.capture);
    if (f.exit === "tail-jmp" || f.exit === "tail-jmp-rax") {
      out.push(...epilogLabels(f));
      visit(i + 1);
    } else {
      visit(i + 1);
      out.push(...epilogLabels(f));
    }
  };
  visit(0);
  return out;
}

/**
 * One capture per address: where a generated prolog or epilog label falls on a function's own
 * capture label (a prolog that ends right at the capture), the function's label stands for both.
 */
function distinctCaptures(order: readonly string[], labels: ReadonlyMap<string, bigint>, named: ReadonlySet<string>): string[] {
  const byAddress = new Map<bigint, string>();
  for (const label of order) {
    const address = labels.get(label)!;
    const taken = byAddress.get(address);
    if (taken === undefined || (named.has(label) && !named.has(taken))) byAddress.set(address, label);
  }
  const out: string[] = [];
  for (const label of order) {
    const winner = byAddress.get(labels.get(label)!)!;
    if (!out.includes(winner)) out.push(winner);
  }
  return out;
}

/** The comment block at the top of the source. */
function programHeader(
  spec: X64ProgramSpec,
  funcs: readonly Func[],
  at: { xdataRva: number; pdataRva: number; deepestStack: number; stackReserve: number; hasUnwind: boolean },
): string[] {
  const chain = funcs
    .map((f, i) => {
      const how = i === 0 ? "" : f.machineFrame !== undefined ? "=[interrupt]=> " : funcs[i - 1]!.exit.startsWith("tail") ? "=[tail jmp]=> " : "-> ";
      return `${how}${f.name}${f.recursion > 0 ? ` (x${f.recursion + 1})` : ""}`;
    })
    .join(" ");
  return [
    `# ${spec.name}: ${spec.description}`,
    "#",
    "# x64, Intel syntax as Keystone reads it: numbers are decimal unless written 0x..,",
    "# and comments start with '#'. Built by buildX64Program (emulator/programs/x64-chain.ts),",
    `# assembled at ${hex64(X64_IMAGE_BASE + BigInt(FIRST_SECTION_RVA))} (.text at RVA ${hex(FIRST_SECTION_RVA)} of an image based at ${hex64(X64_IMAGE_BASE)}).`,
    "# Entry point: main, entered with RSP = 8 (mod 16) and a return address of 0; the run ends when main returns.",
    `# Call chain: ${chain}.`,
    at.hasUnwind
      ? `# Unwind data (x64-unwind.md §1.1-§1.3): UNWIND_INFO in .xdata at RVA ${hex(at.xdataRva)}, RUNTIME_FUNCTIONs in .pdata at RVA ${hex(at.pdataRva)};`
      : "# Unwind data: none; every function is a leaf without pdata (x64-unwind.md §1.1).",
    ...(at.hasUnwind ? ["# each is quoted above its code, codes in stored (reverse prolog) order with their CodeOffset."] : []),
    `# Stack: the deepest point is ${at.deepestStack} bytes below the top; map at least ${hex(at.stackReserve)} bytes (SizeOfStackReserve).`,
    "",
  ];
}

/** The comment block above a function, fragment or helper: its shape and its unwind data. */
function blockHeader(block: Block, unwind: readonly X64UnwindEntry[], caller: Func | undefined): string[] {
  if (block.kind === "helper") {
    return ["# __chkstk: probes the pages of a large frame (RAX bytes) without moving RSP: a leaf without pdata (x64-unwind.md §1.10 W2)."];
  }
  const f = block.func!;
  if (block.kind === "fragment") {
    const entry = unwind.find((u) => u.function === f.name && u.fragment === "chained")!;
    return [
      `# ${f.name}_chained: the chained fragment of ${f.name}, placed ${f.chained!.placement === "after" ? "after" : "before"} every function; it saves ${f.chained!.register} only on this path.`,
      ...unwindComment(entry),
    ];
  }
  const shape = [
    f.leaf ? "leaf without pdata" : `pushes [${f.pushes.join(", ")}]`,
    ...(f.alloc > 0 ? [`alloc ${imm(f.alloc)}${f.probe ? " via __chkstk" : ""}`] : []),
    ...(f.frame !== undefined ? [`frame ${f.frame.register}+${imm(f.frame.offset)}`] : []),
    ...f.saves.map((s) => `save ${s.register}@${imm(s.offset)}`),
    ...f.xmmSaves.map((x) => `save xmm${x.xmm}@${imm(x.offset)}`),
    ...(f.alloca > 0 ? [`alloca ${f.alloca}`] : []),
    ...(f.leaf || f.machineFrame !== undefined ? [] : [f.epilog === "lea" ? "epilog lea rsp" : f.alloc > 0 ? "epilog add rsp" : "epilog of pops only"]),
    ...(f.exit !== "ret" ? [`exit ${f.exit}`] : []),
    ...(f.earlyReturn ? ["early return"] : []),
    ...(f.machineFrame !== undefined ? [`entered through a machine frame${f.machineFrame === "error-code" ? " with error code" : ""}`] : []),
    ...(f.recursion > 0 ? [`calls itself ${f.recursion} times`] : []),
  ].join(", ");
  const lines = [`# ${f.name}: ${shape}`];
  if (f.leaf) {
    lines.push("# no RUNTIME_FUNCTION: unwinding it is RIP = [RSP], RSP += 8 (x64-unwind.md §1.1)");
  } else {
    lines.push(...unwindComment(unwind.find((u) => u.function === f.name && u.fragment === "primary")!));
  }
  if (f.machineFrame !== undefined && caller !== undefined) {
    lines.push(
      `# below this handler the truth is the interrupted frame: pc ${caller.name}_resume (the RIP in the machine frame),`,
      `# sp = ${caller.name}'s RSP at ${caller.name}_interrupt (the RSP in it). Its epilog pops the machine frame by hand,`,
      "# a form no epilog rule recognises (§1.5), so no capture is placed there.",
    );
  }
  return lines;
}

/** One RUNTIME_FUNCTION and its UNWIND_INFO as comment lines. */
function unwindComment(entry: X64UnwindEntry): string[] {
  const { runtimeFunction: rf, info, bytes } = entry;
  const flags = info.chained !== undefined ? "UNW_FLAG_CHAININFO" : "0";
  const frame = info.frameRegister === undefined ? "none" : `${info.frameRegister}, FrameOffset ${hex(info.frameOffset ?? 0)}`;
  const lines = [
    `# RUNTIME_FUNCTION ${hex(rf.beginRva)}..${hex(rf.endRva)}, UnwindData ${hex(rf.unwindData)}`,
    `# UNWIND_INFO: Version ${info.version}, Flags ${flags}, SizeOfProlog ${info.sizeOfProlog}, CountOfCodes ${bytes[2]!}, FrameRegister ${frame}`,
  ];
  if (info.epilogs !== undefined) lines.push(`#   ${formatEpilogCodes(info.epilogs)}`);
  for (const code of [...info.prolog].reverse()) lines.push(`#   ${hex(code.codeOffset).padStart(4)}: ${formatUnwindCode(code)}`);
  if (info.chained !== undefined) lines.push(`#   chained to RUNTIME_FUNCTION ${hex(info.chained.beginRva)}..${hex(info.chained.endRva)}, UnwindData ${hex(info.chained.unwindData)}`);
  lines.push(`#   bytes: ${hexBytes(bytes)}`);
  return lines;
}

function hex64(value: bigint): string {
  return `0x${value.toString(16).toUpperCase().padStart(16, "0")}`;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
