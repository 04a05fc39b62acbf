/**
 * Stack scanning on ARM64: the ARM64 parameters of the one scanning policy (../scan.ts,
 * minidump.md §5.3, arm64.md Part 5). A word is a return address when, stripped of any pointer
 * authentication code (a saved lr may be signed), it is 4-aligned, in a module, and the
 * instruction before it is a `bl` or `blr` where the code is in the snapshot; Breakpad's own scan,
 * for its order, checks only the module. The caller's sp is the slot + 8, as Breakpad sets it: on
 * ARM64 a return address is saved wherever the prolog put lr, so a scanned frame's sp is a guess.
 * No frame pointer is guessed.
 */
import { breakpadClassify, readStackWord64, scanRegisters, scanStrategy, type ScanMachine } from "../scan.js";
import { returnAddressInfoArm64 } from "./code.js";
import { inheritedArm64 } from "./exec.js";
import { stripPac } from "./pac.js";

/** Words scanned above sp for a caller frame (the window includes its last word). */
export const ARM64_SCAN_WORDS = 40;
/** The same for the context frame. */
export const ARM64_SCAN_WORDS_CONTEXT = 160;



/** The ARM64 parameters of the scanning policy. */
export const ARM64_SCAN: ScanMachine = {
  width: 8,
  ...scanRegisters("pc", "sp", "fp"),
  words: ARM64_SCAN_WORDS,
  contextWords: ARM64_SCAN_WORDS_CONTEXT,
  extendedWords: 0,
  readWord: readStackWord64,
  // A saved lr may be signed: each word is stripped at the walk's virtual-address size.
  cleanWord: (ctx) => ctx.stripPac ?? stripPac,
  classify: (cache, modules, images, value) => returnAddressInfoArm64(cache, modules, images, value),
  inherit: inheritedArm64,
  framePointer: () => undefined,
};

/** Stack scanning for ARM64, the last resort (trust `scan`). */
export const arm64Scan = scanStrategy(ARM64_SCAN);

/**
 * Breakpad's ARM64 scan (arm64.md Part 5, minidump.md §5.3, `ScanForReturnAddress`): the first
 * word in the window whose `word − 1` lies in a module (in one of its functions when it has
 * symbols), taken as it is: no pointer authentication code stripped, no alignment or
 * call-instruction check.
 */
const { cleanWord: _stripped, ...UNSTRIPPED } = ARM64_SCAN;
export const ARM64_BREAKPAD_SCAN: ScanMachine = {
  ...UNSTRIPPED,
  classify: (_cache, modules, _images, value) => breakpadClassify(modules, value),
};

/** Breakpad's ARM64 scan, last in its order (trust `scan`). */
export const arm64BreakpadScan = scanStrategy(ARM64_BREAKPAD_SCAN);
