/**
 * The values of `walk --format json` that are worked out rather than copied: rust-minidump's
 * trust word of each of the project's rules, the instruction a caller frame reports (its
 * return address moved back into the call by the machine's look-back), a module's code id as
 * rust-minidump writes it per OS, and the process uptime. The expected values are the schema's
 * (rust-minidump's minidump-processor/json-schema.md) and Breakpad's trust table (a STACK WIN
 * program's result fixed by a scan is CALL FRAME INFO WITH SCANNING).
 */
import { describe, expect, it } from "vitest";
import type { Minidump, MinidumpModule } from "../../src/formats/minidump.js";
import type { Module } from "../../src/model/snapshot.js";
import { frameInstruction, processUptime, schemaCodeId, schemaTrust } from "../../src/render/json.js";
import type { Frame, Trust } from "../../src/walk/frame.js";
import type { Rule } from "../../src/arch/rule.js";

function frame(index: number, trust: Trust, rule: Rule, addrPC = 0x401000n): Frame {
  return { index, addrPC, addrReturn: 0n, addrFrame: 0n, addrStack: 0n, addrBStore: 0n, params: [], far: false, virtual: false, trust, rule, registers: {} };
}

describe("schemaTrust", () => {
  const scan: Rule = { kind: "scan", registers: { sp: "esp", fp: "ebp" }, sp: 0n, slot: 0n, value: 0n };
  const cases: [Trust, Rule, string][] = [
    ["context", { kind: "context" }, "context"],
    ["frame-data", { kind: "custom", text: "a FrameData program" }, "cfi"],
    ["fpo", { kind: "custom", text: "an FPO_DATA record" }, "cfi"],
    ["unwind-info", { kind: "custom", text: "UNWIND_INFO" }, "cfi"],
    ["cfi", { kind: "cfi", rva: 0, rules: [] }, "cfi"],
    ["ia64-unwind", { kind: "custom", text: "IA-64 descriptors" }, "cfi"],
    ["frame-pointer", { kind: "custom", text: "the EBP chain" }, "frame_pointer"],
    ["scan", scan, "scan"],
    ["scan", { kind: "leaf", slot: 0n, value: 0n }, "scan"],
    ["frame-data", { kind: "site-check", rule: { kind: "frame-data", record: {} as never, ra: { at: "ebp+4" } }, found: "scan", eip: 0n, slot: 0n, value: 0n }, "cfi_scan"],
    ["unwind-info", { kind: "rescan", problem: "RIP 0", start: 0n, slot: 0n, value: 0n }, "cfi_scan"],
  ];
  it.each(cases)("%s found by a %o rule is %s", (trust, rule, expected) => expect(schemaTrust(frame(1, trust, rule))).toBe(expected));
});

describe("frameInstruction", () => {
  it("is frame 0's PC, and a caller's return address − 1 (x86, x64, IA-64) or − 4 (ARM64)", () => {
    expect(frameInstruction("x86", frame(0, "context", { kind: "context" }, 0x40429en))).toBe(0x40429en);
    // minidump2's frame 1: return address 0x404200, rust-minidump's offset 0x004041ff.
    expect(frameInstruction("x86", frame(1, "frame-data", { kind: "custom", text: "" }, 0x404200n))).toBe(0x4041ffn);
    expect(frameInstruction("x64", frame(1, "unwind-info", { kind: "custom", text: "" }, 0x140001000n))).toBe(0x140000fffn);
    expect(frameInstruction("arm64", frame(1, "cfi", { kind: "custom", text: "" }, 0x1000n))).toBe(0xffcn);
  });
});

describe("schemaCodeId", () => {
  const module: Module = { name: "m", base: 0x1000n, size: 0x2000n, symbols: [], codeId: "45D35F6C2d000" };
  const dumpModule = (over: Partial<MinidumpModule>): MinidumpModule => ({ codeId: "45D35F6C2d000", ...over }) as MinidumpModule;
  const rsds = { format: "RSDS" as const, guid: "6FB745543370367793D47F7A01EA6A80", age: 0, pdbName: "dyld_sim", debugId: "6FB745543370367793D47F7A01EA6A800" };
  it("is the PE TimeDateStamp and SizeOfImage in lower case on Windows (rust-minidump's example F75275E226000, lower-cased)", () => {
    expect(schemaCodeId(module, dumpModule({ codeView: { ...rsds, pdbName: "m.pdb" } }), "windows")).toBe("45d35f6c2d000");
    expect(schemaCodeId(module, dumpModule({}), "windows")).toBe("45d35f6c2d000");
  });
  it("is a Mach-O module's LC_UUID (the RSDS GUID without its age)", () => {
    expect(schemaCodeId(module, dumpModule({ codeView: rsds }), "macos")).toBe("6fb745543370367793d47f7a01ea6a80");
    expect(schemaCodeId(module, dumpModule({ codeView: rsds }), "ios")).toBe("6fb745543370367793d47f7a01ea6a80");
  });
  it("is an ELF module's build id, and null for a non-Windows module without a record", () => {
    expect(schemaCodeId(module, dumpModule({ buildId: new Uint8Array([0xab]), codeId: "ab" }), "linux")).toBe("ab");
    expect(schemaCodeId(module, dumpModule({}), "linux")).toBeNull();
  });
});

describe("processUptime", () => {
  const dump = (flags1: number, create: number, stamp: number): Minidump =>
    ({ header: { timeDateStamp: stamp }, miscInfo: { sizeOfInfo: 24, flags1, processId: 1, processCreateTime: create, processUserTime: 0, processKernelTime: 0 } }) as unknown as Minidump;
  it("is the dump's time less the process's creation time, when MiscInfo has process times", () => {
    expect(processUptime(dump(0x3, 1_000, 1_042))).toBe(42);
    expect(processUptime(dump(0x1, 1_000, 1_042))).toBeNull();
    expect(processUptime(dump(0x3, 2_000, 1_042))).toBeNull();
    expect(processUptime(undefined)).toBeNull();
  });
});
