import { describe, expect, it } from "vitest";
import { AddressMode } from "../../src/model/address.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";
import {
  decodeStackFrame32,
  decodeStackFrame64,
  encodeStackFrame32,
  encodeStackFrame64,
  newStackFrame32,
  newStackFrame64,
  type StackFrame64,
} from "../../src/model/stackframe.js";
import { stackWalk, stackWalk64, stackWalk64Detailed } from "../../src/walk/stackwalk64.js";
import { codeAddress, moduleWith, snapshotOf } from "../support/snapshots.js";
import { StackBuilder } from "../support/stack-builder.js";

const I386 = IMAGE_FILE_MACHINE.I386;
const app = moduleWith("app.exe", 0x00400000n, ["main", "a", "b", "c"]);
const ra = (fn: string, off: number): bigint => codeAddress(app, fn, off);

/** main -> b -> c; c is executing. The outermost frame's [EBP+4] is `lastReturn`. */
function chain(lastReturn: bigint | "unreadable" = 0n) {
  const s = new StackBuilder(0x0012ff00n);
  s.mark("esp0").fill(2)
    .mark("ebp0").u32(s.ref("ebp1")).u32(ra("b", 0x10))
    .mark("sp1").u32(1).u32(2).u32(3).u32(4)
    .mark("ebp1").u32(s.ref("ebp2")).u32(ra("main", 0x20))
    .mark("sp2").u32(5).u32(6).u32(7).u32(8)
    .mark("ebp2").u32(0);
  if (lastReturn !== "unreadable") s.u32(lastReturn).mark("sp3").u32(9).u32(10).u32(11).u32(12);
  const built = s.build();
  const snap = snapshotOf("x86", { eip: ra("c", 5), esp: built.labels["esp0"]!, ebp: built.labels["ebp0"]! }, [built], [app]);
  return { snap, L: built.labels };
}

/** A STACKFRAME64 set up the way callers must: Flat modes, PC/Frame/Stack from the context. */
function startFrame(eip: bigint, ebp: bigint, esp: bigint): StackFrame64 {
  const f = newStackFrame64();
  f.addrPC = { offset: eip, segment: 0, mode: AddressMode.Flat };
  f.addrFrame = { offset: ebp, segment: 0, mode: AddressMode.Flat };
  f.addrStack = { offset: esp, segment: 0, mode: AddressMode.Flat };
  return f;
}

type Row = [pc: bigint, ret: bigint, frame: bigint, stack: bigint];
const row = (f: StackFrame64): Row => [f.addrPC.offset, f.addrReturn.offset, f.addrFrame.offset, f.addrStack.offset];

describe("StackWalk64 facade, I386 (stackwalk64.md §6)", () => {
  it("first call keeps AddrPC/AddrFrame/AddrStack and only computes AddrReturn, Params, Far, Virtual", () => {
    const { snap, L } = chain();
    const f = startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!);
    f.addrBStore = { offset: 0xdeadn, segment: 7, mode: 3 };
    expect(stackWalk64(I386, snap, undefined, f)).toBe(true);
    expect(row(f)).toEqual([ra("c", 5), ra("b", 0x10), L["ebp0"], L["esp0"]]);
    expect(f.params).toEqual([1n, 2n, 3n, 4n]);
    expect(f.far).toBe(1);
    expect(f.virtual).toBe(1);
    expect(f.addrBStore).toEqual({ offset: 0n, segment: 0, mode: 0 });
    expect(f.addrReturn.mode).toBe(AddressMode.Flat);
    expect(f.reserved[0]).toBe((1n << 4n) | 1n); // count 1, mode 32-bit
  });

  it("walks a pure EBP chain: PC=Return(k), Frame=[Frame(k)], Stack=Frame(k)+8; the call after AddrReturn=0 fails (§6.7)", () => {
    const { snap, L } = chain(0n);
    const f = startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!);
    const rows: Row[] = [];
    while (stackWalk64(I386, snap, undefined, f)) rows.push(row(f));
    expect(rows).toEqual([
      [ra("c", 5), ra("b", 0x10), L["ebp0"], L["esp0"]],
      [ra("b", 0x10), ra("main", 0x20), L["ebp1"], L["sp1"]],
      [ra("main", 0x20), 0n, L["ebp2"], L["sp2"]],
    ]);
    expect(f.reserved[0] & 0xfn).toBe(3n); // done
    expect(f.reserved[0] >> 4n).toBe(3n); // the count is kept
    expect(stackWalk64Detailed(I386, snap, f).reason).toBe("done");
  });

  it("reports one more frame when the last saved EBP is 0 but its return address is not (§6.7)", () => {
    const { snap, L } = chain(ra("main", 0x30));
    const f = startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!);
    const rows: Row[] = [];
    while (stackWalk64(I386, snap, undefined, f)) rows.push(row(f));
    expect(rows).toHaveLength(4);
    expect(rows[2]![1]).toBe(ra("main", 0x30));
    expect(rows[3]).toEqual([ra("main", 0x30), 0n, 0n, L["ebp2"]! + 8n]);
  });

  it("reports the last frame with AddrReturn 0 when its return slot is unreadable (§6.7)", () => {
    const { snap, L } = chain("unreadable");
    const f = startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!);
    const rows: Row[] = [];
    while (stackWalk64(I386, snap, undefined, f)) rows.push(row(f));
    expect(rows).toHaveLength(3);
    expect(rows[2]).toEqual([ra("main", 0x20), 0n, L["ebp2"], L["sp2"]]);
  });

  it("keeps all state in Reserved[]: a record round-tripped through its 264 bytes between calls walks the same", () => {
    const { snap, L } = chain(0n);
    let bytes = encodeStackFrame64(startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!));
    const rows: Row[] = [];
    for (;;) {
      const f = decodeStackFrame64(bytes);
      if (!stackWalk64(I386, snap, undefined, f)) break;
      rows.push(row(f));
      bytes = encodeStackFrame64(f);
    }
    expect(rows.map((r) => r[0])).toEqual([ra("c", 5), ra("b", 0x10), ra("main", 0x20)]);
  });

  it("updates a caller's CONTEXT in place, and walks the same without one", () => {
    const { snap, L } = chain(0n);
    const ctx = { registers: { eip: ra("c", 5), ebp: L["ebp0"]!, esp: L["esp0"]! } };
    const f = startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!);
    expect(stackWalk64(I386, snap, undefined, f, ctx)).toBe(true);
    expect(ctx.registers.eip).toBe(ra("c", 5)); // the first call does not unwind
    expect(stackWalk64(I386, snap, undefined, f, ctx)).toBe(true);
    expect(ctx.registers).toEqual({ eip: ra("b", 0x10), ebp: L["ebp1"], esp: L["sp1"] });
  });

  it("has no progress guard: a cyclic EBP chain keeps returning frames", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").mark("ebp0").u32(s.ref("ebp1")).u32(ra("b", 8)).mark("ebp1").u32(s.ref("ebp0")).u32(ra("a", 8));
    const built = s.build();
    const snap = snapshotOf("x86", { eip: ra("c", 1), esp: built.labels["esp0"]!, ebp: built.labels["ebp0"]! }, [built], [app]);
    const f = startFrame(ra("c", 1), built.labels["ebp0"]!, built.labels["esp0"]!);
    const pcs: bigint[] = [];
    for (let i = 0; i < 50; i++) {
      expect(stackWalk64(I386, snap, undefined, f)).toBe(true);
      pcs.push(f.addrPC.offset);
    }
    expect(pcs.slice(1, 5)).toEqual([ra("b", 8), ra("a", 8), ra("b", 8), ra("a", 8)]);
  });

  it("fails on a zeroed record: Mode 0 is AddrMode1616, and 16-bit walks are unsupported", () => {
    const { snap, L } = chain();
    const f = newStackFrame64();
    f.addrPC.offset = ra("c", 5);
    f.addrFrame.offset = L["ebp0"]!;
    f.addrStack.offset = L["esp0"]!;
    const r = stackWalk64Detailed(I386, snap, f);
    expect(r.ok).toBe(false);
    expect(r.reason).toBe("unsupported");
    expect(r.detail).toMatch(/AddrMode1616/);
    expect(f.reserved[0] & 0xfn).toBe(3n);
    expect(stackWalk64(I386, snap, undefined, f)).toBe(false);
  });

  it("fails when AddrPC is flat but AddrFrame is not", () => {
    const { snap, L } = chain();
    const f = startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!);
    f.addrFrame.mode = AddressMode.Mode1632;
    expect(stackWalk64Detailed(I386, snap, f)).toMatchObject({ ok: false, reason: "bad-frame" });
  });

  it("fills FuncTableEntry from the function-table callback only when a module owns the PC", () => {
    const { snap, L } = chain(0n);
    const asked: bigint[] = [];
    const f = startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!);
    const fta = (p: bigint): bigint => {
      asked.push(p);
      return 0x5000n + (p & 0xfffn);
    };
    expect(stackWalk64(I386, snap, undefined, f, undefined, undefined, fta)).toBe(true);
    expect(f.funcTableEntry).toBe(0x5000n + (ra("c", 5) & 0xfffn));
    const noModule = startFrame(0x00900000n, L["ebp0"]!, L["esp0"]!);
    expect(stackWalk64(I386, snap, undefined, noModule, undefined, undefined, fta)).toBe(true);
    expect(noModule.funcTableEntry).toBe(0n);
    expect(asked).toEqual([ra("c", 5)]);
  });

  it("reads memory only through the read callback when one is given", () => {
    const { snap, L } = chain(0n);
    const reads: bigint[] = [];
    const f = startFrame(ra("c", 5), L["ebp0"]!, L["esp0"]!);
    const read = (address: bigint, size: number): Uint8Array | undefined => {
      reads.push(address);
      return snap.memory.read(address, size);
    };
    expect(stackWalk64(I386, undefined, undefined, f, undefined, read)).toBe(true);
    // The return address is computed by unwinding a copy: [EBP+4], then [EBP]; then the four Params.
    expect(reads).toEqual([L["ebp0"]! + 4n, L["ebp0"], L["ebp0"]! + 8n, L["ebp0"]! + 12n, L["ebp0"]! + 16n, L["ebp0"]! + 20n]);
  });

  it("answers unknown machines with ERROR_INVALID_PARAMETER, and AMD64 and IA-64 without a CONTEXT the same way", () => {
    const f = newStackFrame64();
    expect(stackWalk64Detailed(0x1234, undefined, f)).toMatchObject({ ok: false, reason: "invalid-parameter" });
    expect(stackWalk64Detailed(IMAGE_FILE_MACHINE.IA64, undefined, f)).toMatchObject({ ok: false, reason: "invalid-parameter" });
    expect(stackWalk64Detailed(IMAGE_FILE_MACHINE.AMD64, undefined, f)).toMatchObject({ ok: false, reason: "invalid-parameter" });
  });
});

describe("StackWalk over the 32-bit STACKFRAME (stackwalk64.md §5.2)", () => {
  it("walks the same frames as StackWalk64, through the 164-byte record", () => {
    const { snap, L } = chain(0n);
    const f = newStackFrame32();
    f.addrPC = { offset: ra("c", 5), segment: 0, mode: AddressMode.Flat };
    f.addrFrame = { offset: L["ebp0"]!, segment: 0, mode: AddressMode.Flat };
    f.addrStack = { offset: L["esp0"]!, segment: 0, mode: AddressMode.Flat };
    let bytes = encodeStackFrame32(f);
    const rows: bigint[][] = [];
    for (;;) {
      const g = decodeStackFrame32(bytes);
      if (!stackWalk(I386, snap, undefined, g)) {
        // Nothing is copied back on failure: the record is exactly as the caller passed it.
        expect(encodeStackFrame32(g)).toEqual(bytes);
        break;
      }
      rows.push([g.addrPC.offset, g.addrReturn.offset, g.addrFrame.offset, g.addrStack.offset, ...g.params]);
      bytes = encodeStackFrame32(g);
    }
    expect(rows).toEqual([
      [ra("c", 5), ra("b", 0x10), L["ebp0"], L["esp0"], 1n, 2n, 3n, 4n],
      [ra("b", 0x10), ra("main", 0x20), L["ebp1"], L["sp1"], 5n, 6n, 7n, 8n],
      [ra("main", 0x20), 0n, L["ebp2"], L["sp2"], 9n, 10n, 11n, 12n],
    ]);
  });

  it("widens addresses by zero-extension (Wine) or sign-extension (Address32To64), and truncates them back", () => {
    const s = new StackBuilder(0x80001000n);
    s.mark("esp0").mark("ebp0").u32(0).u32(0x80401000);
    const built = s.build();
    const snap = snapshotOf("x86", { eip: 0x80400000n, esp: 0x80001000n, ebp: 0x80001000n }, [built], [moduleWith("high.dll", 0x80400000n, ["f"])]);
    for (const widening of ["zero-extend", "sign-extend"] as const) {
      const seen: bigint[] = [];
      const f = newStackFrame32();
      f.addrPC = { offset: 0x80400000n, segment: 0, mode: AddressMode.Flat };
      f.addrFrame = { offset: 0x80001000n, segment: 0, mode: AddressMode.Flat };
      f.addrStack = { offset: 0x80001000n, segment: 0, mode: AddressMode.Flat };
      const gmb = (p: bigint): bigint => {
        seen.push(p);
        return 0n;
      };
      expect(stackWalk(I386, snap, undefined, f, undefined, { getModuleBase: gmb }, widening)).toBe(true);
      expect(f.addrReturn.offset).toBe(0x80401000n);
      expect(seen).toEqual([widening === "zero-extend" ? 0x80400000n : 0xffffffff80400000n]);
    }
  });
});
