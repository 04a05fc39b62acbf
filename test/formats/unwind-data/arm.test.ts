/**
 * The ARM unwind-data decoder (src/formats/unwind-data/arm.ts) against the emulator's encoder
 * (emulator/programs/arm-unwind-encode.ts), which shares no code with it: every `.xdata` record
 * and packed `.pdata` word the encoder writes decodes to what it was written from, and every code
 * decodes to its length and instruction size.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ARM_CODE, armPackedWord, armXdataBytes, type ArmXdataRecord } from "../../../emulator/programs/arm-unwind-encode.js";
import { armScopeBytes, decodeArmCode, decodeArmXdata, packedFields } from "../../../src/formats/unwind-data/arm.js";
import { isProblem } from "../../../src/formats/unwind-data/problem.js";

const reader = (bytes: Uint8Array, at = 0x100) => (rva: number, size: number): Uint8Array | undefined =>
  rva >= at && rva + size <= at + bytes.length ? bytes.subarray(rva - at, rva - at + size) : undefined;

/** One code as an encoder call, with its instruction size in bytes. */
const codeArb: fc.Arbitrary<{ bytes: number[]; opSize: number }> = fc.oneof(
  fc.integer({ min: 0, max: 0x7f }).map((w) => ({ bytes: ARM_CODE.add_sp(4 * w), opSize: 2 })),
  fc.subarray(["r0", "r1", "r4", "r7", "r8", "r11", "r12", "lr"], { minLength: 1 }).map((r) => ({ bytes: ARM_CODE.pop_w(r), opSize: 4 })),
  fc.integer({ min: 0, max: 15 }).map((r) => ({ bytes: ARM_CODE.mov_sp(r), opSize: 2 })),
  fc.tuple(fc.integer({ min: 4, max: 7 }), fc.boolean()).map(([x, lr]) => ({ bytes: ARM_CODE.pop_r4(x, lr), opSize: 2 })),
  fc.tuple(fc.integer({ min: 8, max: 11 }), fc.boolean()).map(([x, lr]) => ({ bytes: ARM_CODE.pop_r4_w(x, lr), opSize: 4 })),
  fc.integer({ min: 8, max: 15 }).map((x) => ({ bytes: ARM_CODE.vpop_d8(x), opSize: 4 })),
  fc.integer({ min: 0, max: 0x3ff }).map((w) => ({ bytes: ARM_CODE.addw_sp(4 * w), opSize: 4 })),
  fc.subarray(["r0", "r3", "r5", "r7", "lr"], { minLength: 1 }).map((r) => ({ bytes: ARM_CODE.pop_lo(r), opSize: 2 })),
  fc.integer({ min: 0, max: 15 }).map((w) => ({ bytes: ARM_CODE.ldr_lr(4 * w), opSize: 4 })),
  fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 15 })).map(([a, b]) => ({ bytes: ARM_CODE.vpop_lo(a, b), opSize: 4 })),
  fc.tuple(fc.integer({ min: 16, max: 31 }), fc.integer({ min: 16, max: 31 })).map(([a, b]) => ({ bytes: ARM_CODE.vpop_hi(a, b), opSize: 4 })),
  fc.integer({ min: 0, max: 0xffff }).map((w) => ({ bytes: ARM_CODE.add_sp_m(4 * w), opSize: 2 })),
  fc.integer({ min: 0, max: 0xff_ffff }).map((w) => ({ bytes: ARM_CODE.add_sp_l(4 * w), opSize: 2 })),
  fc.integer({ min: 0, max: 0xffff }).map((w) => ({ bytes: ARM_CODE.add_sp_m_w(4 * w), opSize: 4 })),
  fc.integer({ min: 0, max: 0xff_ffff }).map((w) => ({ bytes: ARM_CODE.add_sp_l_w(4 * w), opSize: 4 })),
  fc.constant({ bytes: ARM_CODE.nop(), opSize: 2 }),
  fc.constant({ bytes: ARM_CODE.nop_w(), opSize: 4 }),
);

describe("ARM unwind data round trips", () => {
  it("a sequence of codes decodes code by code, and the prolog's size is the sum of their instruction sizes", () => {
    fc.assert(
      fc.property(fc.array(codeArb, { maxLength: 12 }), fc.constantFrom(0xfd, 0xfe, 0xff), (codes, end) => {
        const bytes = Uint8Array.from([...codes.flatMap((c) => c.bytes), end]);
        let p = 0;
        for (const c of codes) {
          const d = decodeArmCode(bytes, p);
          expect(d.length).toBe(c.bytes.length);
          p += d.length;
        }
        const size = codes.reduce((n, c) => n + c.opSize, 0);
        expect(armScopeBytes(bytes, 0, false)).toBe(size);
        expect(armScopeBytes(bytes, 0, true)).toBe(size + (end === 0xfd ? 2 : end === 0xfe ? 4 : 0));
      }),
    );
  });

  it("an .xdata record decodes to what the encoder wrote: lengths, F, E and its index, scopes with conditions, the extension word, X", () => {
    const recordArb: fc.Arbitrary<ArmXdataRecord> = fc
      .record({
        length: fc.integer({ min: 1, max: 0x3ffff }).map((h) => 2 * h),
        fragment: fc.boolean(),
        e: fc.boolean(),
        codes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 80 }),
        scopes: fc.array(fc.record({ start: fc.integer({ min: 0, max: 0x3ffff }).map((h) => 2 * h), index: fc.integer({ min: 0, max: 0 }), condition: fc.integer({ min: 0, max: 15 }) }), { maxLength: 40 }),
        handler: fc.option(fc.integer({ min: 0, max: 0xffff_ffff }), { nil: undefined }),
        extended: fc.boolean(),
      })
      .map((r) => {
        const rec: ArmXdataRecord = { length: r.length, fragment: r.fragment, codes: r.codes, extended: r.extended };
        if (r.handler !== undefined) rec.handler = r.handler;
        if (r.e) rec.epilogIndex = r.codes.length - 1;
        else rec.scopes = r.scopes.map((s) => ({ ...s, index: s.start % r.codes.length }));
        return rec;
      });
    fc.assert(
      fc.property(recordArb, (r) => {
        const bytes = armXdataBytes(r);
        const d = decodeArmXdata(reader(bytes), 0x100);
        if (isProblem(d)) throw new Error(d.problem);
        expect(d.functionLength).toBe(r.length);
        expect(d.fragment).toBe(r.fragment === true);
        expect(d.handler).toBe(r.handler !== undefined);
        expect(d.epilogInHeader).toBe(r.epilogIndex !== undefined);
        if (r.epilogIndex !== undefined) expect(d.epilogIndex).toBe(r.epilogIndex);
        else expect(d.scopes).toEqual(r.scopes!.map((s) => ({ start: s.start, index: s.index, condition: s.condition ?? 0xe })));
        expect([...d.codes.subarray(0, r.codes.length)]).toEqual(r.codes);
      }),
    );
  });

  it("packed words decode field by field", () => {
    fc.assert(
      fc.property(
        fc.record({ flag: fc.constantFrom(1 as const, 2 as const), half: fc.integer({ min: 0, max: 0x7ff }), ret: fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const), h: fc.boolean(), reg: fc.integer({ min: 0, max: 7 }), r: fc.boolean(), l: fc.boolean(), c: fc.boolean(), stackAdjust: fc.integer({ min: 0, max: 0x3ff }) }),
        ({ half, ...p }) => {
          expect(packedFields(armPackedWord(2 * half, p))).toEqual({ ...p, functionLength: 2 * half });
        },
      ),
    );
  });

  it("a version other than 0, or a record past the image, is a problem naming its RVA", () => {
    const v1 = armXdataBytes({ length: 8, codes: [0xff], version: 1 });
    expect(decodeArmXdata(reader(v1), 0x100)).toMatchObject({ problem: expect.stringMatching(/version 1/), rva: 0x100 });
    const cut = armXdataBytes({ length: 8, codes: [1, 2, 3, 4, 5, 0xff], scopes: [{ start: 4, index: 1 }] }).subarray(0, 6);
    expect(decodeArmXdata(reader(cut), 0x100)).toMatchObject({ problem: expect.stringMatching(/not in the image/) });
    const past = armXdataBytes({ length: 8, codes: [0xff], scopes: [{ start: 4, index: 9 }] });
    expect(decodeArmXdata(reader(past), 0x100)).toMatchObject({ problem: expect.stringMatching(/past its 4 code bytes/) });
  });
});
