/**
 * The x64 programs of the corpus: one per unwind operation (x64-unwind.md §1.3), one per epilog
 * form (§1.5, §1.6), and the situations a table-based walker must get right besides: a leaf
 * without pdata, chained fragments, machine frames, partial prologs and epilogs, large frames
 * and deep recursion. Each is an {@link X64ProgramSpec} for {@link buildX64Program}; the readable
 * sources, with every function's unwind data quoted, are in vectors/programs/x64/<name>.asm.
 *
 * Every function that calls keeps RSP ≡ 0 (mod 16) at its calls: with an even number of pushes
 * its allocation is ≡ 8 (mod 16), with an odd number ≡ 0.
 */
import type { X64ProgramSpec } from "./x64-chain.js";

/** PUSH_NONVOL of every nonvolatile register, R12–R15 with their 2-byte REX pushes, captured inside the prologs. */
export const PUSH_NONVOL: X64ProgramSpec = {
  name: "push-nonvol",
  description: "UWOP_PUSH_NONVOL for all eight nonvolatile registers (r12-r15 take 2-byte pushes), captured before every prolog instruction (partial prologs).",
  functions: [
    { name: "main", pushes: ["rbx"], alloc: 32 },
    { name: "saver", pushes: ["rbp", "rbx", "rsi", "rdi"], alloc: 40, captureProlog: true },
    { name: "wide", pushes: ["r12", "r13", "r14", "r15"], alloc: 40, captureProlog: true },
    { name: "inner", pushes: ["rbx", "r12"] },
  ],
};

/** ALLOC_SMALL at both ends of its range: 8 and 128 bytes (128 already needs `add rsp, imm32`). */
export const ALLOC_SMALL: X64ProgramSpec = {
  name: "alloc-small",
  description: "UWOP_ALLOC_SMALL for 40, 128 (the largest, whose add rsp needs an imm32) and 8 bytes (the smallest).",
  functions: [
    { name: "main", alloc: 40 },
    { name: "max128", pushes: ["rbx"], alloc: 128, captureProlog: true, captureEpilog: true },
    { name: "small8", alloc: 8, captureProlog: true },
  ],
};

/** The 2-slot ALLOC_LARGE: 136 bytes (the smallest) and 0x4E40 through `__chkstk`, the prolog of x64-unwind.md W2. */
export const ALLOC_LARGE_16: X64ProgramSpec = {
  name: "alloc-large-16",
  description:
    "UWOP_ALLOC_LARGE with a 16-bit scaled size: 136 bytes, and 0x4e40 allocated through __chkstk (x64-unwind.md W2) with captures inside __chkstk and at the return address inside the prolog.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "f136", alloc: 136 },
    { name: "w2", pushes: ["rsi"], alloc: 0x4e40, captureProlog: true, captureProbe: true },
    { name: "inner", pushes: ["rdi"] },
  ],
};

/** The 3-slot ALLOC_LARGE: 512 KiB, the first size the 16-bit form cannot hold. */
export const ALLOC_LARGE_32: X64ProgramSpec = {
  name: "alloc-large-32",
  description: "UWOP_ALLOC_LARGE with an unscaled 32-bit size: 0x80000 bytes (512 KiB, one more step than the 16-bit form holds), probed by __chkstk.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "big", pushes: ["rbx"], alloc: 0x8_0000, captureProlog: true },
    { name: "inner", pushes: ["rsi"] },
  ],
};

/** SET_FPREG with a nonzero FrameOffset: an RBP frame with alloca (x64-unwind.md W1) and an R13 frame. */
export const SET_FPREG: X64ProgramSpec = {
  name: "set-fpreg",
  description:
    "UWOP_SET_FPREG: w1 is x64-unwind.md W1 (rbp = rsp + 0x80, rsi saved at 0x20, alloca in the body, epilog lea rsp, [rbp+0x80]); r13fn uses r13 with FrameOffset 0x10 (epilog 49 8d 65 10).",
  functions: [
    { name: "main", alloc: 40 },
    {
      name: "w1",
      pushes: ["rbp", "rbx", "rdi"],
      alloc: 0x100,
      frame: { register: "rbp", offset: 0x80 },
      saves: [{ register: "rsi", offset: 0x20 }],
      alloca: 64,
      captureProlog: true,
      captureEpilog: true,
      capture: "capture_w1",
    },
    { name: "r13fn", pushes: ["r13"], alloc: 32, frame: { register: "r13", offset: 16 }, epilog: "lea", captureProlog: true, captureEpilog: true },
    { name: "inner", pushes: ["rbx"] },
  ],
};

/** SAVE_NONVOL into the function's own frame and into the home area its caller reserved. */
export const SAVE_NONVOL: X64ProgramSpec = {
  name: "save-nonvol",
  description:
    "UWOP_SAVE_NONVOL: saver saves rsi and rdi in its frame and r12 in the home area above its return address; inner saves at offsets 0 and 8 of a frame with no home area.",
  functions: [
    { name: "main", alloc: 40 },
    {
      name: "saver",
      pushes: ["rbx"],
      alloc: 0x30,
      saves: [
        { register: "rsi", offset: 0x20 },
        { register: "rdi", offset: 0x28 },
        { register: "r12", offset: 0x40 },
      ],
      captureProlog: true,
      captureEpilog: true,
    },
    { name: "inner", alloc: 16, saves: [{ register: "rbx", offset: 0 }, { register: "rbp", offset: 8 }], captureProlog: true },
  ],
};

/** SAVE_NONVOL_FAR: an offset past 0xFFFF·8, next to the largest near one. */
export const SAVE_NONVOL_FAR: X64ProgramSpec = {
  name: "save-nonvol-far",
  description: "UWOP_SAVE_NONVOL_FAR for rsi at 0x80010 (unscaled), beside UWOP_SAVE_NONVOL for rdi at 0x7fff8 (the largest near offset), in a 0x80020-byte frame.",
  functions: [
    { name: "main", alloc: 40 },
    {
      name: "farsave",
      pushes: ["rbx"],
      alloc: 0x8_0020,
      saves: [
        { register: "rsi", offset: 0x8_0010 },
        { register: "rdi", offset: 0x7_fff8 },
      ],
      captureProlog: true,
    },
    { name: "inner", pushes: ["rsi"] },
  ],
};

/** SAVE_XMM128 of XMM6, XMM7 and XMM15 (a REX movaps), and of XMM8 at offset 0. */
export const SAVE_XMM128: X64ProgramSpec = {
  name: "save-xmm128",
  description: "UWOP_SAVE_XMM128 (offsets scaled by 16): xsaver saves xmm6, xmm7 and xmm15 with movaps and rsi with mov; inner saves xmm8 at offset 0.",
  functions: [
    { name: "main", alloc: 40 },
    {
      name: "xsaver",
      pushes: ["rbx"],
      alloc: 0x60,
      xmmSaves: [
        { xmm: 6, offset: 0x20 },
        { xmm: 7, offset: 0x30 },
        { xmm: 15, offset: 0x40 },
      ],
      saves: [{ register: "rsi", offset: 0x50 }],
      captureProlog: true,
      captureEpilog: true,
    },
    { name: "inner", alloc: 24, xmmSaves: [{ xmm: 8, offset: 0 }] },
  ],
};

/** SAVE_XMM128_FAR: an offset past 0xFFFF·16, next to the largest near one. */
export const SAVE_XMM128_FAR: X64ProgramSpec = {
  name: "save-xmm128-far",
  description: "UWOP_SAVE_XMM128_FAR for xmm7 at 0x100010 (unscaled), beside UWOP_SAVE_XMM128 for xmm8 at 0xffff0 (the largest near offset), in a 0x100020-byte frame.",
  functions: [
    { name: "main", alloc: 40 },
    {
      name: "xfar",
      pushes: ["rbx"],
      alloc: 0x10_0020,
      xmmSaves: [
        { xmm: 7, offset: 0x10_0010 },
        { xmm: 8, offset: 0xf_fff0 },
      ],
      captureProlog: true,
    },
    { name: "inner", pushes: ["rsi"] },
  ],
};

/** PUSH_MACHFRAME without an error code: an interrupt handler entered through a machine frame. */
export const MACHFRAME: X64ProgramSpec = {
  name: "machframe",
  description:
    "UWOP_PUSH_MACHFRAME without error code: victim simulates an interrupt into isr, which calls inner. Below isr's frame the truth is the interrupted frame (pc victim_resume, sp victim's RSP), then main.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "victim", pushes: ["rbx", "rsi"], alloc: 40 },
    { name: "isr", machineFrame: "plain", pushes: ["rbp"], alloc: 32, captureProlog: true, capture: "capture_isr" },
    { name: "inner", pushes: ["rdi"] },
  ],
};

/** PUSH_MACHFRAME with an error code (x64-unwind.md W5), and a leaf without pdata below the handler. */
export const MACHFRAME_ERRCODE: X64ProgramSpec = {
  name: "machframe-errcode",
  description:
    "UWOP_PUSH_MACHFRAME with error code (x64-unwind.md W5): the interrupt pushes an error code below the machine frame; isr calls a leaf without pdata.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "victim", pushes: ["rbx", "rsi"], alloc: 40 },
    { name: "isr", machineFrame: "error-code", pushes: ["rbp"], alloc: 40, captureProlog: true, capture: "capture_isr" },
    { name: "leaf", leaf: true },
  ],
};

/** Version-1 epilogs that start with `add rsp, imm8` (48 83 C4 ib). */
export const EPILOG_ADD_IMM8: X64ProgramSpec = {
  name: "epilog-add-imm8",
  description: "v1 epilogs add rsp, imm8 (40, and 120 just under the signed-imm8 limit); pops; ret, captured before each epilog instruction.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "f", pushes: ["rbx", "rsi"], alloc: 40, captureEpilog: true },
    { name: "inner", pushes: ["rdi"], alloc: 120, captureEpilog: true },
  ],
};

/** Version-1 epilogs that start with `add rsp, imm32` (48 81 C4 id). */
export const EPILOG_ADD_IMM32: X64ProgramSpec = {
  name: "epilog-add-imm32",
  description: "v1 epilogs add rsp, imm32 (0x90 and 0x3f8); pops; ret, captured before each epilog instruction.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "f", pushes: ["rbx"], alloc: 0x90, captureEpilog: true },
    { name: "g", alloc: 0x3f8, captureEpilog: true },
    { name: "inner", pushes: ["rsi"] },
  ],
};

/** Version-1 epilogs that start with `lea rsp, [rbp + d]`, with an 8-bit and a 32-bit displacement. */
export const EPILOG_LEA: X64ProgramSpec = {
  name: "epilog-lea",
  description:
    "v1 epilogs lea rsp, [rbp+8] (MinGW's FrameOffset 0x20 frame: 48 8d 65 08 5b 5d c3) and lea rsp, [rbp+0x90] after alloca (48 8d a5 90 00 00 00); pops; ret.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "f", pushes: ["rbp", "rbx"], alloc: 0x28, frame: { register: "rbp", offset: 0x20 }, epilog: "lea", captureEpilog: true },
    { name: "g", pushes: ["rbp", "rsi", "rdi"], alloc: 0x90, frame: { register: "rbp", offset: 0 }, alloca: 48, captureEpilog: true },
    { name: "inner", pushes: ["rbx"] },
  ],
};

/** Version-1 epilogs of pops only (no allocation to give back), and a `rep ret` terminator. */
export const EPILOG_POPS: X64ProgramSpec = {
  name: "epilog-pops",
  description: "v1 epilogs without a stack adjustment: inner pops five registers then ret; mid ends in rep ret (f3 c3).",
  functions: [
    { name: "main", alloc: 40 },
    { name: "mid", pushes: ["rbx", "rsi"], alloc: 40, exit: "rep-ret", captureEpilog: true },
    { name: "inner", pushes: ["rbx", "rsi", "rdi", "r12", "r13"], captureEpilog: true },
  ],
};

/** Version-2 unwind info: EPILOG codes instead of epilog detection, two epilogs in one function. */
export const EPILOG_V2: X64ProgramSpec = {
  name: "epilog-v2",
  description:
    "UNWIND_INFO version 2: f is x64-unwind.md W3 byte for byte (EPILOG size 3 at the end and at End-0xf; it returns through the early one); g pops r12/r13 (2-byte pops); inner has no allocation.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "f", version: 2, pushes: ["rsi", "rdi"], alloc: 40, earlyReturn: true, captureEpilog: true },
    { name: "g", version: 2, pushes: ["rbx", "r12", "r13"], alloc: 32, captureEpilog: true },
    { name: "inner", version: 2, pushes: ["r14"], captureEpilog: true },
  ],
};

/** Epilogs that end in a tail call: `jmp rel` to the next function and REX.W `jmp rax`. */
export const TAIL_CALL: X64ProgramSpec = {
  name: "tail-call",
  description:
    "epilogs ending in tail calls: f jumps to g (jmp rel), g jumps to h through rax (48 ff e0); at the capture in h, f and g are gone and h returns to main.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "f", pushes: ["rbx", "rsi"], alloc: 40, exit: "tail-jmp", captureEpilog: true, capture: "capture_f" },
    { name: "g", pushes: ["rdi"], alloc: 32, exit: "tail-jmp-rax", captureEpilog: true, capture: "capture_g" },
    { name: "h", pushes: ["rbx"] },
  ],
};

/** A leaf function without a RUNTIME_FUNCTION: the return address is at [RSP]. */
export const LEAF_NO_PDATA: X64ProgramSpec = {
  name: "leaf-no-pdata",
  description: "the innermost function is a leaf with no RUNTIME_FUNCTION: RSP never moves, so a walker unwinds it as RIP = [RSP], RSP += 8.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "mid", pushes: ["rbx"], alloc: 32 },
    { name: "leaf", leaf: true },
  ],
};

/** Chained unwind info: body fragments after and before their functions (x64-unwind.md W4). */
export const CHAINED: X64ProgramSpec = {
  name: "chained",
  description:
    "UNW_FLAG_CHAININFO: hot's fragment (after every function) saves rsi in the home area (x64-unwind.md W4); cool's fragment (before every function: a negative prolog offset for the parent) saves r12 and keeps cool's rbp frame.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "hot", pushes: ["rbx"], alloc: 32, chained: { register: "rsi", placement: "after" }, captureProlog: true, capture: "capture_hot" },
    {
      name: "cool",
      pushes: ["rbp", "rdi"],
      alloc: 40,
      frame: { register: "rbp", offset: 32 },
      chained: { register: "r12", placement: "before" },
      captureProlog: true,
      capture: "capture_cool",
    },
    { name: "inner", pushes: ["rbx"] },
  ],
};

/** The largest frame the 2-slot ALLOC_LARGE holds, probed by `__chkstk`. */
export const LARGE_FRAME: X64ProgramSpec = {
  name: "large-frame",
  description: "a 0x7fff8-byte frame (512 KiB - 8, the largest 16-bit ALLOC_LARGE) probed page by page by __chkstk, captured inside __chkstk and along the prolog.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "big", pushes: ["rbx", "rsi"], alloc: 0x7_fff8, captureProlog: true, captureProbe: true },
    { name: "inner", pushes: ["rdi"] },
  ],
};

/** A recursion 1000 calls deep (1001 activations). */
export const RECURSION_1000: X64ProgramSpec = {
  name: "recursion-1000",
  description: "recurse calls itself 1000 times (1001 frames of 48 bytes: return address, rbx, 32-byte home area), then calls a leaf without pdata.",
  functions: [
    { name: "main", alloc: 40 },
    { name: "recurse", pushes: ["rbx"], alloc: 32, recursion: 1000 },
    { name: "leaf", leaf: true },
  ],
};

/** Every x64 corpus program: unwind operations first, then epilog forms, then the other situations. */
export const X64_CORPUS_SPECS: readonly X64ProgramSpec[] = [
  PUSH_NONVOL,
  ALLOC_SMALL,
  ALLOC_LARGE_16,
  ALLOC_LARGE_32,
  SET_FPREG,
  SAVE_NONVOL,
  SAVE_NONVOL_FAR,
  SAVE_XMM128,
  SAVE_XMM128_FAR,
  MACHFRAME,
  MACHFRAME_ERRCODE,
  EPILOG_ADD_IMM8,
  EPILOG_ADD_IMM32,
  EPILOG_LEA,
  EPILOG_POPS,
  EPILOG_V2,
  TAIL_CALL,
  LEAF_NO_PDATA,
  CHAINED,
  LARGE_FRAME,
  RECURSION_1000,
];
