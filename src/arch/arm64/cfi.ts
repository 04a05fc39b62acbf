/**
 * STACK CFI on ARM64 (arm64.md Part 5): Breakpad's arm64 register map. Rules name the registers
 * `x0`-`x30`, `sp` and `pc` (x29 is fp, x30 lr); `.cfa` is sp and `.ra` is pc. x19-x29 keep their
 * values where no rule names them; pc and sp must be recovered. Breakpad strips a pointer
 * authentication code from the pc a rule gives; the walk strips it too, at its virtual-address
 * size, or as Breakpad's `PtrauthStrip` does in Breakpad's order.
 */
import { cfiStrategy, type CfiMachine } from "../cfi.js";
import { stripPac } from "./pac.js";

/** The ARM64 parameters of the CFI evaluator, in Breakpad's register order. */
export const ARM64_CFI: CfiMachine = {
  width: 8,
  pc: "pc",
  sp: "sp",
  registers: [
    ...Array.from({ length: 31 }, (_, i) => ({ name: `x${i}`, register: i === 29 ? "fp" : i === 30 ? "lr" : `x${i}`, calleeSaves: i >= 19 && i <= 29 })),
    { name: "sp", register: "sp", alias: ".cfa" as const, calleeSaves: false },
    { name: "pc", register: "pc", alias: ".ra" as const, calleeSaves: false },
  ],
  essentials: ["pc", "sp"],
  raIsReturnAddress: true,
  cleanPc: (pc, ctx) => (ctx.stripPac ?? stripPac)(pc),
};

/** The module's STACK CFI records (trust `cfi`). */
export const arm64Cfi = cfiStrategy(ARM64_CFI);
