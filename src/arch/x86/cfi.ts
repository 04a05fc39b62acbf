/**
 * STACK CFI on x86 (minidump.md §5.5, x86-fpo.md §5.5), for modules whose symbol files describe a
 * function with STACK CFI rather than STACK WIN (DWARF-built code): Breakpad's x86 register map.
 * `$esp` is `.cfa` and `$eip` is `.ra`; the callee-saved registers (`$ebp`, `$ebx`, `$esi`,
 * `$edi`, the machine table's) keep their values where no rule names them. EIP, ESP and EBP must
 * all be recovered.
 */
import { machineInfo } from "../../model/machine.js";
import { cfiStrategy, type CfiMachine } from "../cfi.js";

const SAVED = new Set(machineInfo("x86").calleeSaved);

/** The x86 parameters of the CFI evaluator, in Breakpad's register order. */
export const X86_CFI: CfiMachine = {
  width: 4,
  pc: "eip",
  sp: "esp",
  registers: ["eip", "esp", "ebp", "eax", "ebx", "ecx", "edx", "esi", "edi"].map((r) => {
    const alias = r === "esp" ? ".cfa" : r === "eip" ? ".ra" : undefined;
    return alias === undefined ? { name: `$${r}`, register: r, calleeSaves: SAVED.has(r) } : { name: `$${r}`, register: r, alias, calleeSaves: false };
  }),
  essentials: ["eip", "esp", "ebp"],
};

/** The module's STACK CFI records (trust `cfi`), where no STACK WIN record describes the function. */
export const x86Cfi = cfiStrategy(X86_CFI);
