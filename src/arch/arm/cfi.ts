/**
 * STACK CFI on ARM: Breakpad's register map (stackwalker_arm.cc). Rules name the registers
 * `r0`-`r12`, `sp`, `lr` and `pc`; `.cfa` is sp and `.ra` is pc (Breakpad's ARM walker without a
 * frame-pointer register, every OS but iOS). r4-r11 keep their values where no rule names them;
 * pc and sp must be recovered.
 */
import { cfiStrategy, type CfiMachine } from "../cfi.js";

/** The ARM parameters of the CFI evaluator, in Breakpad's register order. */
export const ARM_CFI: CfiMachine = {
  width: 4,
  pc: "pc",
  sp: "sp",
  registers: [
    ...Array.from({ length: 13 }, (_, i) => ({ name: `r${i}`, register: `r${i}`, calleeSaves: i >= 4 && i <= 11 })),
    { name: "sp", register: "sp", alias: ".cfa" as const, calleeSaves: false },
    { name: "lr", register: "lr", calleeSaves: false },
    { name: "pc", register: "pc", alias: ".ra" as const, calleeSaves: false },
  ],
  essentials: ["pc", "sp"],
  raIsReturnAddress: true,
};

/** The module's STACK CFI records (trust `cfi`). */
export const armCfi = cfiStrategy(ARM_CFI);
