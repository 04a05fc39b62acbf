/**
 * Stack scanning on ARM: the ARM parameters of the one scanning policy (../scan.ts). A word is a
 * return address when it lies in a module and the instruction before it is a call (code.ts) where
 * the code is in the snapshot; Breakpad's own scan checks only the module (and its functions, with
 * symbols). The caller's sp is the slot + 4, as Breakpad sets it. No frame pointer is guessed.
 */
import { readU32 } from "../../memory/reader.js";
import { breakpadClassify, breakpadClassifyN, scanRegisters, scanStrategy, type ScanMachine } from "../scan.js";
import { returnAddressInfoArm } from "./code.js";
import { inheritedArm } from "./exec.js";

/** Words scanned above sp for a caller frame (Breakpad's kRASearchWords), and for the context frame. */
export const ARM_SCAN_WORDS = 40;
export const ARM_SCAN_WORDS_CONTEXT = 160;

/** The ARM parameters of the scanning policy. */
export const ARM_SCAN: ScanMachine = {
  width: 4,
  ...scanRegisters("pc", "sp", "r11"),
  words: ARM_SCAN_WORDS,
  contextWords: ARM_SCAN_WORDS_CONTEXT,
  extendedWords: 0,
  readWord: (_cache, memory, address) => readU32(memory, address),
  classify: returnAddressInfoArm,
  classifyN: (cache, modules, images, value) => returnAddressInfoArm(cache, modules, images, BigInt(value)),
  inherit: inheritedArm,
  framePointer: () => undefined,
};

/** Stack scanning for ARM, the last resort (trust `scan`). */
export const armScan = scanStrategy(ARM_SCAN);

/** Breakpad's ARM scan (`GetCallerByStackScan`): the first word in the window whose `word − 1` lies in a module (in a function, with symbols). */
export const ARM_BREAKPAD_SCAN: ScanMachine = {
  ...ARM_SCAN,
  classify: (_cache, modules, _images, value) => breakpadClassify(modules, value),
  classifyN: (cache, modules, _images, value) => breakpadClassifyN(cache, modules, value),
};

/** Breakpad's ARM scan, last in its order (trust `scan`). */
export const armBreakpadScan = scanStrategy(ARM_BREAKPAD_SCAN);
