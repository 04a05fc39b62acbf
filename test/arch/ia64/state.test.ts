/**
 * The descriptor state machine (ia64.md §2 steps 2-7, §3.3-§3.5): what the records say at each
 * slot. The worked example's results by stop slot, R2 against explicit records, record order,
 * the default GR sequence, time capping, epilogues and their drop rules, label/copy state.
 */
import { describe, expect, it } from "vitest";
import { InputError } from "../../../src/errors.js";
import { frameStateAt, type FrameState } from "../../../src/arch/ia64/state.js";
import { stateText } from "../../../src/arch/rule-text.js";
import { decodeDescriptors, encodeDescriptors, type UnwindRecord } from "../../../src/formats/unwind-data/ia64.js";

const bytes = (s: string): Uint8Array => Uint8Array.from(s.split(/\s+/).filter(Boolean).map((x) => parseInt(x, 16)));
const at = (stream: Uint8Array | string, t: number): FrameState => frameStateAt(decodeDescriptors(typeof stream === "string" ? bytes(stream) : stream), t);
const of = (list: UnwindRecord[], t: number): FrameState => at(encodeDescriptors(list), t);

/** ia64.md §3.5: alloc saves pfs in r34 at slot 0, mov r33 = b0 at slot 1, adds sp = -32 at slot 2; epilogue sp restore at slot 13. */
const WORKED = "06 e6 00 b1 22 e4 01 b0 a1 e0 02 02 29 c0 01 00";

describe("the worked example by stop slot (§3.5)", () => {
  it("slot 0: rp in b0, ar.pfs live, psp = sp", () => {
    expect(stateText(at(WORKED, 0))).toBe("rp=b0 pfs=ar.pfs psp=sp");
  });
  it("slot 1: ar.pfs in r34, rp still in b0", () => {
    expect(stateText(at(WORKED, 1))).toBe("rp=b0 pfs=r34 psp=sp");
  });
  it("slot 2: rp in r33, the sp adjust has not executed", () => {
    expect(stateText(at(WORKED, 2))).toBe("rp=r33 pfs=r34 psp=sp");
  });
  it("slots 3-13: psp = sp + 32 (at 13 the sp restore has not executed)", () => {
    for (let t = 3; t <= 13; t++) expect(stateText(at(WORKED, t)), `slot ${t}`).toBe("rp=r33 pfs=r34 psp=sp+0x20");
    expect(at(WORKED, 13).epilogueStart).toBe(13);
  });
  it("slot 14: past the epilogue start, psp = sp", () => {
    expect(stateText(at(WORKED, 14))).toBe("rp=r33 pfs=r34 psp=sp");
  });
});

describe("region headers and record order (§3.4)", () => {
  const body: UnwindRecord = { format: "R1", body: true, rlen: 6 };

  it("R2 mask 0xC with grsave 33 equals explicit P3 rp_gr r33 / pfs_gr r34 (GCC's .prologue 12, 33)", () => {
    const r2 = bytes("46 21 04 26");
    expect([...r2]).toEqual([...encodeDescriptors([{ format: "R2", body: false, mask: 0xc, grsave: 33, rlen: 4 }, body])]);
    const explicit = encodeDescriptors([{ format: "R1", body: false, rlen: 4 }, { format: "P3", kind: "rp_gr", reg: 33 }, { format: "P3", kind: "pfs_gr", reg: 34 }, body]);
    for (let t = 0; t <= 10; t++) expect(at(r2, t), `slot ${t}`).toEqual(at(explicit, t));
    expect(stateText(at(r2, 4))).toBe("rp=r33 pfs=r34 psp=sp");
    // Without *_when, both saves date from the prologue's last slot (3).
    expect(stateText(at(r2, 3))).toBe("rp=b0 pfs=ar.pfs psp=sp");
  });

  it("assigns R2 mask bits in the order rp, pfs, psp, pr", () => {
    const s = of([{ format: "R2", body: false, mask: 0x6, grsave: 40, rlen: 3 }, { format: "P7", kind: "mem_stack_v", value: 2 }, { format: "R1", body: true, rlen: 3 }], 5);
    expect(stateText(s)).toBe("rp=b0 pfs=r40 psp=r41");
    const all = of([{ format: "R2", body: false, mask: 0xf, grsave: 36, rlen: 2 }, { format: "P7", kind: "mem_stack_v", value: 0 }, { format: "R1", body: true, rlen: 2 }], 3);
    expect(stateText(all)).toBe("rp=r36 pfs=r37 psp=r38");
  });

  it("reads `when` then location and location then `when` the same", () => {
    const a = of([{ format: "R1", body: false, rlen: 5 }, { format: "P7", kind: "rp_when", value: 2 }, { format: "P8", kind: "rp_sprel", value: 4 }, body], 3);
    const b = of([{ format: "R1", body: false, rlen: 5 }, { format: "P8", kind: "rp_sprel", value: 4 }, { format: "P7", kind: "rp_when", value: 2 }, body], 3);
    expect(a).toEqual(b);
    expect(a.rp).toEqual({ kind: "sprel", offset: 16, when: 2 });
  });

  it("gives a *_when without a location the next GR of the sequence: r32 after R1, from grsave after R2", () => {
    const r1 = of([{ format: "R1", body: false, rlen: 3 }, { format: "P7", kind: "pfs_when", value: 0 }, { format: "P7", kind: "rp_when", value: 1 }, body], 3);
    expect(stateText(r1)).toBe("rp=r32 pfs=r33 psp=sp");
    const r2 = of([{ format: "R2", body: false, mask: 0x8, grsave: 40, rlen: 3 }, { format: "P7", kind: "pfs_when", value: 0 }, body], 3);
    expect(stateText(r2)).toBe("rp=r40 pfs=r41 psp=sp");
    // A stream ending inside the prologue still assigns them (a modelling choice).
    expect(stateText(of([{ format: "R1", body: false, rlen: 3 }, { format: "P7", kind: "rp_when", value: 0 }], 2))).toBe("rp=r32 pfs=ar.pfs psp=sp");
  });

  it("caps a record's time at rlen − 1", () => {
    const s = (t: number): FrameState => of([{ format: "R1", body: false, rlen: 3 }, { format: "P7", kind: "mem_stack_f", value: 50, size: 1 }, body], t);
    expect(s(2).psp).toEqual({ kind: "sp" });
    expect(s(3).psp).toEqual({ kind: "fixed", size: 16, when: 2 });
  });

  it("dates a location record without `when` at the prologue's last slot", () => {
    const s = (t: number): FrameState => of([{ format: "R1", body: false, rlen: 4 }, { format: "P3", kind: "rp_gr", reg: 35 }, body], t);
    expect(s(3).rp).toEqual({ kind: "br", reg: 0 });
    expect(s(4).rp).toEqual({ kind: "gr", reg: 35, when: 3 });
  });

  it("takes rp from the branch register rp_br names while it is not saved", () => {
    expect(of([{ format: "R1", body: false, rlen: 0 }, { format: "P3", kind: "rp_br", reg: 1 }, { format: "R1", body: true, rlen: 9 }], 4).rp).toEqual({ kind: "br", reg: 1 });
  });

  it("keeps psp in a GR or at sp+off for mem_stack_v, from its time on", () => {
    const gr = (t: number): FrameState => of([{ format: "R1", body: false, rlen: 4 }, { format: "P3", kind: "psp_gr", reg: 36 }, { format: "P7", kind: "mem_stack_v", value: 2 }, body], t);
    expect(gr(2).psp).toEqual({ kind: "sp" });
    expect(gr(3).psp).toEqual({ kind: "gr", reg: 36, when: 2 });
    const sprel = of([{ format: "R1", body: false, rlen: 4 }, { format: "P7", kind: "mem_stack_v", value: 1 }, { format: "P7", kind: "psp_sprel", value: 4 }, body], 3);
    expect(sprel.psp).toEqual({ kind: "sprel", offset: 16, when: 1 });
  });
});

describe("epilogues (§2 step 6, §3.4)", () => {
  const prologue: UnwindRecord[] = [
    { format: "R1", body: false, rlen: 4 },
    { format: "P8", kind: "rp_sprel", value: 4 },
    { format: "P7", kind: "pfs_psprel", value: 8 },
    { format: "P7", kind: "mem_stack_f", value: 1, size: 3 },
  ];

  it("past the epilogue start, psp = sp, sp-relative saves are dropped and psp-relative ones below psp kept", () => {
    const list: UnwindRecord[] = [...prologue, { format: "R1", body: true, rlen: 10 }, { format: "B2", ecount: 0, t: 2 }];
    // Region end 14, so the epilogue starts at 14 − 1 − 2 = 11.
    expect(stateText(of(list, 11))).toBe("rp=[sp+0x10] pfs=[psp-0x10] psp=sp+0x30");
    expect(stateText(of(list, 12))).toBe("rp=b0 pfs=[psp-0x10] psp=sp");
  });

  it("drops psp-relative saves at offsets 0..0x10 (pspoff 0-4), compared unsigned as the kernel does", () => {
    for (const [pspoff, dropped] of [[0, true], [2, true], [4, true], [5, false], [6, false]] as const) {
      const list: UnwindRecord[] = [{ format: "R1", body: false, rlen: 2 }, { format: "P7", kind: "rp_psprel", value: pspoff }, { format: "R1", body: true, rlen: 4 }, { format: "B2", ecount: 0, t: 1 }];
      expect(of(list, 5).rp.kind, `pspoff ${pspoff}`).toBe(dropped ? "br" : "psprel");
    }
  });

  it("pops ecount + 1 prologue states at the next region, and copy_state restores a labelled one", () => {
    const list: UnwindRecord[] = [
      ...prologue,
      { format: "R1", body: true, rlen: 4 },
      { format: "B1", kind: "label_state", label: 1 },
      { format: "B2", ecount: 0, t: 0 },
      // After the early return: the prologue's state popped, then restored by copy_state.
      { format: "R1", body: true, rlen: 4 },
      { format: "B1", kind: "copy_state", label: 1 },
    ];
    expect(stateText(of(list, 10))).toBe("rp=[sp+0x10] pfs=[psp-0x10] psp=sp+0x30");
    const noCopy: UnwindRecord[] = [...list.slice(0, -1), { format: "R1", body: true, rlen: 4 }];
    expect(stateText(of(noCopy, 10))).toBe("rp=b0 pfs=ar.pfs psp=sp");
  });

  it("refuses a copy_state of an unknown label and an epilogue that pops too much", () => {
    expect(() => of([{ format: "R1", body: true, rlen: 2 }, { format: "B1", kind: "copy_state", label: 7 }], 1)).toThrow(InputError);
    expect(() => of([{ format: "R1", body: true, rlen: 2 }, { format: "B2", ecount: 3, t: 0 }, { format: "R1", body: true, rlen: 2 }], 3)).toThrow(InputError);
  });
});

describe("what the walker does not model", () => {
  it("flags a saved ar.bsp and an unwabi record", () => {
    const s = of([{ format: "R1", body: false, rlen: 2 }, { format: "P3", kind: "bsp_gr", reg: 40 }, { format: "P10", abi: 3, context: 0x69 }, { format: "R1", body: true, rlen: 2 }], 3);
    expect(s.bspSaved).toBe(true);
    expect(s.unwabi).toEqual({ abi: 3, context: 0x69 });
  });
});
