/**
 * Breakpad's own ARM64 walk (`walk --format breakpad`), where it differs from the project's `auto`:
 * its pointer stripping, its scan and its progress rule. The expected frames follow Breakpad's
 * processor source, `src/processor/stackwalker_arm64.cc` and `stackwalker.{h,cc}` (arm64.md
 * Part 5):
 * - `StackwalkerARM64` sets `address_range_mask_` to the end (base + size) of the highest module
 *   with every lower bit set; `PtrauthStrip(p)` is `p & mask` when that lies in a module, else `p`;
 *   `GetCallerByCFIFrameInfo` passes the recovered pc through it;
 * - `GetCallerByStackScan` calls `ScanForReturnAddress`, which takes the first word whose
 *   `word − 1` lies in a module (and, with symbols, in a function): no call-instruction check,
 *   and the word is not stripped;
 * - `TerminateWalk(caller_ip, caller_sp, callee_sp, first_unwind)` stops at a caller sp below the
 *   callee's, or equal to it unless the callee is the context frame.
 */
import { describe, expect, it } from "vitest";
import { parseBreakpadSym } from "../../../src/formats/breakpad-sym.js";
import type { Module } from "../../../src/model/snapshot.js";
import type { Walk } from "../../../src/walk/frame.js";
import { walkThread, type WalkOptions } from "../../../src/walk/walk.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { chainStop } from "./chain.js";
import { BASE, ImageBuilder, MODULE, ra, snapshotArm64, STACK_BASE, xdata } from "./fixture.js";

const BREAKPAD: WalkOptions = { walker: "breakpad" };
/** The image's unwind tables (which Breakpad does not read) with Breakpad's checks: its TerminateWalk alone. */
const TABLES_WITH_BREAKPAD_CHECKS: WalkOptions = { walker: "unwind", breakpad: true };
const rows = (w: Walk): [bigint, bigint][] => w.frames.map((f) => [f.addrPC, f.addrStack]);

/** A caller at RVA 0x3000 whose `bl` targets 0x2000 (imm26 = −0x400), so 0x3004 is a verified return address. */
const BL_TO_2000 = (0x9400_0000 | (-0x400 & 0x03ff_ffff)) >>> 0;
const word = (w: number): number[] => [w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, (w >>> 24) & 0xff];
const image = (): Uint8Array => new ImageBuilder().code(0x2000, 16).at(0x3000, word(BL_TO_2000)).build();

/** The fixture's module with STACK CFI for the function at 0x2000: `stp x29, x30, [sp, #-16]!` done. */
function withCfi(): Module {
  const sym = parseBreakpadSym(["MODULE windows arm64 0123456789ABCDEF0123456789ABCDEF1 t.pdb", "STACK CFI INIT 2000 40 .cfa: sp 16 + .ra: .cfa -8 + ^ x29: .cfa -16 + ^"].join("\n"));
  return { ...MODULE, unwind: { fpo: [], frameData: [], stackCfi: sym.stackCfi, origin: "test" } };
}

describe("Breakpad's ARM64 order", () => {
  // t.exe spans 0x1_4000_0000 + 0x10000: Breakpad's mask is 0x1_4001_0000 smeared right, 0x1_ffff_ffff.
  it("strips the pc call frame info recovers with the module-range mask, and keeps it when the stripped value lies in no module", () => {
    const cases: [bigint, bigint][] = [
      // A code in bits 40-46, below bit 48: the mask removes it (a fixed 48-bit strip would not).
      [ra(1) | 0x0000_7f00_0000_0000n, ra(1)],
      // A code in bits 48-54: removed the same way.
      [ra(1) | 0x0035_0000_0000_0000n, ra(1)],
      // Stripped, 0x4000_1008 lies in no module: PtrauthStrip returns the word as it is.
      [0x0000_7f02_4000_1008n, 0x0000_7f02_4000_1008n],
    ];
    for (const [saved, pc] of cases) {
      const built = new StackBuilder(STACK_BASE, 8).u64(0).u64(saved).u64(0).build();
      const snap = snapshotArm64(image(), built, { pc: BASE + 0x2010n, sp: STACK_BASE, fp: 0n, lr: 0n });
      snap.modules = [withCfi()];
      const w = walkThread(snap, snap.threads[0]!, BREAKPAD);
      expect(w.frames[1], saved.toString(16)).toMatchObject({ addrPC: pc, addrStack: STACK_BASE + 16n, trust: "cfi" });
    }
  });

  it("scans for the first word whose word − 1 lies in a module: no bl/blr check, the word not stripped", () => {
    // 0x1234 is in no module; the signed ra(3) is not stripped, so it is in no module either;
    // BASE + 0x2004 follows a nop, not a call, and is taken; ra(3) after it is not reached.
    const built = new StackBuilder(STACK_BASE, 8).u64(0x1234).u64(ra(3) | 0x0055_0000_0000_0000n).u64(BASE + 0x2004n).u64(ra(3)).build();
    // x29 points at no readable memory, so Breakpad's frame-pointer step finds no frame and it scans.
    const snap = snapshotArm64(image(), built, { pc: BASE + 0x2010n, sp: STACK_BASE, fp: 0x9000_0000n, lr: 0n });
    const w = walkThread(snap, snap.threads[0]!, BREAKPAD);
    expect(w.frames[1]).toMatchObject({ addrPC: BASE + 0x2004n, addrStack: STACK_BASE + 24n, trust: "scan" });
    expect(w.frames[2]).toMatchObject({ addrPC: ra(3), addrStack: STACK_BASE + 32n, trust: "scan" });
    // The project's own scan checks the call site and strips the code: the signed ra(3) is frame 1.
    const own = walkThread(snap, snap.threads[0]!, { walker: "scan" });
    expect(own.frames[1]).toMatchObject({ addrPC: ra(3), addrStack: STACK_BASE + 16n });
  });

  it("accepts an unchanged sp on the first unwind only: after a machine frame's interrupted pc, a caller at the same sp ends the walk", () => {
    // The function at 0x2000 was interrupted in a machine frame (MSFT_OP_MACHINE_FRAME: sp, pc ←
    // [sp], [sp+8]); the interrupted pc, in the function at 0x2400, whose codes are a bare `end`,
    // returns through lr with sp unchanged.
    const img = new ImageBuilder()
      .code(0x2000, 16)
      .fn(0x2000, xdata({ length: 16, codes: [0xe9, 0xe4] }))
      .code(0x2400, 16)
      .fn(0x2400, xdata({ length: 16, codes: [0xe4] }))
      .build();
    const interruptedSp = STACK_BASE + 0x100n;
    const built = new StackBuilder(STACK_BASE, 8).u64(interruptedSp).u64(BASE + 0x2410n).zeros(0x100).build();
    const snap = snapshotArm64(img, built, { pc: BASE + 0x2010n, sp: STACK_BASE, fp: 0n, lr: ra(5) });
    const truth: [bigint, bigint][] = [[BASE + 0x2010n, STACK_BASE], [BASE + 0x2410n, interruptedSp], [ra(5), interruptedSp]];
    // The project's walk takes the unchanged sp after an interrupted pc as progress.
    expect(rows(walkThread(snap, snap.threads[0]!, { walker: "unwind" })).slice(0, 3)).toEqual(truth);
    // Breakpad's TerminateWalk does not: frame 1 is not the context frame.
    const w = walkThread(snap, snap.threads[0]!, TABLES_WITH_BREAKPAD_CHECKS);
    expect(rows(w)).toEqual(truth.slice(0, 2));
    expect(w.stop.reason).toBe("no-progress");
  });

  it("still accepts an unchanged sp on the first unwind (a leaf that has not moved sp)", () => {
    const c = chainStop({ leaf: 0 });
    const w = walkThread(c.snapshot, c.snapshot.threads[0]!, TABLES_WITH_BREAKPAD_CHECKS);
    expect(w.frames[1]!.addrStack).toBe(w.frames[0]!.addrStack);
    expect(rows(w)).toEqual(c.truth.map((t): [bigint, bigint] => [t.pc, t.sp]));
  });
});
