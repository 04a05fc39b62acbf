/**
 * The x86 programs of the corpus: one per situation an x86 walker must handle, from a plain EBP
 * chain to the FPO shapes that break EBP-chain capture (x86-fpo.md §6) and the frames only a
 * frame pointer can unwind. Each is a {@link X86ProgramSpec} for {@link buildX86Program}; the
 * readable sources are in vectors/programs/x86/<name>.asm.
 */
import type { X86ProgramSpec } from "./x86-chain.js";

/** A plain EBP chain, five frames deep: what every walker, ETW's included, gets right. */
export const EBP_CHAIN_5: X86ProgramSpec = {
  name: "ebp-chain-5",
  description: "five EBP frames (main -> f1 -> f2 -> f3 -> f4) with locals, saved registers and cdecl parameters.",
  functions: [
    { name: "main", frame: "ebp", locals: 1 },
    { name: "f1", frame: "ebp", locals: 2, saved: ["esi"], params: 1 },
    { name: "f2", frame: "ebp", params: 2 },
    { name: "f3", frame: "ebp", locals: 3, saved: ["ebx", "esi", "edi"], params: 1 },
    { name: "f4", frame: "ebp", locals: 1, params: 3 },
  ],
};

/** An FPO leaf that never touches EBP: EBP still points at its caller's frame, so EBP-chain capture skips that caller. */
export const FPO_LEAF: X86ProgramSpec = {
  name: "fpo-leaf",
  description:
    "leaf is FPO and leaves EBP alone: at the capture EBP still points at caller's frame, so an EBP-chain (ETW-style) capture skips caller (x86-fpo.md §6, effect 1).",
  functions: [
    { name: "main", frame: "ebp", locals: 1 },
    { name: "caller", frame: "ebp", locals: 2, params: 1 },
    { name: "leaf", frame: "fpo", locals: 2, params: 2 },
  ],
};

/** An FPO function that saves EBP and uses it for garbage, then calls deeper: EBP-chain capture breaks on it. */
export const FPO_USEBP: X86ProgramSpec = {
  name: "fpo-usebp",
  description:
    "worker is FPO, saves EBP (fUseBP) and loads it with garbage, then calls inner, an EBP frame that pushes that garbage as its frame link: an EBP-chain capture stops there (x86-fpo.md §6, effect 2).",
  functions: [
    { name: "main", frame: "ebp", locals: 1 },
    { name: "outer", frame: "ebp", locals: 1, params: 1 },
    { name: "worker", frame: "fpo", locals: 2, saved: ["ebx", "ebp", "esi"], params: 2, capture: "capture_worker" },
    { name: "inner", frame: "ebp", locals: 1, params: 1 },
  ],
};

/** Eight frames mixing FPO and EBP frames, with varying locals, saved registers, parameters and conventions. */
export const MIXED_8: X86ProgramSpec = {
  name: "mixed-8",
  description:
    "eight frames alternating FPO and EBP frames, with 0-4 locals, 0-4 saved registers (two fUseBP functions), 0-3 parameters, cdecl and stdcall.",
  functions: [
    { name: "main", frame: "ebp", locals: 1 },
    { name: "alpha", frame: "fpo", locals: 2, saved: ["esi"], params: 1 },
    { name: "beta", frame: "ebp", locals: 3, saved: ["ebx", "edi"], params: 2, convention: "stdcall" },
    { name: "gamma", frame: "fpo", saved: ["ebx", "ebp", "esi"], params: 3 },
    { name: "delta", frame: "ebp", params: 1 },
    { name: "epsilon", frame: "fpo", locals: 4, saved: ["ebx", "esi", "edi"] },
    { name: "zeta", frame: "fpo", locals: 1, saved: ["ebx", "ebp", "esi", "edi"], params: 2, convention: "stdcall" },
    { name: "eta", frame: "fpo", params: 1 },
  ],
};

/** stdcall functions that return with `ret n`: the callee, not the caller, removes the arguments. */
export const STDCALL: X86ProgramSpec = {
  name: "stdcall",
  description:
    "stdcall functions (ret n) with 1-3 parameters, EBP and FPO frames: an unwind leaves the callee's arguments on the stack (x86-fpo.md §1.4 step 2).",
  functions: [
    { name: "main", frame: "ebp", locals: 1 },
    { name: "open_file", frame: "ebp", locals: 1, saved: ["esi"], params: 2, convention: "stdcall" },
    { name: "read_block", frame: "fpo", locals: 2, saved: ["ebx", "edi"], params: 3, convention: "stdcall" },
    { name: "checksum", frame: "fpo", params: 1, convention: "stdcall" },
  ],
};

/** A recursion 1000 calls deep (1001 activations) through a small FPO frame. */
export const RECURSION_1000: X86ProgramSpec = {
  name: "recursion-1000",
  description: "recurse calls itself 1000 times (1001 FPO frames of 16 bytes each), then calls the leaf.",
  functions: [
    { name: "main", frame: "ebp" },
    { name: "recurse", frame: "fpo", locals: 1, saved: ["esi"], params: 1, recursion: 1000 },
    { name: "leaf", frame: "fpo", params: 1 },
  ],
};

/** Dynamic allocation (`sub esp, eax`) in an EBP frame, the only frame kind that can unwind it. */
export const ALLOCA: X86ProgramSpec = {
  name: "alloca",
  description:
    "grow is an EBP frame that allocates 40 bytes at run time (sub esp, eax) below its saved registers; only EBP locates its return address. Captured in grow and in the FPO leaf below the allocation.",
  functions: [
    { name: "main", frame: "ebp", locals: 1 },
    { name: "grow", frame: "ebp", locals: 2, saved: ["ebx", "esi"], params: 1, alloca: 40, capture: "capture_grow" },
    { name: "leaf", frame: "fpo", locals: 1, saved: ["edi"], params: 2 },
  ],
};

/** Every x86 corpus program, in the order they are listed in the documentation. */
export const X86_CORPUS_SPECS: readonly X86ProgramSpec[] = [EBP_CHAIN_5, FPO_LEAF, FPO_USEBP, MIXED_8, STDCALL, RECURSION_1000, ALLOCA];

/** {@link EBP_CHAIN_5} logging an ETW event in f4: the EBP chain reaches every caller. */
export const EBP_CHAIN_ETW: X86ProgramSpec = {
  ...EBP_CHAIN_5,
  name: "ebp-chain-etw",
  description:
    "ebp-chain-5 logging an ETW event at the capture in f4: every frame is an EBP frame, so after the logging path's frames the ETW array equals the return addresses of the truth (x86-fpo.md §6).",
  etw: "user",
};

/** {@link FPO_LEAF} logging an ETW event in the FPO leaf: the EBP-chain capture skips the leaf's caller. */
export const FPO_LEAF_ETW: X86ProgramSpec = {
  ...FPO_LEAF,
  name: "fpo-leaf-etw",
  description:
    "fpo-leaf logging an ETW event at the capture in leaf, an FPO function that leaves EBP alone: the array goes from leaf straight to main, skipping caller (x86-fpo.md §6, effect 1).",
  etw: "user",
};

/** {@link FPO_USEBP} logging an ETW event at both captures: garbage in EBP truncates the array. */
export const FPO_USEBP_ETW: X86ProgramSpec = {
  ...FPO_USEBP,
  name: "fpo-usebp-etw",
  description:
    "fpo-usebp logging an ETW event at both captures: in worker, EBP holds garbage and the array ends at worker; in inner, the chain reaches worker through inner's frame link and ends there (x86-fpo.md §6, effect 2).",
  etw: "user",
};

/** EBP frames whose innermost function enters a kernel that logs a kernel part and a user part with one MatchId. */
export const KERNEL_USER: X86ProgramSpec = {
  name: "kernel-user",
  description:
    "submit enters the kernel (etwkrnl.sys at 0x80400000), which logs the kernel part of the stack at once and the user part, walked from the trap frame's EBP, on the way back: two items sharing one nonzero MatchId (etw.md §2.3).",
  functions: [
    { name: "main", frame: "ebp", locals: 1 },
    { name: "request", frame: "ebp", locals: 2, saved: ["esi"], params: 1 },
    { name: "submit", frame: "ebp", locals: 1, saved: ["ebx"], params: 2 },
  ],
  etw: "kernel-user",
};

/** The x86 programs that log ETW events; `captureVectors` (emulator/etw-capture.ts) runs them beside the logging modules. */
export const X86_ETW_SPECS: readonly X86ProgramSpec[] = [EBP_CHAIN_ETW, FPO_LEAF_ETW, FPO_USEBP_ETW, KERNEL_USER];
