/**
 * Which of rust-minidump's fields the JSON of each real dump of the repository leaves null, and
 * why: every field a dump's streams can fill is filled. For every dump of Breakpad's corpus, of
 * test/fixtures/real-dumps and minidump2, the null fields (top level, crash_info, system_info,
 * and a thread's last_error_value) are listed with their reasons: the streams the dump lacks (as
 * Breakpad's minidump_dump lists its directory), or what its streams say (no instruction bytes
 * at the crash address, a 32-bit machine, no valid flipped address).
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { fixtureDir, fixtureFile } from "../support/fixtures.js";
import { parseWalkJson } from "../support/walk-schema.js";
import { writeMinidump, type MinidumpSpec } from "../support/minidump-writer.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The fields of Mozilla's streams (MozMacosCrashInfo, MozMacosBootargs, MozLinuxLimits,
 * MozSoftErrors), which only Mozilla's dump writers write and no dump here has; a dump written
 * with all four fills all four (the last test here; test/formats/minidump-process-streams.test.ts
 * reads each).
 */
const NO_DUMP_HAS = ["mac_crash_info", "mac_boot_args", "soft_errors", "proc_limits"];

/** Fields null for a kind of dump, each for the reason beside it. */
const BY_KIND: Record<string, string[]> = {
  // Breakpad's Linux client writes no HandleData, MiscInfo (pid, process times) or assertion.
  linux: ["pid", "process_uptime", "handles", "crash_info.assertion"],
  // Windows dumps have none of Breakpad's Linux streams and, here, no HandleData.
  windows: ["linux_memory_map_count", "lsb_release", "system_info.cpu_microcode_version", "handles", "crash_info.assertion"],
  // Crashpad's dumps (macOS, and Linux without Breakpad's text streams): no Linux streams, no HandleData.
  crashpad: ["linux_memory_map_count", "lsb_release", "system_info.cpu_microcode_version", "handles", "crash_info.assertion"],
};

/** The crash analysis's nulls, by what the dump's crash is. */
const ANALYSIS = {
  // The crashing instruction is analysed on x86-64 only (as rust-minidump does); bit flips on 64-bit machines only.
  x86: ["crash_info.instruction", "crash_info.memory_accesses", "crash_info.instruction_pointer_update", "crash_info.adjusted_address", "crash_info.possible_bit_flips"],
  // No bytes at the crash address in the dump: nothing to disassemble.
  noCode: ["crash_info.instruction", "crash_info.memory_accesses", "crash_info.instruction_pointer_update", "crash_info.adjusted_address"],
  // Not a branch through a register or memory, no null base: neither update nor adjustment.
  plain: ["crash_info.instruction_pointer_update", "crash_info.adjusted_address"],
  // A null base register: the adjusted address is its offset, and then no bit flips are looked for.
  nullBase: ["crash_info.instruction_pointer_update", "crash_info.possible_bit_flips"],
  // No flipped address was valid where the crash address was not.
  noFlip: ["crash_info.possible_bit_flips"],
} as const;

interface Case {
  dump: string;
  kind: keyof typeof BY_KIND;
  nulls: readonly string[];
  /** How many threads have no last error: every thread off Windows, and those whose TEB the dump did not capture. */
  noLastError: "all" | number;
}

const plainNoFlip = [...ANALYSIS.plain, ...ANALYSIS.noFlip];
const CORPUS: Record<string, readonly string[]> = {
  "linux_divide_by_zero.dmp": plainNoFlip,
  "linux_executable_heap.dmp": ANALYSIS.nullBase,
  "linux_executable_stack.dmp": ANALYSIS.nullBase,
  "linux_inside_module_exe_region1.dmp": ANALYSIS.nullBase,
  "linux_inside_module_exe_region2.dmp": ANALYSIS.nullBase,
  // A jump to 0: no code there.
  "linux_jmp_to_0.dmp": ANALYSIS.noCode,
  // A `ret` fetched from a data page: its target is the update; nothing flips into that page's rights.
  "linux_jmp_to_module_not_exe_region.dmp": ["crash_info.adjusted_address", ...ANALYSIS.noFlip],
  "linux_null_dereference.dmp": ANALYSIS.nullBase,
  // An absolute address of 0, no base register; a VM's /proc/cpuinfo (no microcode), no lsb-release stream.
  "linux_null_read_av.dmp": [...ANALYSIS.plain, "system_info.cpu_microcode_version", "lsb_release"],
  // The PC lies outside every captured range.
  "linux_outside_module.dmp": [...ANALYSIS.noCode, ...ANALYSIS.noFlip],
  "linux_stack_pointer_in_module.dmp": ANALYSIS.nullBase,
  "linux_stack_pointer_in_stack.dmp": ANALYSIS.nullBase,
  "linux_stack_pointer_in_stack_alt_name.dmp": ANALYSIS.nullBase,
  "linux_write_to_nonwritable_module.dmp": plainNoFlip,
  "linux_write_to_nonwritable_region_math.dmp": plainNoFlip,
  "linux_write_to_outside_module.dmp": plainNoFlip,
  "linux_write_to_outside_module_via_math.dmp": plainNoFlip,
  // An iOS simulator's dump: the code at the PC is not captured, and there is no memory map to flip bits into.
  "minidump_crashpad_annotation.dmp": [...ANALYSIS.noCode, ...ANALYSIS.noFlip],
  // `int 0x29` (__fastfail): no memory operand; no MemoryInfoList to flip bits into.
  "tiny-exe-fastfail.dmp": plainNoFlip,
};

const CASES: Case[] = [
  ...Object.entries(CORPUS).map(([name, nulls]): Case => ({
    dump: `breakpad-corpus/${name}`,
    kind: name.startsWith("linux") ? "linux" : name === "tiny-exe-fastfail.dmp" ? "windows" : "crashpad",
    nulls,
    // tiny-exe-fastfail captured the TEBs of all four threads.
    noLastError: name === "tiny-exe-fastfail.dmp" ? 0 : "all",
  })),
  { dump: "breakpad/minidump2.dmp", kind: "windows", nulls: ANALYSIS.x86, noLastError: 2 },
  { dump: "real-dumps/symbolicator-windows/windows.dmp", kind: "windows", nulls: ANALYSIS.x86, noLastError: 4 },
  { dump: "real-dumps/moz-linux-x86/linux-x86.dmp", kind: "linux", nulls: ANALYSIS.x86, noLastError: "all" },
  // ARM64: no instruction analysis; the crash address has valid flipped neighbours. No lsb-release stream, no CPU string.
  { dump: "real-dumps/moz-android-aarch64/android-aarch64.dmp", kind: "linux", nulls: [...ANALYSIS.x86.filter((f) => f !== "crash_info.possible_bit_flips"), "lsb_release", "system_info.cpu_info", "system_info.cpu_microcode_version"], noLastError: "all" },
  // An absolute address, no base register; its /proc/cpuinfo has no microcode line.
  { dump: "real-dumps/symbolicator-linux/linux.dmp", kind: "linux", nulls: [...ANALYSIS.plain, "system_info.cpu_microcode_version"], noLastError: "all" },
  // Crashpad's Linux writer: the code at the PC is not captured; no memory map.
  { dump: "real-dumps/breakpad-linux-inline/linux_inline.dmp", kind: "crashpad", nulls: [...ANALYSIS.noCode, ...ANALYSIS.noFlip], noLastError: "all" },
];

/** The paths of the fields of rust-minidump's schema (top level, crash_info, system_info) that are null. */
function nulls(doc: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(doc)) {
    if (v === null) out.push(k);
    else if ((k === "crash_info" || k === "system_info") && typeof v === "object") {
      for (const [kk, vv] of Object.entries(v as Record<string, unknown>)) if (vv === null) out.push(`${k}.${kk}`);
    }
  }
  return out.sort();
}

describe("the fields a dump's streams fill", () => {
  it("covers every dump of Breakpad's corpus", () => {
    const dumps = readdirSync(fixtureDir("breakpad-corpus")).filter((f) => f.endsWith(".dmp")).sort();
    expect(Object.keys(CORPUS).sort()).toEqual(dumps);
  });
  it.each(CASES)("$dump", async ({ dump, kind, nulls: own, noLastError }) => {
    const doc = parseWalkJson((await cli("walk", fixtureFile(dump), "--format", "json")).out);
    expect(nulls(doc)).toEqual([...new Set([...NO_DUMP_HAS, ...BY_KIND[kind]!, ...own])].sort());
    const missing = doc.threads.filter((t: { last_error_value: unknown }) => t.last_error_value === null).length;
    expect(missing).toBe(noLastError === "all" ? doc.threads.length : noLastError);
  });
});

describe("the fields of Mozilla's streams", () => {
  it("are filled by a dump that has the streams", async () => {
    const u32 = (...v: number[]): number[] => v.flatMap((n) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24]);
    // Boot arguments: the stream type, the RVA64 of the MINIDUMP_STRING that follows it in the stream.
    const bootargs = (rva: number): Uint8Array => Uint8Array.from([...u32(0x4d7a0002, rva + 12, 0), ...u32(4), 0x2d, 0, 0x76, 0, 0, 0]);
    // A crash-info header with no records, one limit, one soft error.
    const spec = (bootargsRva: number): MinidumpSpec => ({
      machine: "x64",
      platformId: 0x8101,
      threads: [{ id: 1, registers: { rip: 0n, rsp: 0x1000n }, stack: { base: 0x1000n, bytes: new Uint8Array(16) } }],
      extraStreams: [
        { type: 0x4d7a0001, data: Uint8Array.from([...u32(0x4d7a0001, 0, 40), ...new Array<number>(160).fill(0)]) },
        { type: 0x4d7a0002, data: bootargs(bootargsRva) },
        { type: 0x4d7a0003, data: new TextEncoder().encode("Max open files  1024  4096  files\n") },
        { type: 0x4d7a0004, data: new TextEncoder().encode('[{"WriteLimitsFailed":"denied"}]') },
      ],
    });
    const bytes = writeMinidump(spec(writeMinidump(spec(0)).streams.get(0x4d7a0002)!.rva)).bytes;
    const file = join(mkdtempSync(join(tmpdir(), "moz-")), "moz.dmp");
    writeFileSync(file, bytes);
    const doc = parseWalkJson((await cli("walk", file, "--format", "json")).out);
    expect(doc.mac_crash_info).toEqual({ num_records: 0, records: [] });
    expect(doc.mac_boot_args).toBe("-v");
    expect(doc.proc_limits).toEqual({ limits: [{ name: "Max open files", soft: { Limited: 1024 }, hard: { Limited: 4096 }, unit: "files" }] });
    expect(doc.soft_errors).toEqual([{ WriteLimitsFailed: "denied" }]);
  });
});
