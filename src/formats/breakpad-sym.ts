/**
 * Breakpad `.sym` text symbol files (minidump.md §7) and their `STACK WIN` records (x86-fpo.md
 * §5.1). The parser reads MODULE, INFO, FILE, FUNC with its line records and INLINE records,
 * INLINE_ORIGIN, PUBLIC, STACK WIN and STACK CFI records; unknown record kinds are counted and
 * skipped, as Breakpad skips them. INLINE and INLINE_ORIGIN records are read in both forms
 * dump_syms has written (breakpad-sym/inline-records.ts); one Breakpad refuses is left out and
 * counted, never thrown, since Breakpad does not count it against the file. It runs over plain bytes or text (no Node APIs) and can be fed in chunks.
 *
 * Lines end at LF, CR or CR LF; empty lines are skipped but still counted. Fields are separated by
 * spaces, and the last field of MODULE, FILE, FUNC, PUBLIC, STACK WIN and STACK CFI is the rest of
 * the line. Numbers are strict: hex digits only (no `0x`) where the format says hex, decimal digits
 * only where it says decimal, and at most 2^53 − 1. Every malformed line throws an
 * {@link InputError} whose reason starts with `line N` (1-based) and whose offset is the byte offset
 * of the line's first byte.
 *
 * Error codes: "bad-magic" when the first record is not MODULE, "missing-field" when a record has
 * too few fields, "bad-hex" for a hex field that is not hex, and "bad-value" for everything else
 * (numbers out of range, a STACK WIN type outside 0..4, a bad decimal field, extra fields, a line
 * record before any FUNC).
 *
 * The file is read lazily: the parser (breakpad-sym/parser.ts) checks every line in one pass and
 * keeps an index of the records (breakpad-sym/tables.ts) over the file's bytes, which it keeps,
 * or over a ByteSource it reads them from again ({@link readBreakpadSym}); objects are made only
 * when they are read: the symbols' `functions`, `publics`, `stackWin`, `stackCfi` and `files` on
 * first use, and attaching the symbols to a snapshot (symbol-file.ts) gives the module lookups
 * over the index (breakpad-sym/module-symbols.ts, breakpad-sym/cfi-index.ts).
 */
import { InputError } from "../errors.js";
import { clip } from "./breakpad-sym/fields.js";
import { storeFileName } from "./store-path.js";
import { BreakpadSymParser } from "./breakpad-sym/parser.js";
import type { BreakpadSymbols, BreakpadSymOptions } from "./breakpad-sym/types.js";

export type { BreakpadCfiDelta, BreakpadStackCfi, StackCfiAt, StackCfiIndex } from "../model/stack-cfi.js";
export {
  MAX_MALFORMED_LINES,
  STACK_WIN_TYPE,
  type BreakpadCodeId,
  type BreakpadFunc,
  type BreakpadInline,
  type BreakpadInlineOrigin,
  type BreakpadLine,
  type BreakpadModule,
  type BreakpadPublic,
  type BreakpadStackWin,
  type BreakpadSymbols,
  type BreakpadSymOptions,
} from "./breakpad-sym/types.js";
export { BreakpadSymParser, readBreakpadSym, symTables } from "./breakpad-sym/parser.js";
export { breakpadFpoData, breakpadFrameData, breakpadFrameDataIndex, stackWinToFpoData, stackWinToFrameData } from "./breakpad-sym/convert.js";
export { breakpadSymbols } from "./breakpad-sym/module-symbols.js";
export { breakpadInlineSites, NAME_OMITTED } from "./breakpad-sym/inline-sites.js";

/** Parses a whole `.sym` file given as UTF-8 bytes or as text; throws {@link InputError} on a malformed line. */
export function parseBreakpadSym(input: Uint8Array | string, options: BreakpadSymOptions = {}): BreakpadSymbols {
  const parser = new BreakpadSymParser(options);
  parser.push(input);
  return parser.finish();
}

/**
 * The symbol-store path of a `.sym` file, `<D>/<debug id>/<N>.sym` (minidump.md §8): D is the
 * debug file's base name (after the last `/` or `\`), and N is D without a trailing `.pdb`
 * (compared case-insensitively) or D itself otherwise (`libfoo.so` → `libfoo.so.sym`). An
 * identifier that is not letters and digits, or a base name that cannot name a file in a store
 * (store-path.ts: empty, `.`, `..`, a control character, a drive letter, over-long), throws
 * InputError("bad-value"), so that the result never leaves the store's root.
 */
export function symbolStorePath(debugFile: string, debugId: string): string {
  const base = storeFileName(debugFile, "debug file");
  if (!/^[0-9A-Za-z]+$/.test(debugId)) {
    throw new InputError("bad-value", `debug id "${clip(debugId)}" is not letters and digits`);
  }
  const name = base.length > 4 && base.slice(-4).toLowerCase() === ".pdb" ? base.slice(0, -4) : base;
  return `${base}/${debugId}/${name}.sym`;
}

