/**
 * Stack scanning on x64: the x64 parameters of the one scanning policy (../scan.ts, minidump.md
 * §5.3, §5.6), the scan strategy, and Breakpad's simulated return from a leaf function (Windows
 * dumps, the context frame only: the return address at RSP or RSP + 8, every register carried
 * over; minidump.md §5.6 step 2).
 */
import type { MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import type { UnwindCache } from "../../unwind/cache.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { breakpadClassify, leafRuleFor, readStackWord64, scanRegisters, scanStrategy, type ScanMachine, type ScanPlan } from "../scan.js";
import { returnAddressInfo64 } from "./code.js";
import { inherited64 } from "./exec.js";

/** Words scanned above RSP for a caller frame (the window includes its last word). */
export const X64_SCAN_WORDS = 40;
/** The same for the context frame. */
export const X64_SCAN_WORDS_CONTEXT = 160;

const MAX = BigInt(Number.MAX_SAFE_INTEGER);


/**
 * The x64 parameters of the scanning policy, with Breakpad's validation alone (minidump.md §5.3:
 * `value − 1` in a module, and in one of its functions when it has symbols), so that a walk
 * without unwind data finds Breakpad's frames.
 */
export const X64_SCAN: ScanMachine = {
  width: 8,
  ...scanRegisters("rip", "rsp", "rbp"),
  words: X64_SCAN_WORDS,
  contextWords: X64_SCAN_WORDS_CONTEXT,
  // Breakpad's window and validation alone (a walk without unwind data finds Breakpad's frames).
  extendedWords: 0,
  readWord: readStackWord64,
  classify: (_cache, modules, _images, value) => breakpadClassify(modules, value),
  inherit: inherited64,
  // Breakpad (minidump.md §5.6 step 4): when the callee's RBP is valid, a saved RBP just below the
  // return address that points above it is the caller's; an RBP at or above the caller's RSP is
  // presumed left unchanged; otherwise the caller's RBP is not known.
  framePointer(callee: Registers, recovered: readonly string[] | undefined, slot: bigint, memory: MemoryReader, cache: UnwindCache) {
    const rbp = callee["rbp"];
    if (rbp === undefined || (recovered !== undefined && !recovered.includes("rbp"))) return undefined;
    if (slot - 8n === rbp) {
      const saved = readStackWord64(cache, memory, rbp);
      return saved !== undefined && saved > slot ? { value: saved, recovered: true } : undefined;
    }
    return rbp >= slot + 8n ? { value: rbp, recovered: true } : undefined;
  },
};

/**
 * The same with the call-site checks (the bytes before a return address are a call where the
 * code is in the snapshot), for the repairs of the table-based unwinder.
 */
export const X64_CHECKED_SCAN: ScanMachine = {
  ...X64_SCAN,
  classify: (cache, modules, images, value) => returnAddressInfo64(cache, modules, images, value, value <= MAX ? Number(value) : -1),
};

/** Breakpad-style stack scanning for x64, the last resort (trust `scan`). */
export const x64Scan = scanStrategy(X64_SCAN);

/**
 * Breakpad's simulated return from a leaf function: for the context frame only, the return
 * address at RSP or RSP + 8 (a one-word scan window), the caller keeping every register and the
 * callee's validity. Trust `scan`, rule kind `leaf`; its failure defers to the next strategy.
 */
export const x64Leaf: UnwindStrategy<ScanPlan> = {
  name: "leaf",
  trust: "scan",
  scans: true,
  ruleFor: (site: FrameSite) => (site.index !== 0 ? undefined : leafRuleFor(X64_SCAN, site)),
};
