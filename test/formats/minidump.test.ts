import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fixtureFile } from "../support/fixtures.js";
import { fileSource } from "../../src/node/file-source.js";
import { InputError } from "../../src/errors.js";
import {
  bytesSource,
  minidumpSnapshot,
  MinidumpMemory,
  readMinidump,
  type ByteSource,
  type Minidump,
} from "../../src/formats/minidump.js";
import { walkSnapshot } from "../../src/walk/walk.js";
import { patch32, patch64, writeMinidump, type MinidumpSpec, type WriterRange } from "../support/minidump-writer.js";
import { StackBuilder } from "../support/stack-builder.js";
import { inputError } from "../support/input-error.js";

const FIXTURES = fixtureFile("breakpad/");
const DMP = `${FIXTURES}minidump2.dmp`;
const dumpBytes = new Uint8Array(readFileSync(DMP));
/** Breakpad's `minidump_dump minidump2.dmp`: the oracle for every value asserted below. */
const ORACLE = readFileSync(`${FIXTURES}minidump2.dump.out`, "utf8");

/** A source that records every read. */
function countingSource(inner: ByteSource): ByteSource & { reads: [number, number][]; total(): number; reset(): void } {
  const reads: [number, number][] = [];
  return {
    size: inner.size,
    reads,
    read(offset, length) {
      reads.push([offset, length]);
      return inner.read(offset, length);
    },
    total: () => reads.reduce((n, [, l]) => n + l, 0),
    reset: () => void reads.splice(0),
  };
}


const hexBytes = (h: string): Uint8Array => Uint8Array.from(h.match(/../g)!, (b) => parseInt(b, 16));

describe("minidump2.dmp against minidump2.dump.out", () => {
  const dump = readMinidump(bytesSource(dumpBytes), "minidump2.dmp");

  it("reads the header and the directory", () => {
    expect(dump.header).toEqual({
      signature: 0x504d444d,
      version: 0x5128a793,
      streamCount: 9,
      directoryRva: 0x20,
      checksum: 0,
      timeDateStamp: 0x45d35f73,
      flags: 0n,
    });
    expect(dump.streams.map((s) => [s.streamType, s.location.dataSize, s.location.rva])).toEqual([
      [0x3, 100, 0x184],
      [0x4, 1408, 0x1e8],
      [0x5, 52, 0x1505],
      [0x6, 168, 0xdc],
      [0x7, 56, 0x8c],
      [0xf, 24, 0xc4],
      [0x47670001, 12, 0x14f9],
      [0x0, 0, 0x0],
      [0x0, 0, 0x0],
    ]);
    expect(dump.notes).toEqual([]);
  });

  it("reads both threads with their stacks and own contexts", () => {
    expect(dump.threadStream).toBe("ThreadList");
    expect(dump.threads.map((t) => [t.id, t.suspendCount, t.priorityClass, t.priority, t.teb])).toEqual([
      [0xbf4, 0, 0, 0, 0x7ffdf000n],
      [0x11c0, 0, 0, 0, 0x7ffde000n],
    ]);
    expect(dump.threads.map((t) => [t.stack.start, t.stack.size, t.stack.rva])).toEqual([
      [0x12f31cn, 0xce4n, 0x1639],
      [0x97f6e8n, 0x918n, 0x231d],
    ]);
    expect(dump.threads.map((t) => t.contextLocation)).toEqual([
      { dataSize: 0x2cc, rva: 0xd94 },
      { dataSize: 0x2cc, rva: 0x1060 },
    ]);
    const [t0, t1] = dump.threads.map((t) => t.context!);
    expect(t0!.machine).toBe("x86");
    expect(t0!.contextFlags).toBe(0x1003f);
    expect(t0!.registers).toMatchObject({
      gs: 0x0n, fs: 0x3bn, es: 0x23n, ds: 0x23n, edi: 0x0n, esi: 0x7b8n, ebx: 0x7c883780n, edx: 0x7c97c0d8n,
      ecx: 0x7c80b46en, eax: 0x400000n, ebp: 0x12f384n, eip: 0x7c90eb94n, cs: 0x1bn, eflags: 0x246n, esp: 0x12f320n, ss: 0x23n,
      dr0: 0n, dr7: 0n,
    });
    expect(t1!.contextFlags).toBe(0x1003f);
    expect(t1!.registers).toMatchObject({
      gs: 0x0n, fs: 0x3bn, es: 0x23n, ds: 0x23n, edi: 0x145b00n, esi: 0x145aa8n, ebx: 0x145ad0n, edx: 0x7c90eb94n,
      ecx: 0x7n, eax: 0xa80000n, ebp: 0x97f6fcn, eip: 0x7c90eb94n, cs: 0x1bn, eflags: 0x246n, esp: 0x97f6ecn, ss: 0x23n,
    });
  });

  it("reads all 13 modules: names, bases, sizes, versions, code and debug identifiers", () => {
    // [base, size, checksum, time_date_stamp, version signature, file_version hi, lo, cv size, cv rva,
    //  code_file, code_identifier, debug_file, debug_identifier, version] from minidump2.dump.out.
    const expected: [bigint, number, number, number, number, number, number, number, number, string, string, string, string, string][] = [
      [0x400000n, 0x2d000, 0x0, 0x45d35f6c, 0x0, 0x0, 0x0, 40, 0x132c, String.raw`c:\test_app.exe`, "45D35F6C2d000", String.raw`c:\test_app.pdb`, "5A9832E5287241C1838ED98914E9B7FF1", ""],
      [0x7c900000n, 0xb0000, 0xaf2f7, 0x411096b4, 0xfeef04bd, 0x50001, 0xa280884, 34, 0x1354, String.raw`C:\WINDOWS\system32\ntdll.dll`, "411096B4b0000", String.raw`ntdll.pdb`, "36515FB5D04345E491F672FA2E2878C02", "5.1.2600.2180"],
      [0x7c800000n, 0xf4000, 0xf724d, 0x44ab9a84, 0xfeef04bd, 0x50001, 0xa280b81, 37, 0x1376, String.raw`C:\WINDOWS\system32\kernel32.dll`, "44AB9A84f4000", String.raw`kernel32.pdb`, "BCE8785C57B44245A669896B6A19B9542", "5.1.2600.2945"],
      [0x774e0000n, 0x13d000, 0x13dc6b, 0x42e5be93, 0xfeef04bd, 0x50001, 0xa280aa6, 34, 0x139b, String.raw`C:\WINDOWS\system32\ole32.dll`, "42E5BE9313d000", String.raw`ole32.pdb`, "683B65B246F4418796D2EE6D4C55EB112", "5.1.2600.2726"],
      [0x77dd0000n, 0x9b000, 0xa0de4, 0x411096a7, 0xfeef04bd, 0x50001, 0xa280884, 37, 0x13bd, String.raw`C:\WINDOWS\system32\advapi32.dll`, "411096A79b000", String.raw`advapi32.pdb`, "455D6C5F184D45BBB5C5F30F829751142", "5.1.2600.2180"],
      [0x77e70000n, 0x91000, 0x9c482, 0x411096ae, 0xfeef04bd, 0x50001, 0xa280884, 35, 0x13e2, String.raw`C:\WINDOWS\system32\rpcrt4.dll`, "411096AE91000", String.raw`rpcrt4.pdb`, "BEA45A721DA141DAA3BA86B3A20311532", "5.1.2600.2180"],
      [0x77f10000n, 0x47000, 0x4d0d0, 0x43b34feb, 0xfeef04bd, 0x50001, 0xa280b02, 34, 0x1405, String.raw`C:\WINDOWS\system32\gdi32.dll`, "43B34FEB47000", String.raw`gdi32.pdb`, "C0EA66BE00A64BD7AEF79E443A91869C2", "5.1.2600.2818"],
      [0x77d40000n, 0x90000, 0x9505c, 0x42260159, 0xfeef04bd, 0x50001, 0xa280a3e, 35, 0x1427, String.raw`C:\WINDOWS\system32\user32.dll`, "4226015990000", String.raw`user32.pdb`, "EE2B714D83A34C9D88027621272F83262", "5.1.2600.2622"],
      [0x77c10000n, 0x58000, 0x57cd3, 0x41109752, 0xfeef04bd, 0x70000, 0xa280884, 35, 0x144a, String.raw`C:\WINDOWS\system32\msvcrt.dll`, "4110975258000", String.raw`msvcrt.pdb`, "A678F3C30DED426B839032B996987E381", "7.0.2600.2180"],
      [0x76390000n, 0x1d000, 0x2a024, 0x411096ae, 0xfeef04bd, 0x50001, 0xa280884, 34, 0x146d, String.raw`C:\WINDOWS\system32\imm32.dll`, "411096AE1d000", String.raw`imm32.pdb`, "2C17A49C251B4C8EB9E2AD13D7D9EA162", "5.1.2600.2180"],
      [0x59a60000n, 0xa1000, 0xa8824, 0x4110969a, 0xfeef04bd, 0x50001, 0xa280884, 36, 0x148f, String.raw`C:\WINDOWS\system32\dbghelp.dll`, "4110969Aa1000", String.raw`dbghelp.pdb`, "39559573E21B46F28E286923BE9E6A761", "5.1.2600.2180"],
      [0x77c00000n, 0x8000, 0x11d78, 0x411096b7, 0xfeef04bd, 0x50001, 0xa280884, 36, 0x14b3, String.raw`C:\WINDOWS\system32\version.dll`, "411096B78000", String.raw`version.pdb`, "180A90C40384463E82DDC45B2C8AB76E2", "5.1.2600.2180"],
      [0x76bf0000n, 0xb000, 0xa29b, 0x411096ca, 0xfeef04bd, 0x50001, 0xa280884, 34, 0x14d7, String.raw`C:\WINDOWS\system32\psapi.dll`, "411096CAb000", String.raw`psapi.pdb`, "A5C3A1F9689F43D8AD228A09293889702", "5.1.2600.2180"],
    ];
    expect(dump.modules).toHaveLength(13);
    expect(
      dump.modules.map((m) => [
        m.base, m.size, m.checksum, m.timeDateStamp, m.versionInfo.signature, m.versionInfo.fileVersionHi, m.versionInfo.fileVersionLo,
        m.cvRecord.dataSize, m.cvRecord.rva, m.path, m.codeId, m.debugFile, m.debugId, m.version ?? "",
      ]),
    ).toEqual(expected);
    const app = dump.modules[0]!;
    expect(app.name).toBe("test_app.exe");
    expect(app.codeView).toEqual({ format: "RSDS", guid: "5A9832E5287241C1838ED98914E9B7FF", age: 1, pdbName: "c:\\test_app.pdb", debugId: "5A9832E5287241C1838ED98914E9B7FF1" });
    expect(app.miscRecord).toEqual({ dataSize: 0, rva: 0 });
    expect(dump.modules[8]!.versionInfo).toMatchObject({ structVersion: 0x10000, productVersionHi: 0x60001, productVersionLo: 0x21be0884, fileFlagsMask: 0x3f, fileOs: 0x40004, fileType: 0x1 });
  });

  it("reads the memory list", () => {
    expect(dump.memory.map((r) => [r.start, r.size, r.rva, r.from])).toEqual([
      [0x12f31cn, 0xce4n, 0x1639, "MemoryList"],
      [0x97f6e8n, 0x918n, 0x231d, "MemoryList"],
      [0x7c90eb14n, 0x100n, 0x1539, "MemoryList"],
    ]);
  });

  it("reads the exception and its context", () => {
    const e = dump.exception!;
    expect([e.threadId, e.code, e.flags, e.record, e.address, e.numberParameters, e.parameters]).toEqual([0xbf4, 0xc0000005, 0, 0n, 0x40429en, 2, [0x1n, 0x45n]]);
    expect(e.contextLocation).toEqual({ dataSize: 716, rva: 0xac8 });
    expect(e.context!.contextFlags).toBe(0x1003f);
    expect(e.context!.registers).toMatchObject({
      gs: 0x0n, fs: 0x3bn, es: 0x23n, ds: 0x23n, edi: 0xa28n, esi: 0x2n, ebx: 0x7c80abc1n, edx: 0x42bc58n,
      ecx: 0x12fe94n, eax: 0x45n, ebp: 0x12fe88n, eip: 0x40429en, cs: 0x1bn, eflags: 0x10246n, esp: 0x12fe84n, ss: 0x23n,
    });
  });

  it("reads SystemInfo, MiscInfo and the Breakpad info stream", () => {
    expect(dump.systemInfo).toEqual({
      processorArchitecture: 0,
      processorLevel: 6,
      processorRevision: 0xd08,
      numberOfProcessors: 1,
      productType: 1,
      majorVersion: 5,
      minorVersion: 1,
      buildNumber: 2600,
      platformId: 2,
      csdVersionRva: 0x768,
      csdVersion: "Service Pack 2",
      suiteMask: 0x100,
      cpu: { kind: "x86", vendorId: "GenuineIntel", versionInformation: 0x6d8, featureInformation: 0xafe9fbff, amdExtendedCpuFeatures: 0xffffffff },
      machine: "x86",
    });
    expect(dump.machine).toBe("x86");
    expect(dump.miscInfo).toEqual({ sizeOfInfo: 24, version: 1, flags1: 0x3, processId: 3932, processCreateTime: 0x45d35f73, processUserTime: 0, processKernelTime: 0 });
    expect(dump.breakpadInfo).toEqual({ validity: 0x3, dumpThreadId: 0x11c0, requestingThreadId: 0xbf4 });
    expect(dump.functionTable).toBeUndefined();
  });

  it("makes a snapshot: crashed thread first with the exception's context, modules, lazy memory", () => {
    const snap = minidumpSnapshot(dump);
    expect(snap.machine).toBe("x86");
    expect(snap.threads.map((t) => [t.id, t.crashed])).toEqual([
      [0xbf4, true],
      [0x11c0, false],
    ]);
    expect([snap.threads[0]!.registers.eip, snap.threads[0]!.registers.esp, snap.threads[0]!.registers.ebp]).toEqual([0x0040429en, 0x0012fe84n, 0x0012fe88n]);
    expect(snap.threads[1]!.registers.eip).toBe(0x7c90eb94n);
    expect(snap.modules[0]).toEqual({
      name: "test_app.exe",
      path: "c:\\test_app.exe",
      base: 0x400000n,
      size: 0x2d000n,
      symbols: [],
      codeId: "45D35F6C2d000",
      debugFile: "c:\\test_app.pdb",
      debugId: "5A9832E5287241C1838ED98914E9B7FF1",
    });
    expect(snap.modules[0]!.debugFile!.split("\\").pop()).toBe("test_app.pdb");
    expect(snap.modules.map((m) => m.name)).toEqual([
      "test_app.exe", "ntdll.dll", "kernel32.dll", "ole32.dll", "advapi32.dll", "rpcrt4.dll", "gdi32.dll",
      "user32.dll", "msvcrt.dll", "imm32.dll", "dbghelp.dll", "version.dll", "psapi.dll",
    ]);
    expect(snap.modules[2]!.version).toBe("5.1.2600.2945");
    // The stack bytes minidump_dump prints under each thread.
    const stacks = [...ORACLE.matchAll(/^Stack\n0x([0-9a-f]+)$/gm)].map((m) => hexBytes(m[1]!));
    expect(stacks.map((s) => s.length)).toEqual([0xce4, 0x918]);
    expect(snap.memory.read(0x12f31cn, 0xce4)).toEqual(stacks[0]);
    expect(snap.memory.read(0x97f6e8n, 0x918)).toEqual(stacks[1]);
    expect(snap.memory.u32!(0x12f320n)).toBe(0x7c90e9c0);
    expect(snap.memory.u32n!(0x97f6e8)).toBe(0x80100080);
    expect(snap.memory.read(0x12f31cn + 0xce4n - 2n, 4)).toBeUndefined();
    expect(snap.memory.read(0x12f31bn, 2)).toBeUndefined();
  });

  it("walks thread 0 by the EBP chain alone to the four frames of fixtures/README.md", () => {
    const [first] = walkSnapshot(minidumpSnapshot(dump), { walker: "frame-pointer" });
    expect(first!.thread.id).toBe(0xbf4);
    expect(first!.walk.frames.map((f) => [f.addrPC, f.addrStack, f.addrFrame])).toEqual([
      [0x0040429en, 0x0012fe84n, 0x0012fe88n],
      [0x00404200n, 0x0012fe90n, 0x0012ff70n],
      [0x004053ecn, 0x0012ff78n, 0x0012ffc0n],
      [0x7c816fd7n, 0x0012ffc8n, 0x0012fff0n],
    ]);
    expect(first!.walk.frames.slice(1).map((f) => f.trust)).toEqual(["frame-pointer", "frame-pointer", "frame-pointer"]);
    expect(first!.walk.stop.reason).toBe("end-of-stack");
  });

  it("reads the same through a file handle", () => {
    const source = fileSource(DMP);
    try {
      expect(source.size).toBe(dumpBytes.length);
      const viaFile = readMinidump(source, DMP);
      expect(viaFile.modules.map((m) => m.debugId)).toEqual(dump.modules.map((m) => m.debugId));
      const snap = minidumpSnapshot(viaFile);
      expect(snap.memory.read(0x12fe84n, 8)).toEqual(minidumpSnapshot(dump).memory.read(0x12fe84n, 8));
      expect(source.read(dumpBytes.length - 1, 2)).toBeUndefined();
    } finally {
      source.close();
    }
    expect(source.read(0, 4)).toBeUndefined();
    expect(inputError(() => fileSource(`${FIXTURES}no-such.dmp`)).code).toBe("io");
  });
});

describe("lazy memory", () => {
  it("parsing reads no captured memory, and a 4-byte stack read reads one page of that stack only", () => {
    const source = countingSource(bytesSource(dumpBytes));
    const snap = minidumpSnapshot(readMinidump(source));
    // Data of the three MemoryList ranges (minidump2.dump.out, region[0..2]).
    const data: [number, number][] = [
      [0x1539, 0x100],
      [0x1639, 0xce4],
      [0x231d, 0x918],
    ];
    const touches = ([o, l]: [number, number], [s, n]: [number, number]): boolean => o < s + n && s < o + l;
    expect(source.reads.filter((r) => data.some((d) => touches(r, d)))).toEqual([]);
    source.reset();
    expect(snap.memory.read(0x12fe84n, 4)).toBeDefined();
    expect(source.total()).toBeLessThanOrEqual(MinidumpMemory.PAGE_SIZE);
    expect(source.total()).toBeLessThan(0x100 + 0xce4 + 0x918);
    for (const [o, l] of source.reads) {
      expect(o).toBeGreaterThanOrEqual(0x1639);
      expect(o + l).toBeLessThanOrEqual(0x1639 + 0xce4);
    }
    source.reset();
    expect(snap.memory.u32!(0x12fe88n)).toBe(0x0012ff70);
    expect(source.total()).toBe(0); // the same page, from the cache
  });

  it("walks an 8 MiB Memory64List range reading a few pages", () => {
    const big = new Uint8Array(8 << 20);
    const base = 0x10000000n;
    new DataView(big.buffer).setUint32(0x400000, 0xdeadbeef, true);
    const { bytes } = writeMinidump({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x401000n, esp: base + 0x400000n, ebp: base + 0x400000n } }],
      memory: [{ base, bytes: big }],
      memoryList: "Memory64List",
    });
    const source = countingSource(bytesSource(bytes));
    const dump = readMinidump(source);
    expect(source.total()).toBeLessThan(4096);
    const snap = minidumpSnapshot(dump);
    source.reset();
    expect(snap.memory.u32!(base + 0x400000n)).toBe(0xdeadbeef);
    expect(snap.memory.u32n!(Number(base) + 0x400004)).toBe(0);
    expect(source.total()).toBe(MinidumpMemory.PAGE_SIZE);
    expect(snap.memory.read(base + BigInt(big.length) - 4n, 4)).toEqual(new Uint8Array(4));
    expect(snap.memory.read(base + BigInt(big.length) - 4n, 5)).toBeUndefined();
  });

  it("joins adjacent ranges and stitches reads across ranges that touch", () => {
    const a = Uint8Array.from({ length: 0x20 }, (_, i) => i);
    const b = Uint8Array.from({ length: 0x20 }, (_, i) => 0x80 + i);
    const c = Uint8Array.from({ length: 0x10 }, (_, i) => 0xc0 + i);
    for (const memoryList of ["MemoryList", "Memory64List"] as const) {
      const { bytes } = writeMinidump({
        machine: "x86",
        threads: [{ id: 1, registers: { eip: 0x401000n, esp: 0x1000n, ebp: 0x1000n } }],
        memory: [
          { base: 0x1020n, bytes: b },
          { base: 0x1000n, bytes: a },
          { base: 0x2000n, bytes: c },
        ],
        memoryList,
      });
      const snap = minidumpSnapshot(readMinidump(bytesSource(bytes)));
      const memory = snap.memory as MinidumpMemory;
      // Memory64List data lie back to back in descriptor order: 0x1020 then 0x1000 are not file-contiguous.
      expect(memory.extents.map((e) => e.start)).toEqual([0x1000n, 0x1020n, 0x2000n]);
      expect(memory.read(0x101en, 4)).toEqual(Uint8Array.of(0x1e, 0x1f, 0x80, 0x81));
      expect(memory.u32(0x101en)).toBe(0x81801f1e);
      expect(memory.u32n(0x101e)).toBe(0x81801f1e);
      expect(memory.read(0x1000n, 0x40)).toEqual(Uint8Array.of(...a, ...b));
      expect(memory.read(0x103en, 4)).toBeUndefined();
      expect(memory.read(0x0fffn, 2)).toBeUndefined();
      expect(memory.read(0x2000n, 0x10)).toEqual(c);
      expect(memory.read(0x2000n, 0)).toEqual(new Uint8Array(0));
      expect(memory.read(0x3000n, 0)).toBeUndefined();
      expect(memory.u32n(-4)).toBeUndefined();
    }
    const joined = new MinidumpMemory(bytesSource(new Uint8Array(0x40)), [
      { start: 0x5000n, size: 0x10n, rva: 0x10, descriptor: 0, from: "Memory64List" },
      { start: 0x5010n, size: 0x10n, rva: 0x20, descriptor: 16, from: "Memory64List" },
    ]);
    expect(joined.extents).toEqual([{ start: 0x5000n, end: 0x5020n }]);
  });
});

/** x86 stack: frame 0 at `f0` → caller at `f1` → outermost (return address 0). */
function x86Stack(base: bigint): { stack: WriterRange; ebp: bigint; esp: bigint } {
  const s = new StackBuilder(base, 4);
  s.fill(2).mark("f0").u32(s.ref("f1")).u32(0x00401234).fill(3).mark("f1").u32(0).u32(0);
  const built = s.build();
  return { stack: { base: built.base, bytes: built.bytes }, ebp: built.labels.f0!, esp: base };
}

function x64Stack(base: bigint): { stack: WriterRange; rbp: bigint; rsp: bigint } {
  const s = new StackBuilder(base, 8);
  s.fill(2).mark("f0").u64(s.ref("f1")).u64(0x140001234n).fill(3).mark("f1").u64(0).u64(0);
  const built = s.build();
  return { stack: { base: built.base, bytes: built.bytes }, rbp: built.labels.f0!, rsp: base };
}

describe("writer round trips", () => {
  it("x86: threads, registers, modules (RSDS, NB10, version), MemoryList, exception", () => {
    const s1 = x86Stack(0x0012f000n);
    const s2 = x86Stack(0x0022f000n);
    const spec: MinidumpSpec = {
      machine: "x86",
      threads: [
        { id: 10, registers: { eip: 0x7c90eb94n, esp: s1.esp, ebp: s1.ebp, eax: 7n }, stack: s1.stack },
        { id: 20, registers: { eip: 0x00401010n, esp: s2.esp, ebp: s2.ebp, ecx: 0xffffffffn, eflags: 0x246n }, stack: s2.stack },
      ],
      modules: [
        {
          path: "C:\\app\\app.exe",
          base: 0x400000n,
          size: 0x3000,
          timeDateStamp: 0x0abc,
          checksum: 0x1234,
          codeView: { rsds: { guid: "5A9832E5-2872-41C1-838E-D98914E9B7FF", age: 0x1a, pdb: "C:\\build\\app.pdb" } },
        },
        { path: "/lib/old.dll", base: 0x7c900000n, size: 0xb0000, timeDateStamp: 0x411096b4, version: [5, 1, 2600, 2180], codeView: { nb10: { signature: 0x3a1b2c, age: 3, pdb: "old.pdb" } } },
        { path: "nocv.dll", base: 0x10000000n, size: 0x1000 },
      ],
      memory: [{ base: 0x00401000n, bytes: Uint8Array.of(0xcc, 0xc3) }],
      exception: { threadId: 20, code: 0xc0000005, flags: 1, address: 0x00401234n, parameters: [1n, 0x45n], registers: { eip: 0x00401234n - 0x34n, esp: s2.esp, ebp: s2.ebp } },
      miscInfo: { processId: 42, processCreateTime: 0x60000000 },
    };
    const written = writeMinidump(spec);
    const dump = readMinidump(bytesSource(written.bytes));
    expect(dump.machine).toBe("x86");
    expect(dump.threads.map((t) => [t.id, t.stack.start, t.stack.size, t.context?.registers.eip])).toEqual([
      [10, 0x0012f000n, BigInt(s1.stack.bytes.length), 0x7c90eb94n],
      [20, 0x0022f000n, BigInt(s2.stack.bytes.length), 0x00401010n],
    ]);
    expect(dump.threads[0]!.context!.registers).toMatchObject({ eax: 7n, esp: s1.esp, ebp: s1.ebp, ecx: 0n });
    expect(dump.threads[1]!.context!.registers).toMatchObject({ ecx: 0xffffffffn, eflags: 0x246n });
    expect(dump.threads[0]!.context!.contextFlags).toBe(0x1003f);
    expect(dump.modules.map((m) => [m.name, m.path, m.base, m.size, m.codeId, m.debugFile, m.debugId, m.version])).toEqual([
      ["app.exe", "C:\\app\\app.exe", 0x400000n, 0x3000, "00000ABC3000", "C:\\build\\app.pdb", "5A9832E5287241C1838ED98914E9B7FF1a", undefined],
      ["old.dll", "/lib/old.dll", 0x7c900000n, 0xb0000, "411096B4b0000", "old.pdb", "003A1B2C3", "5.1.2600.2180"],
      ["nocv.dll", "nocv.dll", 0x10000000n, 0x1000, "000000001000", undefined, undefined, undefined],
    ]);
    expect(dump.modules[1]!.codeView).toEqual({ format: "NB10", guid: "003A1B2C", age: 3, pdbName: "old.pdb", debugId: "003A1B2C3" });
    expect(dump.modules[0]!.checksum).toBe(0x1234);
    expect(dump.exception).toMatchObject({ threadId: 20, code: 0xc0000005, flags: 1, address: 0x00401234n, numberParameters: 2, parameters: [1n, 0x45n] });
    expect(dump.miscInfo).toMatchObject({ processId: 42, processCreateTime: 0x60000000, flags1: 3, version: 1 });
    expect(dump.systemInfo).toMatchObject({ processorArchitecture: 0, csdVersion: "Service Pack 9", cpu: { kind: "x86", vendorId: "GenuineIntel" } });

    const snap = minidumpSnapshot(dump);
    expect(snap.threads.map((t) => [t.id, t.crashed, t.registers.eip])).toEqual([
      [20, true, 0x00401200n],
      [10, false, 0x7c90eb94n],
    ]);
    expect(snap.memory.read(0x00401000n, 2)).toEqual(Uint8Array.of(0xcc, 0xc3));
    const walks = walkSnapshot(snap, { walker: "frame-pointer" });
    expect(walks.map((w) => w.walk.frames.map((f) => [f.addrPC, f.addrStack]))).toEqual([
      [[0x00401200n, s2.esp], [0x00401234n, s2.ebp + 8n]],
      [[0x7c90eb94n, s1.esp], [0x00401234n, s1.ebp + 8n]],
    ]);
    expect(walks.map((w) => w.walk.stop.reason)).toEqual(["end-of-stack", "end-of-stack"]);
  });

  it("x64: Memory64List holding the stacks, AMD64 contexts, XSAVE tail", () => {
    const s1 = x64Stack(0x000000d4_1234f000n);
    const regs = { rip: 0x140001000n, rsp: s1.rsp, rbp: s1.rbp, rax: 0xffff_ffff_ffff_fff0n, r15: 15n, eflags: 0x202n, cs: 0x33n };
    const written = writeMinidump({
      machine: "x64",
      threads: [
        { id: 0x1c, registers: regs, stack: s1.stack, contextSize: 1407 },
        { id: 0x2c, registers: { rip: 0x7ff800001000n, rsp: 0x1000n, rbp: 0n } },
      ],
      modules: [{ path: "C:\\x\\tiny.exe", base: 0x140000000n, size: 0x5000, timeDateStamp: 0x61e5a1c2, codeView: { rsds: { guid: "00112233-4455-6677-8899-aabbccddeeff", age: 1, pdb: "tiny.pdb" } } }],
      memory: [{ base: 0x140001000n, bytes: Uint8Array.of(0x90, 0xc3) }],
      memoryList: "Memory64List",
      exception: { threadId: 0x1c, code: 0x80000003, address: 0x140001000n },
    });
    const dump = readMinidump(bytesSource(written.bytes));
    expect(dump.machine).toBe("x64");
    expect(dump.systemInfo).toMatchObject({ processorArchitecture: 9, machine: "x64", cpu: { kind: "other" } });
    expect(dump.memory.map((r) => [r.start, r.size, r.from])).toEqual([
      [0x140001000n, 2n, "Memory64List"],
      [0x000000d4_1234f000n, BigInt(s1.stack.bytes.length), "Memory64List"],
    ]);
    expect(dump.threads[0]!.context).toMatchObject({ machine: "x64", contextFlags: 0x10001f, location: { dataSize: 1407 } });
    expect(dump.threads[0]!.context!.registers).toMatchObject(regs);
    expect(dump.modules[0]).toMatchObject({ name: "tiny.exe", debugId: "00112233445566778899AABBCCDDEEFF1", codeId: "61E5A1C25000" });
    const snap = minidumpSnapshot(dump);
    expect(snap.machine).toBe("x64");
    expect(snap.threads.map((t) => [t.id, t.crashed])).toEqual([[0x1c, true], [0x2c, false]]);
    const [w] = walkSnapshot(snap, { walker: "frame-pointer", thread: 0x1c });
    expect(w!.walk.frames.map((f) => [f.addrPC, f.addrStack])).toEqual([
      [0x140001000n, s1.rsp],
      [0x140001234n, s1.rbp + 16n],
    ]);
  });

  it("x86 stacks outside the memory list are still readable, through the thread's own descriptor", () => {
    const s1 = x86Stack(0x0012f000n);
    const { bytes } = writeMinidump({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x401000n, esp: s1.esp, ebp: s1.ebp }, stack: s1.stack }],
      memory: [{ base: 0x0012f000n + 8n, bytes: Uint8Array.of(1, 2, 3, 4) }],
      stacksInMemoryList: false,
    });
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.memory).toHaveLength(1);
    const snap = minidumpSnapshot(dump);
    // The list's bytes win where it covers the stack; the rest comes from the stack descriptor.
    expect(snap.memory.read(0x0012f000n, 12)).toEqual(Uint8Array.of(0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 1, 2, 3, 4));
    expect(snap.memory.read(s1.ebp + 4n, 4)).toEqual(Uint8Array.of(0x34, 0x12, 0x40, 0x00));

    // Two threads whose unlisted stacks overlap: both stay readable, the lower one supplies the shared bytes.
    const { bytes: twice } = writeMinidump({
      machine: "x86",
      threads: [
        { id: 1, registers: { eip: 0x401000n, esp: 0x5000n, ebp: 0n }, stack: { base: 0x5000n, bytes: new Uint8Array(0x20).fill(1) } },
        { id: 2, registers: { eip: 0x401000n, esp: 0x5010n, ebp: 0n }, stack: { base: 0x5010n, bytes: new Uint8Array(0x20).fill(2) } },
      ],
      stacksInMemoryList: false,
    });
    const both = minidumpSnapshot(readMinidump(bytesSource(twice))).memory;
    expect(both.read(0x5000n, 0x30)).toEqual(Uint8Array.of(...new Uint8Array(0x20).fill(1), ...new Uint8Array(0x10).fill(2)));
  });

  it("ThreadExList: IA-64 contexts and the register backing store", () => {
    const backing = Uint8Array.from({ length: 64 }, (_, i) => i);
    const { bytes } = writeMinidump({
      machine: "ia64",
      threadList: "ThreadExList",
      threads: [
        {
          id: 7,
          registers: { stiip: 0xe0000000_00001230n, intsp: 0x9ffff000n, rsbsp: 0x9fff8000n, brrp: 0xe0000000_00004560n, stifs: 0x8000000000000005n },
          stack: { base: 0x9ffff000n, bytes: new Uint8Array(32) },
          backingStore: { base: 0x9fff8000n, bytes: backing },
        },
      ],
    });
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.threadStream).toBe("ThreadExList");
    expect(dump.machine).toBe("ia64");
    expect(dump.threads[0]!.backingStore).toMatchObject({ start: 0x9fff8000n, size: 64n, from: "backing store" });
    expect(dump.threads[0]!.context!.registers).toMatchObject({ stiip: 0xe0000000_00001230n, intsp: 0x9ffff000n, rsbsp: 0x9fff8000n, brrp: 0xe0000000_00004560n });
    const snap = minidumpSnapshot(dump);
    expect(snap.machine).toBe("ia64");
    expect(snap.memory.read(0x9fff8000n + 60n, 4)).toEqual(Uint8Array.of(60, 61, 62, 63));
    expect(snap.memory.read(0x9ffff000n, 32)).toEqual(new Uint8Array(32));
  });

  it("FunctionTable: header sizes, descriptors, raw native descriptors and RUNTIME_FUNCTION entries", () => {
    const native = Uint8Array.from({ length: 0x50 }, (_, i) => i);
    const { bytes } = writeMinidump({
      machine: "x64",
      threads: [{ id: 1, registers: { rip: 0x20001000n, rsp: 0x1000n, rbp: 0n } }],
      functionTable: {
        sizeOfNativeDescriptor: 0x50,
        tables: [
          { minimumAddress: 0x20001000n, maximumAddress: 0x20002000n, baseAddress: 0x20000000n, functions: [[0x1000, 0x1040, 0x3000], [0x1040, 0x1100, 0x3010]], native },
          { minimumAddress: 0x30000000n, maximumAddress: 0x30000100n, baseAddress: 0x30000000n, functions: [] },
        ],
      },
    });
    const ft = readMinidump(bytesSource(bytes)).functionTable!;
    expect([ft.sizeOfHeader, ft.sizeOfDescriptor, ft.sizeOfNativeDescriptor, ft.sizeOfFunctionEntry, ft.sizeOfAlignPad]).toEqual([24, 32, 0x50, 12, 0]);
    expect(ft.tables.map((t) => [t.minimumAddress, t.maximumAddress, t.baseAddress, t.entryCount, t.entries.length])).toEqual([
      [0x20001000n, 0x20002000n, 0x20000000n, 2, 24],
      [0x30000000n, 0x30000100n, 0x30000000n, 0, 0],
    ]);
    expect(ft.tables[0]!.nativeDescriptor).toEqual(native);
    expect(ft.tables[0]!.functions).toEqual([
      { beginRva: 0x1000, endRva: 0x1040, unwindData: 0x3000 },
      { beginRva: 0x1040, endRva: 0x1100, unwindData: 0x3010 },
    ]);
  });

  it("accepts 4 padding bytes after list counts, unknown streams and unused entries", () => {
    const s1 = x86Stack(0x0012f000n);
    const { bytes } = writeMinidump({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x401000n, esp: s1.esp, ebp: s1.ebp }, stack: s1.stack }],
      modules: [{ path: "a.exe", base: 0x400000n, size: 0x1000 }],
      listPadding: 4,
      extraStreams: [
        { type: 0x43500001, data: new Uint8Array(5) },
        { type: 24, data: new Uint8Array(0) },
      ],
      unusedEntries: 2,
    });
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.threads.map((t) => t.id)).toEqual([1]);
    expect(dump.modules.map((m) => m.name)).toEqual(["a.exe"]);
    expect(dump.memory).toHaveLength(1);
    expect(dump.streams.map((s) => s.streamType).slice(-4)).toEqual([0x43500001, 24, 0, 0]);
  });

  it("reads a Memory64List of 300,000 ranges as its first 262,144 (more than a call's arguments can hold), the rest passed over with a note", () => {
    const memory = Array.from({ length: 300_000 }, (_, i) => ({ base: 0x1000_0000n + BigInt(i) * 16n, bytes: Uint8Array.of(i & 0xff) }));
    const { bytes } = writeMinidump({ machine: "x64", threads: [{ id: 1, registers: { rip: 0x1000n, rsp: 0n, rbp: 0n } }], memory, memoryList: "Memory64List" });
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.memory.length).toBe(262_144);
    expect(dump.notes).toContainEqual(expect.stringMatching(/Memory64List: 300000 ranges; the first 262144 are read \(the limit of memory ranges read from one list\), the rest passed over$/));
    const memoryOf = minidumpSnapshot(dump).memory;
    expect(memoryOf.read(0x1000_0000n + 16n * 262_142n, 1)).toEqual(Uint8Array.of(262_142 & 0xff));
    expect(memoryOf.read(0x1000_0000n + 16n * 299_999n, 1)).toBeUndefined();
  });

  it("without SystemInfo, the contexts name the machine", () => {
    const { bytes } = writeMinidump({ machine: "x64", processorArchitecture: null, threads: [{ id: 1, registers: { rip: 0x1000n, rsp: 0n, rbp: 0n } }] });
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.systemInfo).toBeUndefined();
    expect(dump.machine).toBe("x64");
  });

  it("a rejected exception context falls back to the thread's own (minidump.md §3.3)", () => {
    const { bytes } = writeMinidump({
      machine: "x86",
      threads: [{ id: 5, registers: { eip: 0x401000n, esp: 0x1000n, ebp: 0x1000n } }],
      // CPU bits 0x01000000: not a CPU the walker models.
      exception: { threadId: 5, code: 0xc0000005, address: 0x401000n, registers: { eip: 0x999999n }, contextFlags: 0x01000003 },
    });
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.exception!.context).toBeUndefined();
    expect(dump.exception!.contextError!.code).toBe("unsupported");
    expect(dump.exception!.contextError!.offset).toBe(dump.exception!.contextLocation.rva);
    expect(dump.notes.some((n) => n.includes("exception context is not used"))).toBe(true);
    const snap = minidumpSnapshot(dump);
    expect(snap.threads[0]).toMatchObject({ id: 5, crashed: true, registers: { eip: 0x401000n } });
  });

  it("CONTEXT layout by size and SystemInfo: zero AMD64 CPU bits are rejected, x86 XSAVE tails accepted up to 16384 bytes", () => {
    const zeroCpu = writeMinidump({ machine: "x64", threads: [{ id: 1, registers: { rip: 0x1000n, rsp: 0n, rbp: 0n }, contextFlags: 0x1f }] });
    const dump = readMinidump(bytesSource(zeroCpu.bytes));
    const t = dump.threads[0]!;
    expect(t.context).toBeUndefined();
    expect(t.contextError).toMatchObject({ code: "bad-value", offset: t.contextLocation.rva + 0x30 });
    const e = inputError(() => minidumpSnapshot(dump));
    expect(e.offset).toBe(t.contextLocation.rva + 0x30);

    const xsave = writeMinidump({ machine: "x86", threads: [{ id: 1, registers: { eip: 0x401000n, esp: 0n, ebp: 0n }, contextSize: 1147 }] });
    expect(readMinidump(bytesSource(xsave.bytes)).threads[0]!.context).toMatchObject({ machine: "x86", registers: { eip: 0x401000n } });
    const tooBig = writeMinidump({ machine: "x86", threads: [{ id: 1, registers: { eip: 0x401000n, esp: 0n, ebp: 0n }, contextSize: 716 + 16385 }] });
    const big = readMinidump(bytesSource(tooBig.bytes));
    expect(big.threads[0]!.contextError).toMatchObject({ code: "bad-value", offset: tooBig.threadEntries[0]! + 40 });
    // Zero CPU bits at offset 0 take the CPU from SystemInfo.
    const zeroX86 = writeMinidump({ machine: "x86", threads: [{ id: 1, registers: { eip: 0x401000n, esp: 0n, ebp: 0n }, contextFlags: 0x3f }] });
    expect(readMinidump(bytesSource(zeroX86.bytes)).threads[0]!.context!.machine).toBe("x86");
  });
});

describe("bad input is an InputError naming the offset", () => {
  const s1 = x86Stack(0x0012f000n);
  const base = writeMinidump({
    machine: "x86",
    threads: [{ id: 1, registers: { eip: 0x401000n, esp: s1.esp, ebp: s1.ebp }, stack: s1.stack }],
    modules: [{ path: "a.exe", base: 0x400000n, size: 0x1000, codeView: { rsds: { guid: "5A9832E5-2872-41C1-838E-D98914E9B7FF", age: 1, pdb: "a.pdb" } } }],
    memory: [{ base: 0x00401000n, bytes: new Uint8Array(16) }],
  });
  const stream = (type: number) => base.streams.get(type)!;
  const fails = (bytes: Uint8Array) => inputError(() => minidumpSnapshot(readMinidump(bytesSource(bytes), "bad.dmp")));

  it("the writer's dump itself is fine", () => {
    expect(minidumpSnapshot(readMinidump(bytesSource(base.bytes))).threads).toHaveLength(1);
  });

  it("bad signature, bad version, big-endian", () => {
    expect(fails(patch32(base.bytes, 0, 0x12345678))).toMatchObject({ code: "bad-magic", offset: 0, file: "bad.dmp" });
    expect(fails(patch32(base.bytes, 4, 0x0000a794))).toMatchObject({ code: "bad-magic", offset: 4 });
    expect(fails(patch32(base.bytes, 0, 0x4d444d50))).toMatchObject({ code: "unsupported", offset: 0 });
    expect(readMinidump(bytesSource(patch32(base.bytes, 4, 0xffffa793))).header.version).toBe(0xffffa793);
  });

  it("truncated header and empty file", () => {
    expect(fails(base.bytes.slice(0, 20))).toMatchObject({ code: "truncated", offset: 20 });
    expect(fails(new Uint8Array(0))).toMatchObject({ code: "truncated", offset: 0 });
    expect(fails(base.bytes.slice(0, 32))).toMatchObject({ code: "bad-value", offset: 8 });
  });

  /** A damaged dump that still walks: its snapshot and the notes that say what was passed over. */
  const lenient = (bytes: Uint8Array) => {
    const dump = readMinidump(bytesSource(bytes), "bad.dmp");
    const snapshot = minidumpSnapshot(dump);
    return { dump, snapshot, notes: dump.notes };
  };
  /** Whether a note names the field at `offset`. */
  const names = (notes: readonly string[], offset: number, text?: RegExp): boolean =>
    notes.some((n) => n.startsWith(`offset 0x${offset.toString(16)}: `) && (text === undefined || text.test(n)));

  it("directory outside the file; stream counts bigger than the file: the entries that fit are read", () => {
    expect(fails(patch32(base.bytes, 12, base.bytes.length + 1))).toMatchObject({ code: "bad-value", offset: 12 });
    // A count past the file: the entries that fit, the real ones first, are read.
    const { snapshot, notes } = lenient(patch32(base.bytes, 8, 0xffffffff));
    expect(snapshot.threads).toHaveLength(1);
    expect(names(notes, 8, /NumberOfStreams 4294967295 .*: the first \d+ entries are read/)).toBe(true);
  });

  it("stream locations outside the file: the part the file holds is read, or the stream is empty", () => {
    const t = stream(3);
    // The ThreadList's RVA past the end: no thread is left to walk, an error naming the Rva field.
    expect(fails(patch32(base.bytes, t.entry + 8, 0xfffffff0))).toMatchObject({ code: "truncated", offset: t.entry + 8 });
    // A DataSize running past the end: what the file holds is read, the DataSize field noted.
    const { snapshot, notes } = lenient(patch32(base.bytes, t.entry + 4, base.bytes.length));
    expect(snapshot.threads).toHaveLength(1);
    expect(names(notes, t.entry + 4, /ThreadList stream: .* run past the end of the file/)).toBe(true);
    // Too small for the count: no thread, the DataSize field named.
    expect(fails(patch32(base.bytes, t.entry + 4, 2))).toMatchObject({ code: "truncated", offset: t.entry + 4 });
  });

  it("counts bigger than their stream: the entries that fit are read", () => {
    const threads = lenient(patch32(base.bytes, stream(3).rva, 0x80000000));
    expect(threads.snapshot.threads).toHaveLength(1);
    expect(names(threads.notes, stream(3).rva, /ThreadList count 2147483648 .*: the first 1 entry is read/)).toBe(true);
    expect(lenient(patch32(base.bytes, stream(3).rva, 2)).snapshot.threads).toHaveLength(1);
    const modules = lenient(patch32(base.bytes, stream(4).rva, 0xffffffff));
    expect(modules.dump.modules.map((m) => m.name)).toEqual(["a.exe"]);
    expect(names(modules.notes, stream(4).rva, /ModuleList count/)).toBe(true);
    const memory = lenient(patch32(base.bytes, stream(5).rva, 1000));
    expect(memory.dump.memory).toHaveLength(2);
    expect(names(memory.notes, stream(5).rva, /MemoryList count 1000/)).toBe(true);
  });

  it("RVAs outside the file inside streams: contexts leave nothing to walk, everything else is passed over with a note", () => {
    const thread = base.threadEntries[0]!;
    // The only thread's context: nothing to walk.
    expect(fails(patch32(base.bytes, thread + 44, 0x7fffffff))).toMatchObject({ code: "bad-value", offset: thread + 44 });
    expect(fails(patch32(base.bytes, thread + 40, 0x7fffffff))).toMatchObject({ code: "truncated", offset: thread + 40 });
    // The stack's own bytes: the MemoryList still holds them.
    const stackRva = lenient(patch32(base.bytes, thread + 36, 0x7fffffff));
    expect(names(stackRva.notes, thread + 36, /thread 0 \(id 1\) Stack: /)).toBe(true);
    expect(stackRva.snapshot.memory.read(s1.esp, 4)).toBeDefined();
    expect(names(lenient(patch32(base.bytes, thread + 32, 0x7fffffff)).notes, thread + 32)).toBe(true);
    const module = base.moduleEntries[0]!;
    const name = lenient(patch32(base.bytes, module + 20, 0x7fffffff));
    expect(name.dump.modules[0]).toMatchObject({ path: "", name: "", debugId: "5A9832E5287241C1838ED98914E9B7FF1" });
    expect(names(name.notes, module + 20, /module 0 name passed over/)).toBe(true);
    const cv = lenient(patch32(base.bytes, module + 80, 0x7fffffff));
    expect(cv.dump.modules[0]!.debugId).toBeUndefined();
    expect(names(cv.notes, module + 80, /CodeView record at RVA 0x7fffffff lies outside the file/)).toBe(true);
    const memory = base.memoryDescriptors[1]!;
    const rva = lenient(patch32(base.bytes, memory + 12, 0x7fffffff));
    expect(rva.snapshot.memory.read(0x00401000n, 1)).toBeUndefined();
    expect(names(rva.notes, memory + 12, /MemoryList: the range 0x401000\.\.0x401010 .* runs past the end of the file .*; 0 of its bytes are read/)).toBe(true);
    expect(names(lenient(patch32(base.bytes, memory + 8, 0x7fffffff)).notes, memory + 8)).toBe(true);
    expect(names(lenient(patch64(base.bytes, memory, 0xffff_ffff_ffff_fff8n)).notes, memory, /64-bit address space/)).toBe(true);
  });

  it("bad MINIDUMP_STRINGs: the module keeps no name", () => {
    const module = base.moduleEntries[0]!;
    const nameRva = new DataView(base.bytes.buffer).getUint32(module + 20, true);
    for (const [length, code] of [[3, /is odd/], [0x7ffffffe, /exceeds/], [base.bytes.length, /run past the end/]] as const) {
      const { dump, notes } = lenient(patch32(base.bytes, nameRva, length));
      expect(dump.modules[0]!.name).toBe("");
      expect(names(notes, nameRva, code)).toBe(true);
    }
  });

  it("a module list of thousands of entries: one name string read once for all, a bad one noted without breaking a line, and the notes capped", () => {
    const many = writeMinidump({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x401000n, esp: s1.esp, ebp: s1.ebp }, stack: s1.stack }],
      modules: Array.from({ length: 3000 }, (_, i) => ({ path: i === 1 ? "c:\\bad\nname.dll" : `c:\\m\\m${i}.dll`, base: 0x10000000n + BigInt(i) * 0x10000n, size: 0x1000 })),
    });
    const bytes = many.bytes.slice();
    const view = new DataView(bytes.buffer);
    const sharedRva = view.getUint32(many.moduleEntries[0]! + 20, true);
    // Every entry after the second names the first one's string, every other one with a CodeView record outside the file.
    many.moduleEntries.forEach((at, i) => {
      if (i > 1) view.setUint32(at + 20, sharedRva, true);
      if (i % 2 === 1) {
        view.setUint32(at + 76, 24, true);
        view.setUint32(at + 80, 0x7fffffff, true);
      }
    });
    const { dump, notes } = lenient(bytes);
    expect(dump.modules).toHaveLength(3000);
    expect(dump.modules[2]!.path).toBe("c:\\m\\m0.dll");
    expect(dump.modules[2]!.path).toBe(dump.modules[2999]!.path);
    // 1,500 modules lose their CodeView record: 256 notes are kept, the rest counted.
    expect(notes).toHaveLength(257);
    expect(notes[256]).toBe("1244 more note(s) left out: the first 256 are kept");
    expect(notes[0]).toMatch(/^offset 0x[0-9a-f]+: module 1 \("bad\\nname\.dll"\): /);
    expect(notes.every((n) => !n.includes("\n"))).toBe(true);
  });

  it("thousands of threads whose contexts are refused: the first 256 noted, the rest counted", () => {
    const refused = Array.from({ length: 2000 }, (_, i) => ({ id: 100 + i, registers: { eip: 0x401000n, esp: s1.esp, ebp: s1.ebp } }));
    const written = writeMinidump({ machine: "x86", threads: [{ id: 1, registers: { eip: 0x401000n, esp: s1.esp, ebp: s1.ebp }, stack: s1.stack }, ...refused] });
    const bytes = written.bytes.slice();
    // Their contexts' RVAs lie outside the file.
    for (const at of written.threadEntries.slice(1)) new DataView(bytes.buffer).setUint32(at + 44, 0x7fffffff, true);
    const { snapshot, notes } = lenient(bytes);
    expect(snapshot.threads.map((t) => t.id)).toEqual([1]);
    expect(notes).toHaveLength(257);
    expect(notes[0]).toMatch(/^offset 0x[0-9a-f]+: thread 100 is not walked: thread 1 \(id 100\) ThreadContext: RVA 0x7fffffff lies outside the file/);
    expect(notes[256]).toBe("1744 more thread(s) are not walked: the notes of the first 256 are kept");
  });

  /** The dump's memory list behind a proxy that counts the entries read, and the snapshot made through it. */
  const countingMemoryReads = (bytes: Uint8Array) => {
    const dump = readMinidump(bytesSource(bytes));
    let reads = 0;
    dump.memory = new Proxy(dump.memory, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    return { snapshot: minidumpSnapshot(dump), reads };
  };

  it("thousands of threads without stack bytes: each finds its MemoryList range by halving the list, not by reading it through", () => {
    const n = 5000;
    const at = (i: number) => 0x12f000n + BigInt(i) * 0x20n;
    const written = writeMinidump({
      machine: "x86",
      threads: Array.from({ length: n }, (_, i) => ({ id: i + 1, registers: { eip: 0x401000n, esp: at(i), ebp: 0n } })),
      memory: Array.from({ length: n }, (_, i) => ({ base: at(i), bytes: new Uint8Array(16) })),
    });
    const view = new DataView(written.bytes.buffer, written.bytes.byteOffset);
    written.threadEntries.forEach((entry, i) => {
      view.setBigUint64(entry + 24, at(i), true);
      view.setUint32(entry + 32, 0, true);
    });
    const { snapshot, reads } = countingMemoryReads(written.bytes);
    expect(snapshot.threads[4321]!.stackRanges).toEqual([{ start: at(4321), end: at(4321) + 16n }]);
    expect(reads).toBeLessThan(n * 40);
  });

  it("thousands of threads listing one stack that thousands of MemoryList ranges cut: the stack is cut once", () => {
    const n = 3000;
    const big: WriterRange = { base: 0x00200000n, bytes: new Uint8Array(n * 0x10) };
    const written = writeMinidump({
      machine: "x86",
      threads: Array.from({ length: n }, (_, i) => ({ id: i + 1, registers: { eip: 0x401000n, esp: big.base, ebp: 0n }, stack: i === 0 ? big : { base: 0x00100000n, bytes: new Uint8Array(4) } })),
      memory: Array.from({ length: n }, (_, i) => ({ base: big.base + BigInt(i) * 0x10n, bytes: new Uint8Array(8) })),
      stacksInMemoryList: false,
    });
    // Every thread lists the first one's stack.
    const bytes = written.bytes.slice();
    const first = written.threadEntries[0]!;
    for (const entry of written.threadEntries) bytes.copyWithin(entry + 24, first + 24, first + 40);
    const { snapshot, reads } = countingMemoryReads(bytes);
    expect(snapshot.threads).toHaveLength(n);
    expect(snapshot.threads[2999]!.stackRanges).toEqual([{ start: big.base, end: big.base + BigInt(n * 0x10) }]);
    expect(snapshot.memory.read(big.base + 8n, 8)).toBeDefined();
    expect(reads).toBeLessThan(n * 40);
  });

  it("modules whose names come to more than 4 Mi characters: the names past it are passed over with a note, the modules kept", () => {
    const long = `C:\\${"x".repeat(256 * 1024 - 64)}`;
    const written = writeMinidump({ machine: "x86", modules: Array.from({ length: 20 }, (_, i) => ({ path: long, base: 0x1000_0000n + BigInt(i) * 0x10_0000n, size: 0x1000 })) });
    const dump = readMinidump(bytesSource(written.bytes), "names.dmp");
    const notes = dump.notes;
    expect(dump.modules).toHaveLength(20);
    expect(dump.modules.filter((m) => m.path === long)).toHaveLength(16);
    expect(dump.modules[16]!.path).toBe("");
    expect(names(notes, written.moduleEntries[16]! + 20, /module 16 name passed over: module 16 ModuleNameRva: 262083 more character\(s\) would take the names read from this dump past 4194304 \(the limit of one dump\)/)).toBe(true);
  });

  it("a thread list of 70,000 entries: the first 65,536 are read, the rest passed over with a note", () => {
    const n = 70_000;
    const list = new Uint8Array(4 + 48 * n);
    const lv = new DataView(list.buffer);
    lv.setUint32(0, n, true);
    const entry = base.bytes.subarray(base.threadEntries[0]!, base.threadEntries[0]! + 48);
    for (let i = 0; i < n; i++) {
      list.set(entry, 4 + 48 * i);
      lv.setUint32(4 + 48 * i, 1000 + i, true);
    }
    const bytes = new Uint8Array(base.bytes.length + list.length);
    bytes.set(base.bytes);
    bytes.set(list, base.bytes.length);
    // The directory's ThreadList entry points at the new list.
    const dir = new DataView(bytes.buffer);
    dir.setUint32(stream(3).entry + 4, list.length, true);
    dir.setUint32(stream(3).entry + 8, base.bytes.length, true);
    const { dump, snapshot, notes } = lenient(bytes);
    expect(dump.threads).toHaveLength(65_536);
    expect(snapshot.threads.at(-1)!.id).toBe(1000 + 65_535);
    expect(names(notes, base.bytes.length, /ThreadList: 70000 entries; the first 65536 are read \(the limit of threads read from one dump\), the rest passed over/)).toBe(true);
  });

  it("a name read leniently is noted as the reader's error says it", () => {
    const module = base.moduleEntries[0]!;
    const nameRva = new DataView(base.bytes.buffer).getUint32(module + 20, true);
    const { notes } = lenient(patch32(base.bytes, nameRva, 3));
    expect(notes).toContain(`offset 0x${nameRva.toString(16)}: module 0 name passed over: module 0 ModuleNameRva: MINIDUMP_STRING length 3 is odd (it counts UTF-16 bytes)`);
  });

  it("a rejected CodeView record is a note, not an error", () => {
    const module = base.moduleEntries[0]!;
    const cvRva = new DataView(base.bytes.buffer).getUint32(module + 80, true);
    const dump = readMinidump(bytesSource(patch32(base.bytes, module + 76, 24)));
    expect(dump.modules[0]!.debugId).toBeUndefined();
    expect(dump.notes).toHaveLength(1);
    const notNul = base.bytes.slice();
    notNul[cvRva + 24 + "a.pdb".length] = 0x41;
    expect(readMinidump(bytesSource(notNul)).modules[0]!.debugFile).toBeUndefined();
  });

  it("overlapping memory ranges: the range that starts lower supplies the shared bytes", () => {
    const fill = (n: number, v: number) => new Uint8Array(n).fill(v);
    const { bytes, memoryDescriptors } = writeMinidump({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x401000n, esp: 0n, ebp: 0n } }],
      memory: [
        { base: 0x1000n, bytes: fill(0x20, 0xaa) },
        { base: 0x3000n, bytes: fill(0x20, 0xcc) },
        { base: 0x1010n, bytes: fill(0x20, 0xbb) },
      ],
    });
    const { dump, snapshot, notes } = lenient(bytes);
    expect(dump.memory.map((r) => [r.start, r.size])).toEqual([[0x1000n, 0x20n], [0x1020n, 0x10n], [0x3000n, 0x20n]]);
    expect(snapshot.memory.read(0x1018n, 1)).toEqual(new Uint8Array([0xaa]));
    expect(snapshot.memory.read(0x1028n, 1)).toEqual(new Uint8Array([0xbb]));
    expect(snapshot.memory.read(0x101en, 4)).toEqual(new Uint8Array([0xaa, 0xaa, 0xbb, 0xbb]));
    expect(names(notes, memoryDescriptors[2]!, /MemoryList range 0x1010\.\.0x1030 overlaps the MemoryList range 0x1000\.\.0x1020/)).toBe(true);
    // The same range twice in a Memory64List (two copies of the bytes): the first is read.
    const dup = writeMinidump({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x401000n, esp: 0n, ebp: 0n } }],
      memory: [{ base: 0x1000n, bytes: new Uint8Array(0x20) }, { base: 0x1000n, bytes: new Uint8Array(0x20) }],
      memoryList: "Memory64List",
    });
    const twice = lenient(dup.bytes);
    expect(twice.dump.memory).toHaveLength(1);
    expect(names(twice.notes, dup.memoryDescriptors[1]!, /overlaps/)).toBe(true);
  });

  it("Memory64List: a count past the stream, BaseRva and sizes outside the file", () => {
    const { bytes, streams, memoryDescriptors } = writeMinidump({
      machine: "x64",
      threads: [{ id: 1, registers: { rip: 0x1000n, rsp: 0n, rbp: 0n } }],
      memory: [{ base: 0x1000n, bytes: new Uint8Array(0x20) }],
      memoryList: "Memory64List",
    });
    const list = streams.get(9)!.rva;
    const count = lenient(patch64(bytes, list, 1n << 62n));
    expect(count.dump.memory).toHaveLength(1);
    expect(names(count.notes, list, /Memory64List count 4611686018427387904 .*: the first 1 ranges are read/)).toBe(true);
    const baseRva = lenient(patch64(bytes, list + 8, 1n << 40n));
    expect(baseRva.dump.memory).toEqual([]);
    expect(names(baseRva.notes, list + 8, /BaseRva/)).toBe(true);
    const size = lenient(patch64(bytes, memoryDescriptors[0]! + 8, 1n << 40n));
    expect(size.dump.memory[0]!.size).toBeLessThan(1n << 40n);
    expect(size.dump.memory[0]!.declared).toBe(1n << 40n);
    expect(names(size.notes, memoryDescriptors[0]! + 8, /runs past the end of the file/)).toBe(true);
  });

  it("a second stream of a known type is passed over, the first is read", () => {
    const { bytes, streams } = writeMinidump({
      machine: "x86",
      threads: [{ id: 1, registers: { eip: 0x401000n, esp: 0n, ebp: 0n } }],
      extraStreams: [{ type: 3, data: new Uint8Array(4) }],
    });
    const { snapshot, notes } = lenient(bytes);
    expect(snapshot.threads).toHaveLength(1);
    expect(streams.get(3)!.entry).toBe(32 + 12 * 1);
    expect(names(notes, 32 + 12 * 3, /a second ThreadList stream \(directory entry 3\) is passed over/)).toBe(true);
  });

  it("an unmodelled machine is unsupported at snapshot time, but still parses", () => {
    // PowerPC (3): Breakpad walks it, this project does not.
    const { bytes, streams } = writeMinidump({ machine: "x86", processorArchitecture: 3, threads: [] });
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.machine).toBeUndefined();
    expect(inputError(() => minidumpSnapshot(dump))).toMatchObject({ code: "unsupported", offset: streams.get(7)!.rva });
  });

  it("never anything but InputError on truncated or corrupted minidump2.dmp, and never a hang", () => {
    let seed = 0x2545f491;
    const random = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 0x1_0000_0000;
    };
    const exercise = (bytes: Uint8Array): void => {
      try {
        const dump: Minidump = readMinidump(bytesSource(bytes));
        const snap = minidumpSnapshot(dump);
        for (const w of walkSnapshot(snap, { walker: "frame-pointer", maxFrames: 64 })) expect(w.walk.stop.reason).toBeDefined();
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        if (!(e.offset === undefined || (e.offset >= 0 && e.offset <= bytes.length))) throw new Error(`${e.message} (${bytes.length})`);
      }
    };
    for (let n = 0; n < dumpBytes.length; n += 97) exercise(dumpBytes.slice(0, n));
    // Writer dumps with the streams minidump2 lacks: Memory64List, ThreadExList, FunctionTable.
    const others = [
      writeMinidump({
        machine: "x64",
        threads: [{ id: 1, registers: { rip: 0x140001000n, rsp: 0x2000n, rbp: 0x2010n }, stack: { base: 0x2000n, bytes: new Uint8Array(0x40) } }],
        memory: [{ base: 0x140001000n, bytes: new Uint8Array(0x20) }],
        memoryList: "Memory64List",
        exception: { threadId: 1, code: 0x80000003, address: 0x140001000n },
        functionTable: { sizeOfNativeDescriptor: 8, tables: [{ minimumAddress: 0n, maximumAddress: 0x100n, baseAddress: 0n, functions: [[0, 0x10, 0x20]] }] },
      }).bytes,
      writeMinidump({
        machine: "ia64",
        threadList: "ThreadExList",
        threads: [{ id: 7, registers: { stiip: 0x1000n, intsp: 0x9000n, rsbsp: 0x8000n }, stack: { base: 0x9000n, bytes: new Uint8Array(32) }, backingStore: { base: 0x8000n, bytes: new Uint8Array(32) } }],
        modules: [{ path: "m.dll", base: 0x1000n, size: 0x1000, version: [1, 2, 3, 4], codeView: { nb10: { signature: 1, age: 2, pdb: "m.pdb" } } }],
      }).bytes,
    ];
    for (const other of others) {
      for (let n = 0; n < other.length; n += 13) exercise(other.slice(0, n));
      for (let i = 0; i < 300; i++) {
        const b = other.slice();
        for (let k = 0; k < 3; k++) b[Math.floor(random() * b.length)] = Math.floor(random() * 256);
        exercise(b);
      }
    }
    // Corrupt the header, directory and stream bodies (everything before the first captured memory).
    for (let i = 0; i < 600; i++) {
      const b = dumpBytes.slice();
      for (let k = 0; k < 4; k++) b[Math.floor(random() * 0x1539)] = Math.floor(random() * 256);
      exercise(b);
    }
  });
});

describe("what the walk needs from a dump besides its threads' contexts", () => {
  const CORPUS = "test/fixtures/breakpad-corpus";
  const snap = (name: string) => minidumpSnapshot(readMinidump(bytesSource(readFileSync(`${CORPUS}/${name}.dmp`))));

  it("the operating system from SystemInfo's PlatformId", () => {
    expect(snap("linux_null_read_av").os).toBe("linux");
    expect(snap("tiny-exe-fastfail").os).toBe("windows");
    expect(snap("minidump_crashpad_annotation").os).toBe("ios"); // an iOS simulator process on macOS
  });

  it("each thread's own stack region, the only memory its walk reads the stack through", () => {
    const s = snap("tiny-exe-fastfail");
    expect(s.threads.map((t) => t.stackRanges)).toEqual([
      [{ start: 0xd2de4ff720n, end: 0xd2de4ff720n + 0x8e0n }],
      [{ start: 0xd2de5ff958n, end: 0xd2de5ff958n + 0x6a8n }],
      [{ start: 0xd2de6ff668n, end: 0xd2de6ff668n + 0x998n }],
      [{ start: 0xd2de7ffb18n, end: 0xd2de7ffb18n + 0x4e8n }],
    ]);
  });
});
