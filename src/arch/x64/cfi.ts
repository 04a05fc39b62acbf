/**
 * STACK CFI on x64 (minidump.md §5.6 step 1): Breakpad's amd64 register map. `$rsp` is `.cfa` and
 * `$rip` is `.ra`; `$rbx`, `$rbp` and `$r12`–`$r15` are callee-saved here (`$rsi` and `$rdi` are
 * not, even on Windows, whose ABI preserves them: Breakpad's map has them volatile, and its walks
 * are what this reproduces). RIP and RSP must be recovered, and neither may be 0.
 */
import { cfiStrategy, type CfiMachine } from "../cfi.js";

const SAVED = new Set(["rbx", "rbp", "r12", "r13", "r14", "r15"]);

/** The x64 parameters of the CFI evaluator, in Breakpad's register order (the DWARF numbering). */
export const X64_CFI: CfiMachine = {
  width: 8,
  pc: "rip",
  sp: "rsp",
  registers: ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"].map((r) => {
    const alias = r === "rsp" ? ".cfa" : r === "rip" ? ".ra" : undefined;
    return alias === undefined ? { name: `$${r}`, register: r, calleeSaves: SAVED.has(r) } : { name: `$${r}`, register: r, alias, calleeSaves: false };
  }),
  essentials: ["rip", "rsp"],
  // A caller RIP or RSP of 0 fails the rule (Breakpad's amd64 walker), and the walk tries the
  // next strategy: on real Windows dumps a thread's outermost functions often have CFI that
  // yields 0 where scanning still finds BaseThreadInitThunk and RtlUserThreadStart.
  zeroFails: true,
};

/** The module's STACK CFI records (trust `cfi`). */
export const x64Cfi = cfiStrategy(X64_CFI);
