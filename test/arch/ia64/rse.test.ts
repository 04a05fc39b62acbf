/**
 * The RSE helpers (ia64.md §1): the skip_regs / num_regs formulas against a naive slot-by-slot
 * walker for every start slot and a wide range of counts, the spec's worked values, the frame
 * marker bit layouts, the NaT lookup at the RNAT edge, and the IP encodings.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RegionMemory } from "../../../src/memory/region-memory.js";
import {
  alloc,
  brCall,
  brRet,
  cover,
  type RseState,
  cfm,
  fromLinuxIp,
  frameMarkerProblem,
  ia64Pc,
  isRnatSlot,
  isValidPc,
  natBit,
  numRegs,
  packCfm,
  packIfs,
  packPfs,
  pcBundle,
  pcOf,
  pcSlot,
  rnatAddr,
  skipRegs,
  slotNum,
  toLinuxIp,
  unpackCfm,
  unpackIfs,
  unpackPfs,
  withIpsrSlot,
  ipsrSlot,
  sofOf,
  solOf,
} from "../../../src/arch/ia64/rse.js";

/** A 512-byte-aligned group base (bits 8..3 = 0). */
const B = 0x7ff_e000_0000n;

/** The naive reference: move one register at a time, stepping over every collection slot. */
function naiveSkip(a: bigint, n: number): bigint {
  let at = a;
  const step = n < 0 ? -8n : 8n;
  for (let i = 0; i < Math.abs(n); i++) {
    at += step;
    if ((at & 0x1f8n) === 0x1f8n) at += step;
  }
  return at;
}

/** The naive count of registers (non-collection words) in [from, to). */
function naiveCount(from: bigint, to: bigint): number {
  let n = 0;
  for (let at = from; at < to; at += 8n) if ((at & 0x1f8n) !== 0x1f8n) n++;
  return n;
}

describe("skip_regs and num_regs (§1.6)", () => {
  it("give the spec's worked values", () => {
    expect(skipRegs(B, 62)).toBe(B + 0x1f0n);
    expect(skipRegs(B, 63)).toBe(B + 0x200n);
    expect(skipRegs(B + 0x1f0n, 1)).toBe(B + 0x200n);
    expect(skipRegs(B + 0x200n, -1)).toBe(B + 0x1f0n);
    expect(skipRegs(B + 0x200n, -63)).toBe(B);
    expect(skipRegs(B + 0x200n, -64)).toBe(B - 0x10n);
    expect(skipRegs(B + 0x50n, 100)).toBe(B + 0x378n);
    expect(numRegs(B, B + 0x200n)).toBe(63);
    expect(numRegs(B + 0x1f0n, B + 0x208n)).toBe(2);
  });

  it("skip_regs equals the slot-by-slot walker for all 63 start slots and every n in [-200, 200]", () => {
    for (let slot = 0; slot < 63; slot++) {
      const a = B + 0x1000n + BigInt(8 * slot);
      for (let n = -200; n <= 200; n++) {
        const got = skipRegs(a, n);
        if (got !== naiveSkip(a, n)) expect(got, `slot ${slot}, n ${n}`).toBe(naiveSkip(a, n));
      }
    }
  });

  it("num_regs counts the registers between two register addresses, for all 63 start slots and counts 0..400", () => {
    for (let slot = 0; slot < 63; slot++) {
      const a = B + 0x1000n + BigInt(8 * slot);
      for (let n = 0; n <= 400; n++) {
        const b = naiveSkip(a, n);
        if (numRegs(a, b) !== n) expect(numRegs(a, b), `slot ${slot}, n ${n}`).toBe(n);
      }
    }
  });

  it("num_regs with bspstore on a collection slot: 0x1f8 -> 0x200 is 0 registers (§5.4 item 7)", () => {
    expect(numRegs(B + 0x1f8n, B + 0x200n)).toBe(0);
    expect(numRegs(B + 0x1f8n, B + 0x208n)).toBe(1);
    for (let n = 0; n < 130; n++) expect(numRegs(B + 0x1f8n, B + 0x1f8n + 8n * BigInt(n))).toBe(naiveCount(B + 0x1f8n, B + 0x1f8n + 8n * BigInt(n)));
  });

  it("truncates toward zero for negative counts, as C does (a Math.floor port breaks these)", () => {
    // d = slot + n − 62 is negative and not a multiple of 63 here: floor would skip one slot too many.
    expect(skipRegs(B + 0x8n, -1)).toBe(B);
    expect(skipRegs(B + 0x10n, -1)).toBe(B + 0x8n);
    expect(skipRegs(B + 0x200n, -2)).toBe(B + 0x1e8n);
  });

  it("agree with the walker on random groups anywhere in the address space, including above 2^63 (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: (1n << 55n) - 2n }), fc.integer({ min: 0, max: 62 }), fc.integer({ min: -500, max: 500 }), (group, slot, n) => {
        const a = group * 512n + BigInt(8 * slot);
        const to = skipRegs(a, n);
        expect(to).toBe(naiveSkip(a, n));
        expect(isRnatSlot(to)).toBe(false);
        expect(skipRegs(to, -n)).toBe(a);
        if (n >= 0) expect(numRegs(a, to)).toBe(n);
      }),
      { numRuns: 2000 },
    );
    const high = (1n << 63n) + 0x1f0n;
    expect(skipRegs(high, 1)).toBe((1n << 63n) + 0x200n);
    expect(skipRegs((1n << 63n) + 0x200n, -1)).toBe(high);
  });

  it("slot_num, is_rnat_slot and rnat_addr", () => {
    expect(slotNum(B + 0x1f0n)).toBe(62);
    expect(isRnatSlot(B + 0x1f8n)).toBe(true);
    expect(isRnatSlot(B + 0x1f0n)).toBe(false);
    expect(rnatAddr(B + 0x48n)).toBe(B + 0x1f8n);
    expect(rnatAddr(B + 0x1f8n)).toBe(B + 0x1f8n);
  });
});

describe("frame markers (§1.2, §1.3)", () => {
  it("pack every CFM field into its bits and back", () => {
    const c = { sof: 96, sol: 40, sor: 3, rrbGr: 0x55, rrbFr: 0x2a, rrbPr: 0x3f };
    const v = packCfm(c);
    expect(v & 0x7fn).toBe(96n);
    expect((v >> 7n) & 0x7fn).toBe(40n);
    expect((v >> 14n) & 0xfn).toBe(3n);
    expect((v >> 18n) & 0x7fn).toBe(0x55n);
    expect((v >> 25n) & 0x7fn).toBe(0x2an);
    expect((v >> 32n) & 0x3fn).toBe(0x3fn);
    expect(v >> 38n).toBe(0n);
    expect(unpackCfm(v)).toEqual(c);
    expect(() => packCfm({ ...c, sof: 128 })).toThrow(RangeError);
  });

  it("pack ar.pfs (pfm 37:0, pec 57:52, ppl 63:62) and cr.ifs (v = bit 63)", () => {
    const p = { pfm: cfm(7, 5), pec: 0x3f, ppl: 3 };
    const v = packPfs(p);
    expect(v).toBe(0x7n | (5n << 7n) | (0x3fn << 52n) | (3n << 62n));
    expect(unpackPfs(v)).toEqual(p);
    expect(packIfs({ valid: true, ifm: cfm(3, 2) })).toBe((1n << 63n) | 0x103n);
    expect(unpackIfs(0x103n)).toEqual({ valid: false, ifm: cfm(3, 2) });
  });

  it("round-trip random markers (property)", () => {
    const cfmArb = fc.record({
      sof: fc.integer({ min: 0, max: 127 }), sol: fc.integer({ min: 0, max: 127 }), sor: fc.integer({ min: 0, max: 15 }),
      rrbGr: fc.integer({ min: 0, max: 127 }), rrbFr: fc.integer({ min: 0, max: 127 }), rrbPr: fc.integer({ min: 0, max: 63 }),
    });
    fc.assert(fc.property(cfmArb, fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 3 }), (c, pec, ppl) => {
      expect(unpackPfs(packPfs({ pfm: c, pec, ppl }))).toEqual({ pfm: c, pec, ppl });
      expect(unpackIfs(packIfs({ valid: true, ifm: c }))).toEqual({ valid: true, ifm: c });
    }));
  });

  it("say why a marker cannot be a frame: sol > sof, sof > 96, a rotating region larger than the frame", () => {
    expect(frameMarkerProblem(packCfm(cfm(5, 3)))).toBeUndefined();
    expect(frameMarkerProblem(packCfm(cfm(3, 5)))).toMatch(/sol 5 is more than sof 3/);
    expect(frameMarkerProblem(packCfm(cfm(97, 0)))).toMatch(/more than 96/);
    expect(frameMarkerProblem(packCfm(cfm(8, 0, 2)))).toMatch(/rotating region/);
  });
});

describe("NaT bits (§1.5, §5.4 item 6)", () => {
  // Group B: registers at B..B+0x1f0, its collection word at B+0x1f8; group B+0x200 after it.
  const collection = 1n << 5n; // the register at B + 0x28 (slot 5) is NaT in memory
  const memory = new RegionMemory([{ base: B + 0x1f8n, bytes: new Uint8Array(new BigUint64Array([collection, ~0n & 0xffff_ffff_ffff_ffffn]).buffer) }]);

  it("reads a collection below BSPSTORE from memory", () => {
    expect(natBit(B + 0x28n, B + 0x208n, 0n, memory)).toBe(1);
    expect(natBit(B + 0x30n, B + 0x208n, 0n, memory)).toBe(0);
  });

  it("reads the collection from RNAT when its word is at or above BSPSTORE, including exactly at BSPSTORE", () => {
    // rnat_addr(B + 0x28) = B + 0x1f8 = BSPSTORE: the RSE has not stored it yet.
    expect(natBit(B + 0x28n, B + 0x1f8n, 0n, memory)).toBe(0);
    expect(natBit(B + 0x30n, B + 0x1f8n, 1n << 6n, memory)).toBe(1);
    expect(natBit(B + 0x28n, B + 0x100n, 0n, memory)).toBe(0);
  });

  it("says −1 when the collection word cannot be read", () => {
    expect(natBit(B + 0x428n, B + 0x1000n, 0n, memory)).toBe(-1);
  });
});

describe("instruction pointers (§4.3)", () => {
  it("AddrPC is bundle | slot·4; the Linux form is bundle | slot; they round-trip", () => {
    for (let slot = 0; slot < 3; slot++) {
      const pc = pcOf(0x1_0000_1230n, slot);
      expect(pc).toBe(0x1_0000_1230n + BigInt(4 * slot));
      expect([pcBundle(pc), pcSlot(pc), isValidPc(pc)]).toEqual([0x1_0000_1230n, slot, true]);
      expect(toLinuxIp(pc)).toBe(0x1_0000_1230n + BigInt(slot));
      expect(fromLinuxIp(toLinuxIp(pc))).toBe(pc);
    }
    expect(isValidPc(0x1_0000_123cn)).toBe(false);
    expect(isValidPc(0x1_0000_1232n)).toBe(false);
  });

  it("ia64Pc takes the slot from StIPSR.ri (bits 42:41)", () => {
    const ipsr = withIpsrSlot(3n << 32n, 2);
    expect(ipsrSlot(ipsr)).toBe(2);
    expect(ia64Pc({ stiip: 0xe000_0000_0000_1000n, stipsr: ipsr })).toBe(0xe000_0000_0000_1008n);
    expect(ia64Pc({ stiip: 0x1000n })).toBe(0x1000n);
    expect(ia64Pc({})).toBeUndefined();
  });
});

describe("instruction effects (§1.4)", () => {
  const start: RseState = { bsp: B + 0x1e0n, cfm: packCfm(cfm(5, 3)), pfs: 0n, ec: 4, cpl: 3 };

  it("br.call saves CFM, ec and cpl in ar.pfs and starts the callee on the caller's outputs", () => {
    const callee = brCall(start);
    expect(callee.bsp).toBe(skipRegs(start.bsp, 3));
    expect(callee.bsp).toBe(B + 0x200n); // slots 60, 61, 62, then the collection slot is skipped
    expect(unpackCfm(callee.cfm)).toEqual(cfm(2, 0));
    expect(unpackPfs(callee.pfs)).toEqual({ pfm: cfm(5, 3), pec: 4, ppl: 3 });
  });

  it("alloc sizes the frame without moving BSP and hands back ar.pfs", () => {
    const callee = brCall(start);
    const { state, r1 } = alloc(callee, 2, 3, 1, 0);
    expect(r1).toBe(callee.pfs);
    expect(state.bsp).toBe(callee.bsp);
    expect(unpackCfm(state.cfm)).toEqual(cfm(6, 5));
    expect(() => alloc(callee, 0, 90, 10)).toThrow(RangeError);
  });

  it("br.ret restores the caller's CFM and BSP, skipping back over the collection slot", () => {
    const back = brRet(alloc(brCall(start), 2, 3, 1).state);
    expect(back.bsp).toBe(start.bsp);
    expect(back.cfm).toBe(start.cfm);
    expect([back.ec, back.cpl]).toEqual([4, 3]);
  });

  it("cover moves BSP past the frame and writes cr.ifs", () => {
    const { state, ifs } = cover(start);
    expect(state.bsp).toBe(skipRegs(start.bsp, 5));
    expect(state.cfm).toBe(0n);
    expect(unpackIfs(ifs)).toEqual({ valid: true, ifm: cfm(5, 3) });
  });

  it("any nest of calls and returns comes back to the same BSP and CFM (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 62 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 20 })), { minLength: 1, maxLength: 20 }), (slot, frames) => {
        let s: RseState = { bsp: B + BigInt(8 * slot), cfm: packCfm(cfm(8, 0)), pfs: 0n, ec: 0, cpl: 3 };
        const stack: RseState[] = [];
        for (const [i, l, o] of frames) {
          const callerOuts = sofOf(s.cfm) - solOf(s.cfm);
          stack.push(s);
          s = alloc(brCall(s), Math.min(i, callerOuts), l, o).state;
          expect(isRnatSlot(s.bsp)).toBe(false);
        }
        while (stack.length > 0) {
          const caller = stack.pop()!;
          s = brRet(s);
          // br.ret restores CFM and BSP; ar.pfs itself is the callee's to restore (its epilogue does).
          expect([s.bsp, s.cfm]).toEqual([caller.bsp, caller.cfm]);
          s = { ...s, pfs: caller.pfs };
        }
      }),
    );
  });
});
