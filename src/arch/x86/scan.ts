/**
 * Stack scanning on x86 (minidump.md §5.3, x86-fpo.md §8 rule 5): the x86 parameters of the one
 * scanning policy (../scan.ts). Two strategies use it: `x86RecordlessScan` for functions without
 * a record in a module that has records (hand assembly such as `__chkstk`), where the EBP chain
 * cannot be trusted, and `x86Scan`, the last resort of the `auto` walker.
 */
import { readU32, type MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { scanRegisters, scanRuleFor, scanStrategy, type ScanMachine, type ScanPlan } from "../scan.js";
import { returnAddressInfo, returnAddressInfoN } from "./code.js";
import { inherited, SCAN_WORDS, SCAN_WORDS_CONTEXT, U32, x86Site } from "./site.js";
import { findFpo } from "./tables.js";

/** Largest distance from a slot to the frame it links to for a scanned EBP to be believed (Breakpad: 128 KiB). */
const MAX_EBP_DISTANCE = 128n * 1024n;

/** The x86 parameters of the scanning policy. */
export const X86_SCAN: ScanMachine = {
  width: 4,
  ...scanRegisters("eip", "esp", "ebp"),
  words: SCAN_WORDS,
  contextWords: SCAN_WORDS_CONTEXT,
  // Up to 64 KiB above the window for a frame larger than it, when the call site confirms.
  extendedWords: 16384,
  readWord: (_cache, memory, address) => readU32(memory, address),
  classify: returnAddressInfo,
  classifyN: returnAddressInfoN,
  inherit: inherited,
  // Breakpad (minidump.md §5.5): the word below the return address, where an EBP frame keeps the
  // caller's EBP, when it points above itself and at most 128 KiB away; else EBP carries over.
  framePointer(_callee: Registers, _recovered: readonly string[] | undefined, slot: bigint, memory: MemoryReader) {
    const below = (slot - 4n) & U32;
    const candidate = readU32(memory, below);
    if (candidate !== undefined && candidate > below && candidate - below <= MAX_EBP_DISTANCE) return { value: candidate, recovered: true };
    return undefined;
  },
};

/** Scanning for a function that has no record in a module whose other functions have records (trust `scan`). */
export const x86RecordlessScan: UnwindStrategy<ScanPlan> = {
  name: "recordless-scan",
  trust: "scan",
  scans: true,
  ruleFor(site: FrameSite): ScanPlan | undefined {
    const found = x86Site(site);
    if (found === undefined) return undefined;
    if (found.tables.frameDataIndex.innermost(found.rva) !== undefined || findFpo(found.tables.fpo, found.rva) !== undefined) return undefined;
    // The EBP chain is not to be trusted here: EBP carries over as it is.
    const options: { noRecordRva: number; guessFramePointer: boolean; callee?: { start: bigint; end: bigint } } = { noRecordRva: found.rva, guessFramePointer: false };
    if (found.callee !== undefined) options.callee = found.callee;
    return scanRuleFor(X86_SCAN, site, options);
  },
};

/** Breakpad-style stack scanning with call-site checks (trust `scan`): the `scan` walker. */
export const x86Scan = scanStrategy(X86_SCAN);

/**
 * The same as the `auto` walker's last resort, for a frame outside every module with unwind
 * records: where a module has records, they (and the recordless scan) describe its frames, and a
 * record that finds no return address above its frame is not overruled by a free scan from below.
 */
export const x86ScanWithoutRecords: UnwindStrategy<ScanPlan> = {
  name: "scan",
  trust: "scan",
  scans: true,
  ruleFor: (site: FrameSite) => (x86Site(site) !== undefined ? undefined : scanRuleFor(X86_SCAN, site)),
};
