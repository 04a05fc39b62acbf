/**
 * Module identity for Linux and macOS dumps (minidump.md §2.3, §8): Breakpad's `BpEL` CodeView
 * record carries an ELF build id, whose first 16 bytes read as a GUID with little-endian fields
 * and age 0 are the debug id; the debug file is the code file; the code id is the whole build
 * id. `--symbols DIR` finds `DIR/libfoo.so/<ID>/libfoo.so.sym` with that id, and the report
 * prints what Breakpad prints. A module whose debug file cannot name a symbol file stays without
 * symbols while the walk goes on.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { bytesSource, elfDebugId, readMinidump } from "../../src/formats/minidump.js";
import { writeMinidump, type WriterModule } from "../support/minidump-writer.js";

/** A build id of 20 bytes (GNU ld's SHA-1 note): 0x10, 0x11, … */
const BUILD_ID = Uint8Array.from({ length: 20 }, (_, i) => 0x10 + i);
/** Its debug id: Data1 = 13121110, Data2 = 1514, Data3 = 1716, then 18 … 1f, age 0. */
const DEBUG_ID = "131211101514171618191A1B1C1D1E1F0";

const LIBFOO = 0x7f00_0000_0000n;
const STACK = 0x7ffd_0000_0000n;

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

/** A Linux x86_64 dump (as Breakpad's client writes it) that crashed in libfoo.so. */
function linuxDump(modules: WriterModule[]): Uint8Array {
  return writeMinidump({
    machine: "x64",
    platformId: 0x8201,
    osVersion: { major: 0, minor: 0, build: 0, csd: "Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64" },
    threads: [{ id: 4242, registers: { rip: LIBFOO + 0x1134n, rsp: STACK + 0x100n, rbp: 0n }, stack: { base: STACK, bytes: new Uint8Array(0x200) } }],
    modules,
    exception: { threadId: 4242, code: 11, flags: 1, address: 0x10n },
  }).bytes;
}

const ELF_MODULES: WriterModule[] = [
  { path: "/usr/bin/app", base: 0x5555_5555_4000n, size: 0x3000, codeView: { elf: { buildId: Uint8Array.from({ length: 20 }, (_, i) => 0xa0 + i) } } },
  { path: "/usr/lib/x86_64-linux-gnu/libfoo.so", base: LIBFOO, size: 0x4000, codeView: { elf: { buildId: BUILD_ID } } },
];

describe("ELF modules", () => {
  it("the BpEL record: debug id from the first 16 bytes of the build id, the code file as debug file, the build id as code id", () => {
    const dump = readMinidump(bytesSource(linuxDump(ELF_MODULES)));
    expect(dump.notes).toEqual([]);
    const foo = dump.modules[1]!;
    expect(foo.debugId).toBe(DEBUG_ID);
    expect(foo.debugFile).toBe("/usr/lib/x86_64-linux-gnu/libfoo.so");
    expect(foo.codeId).toBe("101112131415161718191a1b1c1d1e1f20212223");
    expect(foo.buildId).toEqual(BUILD_ID);
  });

  it("a build id shorter than 16 bytes is zero-filled", () => {
    expect(elfDebugId(Uint8Array.of(1, 2, 3, 4, 5, 6))).toBe("04030201060500000000000000000000" + "0");
    expect(elfDebugId(new Uint8Array(0))).toBe("0".repeat(33));
  });

  it("the report: Linux OS and CPU lines, SIGSEGV with its code, module columns as Breakpad prints them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "elf-report-"));
    const file = join(dir, "linux.dmp");
    writeFileSync(file, linuxDump(ELF_MODULES));
    const human = await cli("walk", file, "--format", "breakpad");
    expect(human.code).toBe(0);
    expect(human.out.split("\n").slice(0, 11)).toEqual([
      "Operating system: Linux",
      "                  0.0.0 Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64",
      "CPU: amd64",
      "     family 6 model 13 stepping 8",
      "     1 CPU",
      "",
      "GPU: UNKNOWN",
      "",
      "Crash reason:  SIGSEGV /SEGV_MAPERR",
      "Crash address: 0x10",
      "Process uptime: not available",
    ]);
    expect(human.out).toContain("\nThread 0 (crashed)\n 0  libfoo.so + 0x1134\n");
    expect(human.out.endsWith("Loaded modules:\n0x555555554000 - 0x555555556fff  app  ???  (main)\n0x7f0000000000 - 0x7f0000003fff  libfoo.so  ???\n")).toBe(true);
    const machine = await cli("walk", file, "--format", "breakpad-m");
    expect(machine.out.split("\n").slice(3, 6)).toEqual([
      "Crash|SIGSEGV /SEGV_MAPERR|0x10|0",
      "Module|app||app|A3A2A1A0A5A4A7A6A8A9AAABACADAEAF0|0x555555554000|0x555555556fff|1",
      `Module|libfoo.so||libfoo.so|${DEBUG_ID}|0x7f0000000000|0x7f0000003fff|0`,
    ]);
  });

  it("--symbols finds DIR/libfoo.so/<debug id>/libfoo.so.sym and names the frame from it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "elf-symbols-"));
    const file = join(dir, "linux.dmp");
    writeFileSync(file, linuxDump(ELF_MODULES));
    const store = join(dir, "symbols");
    mkdirSync(join(store, "libfoo.so", DEBUG_ID), { recursive: true });
    writeFileSync(
      join(store, "libfoo.so", DEBUG_ID, "libfoo.so.sym"),
      [
        `MODULE Linux x86_64 ${DEBUG_ID} libfoo.so`,
        "INFO CODE_ID 101112131415161718191A1B1C1D1E1F20212223",
        "FILE 0 /src/foo/crash.c",
        "FUNC 1120 30 0 crash_here",
        "1120 10 11 0",
        "1130 20 12 0",
        "PUBLIC 1200 0 foo_init",
        "",
      ].join("\n"),
    );
    const human = await cli("walk", file, "--format", "breakpad", "--symbols", store);
    expect(human.code).toBe(0);
    expect(human.err).toContain(`symbols: libfoo.so: unwind records from ${join(store, "libfoo.so", DEBUG_ID, "libfoo.so.sym")}\n`);
    expect(human.out).toContain("\n 0  libfoo.so!crash_here [crash.c : 12 + 0x4]\n");
    // The main module has no symbol file, but no frame lies in it: no warning, as in Breakpad.
    expect(human.out).toContain("0x555555554000 - 0x555555556fff  app  ???  (main)\n");
    expect(human.out).toContain("0x7f0000000000 - 0x7f0000003fff  libfoo.so  ???\n");
    const machine = await cli("walk", file, "--format", "breakpad-m", "--symbols", store);
    expect(machine.out.endsWith("\n0|0|libfoo.so|crash_here|/src/foo/crash.c|12|0x4\n")).toBe(true);
  });

  it("a Mach-O module's RSDS record (Crashpad, Breakpad's mac client): the UUID and age 0", () => {
    const dump = readMinidump(
      bytesSource(
        linuxDump([{ path: "/usr/lib/libobjc.A.dylib", base: LIBFOO, size: 0x4000, codeView: { rsds: { guid: "0957DDFE-A0B0-3A29-8B98-23B8E4266A19", age: 0, pdb: "libobjc.A.dylib" } } }]),
      ),
    );
    expect(dump.modules[0]).toMatchObject({ debugFile: "libobjc.A.dylib", debugId: "0957DDFEA0B03A298B9823B8E4266A190" });
  });

  it("other CodeView signatures and IMAGE_DEBUG_MISC records: Breakpad's rules for the debug file", () => {
    const misc = (name: string, length?: number): Uint8Array => {
      const b = new Uint8Array(12 + name.length);
      const dv = new DataView(b.buffer);
      dv.setUint32(0, 1, true); // IMAGE_DEBUG_MISC_EXENAME
      dv.setUint32(4, length ?? b.length, true);
      b.set(new TextEncoder().encode(name), 12);
      return b;
    };
    const dump = readMinidump(
      bytesSource(
        linuxDump([
          { path: "/a/one.so", base: 0x1000_0000n, size: 0x1000, codeView: { raw: new TextEncoder().encode("NB11 something") } },
          { path: "/a/two.dll", base: 0x2000_0000n, size: 0x1000, miscRecord: misc("two.dbg\0") },
          { path: "/a/three.dll", base: 0x3000_0000n, size: 0x1000, codeView: { rsds: { guid: "5A9832E5-2872-41C1-838E-D98914E9B7FF", age: 1, pdb: "three.pdb" } }, miscRecord: misc("x.dbg", 99) },
        ]),
      ),
    );
    expect(dump.modules[0]!.debugFile).toBeUndefined();
    expect(dump.modules[0]!.debugId).toBeUndefined();
    expect(dump.modules[1]).toMatchObject({ debugFile: "two.dbg" });
    expect(dump.modules[1]!.debugId).toBeUndefined();
    // A misc record whose Length is not its size: Breakpad drops all of the module's debug information.
    expect(dump.modules[2]!.debugId).toBeUndefined();
    expect(dump.notes.some((n) => /module 0 \(one\.so\): CodeView signature 0x3131424e is not RSDS, NB10 or BpEL/.test(n))).toBe(true);
    expect(dump.notes.some((n) => /module 2 \(three\.dll\): IMAGE_DEBUG_MISC Length 99 is not its DataSize 17; the module has no debug file or identifier/.test(n))).toBe(true);
  });
});

describe("debug files that cannot name a symbol file", () => {
  for (const [what, pdb] of [
    ["an empty debug file", ""],
    ["a debug file named ..", "C:\\build\\.."],
  ] as const) {
    it(`${what}: the module stays without symbols, the walk goes on (exit 0)`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "odd-debug-name-"));
      const file = join(dir, "odd.dmp");
      const written = writeMinidump({
        machine: "x86",
        threads: [{ id: 1, registers: { eip: 0x0040_1000n, esp: 0x0012_f000n, ebp: 0n }, stack: { base: 0x0012_f000n, bytes: new Uint8Array(0x40) } }],
        modules: [{ path: "C:\\app\\odd.exe", base: 0x0040_0000n, size: 0x10000, codeView: { rsds: { guid: "5A9832E5-2872-41C1-838E-D98914E9B7FF", age: 1, pdb } } }],
        exception: { threadId: 1, code: 0xc0000005, address: 0x0040_1000n, parameters: [0n, 0n] },
      });
      writeFileSync(file, written.bytes);
      const r = await cli("walk", file, "--symbols", dir, "--format", "breakpad");
      expect(r.code).toBe(0);
      expect(r.err).toMatch(/^symbols: odd\.exe: debug file ".*" has no usable file name for a symbol store: no symbol file is looked for, the module stays without symbols\n/);
      expect(r.out).toContain(" 0  odd.exe + 0x1000\n");
      expect(r.out).toContain("  odd.exe  ???  (main)  (WARNING: No symbols, ");
    });
  }
});
