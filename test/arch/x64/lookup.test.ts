/**
 * Which RUNTIME_FUNCTION a frame uses and how much of its prolog has run (x64-unwind.md §1.1,
 * §1.4, §1.7, §1.8): leaves without an entry, indirect entries, partial prologs, return
 * addresses inside a prolog (W2) and at the end of a function, chained infos with the unsigned
 * prolog-offset rule (W4), and machine frames in chained infos.
 */
import { stepText } from "../../support/rules.js";
import { describe, expect, it } from "vitest";
import { StackBuilder } from "../../support/stack-builder.js";
import { BASE, CALLER, calleeRegisters, ImageBuilder, ra, recoveredOf, snapshot64, STACK_BASE, unwindStep } from "./fixture.js";

const NOPS = new Array<number>(0x40).fill(0x90);
const stack = (...values: bigint[]): ReturnType<StackBuilder["build"]> => {
  const b = new StackBuilder(STACK_BASE, 8);
  for (const v of values) b.u64(v);
  return b.build();
};

describe("lookup", () => {
  it("a PC in no RUNTIME_FUNCTION is a leaf: RIP = [RSP], RSP += 8", () => {
    const image = new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2040, [0x01, 0x04, 0x01, 0x00, 0x04, 0x42, 0x00, 0x00]).build();
    const r = unwindStep(snapshot64(image, stack(ra(0)), {}), calleeRegisters({ rip: BASE + 0x2050n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: ra(0), rsp: STACK_BASE + 8n });
    expect(r!.ok && r!.entry).toBeUndefined();
  });

  it("an image without an exception directory: every function is a leaf", () => {
    const image = new ImageBuilder().at(0x2000, NOPS).build();
    expect(recoveredOf(unwindStep(snapshot64(image, stack(ra(0)), {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE })))).toEqual({ rip: ra(0), rsp: STACK_BASE + 8n });
  });

  it("no rule at all where no image is mapped (another strategy decides)", () => {
    const snap = snapshot64(new Uint8Array(0x100), stack(ra(0)), {});
    expect(unwindStep(snap, calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }))).toBeUndefined();
  });

  it("the entry found is binary-searched among many and named as the frame's FuncTableEntry", () => {
    const b = new ImageBuilder();
    for (let i = 0; i < 40; i++) b.at(0x2000 + 0x40 * i, NOPS).fn(0x2000 + 0x40 * i, 0x2030 + 0x40 * i, [0x01, 0x04, 0x01, 0x00, 0x04, 0x02 | (i % 16 << 4), 0x00, 0x00]);
    const image = b.build();
    for (const i of [0, 7, 39]) {
      const size = 8 * (i % 16) + 8;
      const r = unwindStep(snapshot64(image, new StackBuilder(STACK_BASE, 8).zeros(size).u64(ra(1)).build(), {}), calleeRegisters({ rip: BASE + BigInt(0x2010 + 0x40 * i), rsp: STACK_BASE }));
      expect(recoveredOf(r), `function ${i}`).toEqual({ rip: ra(1), rsp: STACK_BASE + BigInt(size) + 8n });
      expect(r!.ok && r!.entry).toEqual({ kind: "runtime-function", beginRva: BigInt(0x2000 + 0x40 * i), endRva: BigInt(0x2030 + 0x40 * i), moduleBase: BASE });
    }
  });

  it("an indirect entry (UnwindData & 1) is followed to the RUNTIME_FUNCTION it names", () => {
    const b = new ImageBuilder().at(0x2000, NOPS);
    const info = b.info([0x01, 0x01, 0x01, 0x00, 0x01, 0x30, 0x00, 0x00]); // push rbx
    // The named RUNTIME_FUNCTION, outside the table.
    b.at(0x9000, [...le32(0x2000), ...le32(0x2040), ...le32(info)]);
    const image = b.fn(0x2000, 0x2040, 0x9000 | 1).build();
    const r = unwindStep(snapshot64(image, stack(CALLER["rbx"]!, ra(2)), {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: ra(2), rsp: STACK_BASE + 16n, rbx: CALLER["rbx"] });
  });
});

describe("partial prologs: a code applies once the prolog offset has reached its CodeOffset", () => {
  // push rbp (1); push r12 (3); sub rsp,20h (7); lea rbp,[rsp+10h] (0x0c); mov [rsp+38h],rsi (0x11).
  const info = [0x01, 0x11, 0x06, 0x15, 0x11, 0x64, 0x07, 0x00, 0x0c, 0x03, 0x07, 0x32, 0x03, 0xc0, 0x01, 0x50];
  const code = [0x55, 0x41, 0x54, 0x48, 0x83, 0xec, 0x20, 0x48, 0x8d, 0x6c, 0x24, 0x10, 0x48, 0x89, 0x74, 0x24, 0x38];
  const image = new ImageBuilder().at(0x2000, NOPS).at(0x2000, code).fn(0x2000, 0x2040, info).build();
  const top = STACK_BASE + 0x38n; // the caller's RSP after the return
  const cases: [number, bigint, Record<string, bigint>][] = [
    [0, top - 8n, {}],
    [1, top - 16n, { rbp: CALLER["rbp"]! }],
    [2, top - 16n, { rbp: CALLER["rbp"]! }], // inside `push r12`: not run yet
    [3, top - 24n, { rbp: CALLER["rbp"]!, r12: CALLER["r12"]! }],
    [7, top - 56n, { rbp: CALLER["rbp"]!, r12: CALLER["r12"]! }],
    [0x0c, top - 56n, { rbp: CALLER["rbp"]!, r12: CALLER["r12"]! }],
    [0x11, top - 56n, { rbp: CALLER["rbp"]!, r12: CALLER["r12"]!, rsi: CALLER["rsi"]! }],
    [0x20, top - 56n, { rbp: CALLER["rbp"]!, r12: CALLER["r12"]!, rsi: CALLER["rsi"]! }],
  ];
  for (const [offset, rsp, restored] of cases) {
    it(`at prolog offset ${offset}`, () => {
      // The frame as the prolog builds it: 0x20 bytes, r12, rbp, the return address, the home area (rsi at its slot 0).
      const s = new StackBuilder(top - 56n, 8).zeros(0x20).u64(CALLER["r12"]!).u64(CALLER["rbp"]!).u64(ra(3)).u64(CALLER["rsi"]!).build();
      const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2000n + BigInt(offset), rsp, rbp: top - 56n + 0x10n }));
      expect(recoveredOf(r)).toEqual({ rip: ra(3), rsp: top, ...restored });
    });
  }
});

describe("caller frames (§1.8)", () => {
  it("W2: a return address inside the prolog (after call __chkstk) leaves the allocation undone", () => {
    // push rsi (1); mov eax,4e40h (6); call __chkstk (0x0b); sub rsp,rax (0x0e).
    const info = [0x01, 0x0e, 0x03, 0x00, 0x0e, 0x01, 0xc8, 0x09, 0x01, 0x60, 0x00, 0x00];
    const code = [0x56, 0xb8, 0x40, 0x4e, 0x00, 0x00, 0xe8, 0xf5, 0x0f, 0x00, 0x00, 0x48, 0x29, 0xc4];
    const image = new ImageBuilder().at(0x2000, NOPS).at(0x2000, code).fn(0x2000, 0x2040, info).build();
    // Frame 1 of a walk stopped in __chkstk: its PC is the return address 0x200b.
    const r = unwindStep(snapshot64(image, stack(CALLER["rsi"]!, ra(4)), {}), calleeRegisters({ rip: BASE + 0x200bn, rsp: STACK_BASE }), { index: 1 });
    expect(recoveredOf(r)).toEqual({ rip: ra(4), rsp: STACK_BASE + 16n, rsi: CALLER["rsi"] });
  });

  it("a call that is the last instruction: the return address is the next function's start, and the calling function's codes all apply", () => {
    // f [0x2000, 0x2010): push rbx; sub rsp,20h; ...; call (e8 .. .. .. c3: its last byte looks like a ret) ending at 0x2010.
    const f = [0x01, 0x05, 0x02, 0x00, 0x05, 0x32, 0x01, 0x30];
    const g = [0x01, 0x01, 0x01, 0x00, 0x01, 0x50, 0x00, 0x00]; // push rbp
    const image = new ImageBuilder()
      .at(0x2000, [0x53, 0x48, 0x83, 0xec, 0x20, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xe8, 0x00, 0x00, 0x00, 0xc3])
      .fn(0x2000, 0x2010, f)
      .at(0x2010, [0x55, ...NOPS.slice(0, 15)])
      .fn(0x2010, 0x2020, g)
      .build();
    const s = new StackBuilder(STACK_BASE, 8).zeros(0x20).u64(CALLER["rbx"]!).u64(ra(5)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }), { index: 1 });
    expect(recoveredOf(r)).toEqual({ rip: ra(5), rsp: STACK_BASE + 0x30n, rbx: CALLER["rbx"] });
    expect(r!.ok && r!.entry?.beginRva).toBe(0x2000n);
  });

  it("a return address that lands on an epilog gives the same caller as the prolog walk", () => {
    const info = [0x01, 0x05, 0x02, 0x00, 0x05, 0x32, 0x01, 0x30, 0x00, 0x00]; // push rbx; sub rsp,20h
    const image = new ImageBuilder().at(0x2000, NOPS).at(0x2020, [0x48, 0x83, 0xc4, 0x20, 0x5b, 0xc3]).fn(0x2000, 0x2040, info.slice(0, 8)).build();
    const s = new StackBuilder(STACK_BASE, 8).zeros(0x20).u64(CALLER["rbx"]!).u64(ra(6)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2020n, rsp: STACK_BASE }), { index: 1 });
    expect(recoveredOf(r)).toEqual({ rip: ra(6), rsp: STACK_BASE + 0x30n, rbx: CALLER["rbx"] });
  });
});

describe("chained unwind info (§1.7, W4)", () => {
  // hot [0x3030, 0x304c): push rbx (1); sub rsp,20h (5). Fragments chained to it: cold_before
  // [0x3020, 0x3027) and cold_after [0x3080, 0x3087) with no codes, cold_save [0x3090, 0x30a1)
  // with `mov [rsp+30h],rsi` (SAVE_NONVOL rsi 0x30 at 5).
  const hotEntry = (b: ImageBuilder): [number, number, number] => {
    const info = b.info([0x01, 0x05, 0x02, 0x00, 0x05, 0x32, 0x01, 0x30]);
    b.fn(0x3030, 0x304c, info);
    return [0x3030, 0x304c, info];
  };
  const chained = (codes: readonly number[], sizeOfProlog: number, parent: [number, number, number], frame = 0): number[] => {
    const count = codes.length / 2;
    const padded = count % 2 === 1 ? [...codes, 0, 0] : [...codes];
    return [0x01 | (4 << 3), sizeOfProlog, count, frame, ...padded, ...le32(parent[0]), ...le32(parent[1]), ...le32(parent[2])];
  };
  const build = (): Uint8Array => {
    const b = new ImageBuilder().at(0x3000, new Array<number>(0xc0).fill(0x90));
    const hot = hotEntry(b);
    b.at(0x3025, [0xeb, 0x1f]).fn(0x3020, 0x3027, chained([], 0, hot));
    b.at(0x3085, [0xeb, 0xbf]).fn(0x3080, 0x3087, chained([], 0, hot));
    b.at(0x3090, [0x48, 0x89, 0x74, 0x24, 0x30]).fn(0x3090, 0x30a1, chained([0x05, 0x64, 0x06, 0x00], 5, hot));
    return b.build();
  };
  const image = build();
  const hotFrame = (): ReturnType<StackBuilder["build"]> => new StackBuilder(STACK_BASE, 8).zeros(0x20).u64(CALLER["rbx"]!).u64(ra(7)).u64(CALLER["rsi"]!).build();
  const HOT = { rip: ra(7), rsp: STACK_BASE + 0x30n, rbx: CALLER["rbx"] };

  it("a fragment placed before its parent: the negative prolog offset is huge unsigned, so every parent code applies", () => {
    // At 0x3025 (jmp back into hot: `eb 1f`, not an epilog).
    expect(recoveredOf(unwindStep(snapshot64(image, hotFrame(), {}), calleeRegisters({ rip: BASE + 0x3025n, rsp: STACK_BASE })))).toEqual(HOT);
    expect(recoveredOf(unwindStep(snapshot64(image, hotFrame(), {}), calleeRegisters({ rip: BASE + 0x3020n, rsp: STACK_BASE })))).toEqual(HOT);
  });

  it("a fragment placed after its parent: every parent code applies; its jmp back (eb bf) is not an epilog", () => {
    expect(recoveredOf(unwindStep(snapshot64(image, hotFrame(), {}), calleeRegisters({ rip: BASE + 0x3085n, rsp: STACK_BASE })))).toEqual(HOT);
  });

  it("a fragment's own codes apply first, with its prolog offset; the establisher frame is RSP (no frame register)", () => {
    const at = (offset: number): Record<string, bigint> => recoveredOf(unwindStep(snapshot64(image, hotFrame(), {}), calleeRegisters({ rip: BASE + 0x3090n + BigInt(offset), rsp: STACK_BASE })));
    expect(at(0)).toEqual(HOT);
    expect(at(5)).toEqual({ ...HOT, rsi: CALLER["rsi"] });
    expect(at(0x10)).toEqual({ ...HOT, rsi: CALLER["rsi"] });
  });

  it("the entry of a chained frame is the fragment's", () => {
    const r = unwindStep(snapshot64(image, hotFrame(), {}), calleeRegisters({ rip: BASE + 0x3095n, rsp: STACK_BASE }));
    expect(r!.ok && r!.entry).toEqual({ kind: "runtime-function", beginRva: 0x3090n, endRva: 0x30a1n, moduleBase: BASE });
    expect(stepText(r)).toContain("chained rva=0x3030");
  });

  it("a jmp from a fragment to its primary's start is a tail call (epilog); into the primary's body it is not", () => {
    const b = new ImageBuilder().at(0x3000, new Array<number>(0xc0).fill(0x90));
    const hot = hotEntry(b);
    // cold at 0x3090: `jmp 0x3030` (e9 rel32) at 0x3098.
    b.at(0x3098, [0xe9, ...le32(0x3030 - 0x309d)]).fn(0x3090, 0x30a1, chained([], 0, hot));
    b.at(0x30b8, [0xe9, ...le32(0x3040 - 0x30bd)]).fn(0x30b0, 0x30c1, chained([], 0, hot));
    const img = b.build();
    const top = new StackBuilder(STACK_BASE, 8).u64(ra(8)).build();
    expect(recoveredOf(unwindStep(snapshot64(img, top, {}), calleeRegisters({ rip: BASE + 0x3098n, rsp: STACK_BASE })))).toEqual({ rip: ra(8), rsp: STACK_BASE + 8n });
    expect(recoveredOf(unwindStep(snapshot64(img, hotFrame(), {}), calleeRegisters({ rip: BASE + 0x30b8n, rsp: STACK_BASE })))).toEqual(HOT);
  });

  it("a chained fragment with a frame register uses it as the establisher frame whatever its prolog offset", () => {
    // parent: push rbp (1); sub rsp,30h (5); lea rbp,[rsp+20h] (0x0a). Fragment before it: save r12 at 0x40 (offset 5).
    const b = new ImageBuilder().at(0x3000, new Array<number>(0xc0).fill(0x90));
    const pinfo = b.info([0x01, 0x0a, 0x03, 0x25, 0x0a, 0x03, 0x05, 0x52, 0x01, 0x50, 0x00, 0x00]);
    b.fn(0x3040, 0x3060, pinfo);
    b.fn(0x3000, 0x3010, chained([0x05, 0xc4, 0x08, 0x00], 5, [0x3040, 0x3060, pinfo], 0x25));
    const img = b.build();
    // alloca of 0x10 below E; r12 in the home area at E + 0x40.
    const s = new StackBuilder(STACK_BASE, 8).fill(2).mark("E").zeros(0x30).u64(CALLER["rbp"]!).u64(ra(9)).u64(CALLER["r12"]!).build();
    const E = s.labels["E"]!;
    const r = unwindStep(snapshot64(img, s, {}), calleeRegisters({ rip: BASE + 0x3000n, rsp: STACK_BASE, rbp: E + 0x20n }));
    expect(recoveredOf(r)).toEqual({ rip: ra(9), rsp: E + 0x40n, rbp: CALLER["rbp"] });
    const r2 = unwindStep(snapshot64(img, s, {}), calleeRegisters({ rip: BASE + 0x3008n, rsp: STACK_BASE, rbp: E + 0x20n }));
    expect(recoveredOf(r2)).toEqual({ rip: ra(9), rsp: E + 0x40n, rbp: CALLER["rbp"], r12: CALLER["r12"] });
  });

  it("a machine frame in the chained fragment does not stop the parent's return from being popped", () => {
    const b = new ImageBuilder().at(0x3000, new Array<number>(0xc0).fill(0x90));
    const hot = hotEntry(b);
    b.fn(0x3090, 0x30a1, chained([0x00, 0x0a], 0, hot));
    const img = b.build();
    // The machine frame's RIP and RSP point back into this stack: RSP at X, which holds hot's frame.
    const s = new StackBuilder(STACK_BASE, 8).u64(0x1111n).u64(0x33).u64(0x246).u64(STACK_BASE + 0x30n).u64(0x2b).fill(1).zeros(0x20).u64(CALLER["rbx"]!).u64(ra(10)).build();
    const r = unwindStep(snapshot64(img, s, {}), calleeRegisters({ rip: BASE + 0x3095n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: ra(10), rsp: STACK_BASE + 0x60n, rbx: CALLER["rbx"] });
    expect(r!.ok && r!.paramsSize).toBeUndefined();
  });
});

function le32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}
