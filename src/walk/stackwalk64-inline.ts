/**
 * StackWalkEx and dbghelp's inline-frame functions (stackwalk64.md §5.3): SymAddrIncludeInlineTrace,
 * SymQueryInlineTrace, SymFromInlineContext and SymGetLineFromInlineContext, over the target
 * snapshot's symbols (a module symbol's inline sites, ../model/inline.ts).
 *
 * Microsoft documents two InlineFrameContext values only: INLINE_FRAME_CONTEXT_INIT (0), which a
 * caller puts in a fresh STACKFRAME_EX, and INLINE_FRAME_CONTEXT_IGNORE (0xFFFFFFFF), which asks
 * for physical frames only. What StackWalkEx writes in between is undocumented and opaque to
 * callers, who hand it back to the Sym*InlineContext functions. The facade uses Wine's encoding
 * (stackwalk64.md §5.3): the top two bits the kind (3 IGNORE, 2 REGULAR = 0x80000000, 1 INLINE =
 * 0x40000000 | depth, 0 INIT) and the low 30 bits the depth of an inline site, 0 the innermost.
 *
 * The call sequence is Wine's too: a call whose frame holds an INLINE context does not walk; it
 * moves to the next inline site out (depth + 1) or, past the outermost, to the physical frame
 * (REGULAR), leaving the rest of the frame as it is. Any other call walks one physical frame, as
 * StackWalk64 does, and then sets the context to INLINE|0 when the new PC lies in inline sites and
 * to REGULAR when it does not (unless it is IGNORE). So a physical frame whose PC lies in N inline
 * sites is reported N + 1 times: its inline frames innermost first, then itself.
 *
 * Where the documentation is silent, the choices are:
 * - Addresses are looked up as given, as Wine does: the PC of a caller frame is its return address,
 *   so the inline sites are those at the return address (pass return address − 1 to the Sym*
 *   functions for the call's own sites).
 * - Flags: SYM_STKWALK_DEFAULT reports inline frames. SYM_STKWALK_ZEROEXTEND_PTRS reports physical
 *   frames only, as StackWalk64 does (its 32-bit pointers are zero-extended, as every backend here
 *   does), and leaves InlineFrameContext alone. SYM_STKWALK_FORCE_FRAMEPTR and any other bit are
 *   refused with ERROR_INVALID_PARAMETER, as Wine refuses them.
 * - StackFrameSize must be sizeof(STACKFRAME_EX) (272), as Wine requires.
 * - SymFromInlineContext and SymGetLineFromInlineContext of an INLINE context deeper than the sites
 *   at the address, and of a REGULAR or IGNORE context, answer for the address as SymFromAddr and
 *   SymGetLineFromAddr64 do; INIT (0) is refused. The line of an inline frame is the one the
 *   walk's outputs show: the innermost frame's the line record's, an outer frame's the call site
 *   of the frame inside it; a REGULAR context's, the outermost inlined call's site when there is
 *   one. The address of that line is the line record's start for the line record, else the start
 *   of the inner site's range that covers the address (a call site has no address of its own).
 * - SymQueryInlineTrace is Wine's: the current address's function must be the start address's or
 *   the start return address's; the answer is INLINE|0 with the frame index the number of inline
 *   sites, or REGULAR and 0; a start context other than 0, or a start address in another
 *   function, is not implemented (FALSE with `unsupported`).
 */
import { inlineChain, type InlineChain } from "../model/inline.js";
import { lineAt, moduleAt, symbolAt, type Module, type ModuleSymbol, type SourceLine, type Snapshot } from "../model/snapshot.js";
import { STACKFRAME_EX_SIZE, type StackFrameEx } from "../model/stackframe.js";
import { callbacksOf, type ContextRecord, type FunctionTableAccessRoutine, type GetModuleBaseRoutine, type ReadMemoryRoutine, type StackWalkCallbacks, type StackWalkResult, type TranslateAddressRoutine } from "../arch/stackwalk64-call.js";
import { stackWalk64Detailed } from "./stackwalk64.js";

/** StackWalkEx Flags (dbghelp.h). */
export const SYM_STKWALK_DEFAULT = 0;
export const SYM_STKWALK_FORCE_FRAMEPTR = 1;
export const SYM_STKWALK_ZEROEXTEND_PTRS = 2;

/** The InlineFrameContext values Microsoft documents. */
export const INLINE_FRAME_CONTEXT_INIT = 0;
export const INLINE_FRAME_CONTEXT_IGNORE = 0xffff_ffff;

/** Wine's InlineFrameContext encoding (stackwalk64.md §5.3): the kind in the top two bits, the depth below. */
export const INLINE_CONTEXT = {
  ignore: 0xc000_0000,
  regular: 0x8000_0000,
  inline: 0x4000_0000,
  init: 0,
  depthMask: 0x3fff_ffff,
} as const;

const kindOf = (context: number): number => (context & ~INLINE_CONTEXT.depthMask) >>> 0;
const depthOf = (context: number): number => context & INLINE_CONTEXT.depthMask;

/** The symbol covering `address` in the target, with its module and the line record covering it. */
interface SymbolHit {
  module: Module;
  rva: bigint;
  symbol: ModuleSymbol;
  line: SourceLine | undefined;
}

function symbolHit(target: Snapshot | undefined, address: bigint): SymbolHit | undefined {
  if (target === undefined) return undefined;
  const module = moduleAt(target.modules, address);
  if (module === undefined) return undefined;
  const rva = address - module.base;
  const symbol = symbolAt(module, rva);
  if (symbol === undefined) return undefined;
  return { module, rva, symbol, line: lineAt(symbol.lines, rva) };
}

/** The inline chain at `address`, innermost first, with the symbol it is in. */
function chainAt(target: Snapshot | undefined, address: bigint): { hit: SymbolHit; chain: InlineChain | undefined } | undefined {
  const hit = symbolHit(target, address);
  if (hit === undefined) return undefined;
  const sites = hit.symbol.inlines?.at(hit.rva) ?? [];
  return { hit, chain: inlineChain(sites, hit.rva, hit.line) };
}

/** SymAddrIncludeInlineTrace: the number of inline sites at `address` (0 when none, or outside every function). */
export function symAddrIncludeInlineTrace(target: Snapshot | undefined, address: bigint): number {
  return chainAt(target, address)?.chain?.frames.length ?? 0;
}

/** SymQueryInlineTrace's answer: the current context and frame index on success. */
export interface InlineTraceResult extends StackWalkResult {
  curContext?: number;
  curFrameIndex?: number;
}

/** SymQueryInlineTrace (see the file comment for what it answers). */
export function symQueryInlineTrace(target: Snapshot | undefined, startAddress: bigint, startContext: number, startRetAddress: bigint, curAddress: bigint): InlineTraceResult {
  const current = symbolHit(target, curAddress);
  if (current === undefined || current.symbol.kind === "public") return { ok: false, reason: "invalid-parameter", detail: "the current address is in no function" };
  const start = symbolHit(target, startAddress)?.symbol;
  const startRet = symbolHit(target, startRetAddress)?.symbol;
  if (start !== current.symbol && startRet !== current.symbol) {
    return { ok: false, reason: "invalid-parameter", detail: "the current address is in neither the start address's function nor the start return address's" };
  }
  if (start !== current.symbol || startContext !== 0) return { ok: false, reason: "unsupported", detail: "a start context other than 0, or a start address in another function, is not implemented" };
  const depth = symAddrIncludeInlineTrace(target, curAddress);
  return depth > 0 ? { ok: true, curContext: INLINE_CONTEXT.inline, curFrameIndex: depth } : { ok: true, curContext: INLINE_CONTEXT.regular, curFrameIndex: 0 };
}

/** What SymFromInlineContext fills in of a SYMBOL_INFO, and the displacement. */
export interface InlineSymbolResult extends StackWalkResult {
  symbol?: { name: string; address: bigint; modBase: bigint; size?: bigint; inlined: boolean };
  displacement?: bigint;
}

/** The inline frame an INLINE context names at `address`, when there is one. */
function inlineFrameOf(target: Snapshot | undefined, address: bigint, context: number) {
  if (kindOf(context) !== INLINE_CONTEXT.inline) return undefined;
  const found = chainAt(target, address);
  const frame = found?.chain?.frames[depthOf(context)];
  return frame === undefined ? undefined : { found: found!, frame };
}

/** SymFromInlineContext: the inlined function an INLINE context names, or (other contexts) the function at the address. */
export function symFromInlineContext(target: Snapshot | undefined, address: bigint, inlineContext: number): InlineSymbolResult {
  if (kindOf(inlineContext) === INLINE_CONTEXT.init) return { ok: false, reason: "invalid-parameter", detail: "INLINE_FRAME_CONTEXT_INIT names no frame" };
  const inline = inlineFrameOf(target, address, inlineContext);
  if (inline !== undefined) {
    const start = inline.found.hit.module.base + inline.frame.base;
    return { ok: true, symbol: { name: inline.frame.function, address: start, modBase: inline.found.hit.module.base, inlined: true }, displacement: address - start };
  }
  const hit = symbolHit(target, address);
  if (hit === undefined) return { ok: false, reason: "unsupported", detail: "no symbol covers the address" };
  const start = hit.module.base + hit.symbol.rva;
  const symbol: NonNullable<InlineSymbolResult["symbol"]> = { name: hit.symbol.name, address: start, modBase: hit.module.base, inlined: false };
  if (hit.symbol.size !== undefined) symbol.size = hit.symbol.size;
  return { ok: true, symbol, displacement: address - start };
}

/** What SymGetLineFromInlineContext fills in of an IMAGEHLP_LINE64, and the displacement. */
export interface InlineLineResult extends StackWalkResult {
  line?: { fileName: string; lineNumber: number; address: bigint };
  displacement?: bigint;
}

/** SymGetLineFromInlineContext: the source line of the frame an inline context names at `address` (see the file comment). */
export function symGetLineFromInlineContext(target: Snapshot | undefined, address: bigint, inlineContext: number, _moduleBase = 0n): InlineLineResult {
  if (kindOf(inlineContext) === INLINE_CONTEXT.init) return { ok: false, reason: "invalid-parameter", detail: "INLINE_FRAME_CONTEXT_INIT names no frame" };
  const found = chainAt(target, address);
  if (found === undefined) return { ok: false, reason: "unsupported", detail: "no symbol covers the address" };
  const { hit, chain } = found;
  const base = hit.module.base;
  const lineStart = hit.line === undefined ? undefined : base + hit.line.rva;
  let file: string | undefined;
  let lineNumber: number | undefined;
  let at: bigint | undefined;
  const depth = depthOf(inlineContext);
  if (kindOf(inlineContext) === INLINE_CONTEXT.inline && chain !== undefined && depth < chain.frames.length) {
    const frame = chain.frames[depth]!;
    file = frame.file;
    lineNumber = frame.line;
    at = depth === 0 ? lineStart : base + chain.frames[depth - 1]!.base;
  } else if (chain !== undefined) {
    file = chain.file;
    lineNumber = chain.line;
    at = base + chain.frames[chain.frames.length - 1]!.base;
  } else {
    file = hit.line?.file;
    lineNumber = hit.line?.line;
    at = lineStart;
  }
  if (file === undefined || lineNumber === undefined || at === undefined) return { ok: false, reason: "unsupported", detail: "no line information covers the address" };
  return { ok: true, line: { fileName: file, lineNumber, address: at }, displacement: address - at };
}

/**
 * One StackWalkEx call, with the reason for a FALSE (see the file comment for the inline frames,
 * the flags and the InlineFrameContext values).
 */
export function stackWalkExDetailed(
  machineType: number,
  target: Snapshot | undefined,
  frame: StackFrameEx,
  context?: ContextRecord,
  callbacks: StackWalkCallbacks = {},
  flags: number = SYM_STKWALK_DEFAULT,
): StackWalkResult {
  if (frame.stackFrameSize !== STACKFRAME_EX_SIZE) {
    return { ok: false, reason: "invalid-parameter", detail: `StackFrameSize is ${frame.stackFrameSize}, not sizeof(STACKFRAME_EX) = ${STACKFRAME_EX_SIZE} (ERROR_INVALID_PARAMETER)` };
  }
  if (flags !== SYM_STKWALK_DEFAULT && flags !== SYM_STKWALK_ZEROEXTEND_PTRS) {
    return { ok: false, reason: "invalid-parameter", detail: `Flags ${flags} is not SYM_STKWALK_DEFAULT or SYM_STKWALK_ZEROEXTEND_PTRS (ERROR_INVALID_PARAMETER)` };
  }
  const inlines = flags === SYM_STKWALK_DEFAULT && frame.inlineFrameContext >>> 0 !== INLINE_FRAME_CONTEXT_IGNORE;
  if (inlines && kindOf(frame.inlineFrameContext) === INLINE_CONTEXT.inline) {
    // An inline frame was reported last: the next one out, or the physical frame, at the same PC.
    const depth = symAddrIncludeInlineTrace(target, frame.addrPC.offset);
    frame.inlineFrameContext = depthOf(frame.inlineFrameContext) + 1 < depth ? (frame.inlineFrameContext + 1) >>> 0 : INLINE_CONTEXT.regular;
    return { ok: true };
  }
  const result = stackWalk64Detailed(machineType, target, frame, context, callbacks);
  if (result.ok && inlines) frame.inlineFrameContext = symAddrIncludeInlineTrace(target, frame.addrPC.offset) > 0 ? INLINE_CONTEXT.inline : INLINE_CONTEXT.regular;
  return result;
}

/** StackWalkEx (dbghelp.h): fills `frame` with the next frame, inline frames included with SYM_STKWALK_DEFAULT; FALSE at the end. */
export function stackWalkEx(
  machineType: number,
  target: Snapshot | undefined,
  _thread: unknown,
  frame: StackFrameEx,
  context?: ContextRecord,
  readMemory?: ReadMemoryRoutine,
  functionTableAccess?: FunctionTableAccessRoutine,
  getModuleBase?: GetModuleBaseRoutine,
  translateAddress?: TranslateAddressRoutine,
  flags: number = SYM_STKWALK_DEFAULT,
): boolean {
  return stackWalkExDetailed(machineType, target, frame, context, callbacksOf(readMemory, functionTableAccess, getModuleBase, translateAddress), flags).ok;
}
