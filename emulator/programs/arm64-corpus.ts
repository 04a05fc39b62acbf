/**
 * The synthetic ARM64 programs of the corpus (vectors/arm64/synthetic): call chains whose
 * functions between them use every unwind code a prolog or epilog instruction can have (arm64.md
 * §1.4) — alloc_s/m/l, save_r19r20_x, save_fplr(_x), save_regp(_x), save_reg(_x) (lr too),
 * save_lrpair, save_fregp(_x), save_freg(_x), set_fp, add_fp, nop, end, end_c, save_next,
 * pac_sign_lr — in packed form (Flag 1 with CR 0/1/2/3, RegI, RegF; Flag 2 fragments) and in
 * `.xdata` records (E = 1, epilog scopes with shared and own codes, an epilog ending in a tail
 * call, a fragment whose codes start with end_c), plus leaves with and without `.pdata`. Each
 * is swept: a snapshot before every instruction, so every prolog and epilog position is walked.
 *
 * Unicorn's default AArch64 CPU has no pointer authentication (`pacibsp` is a hint, a nop), so
 * signing is stood in for by an instruction that sets bit 52 of LR (`eor x30, x30, #1 << 52`),
 * which the pac_sign_lr code describes as it describes `pacibsp`; the epilog clears it again
 * before `ret`. A saved LR then carries a code above the 48-bit address, as a signed one does.
 */
import { ARM64_CODE as C } from "./arm64-unwind-encode.js";
import type { Arm64ProgramSpec } from "./arm64-chain.js";

/** The stand-in for `pacibsp` / `autibsp`: flips bit 52 of LR. */
const PAC = "eor x30, x30, #0x10000000000000";

/**
 * entry → fh_pac_packed → fa_lrpair → fb_scopes (twice: the long path, then the short one that
 * tail-calls a leaf) → fc_fregs → fd_savenext → fe_pac → fg_frag (three fragments) → ff_fregs →
 * leaf_locals; fg_frag's fragments also call leaf_bare, a leaf without `.pdata`.
 */
export const ARM64_CHAIN: Arm64ProgramSpec = {
  name: "arm64-chain",
  description: "ARM64 call chain: every prolog/epilog unwind code, packed and .xdata forms, fragments, leaves",
  functions: [
    {
      name: "entry",
      lines: ["stp x29, x30, [sp, #-16]!", "mov x29, sp", "mov x0, #1", "bl fh_pac_packed", "ldp x29, x30, [sp], #16", "ret"],
      unwind: { kind: "packed", cr: 3, frameSize: 16 },
    },
    {
      name: "fh_pac_packed",
      lines: [PAC, "stp x29, x30, [sp, #-16]!", "mov x29, sp", "bl fa_lrpair", "ldp x29, x30, [sp], #16", PAC, "ret"],
      unwind: { kind: "packed", cr: 2, frameSize: 16 },
    },
    {
      name: "fa_lrpair",
      lines: [
        "stp x19, x20, [sp, #-48]!",
        "stp x21, x22, [sp, #16]",
        "stp x23, x30, [sp, #32]",
        "mov x19, x0",
        "add x23, x0, #4",
        "mov x0, #0",
        "bl fb_scopes",
        "mov x20, x0",
        "mov x0, #1",
        "bl fb_scopes",
        "add x0, x0, x19",
        "add x0, x0, x20",
        "add x0, x0, x23",
        "ldp x23, x30, [sp, #32]",
        "ldp x21, x22, [sp, #16]",
        "ldp x19, x20, [sp], #48",
        "ret",
      ],
      unwind: { kind: "packed", cr: 1, regI: 5, frameSize: 48 },
    },
    {
      name: "fb_scopes",
      lines: [
        "stp x19, x20, [sp, #-48]!",
        "stp x21, x22, [sp, #16]",
        "str x23, [sp, #32]",
        "stp x29, x30, [sp, #-32]!",
        "mov x29, sp",
        "sub sp, sp, #64",
        "mov x19, x0",
        "cbnz x0, fb_short",
        "bl fc_fregs",
        "add x0, x0, x19",
        "fb_epilog1:",
        "mov sp, x29",
        "ldp x29, x30, [sp], #32",
        "ldr x23, [sp, #32]",
        "ldp x21, x22, [sp, #16]",
        "ldp x19, x20, [sp], #48",
        "ret",
        "fb_short:",
        "str x19, [sp, #8]",
        "ldr x0, [sp, #8]",
        "add x0, x0, #5",
        "fb_epilog2:",
        "add sp, sp, #64",
        "ldp x29, x30, [sp], #32",
        "ldr x23, [sp, #32]",
        "ldp x21, x22, [sp, #16]",
        "ldp x19, x20, [sp], #48",
        "b leaf_bare",
      ],
      unwind: {
        kind: "xdata",
        prolog: [C.alloc_s(64), C.set_fp(), C.save_fplr_x(32), C.save_reg(23, 32), C.save_regp(21, 16), C.save_r19r20_x(48)],
        epilogs: [
          // `mov sp, x29` first: the prolog's codes from set_fp on.
          { at: "fb_epilog1", index: 1 },
          // `add sp` first, and a tail call: codes of its own.
          { at: "fb_epilog2", codes: [C.alloc_s(64), C.save_fplr_x(32), C.save_reg(23, 32), C.save_regp(21, 16), C.save_r19r20_x(48)] },
        ],
      },
    },
    {
      name: "fc_fregs",
      lines: [
        "stp x29, x30, [sp, #-16]!",
        "stp x25, x26, [sp, #-32]!",
        "str x27, [sp, #-16]!",
        "stp d8, d9, [sp, #-32]!",
        "stp d10, d11, [sp, #16]",
        "str d12, [sp, #-16]!",
        "str d13, [sp, #8]",
        "sub sp, sp, #2048",
        "mov x25, x0",
        "fmov d8, x0",
        "fmov d13, x0",
        "bl fd_savenext",
        "fmov x1, d8",
        "add x0, x0, x1",
        "add x0, x0, x25",
        "fc_epilog:",
        "add sp, sp, #2048",
        "ldr d13, [sp, #8]",
        "ldr d12, [sp], #16",
        "ldp d10, d11, [sp, #16]",
        "ldp d8, d9, [sp], #32",
        "ldr x27, [sp], #16",
        "ldp x25, x26, [sp], #32",
        "ldp x29, x30, [sp], #16",
        "ret",
      ],
      unwind: {
        kind: "xdata",
        prolog: [C.alloc_m(2048), C.save_freg(13, 8), C.save_freg_x(12, 16), C.save_fregp(10, 16), C.save_fregp_x(8, 32), C.save_reg_x(27, 16), C.save_regp_x(25, 32), C.save_fplr_x(16)],
        epilogs: [{ at: "fc_epilog", index: 0 }],
        single: true,
      },
    },
    {
      name: "fd_savenext",
      lines: [
        "sub sp, sp, #96",
        "stp x19, x20, [sp, #16]",
        "stp x21, x22, [sp, #32]",
        "stp x23, x30, [sp, #48]",
        "str x29, [sp, #80]",
        "str x30, [sp, #88]",
        "add x29, sp, #80",
        "mov x15, #3",
        "mov x19, x0",
        "mov x22, x15",
        "bl fe_pac",
        "add x0, x0, x19",
        "add x0, x0, x22",
        "fd_epilog:",
        "ldr x30, [sp, #88]",
        "ldr x29, [sp, #80]",
        "ldp x23, x30, [sp, #48]",
        "ldp x21, x22, [sp, #32]",
        "ldp x19, x20, [sp, #16]",
        "add sp, sp, #96",
        "ret",
      ],
      unwind: {
        kind: "xdata",
        // `mov x15, #3` needs no unwinding (nop); x19-x22 are one save_regp extended by save_next.
        prolog: [C.nop(), C.add_fp(80), C.save_reg(30, 88), C.save_reg(29, 80), C.save_lrpair(23, 48), C.save_next(), C.save_regp(19, 16), C.alloc_s(96)],
        epilogs: [{ at: "fd_epilog", index: 3 }],
        single: true,
      },
    },
    {
      name: "fe_pac",
      lines: [
        PAC,
        "sub sp, sp, #4096",
        "sub sp, sp, #32",
        "stp x29, x30, [sp, #16]",
        "add x29, sp, #16",
        "str x0, [sp, #8]",
        "bl fg_frag",
        "ldr x1, [sp, #8]",
        "add x0, x0, x1",
        "fe_epilog:",
        "ldp x29, x30, [sp, #16]",
        "add sp, sp, #32",
        "add sp, sp, #4096",
        PAC,
        "ret",
      ],
      unwind: {
        kind: "xdata",
        prolog: [C.add_fp(16), C.save_fplr(16), C.alloc_s(32), C.alloc_l(4096), C.pac_sign_lr()],
        epilogs: [{ at: "fe_epilog", index: 2 }],
        single: true,
      },
    },
    {
      name: "fg_frag",
      lines: ["stp x19, x20, [sp, #-16]!", "stp x29, x30, [sp, #-16]!", "mov x29, sp", "mov x19, x0", "bl ff_fregs", "b fg_mid"],
      // The first fragment: the prolog, no epilog.
      unwind: { kind: "xdata", prolog: [C.set_fp(), C.save_fplr_x(16), C.save_regp_x(19, 16)] },
    },
    {
      name: "fg_mid",
      fragment: true,
      lines: ["add x0, x0, x19", "bl leaf_bare", "b fg_tail"],
      // Neither prolog nor epilog: Flag 2 packed, the parent's frame (CR 3, x19-x20, 32 bytes).
      unwind: { kind: "packed", flag: 2, cr: 3, regI: 2, frameSize: 32 },
    },
    {
      name: "fg_tail",
      fragment: true,
      lines: ["add x0, x0, #7", "bl leaf_bare", "fg_epilog:", "ldp x29, x30, [sp], #16", "ldp x19, x20, [sp], #16", "ret"],
      // No prolog of its own: end_c first, then the parent's prolog codes; the epilog's own codes.
      unwind: {
        kind: "xdata",
        prolog: [],
        parent: [C.set_fp(), C.save_fplr_x(16), C.save_regp_x(19, 16)],
        epilogs: [{ at: "fg_epilog", codes: [C.save_fplr_x(16), C.save_regp_x(19, 16)] }],
      },
    },
    {
      name: "ff_fregs",
      lines: [
        "str x30, [sp, #-48]!",
        "stp d8, d9, [sp, #8]",
        "stp d10, d11, [sp, #24]",
        "str d12, [sp, #40]",
        "fmov d9, x0",
        "bl leaf_locals",
        "fmov x1, d9",
        "add x0, x0, x1",
        "ldr d12, [sp, #40]",
        "ldp d10, d11, [sp, #24]",
        "ldp d8, d9, [sp, #8]",
        "ldr x30, [sp], #48",
        "ret",
      ],
      unwind: { kind: "packed", cr: 1, regF: 4, frameSize: 48 },
    },
    {
      name: "leaf_locals",
      lines: ["sub sp, sp, #32", "str x0, [sp, #8]", "ldr x1, [sp, #8]", "add x0, x1, #9", "add sp, sp, #32", "ret"],
      unwind: { kind: "packed", cr: 0, frameSize: 32 },
    },
    {
      name: "leaf_bare",
      lines: ["add x0, x0, #3", "eor x0, x0, #1", "ret"],
      unwind: { kind: "none" },
    },
  ],
};

/**
 * An interrupt: `interrupted` stores the machine frame {its SP, the PC to resume at} below its
 * SP and branches to `handler`, as a CPU delivering an interrupt would leave it; the handler's
 * codes end with MSFT_OP_MACHINE_FRAME, so the walk continues into the interrupted frame at the
 * interrupted PC (not a return address) and from there to its caller. The handler returns by
 * reloading SP and PC from the machine frame by hand. The instructions that build and consume
 * the machine frame are in a state no unwind data describes, as around a real interrupt, so the
 * program is not swept: snapshots are taken at the handler's first instructions, in a function
 * it calls, and at its epilog.
 */
export const ARM64_MACHINE_FRAME: Arm64ProgramSpec = {
  name: "arm64-machine-frame",
  description: "ARM64 interrupt: a handler entered through a machine frame (MSFT_OP_MACHINE_FRAME)",
  captures: ["handler", "handler_record", "leaf_bare", "handler_epilog"],
  interruptHandlers: ["handler"],
  functions: [
    {
      name: "entry",
      lines: ["stp x29, x30, [sp, #-16]!", "mov x29, sp", "mov x0, #1", "bl interrupted", "ldp x29, x30, [sp], #16", "ret"],
      unwind: { kind: "packed", cr: 3, frameSize: 16 },
    },
    {
      name: "interrupted",
      lines: [
        "stp x19, x20, [sp, #-16]!",
        "stp x29, x30, [sp, #-16]!",
        "mov x29, sp",
        "mov x19, #5",
        // The interrupt: the machine frame {SP, resume PC}, then into the handler.
        "adr x17, interrupted_resume",
        "mov x16, sp",
        "stp x16, x17, [sp, #-16]!",
        "b handler",
        "interrupted_resume:",
        "add x0, x0, x19",
        "interrupted_epilog:",
        "ldp x29, x30, [sp], #16",
        "ldp x19, x20, [sp], #16",
        "ret",
      ],
      unwind: { kind: "xdata", prolog: [C.set_fp(), C.save_fplr_x(16), C.save_r19r20_x(16)], epilogs: [{ at: "interrupted_epilog", index: 1 }], single: true },
    },
    {
      name: "handler",
      lines: [
        "stp x29, x30, [sp, #-16]!",
        "handler_record:",
        "mov x29, sp",
        "bl leaf_bare",
        "handler_epilog:",
        "ldp x29, x30, [sp], #16",
        // Back to the interrupted code through the machine frame.
        "ldr x17, [sp, #8]",
        "ldr x16, [sp]",
        "mov sp, x16",
        "br x17",
      ],
      // The machine frame first (0 instructions), then the frame record.
      unwind: { kind: "xdata", prolog: [C.set_fp(), C.save_fplr_x(16), C.machine_frame()] },
    },
    {
      name: "leaf_bare",
      lines: ["add x0, x0, #3", "ret"],
      unwind: { kind: "none" },
    },
  ],
};

/** Every synthetic ARM64 program of the corpus. */
export const ARM64_CORPUS_SPECS: readonly Arm64ProgramSpec[] = [ARM64_CHAIN, ARM64_MACHINE_FRAME];
