/**
 * A TEST-ONLY minidump writer. It shares no code with the reader in src/formats/minidump.ts:
 * every offset and constant below is written out again from docs/spec/minidump.md (§1–§3,
 * §3.4), ia64.md §4.1 and arm64.md §2.3, so a mistake in one side's tables shows up as a failing round trip.
 *
 * Layout (minidump.md §3.4): header at 0, directory at 32, then stream bodies; every structure
 * 4-aligned, CONTEXT records and memory 16-aligned; every RVA and DataSize exact. The result
 * also says where each piece went, so tests can corrupt one field and expect that offset back.
 */

/** `arm64-old`: Breakpad's 796-byte MDRawContextARM64_Old, written by its non-Windows writers. */
/** `arm`: the Windows 0x1A0-byte CONTEXT; `arm-breakpad`: Breakpad's 368-byte MDRawContextARM. */
export type WriterMachine = "x86" | "x64" | "ia64" | "arm64" | "arm64-old" | "arm" | "arm-breakpad";

/** Target memory: `bytes` captured at `base`. */
export interface WriterRange {
  base: bigint;
  bytes: Uint8Array;
}

export interface WriterThread {
  id: number;
  /** Lower-case register names (eip, rsp, stiip, ...) from the tables below. */
  registers: Record<string, bigint>;
  stack?: WriterRange;
  teb?: bigint;
  /** ContextFlags; default: the machine's CPU bit with CONTROL | INTEGER | SEGMENTS and more. */
  contextFlags?: number;
  /** The context's DataSize; default the CONTEXT size. Bytes beyond the record are zeros. */
  contextSize?: number;
  /** IA-64 register backing store (ThreadExList only). */
  backingStore?: WriterRange;
}

export type WriterCodeView =
  | { rsds: { guid: string; age: number; pdb: string } }
  | { nb10: { signature: number; age: number; pdb: string } }
  /** Breakpad's ELF record (signature 'BpEL') and the build id. */
  | { elf: { buildId: Uint8Array } }
  | { raw: Uint8Array };

export interface WriterModule {
  path: string;
  base: bigint;
  size: number;
  timeDateStamp?: number;
  checksum?: number;
  /** File version a.b.c.d, written as a valid VS_FIXEDFILEINFO. */
  version?: [number, number, number, number];
  codeView?: WriterCodeView;
  /** A raw IMAGE_DEBUG_MISC record (MiscRecord). */
  miscRecord?: Uint8Array;
}

export interface WriterException {
  threadId: number;
  code: number;
  flags?: number;
  address: bigint;
  parameters?: bigint[];
  /** The faulting context; default: the thread's registers. */
  registers?: Record<string, bigint>;
  contextFlags?: number;
  contextSize?: number;
}

export interface WriterFunctionTable {
  minimumAddress: bigint;
  maximumAddress: bigint;
  baseAddress: bigint;
  /** RUNTIME_FUNCTIONs as [begin, end, unwind data]. */
  functions: [number, number, number][];
  native?: Uint8Array;
}

export interface MinidumpSpec {
  machine: WriterMachine;
  /** SystemInfo.ProcessorArchitecture; default from the machine. `null` writes no SystemInfo stream. */
  processorArchitecture?: number | null;
  /** SystemInfo.PlatformId (2 Windows NT, 0x8201 Linux, 0x8101 macOS, …); default 2. */
  platformId?: number;
  /** ARM (architecture 5): ProcessorLevel (the ARM version) and the CPU union's CPUID and ELF hwcaps. */
  armCpu?: { level: number; cpuid: number; elfHwcaps: number };
  /** SystemInfo's version numbers and CSD string; default 10.0.19045 "Service Pack 9". */
  osVersion?: { major: number; minor: number; build: number; csd: string };
  threads?: WriterThread[];
  threadList?: "ThreadList" | "ThreadExList";
  modules?: WriterModule[];
  /** Memory besides the thread stacks. */
  memory?: WriterRange[];
  memoryList?: "MemoryList" | "Memory64List";
  /** List the thread stacks in the memory list too (as Breakpad and Windows do); default true. */
  stacksInMemoryList?: boolean;
  exception?: WriterException;
  miscInfo?: { processId: number; processCreateTime: number };
  functionTable?: { sizeOfNativeDescriptor: number; tables: WriterFunctionTable[] };
  /** Further streams written as given (unknown types, duplicates). */
  extraStreams?: { type: number; data: Uint8Array }[];
  /** Unused (type 0) directory entries at the end. */
  unusedEntries?: number;
  /** Padding bytes after list counts (Breakpad accepts 4). */
  listPadding?: 0 | 4;
}

/** Where the writer put a stream. */
export interface WrittenStream {
  /** File offset of its directory entry. */
  entry: number;
  rva: number;
  size: number;
}

export interface WrittenMinidump {
  bytes: Uint8Array;
  /** By stream type. */
  streams: Map<number, WrittenStream>;
  /** File offsets of the thread entries, module entries and memory descriptors, in list order. */
  threadEntries: number[];
  moduleEntries: number[];
  memoryDescriptors: number[];
  /** File offset of each range's bytes, by base address. */
  memoryData: Map<bigint, number>;
}

// minidump.md §1.3
const STREAM = { ThreadList: 3, ModuleList: 4, MemoryList: 5, Exception: 6, SystemInfo: 7, ThreadExList: 8, Memory64List: 9, FunctionTable: 13, MiscInfo: 15 };

// minidump.md §3.1 (x86), §3.2 (AMD64), ia64.md §4.1: register → [offset, size].
const X86_REGS: Record<string, [number, number]> = {
  dr0: [4, 4], dr1: [8, 4], dr2: [12, 4], dr3: [16, 4], dr6: [20, 4], dr7: [24, 4],
  gs: [140, 4], fs: [144, 4], es: [148, 4], ds: [152, 4],
  edi: [156, 4], esi: [160, 4], ebx: [164, 4], edx: [168, 4], ecx: [172, 4], eax: [176, 4],
  ebp: [180, 4], eip: [184, 4], cs: [188, 4], eflags: [192, 4], esp: [196, 4], ss: [200, 4],
};
const AMD64_REGS: Record<string, [number, number]> = {
  mxcsr: [52, 4], cs: [56, 2], ds: [58, 2], es: [60, 2], fs: [62, 2], gs: [64, 2], ss: [66, 2], eflags: [68, 4],
  dr0: [72, 8], dr1: [80, 8], dr2: [88, 8], dr3: [96, 8], dr6: [104, 8], dr7: [112, 8],
  rax: [120, 8], rcx: [128, 8], rdx: [136, 8], rbx: [144, 8], rsp: [152, 8], rbp: [160, 8], rsi: [168, 8], rdi: [176, 8],
  r8: [184, 8], r9: [192, 8], r10: [200, 8], r11: [208, 8], r12: [216, 8], r13: [224, 8], r14: [232, 8], r15: [240, 8],
  rip: [248, 8],
};
const IA64_REGS: Record<string, [number, number]> = {
  intgp: [0x878, 8], intsp: [0x8d0, 8], brrp: [0x980, 8], rspfs: [0x9e8, 8], rsbsp: [0x9f0, 8], rsbspstore: [0x9f8, 8],
  rsrnat: [0xa08, 8], stipsr: [0xa10, 8], stiip: [0xa18, 8], stifs: [0xa20, 8],
};
// arm64.md §2.1/§2.3: x0-x28 from 8, fp 0xf0, lr 0xf8, sp 0x100, pc 0x108 in both forms (the
// Windows form's u32 flags and Cpsr, the old form's u64 flags, take the first 8 bytes); Cpsr at 4
// (Windows) or 272 (old).
const ARM64_GPRS: Record<string, [number, number]> = {
  ...Object.fromEntries(Array.from({ length: 29 }, (_, i) => [`x${i}`, [8 + 8 * i, 8] as [number, number]])),
  fp: [0xf0, 8], lr: [0xf8, 8], sp: [0x100, 8], pc: [0x108, 8],
};
const ARM64_REGS: Record<string, [number, number]> = { ...ARM64_GPRS, cpsr: [4, 4] };
const ARM64_OLD_REGS: Record<string, [number, number]> = { ...ARM64_GPRS, cpsr: [272, 4] };
// winnt.h (_M_ARM) and minidump_cpu_arm.h: r0-r12 from 4, sp 0x38, lr 0x3c, pc 0x40, cpsr 0x44, D[n] at 0x50 + 8n in both forms.
const ARM_REGS: Record<string, [number, number]> = {
  ...Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`r${i}`, [4 + 4 * i, 4] as [number, number]])),
  sp: [0x38, 4], lr: [0x3c, 4], pc: [0x40, 4], cpsr: [0x44, 4],
  ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`d${i + 8}`, [0x50 + 8 * (i + 8), 8] as [number, number]])),
};
const CONTEXT: Record<WriterMachine, { size: number; flagsAt: number; flags: number; regs: Record<string, [number, number]>; arch: number }> = {
  x86: { size: 716, flagsAt: 0, flags: 0x0001003f, regs: X86_REGS, arch: 0 },
  x64: { size: 1232, flagsAt: 48, flags: 0x0010001f, regs: AMD64_REGS, arch: 9 },
  ia64: { size: 0xa70, flagsAt: 0, flags: 0x0008003f, regs: IA64_REGS, arch: 6 },
  arm64: { size: 912, flagsAt: 0, flags: 0x00400003, regs: ARM64_REGS, arch: 12 },
  "arm64-old": { size: 796, flagsAt: 0, flags: 0x80000007, regs: ARM64_OLD_REGS, arch: 0x8003 },
  arm: { size: 0x1a0, flagsAt: 0, flags: 0x00200007, regs: ARM_REGS, arch: 5 },
  "arm-breakpad": { size: 368, flagsAt: 0, flags: 0x40000006, regs: ARM_REGS, arch: 5 },
};

/** A growable little-endian buffer addressed by absolute offset. */
class Out {
  buf = new Uint8Array(4096);
  length = 0;

  private ensure(n: number): void {
    if (n <= this.buf.length) return;
    let size = this.buf.length;
    while (size < n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf);
    this.buf = b;
  }

  /** Reserves `n` zero bytes at the next `align`-aligned offset and returns it. */
  alloc(n: number, align = 4): number {
    const at = Math.ceil(this.length / align) * align;
    this.ensure(at + n);
    this.length = at + n;
    return at;
  }

  u8(at: number, v: number): void {
    this.buf[at] = v & 0xff;
  }
  u16(at: number, v: number): void {
    new DataView(this.buf.buffer).setUint16(at, v, true);
  }
  u32(at: number, v: number): void {
    new DataView(this.buf.buffer).setUint32(at, v >>> 0, true);
  }
  u64(at: number, v: bigint): void {
    new DataView(this.buf.buffer).setBigUint64(at, BigInt.asUintN(64, v), true);
  }
  bytes(at: number, b: Uint8Array): void {
    this.buf.set(b, at);
  }

  /** A MINIDUMP_STRING: u32 byte length, UTF-16LE, NUL u16 (minidump.md §1.2). */
  string(s: string): number {
    const at = this.alloc(4 + 2 * s.length + 2);
    this.u32(at, 2 * s.length);
    for (let i = 0; i < s.length; i++) this.u16(at + 4 + 2 * i, s.charCodeAt(i));
    return at;
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

function writeContext(out: Out, machine: WriterMachine, registers: Record<string, bigint>, flags?: number, size?: number): { rva: number; size: number } {
  const c = CONTEXT[machine];
  const dataSize = size ?? c.size;
  const at = out.alloc(Math.max(dataSize, c.size), 16);
  out.u32(at + c.flagsAt, flags ?? c.flags);
  for (const [name, value] of Object.entries(registers)) {
    const slot = c.regs[name];
    if (slot === undefined) throw new Error(`writer: no ${machine} register ${name}`);
    if (slot[1] === 8) out.u64(at + slot[0], value);
    else if (slot[1] === 4) out.u32(at + slot[0], Number(BigInt.asUintN(32, value)));
    else out.u16(at + slot[0], Number(BigInt.asUintN(16, value)));
  }
  return { rva: at, size: dataSize };
}

/** GUID "5A9832E5-2872-41C1-838E-D98914E9B7FF" → its 16 on-disk bytes (Data1-3 little-endian). */
function guidBytes(guid: string): Uint8Array {
  const h = guid.replace(/-/g, "");
  if (!/^[0-9a-fA-F]{32}$/.test(h)) throw new Error(`writer: bad GUID ${guid}`);
  const b = new Uint8Array(16);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, parseInt(h.slice(0, 8), 16), true);
  dv.setUint16(4, parseInt(h.slice(8, 12), 16), true);
  dv.setUint16(6, parseInt(h.slice(12, 16), 16), true);
  for (let i = 0; i < 8; i++) b[8 + i] = parseInt(h.slice(16 + 2 * i, 18 + 2 * i), 16);
  return b;
}

function codeViewBytes(cv: WriterCodeView): Uint8Array {
  const enc = new TextEncoder();
  if ("raw" in cv) return cv.raw;
  if ("elf" in cv) {
    const b = new Uint8Array(4 + cv.elf.buildId.length);
    new DataView(b.buffer).setUint32(0, 0x4270454c, true); // MD_CVINFOELF_SIGNATURE (the bytes "LEpB" on disk)
    b.set(cv.elf.buildId, 4);
    return b;
  }
  if ("rsds" in cv) {
    const name = enc.encode(cv.rsds.pdb);
    const b = new Uint8Array(24 + name.length + 1);
    const dv = new DataView(b.buffer);
    dv.setUint32(0, 0x53445352, true); // "RSDS"
    b.set(guidBytes(cv.rsds.guid), 4);
    dv.setUint32(20, cv.rsds.age, true);
    b.set(name, 24);
    return b;
  }
  const name = enc.encode(cv.nb10.pdb);
  const b = new Uint8Array(16 + name.length + 1);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, 0x3031424e, true); // "NB10"
  dv.setUint32(8, cv.nb10.signature, true);
  dv.setUint32(12, cv.nb10.age, true);
  b.set(name, 16);
  return b;
}

/** Builds a minidump from `spec`. */
export function writeMinidump(spec: MinidumpSpec): WrittenMinidump {
  const out = new Out();
  const threads = spec.threads ?? [];
  const modules = spec.modules ?? [];
  const pad = spec.listPadding ?? 0;
  const ex = spec.threadList === "ThreadExList";
  const use64 = spec.memoryList === "Memory64List";
  const stacksListed = spec.stacksInMemoryList ?? true;
  const arch = spec.processorArchitecture === undefined ? CONTEXT[spec.machine].arch : spec.processorArchitecture;

  const types: number[] = [];
  if (arch !== null) types.push(STREAM.SystemInfo);
  types.push(ex ? STREAM.ThreadExList : STREAM.ThreadList);
  if (modules.length > 0) types.push(STREAM.ModuleList);
  types.push(use64 ? STREAM.Memory64List : STREAM.MemoryList);
  if (spec.exception !== undefined) types.push(STREAM.Exception);
  if (spec.miscInfo !== undefined) types.push(STREAM.MiscInfo);
  if (spec.functionTable !== undefined) types.push(STREAM.FunctionTable);
  const extras = spec.extraStreams ?? [];
  const count = types.length + extras.length + (spec.unusedEntries ?? 0);

  // MINIDUMP_HEADER (minidump.md §1.1) and the directory right after it.
  out.alloc(32);
  out.u32(0, 0x504d444d);
  out.u32(4, 0xa793);
  out.u32(8, count);
  out.u32(12, 32);
  out.u32(20, 0x65000000);
  const directory = out.alloc(12 * count);
  const streams = new Map<number, WrittenStream>();
  let entryIndex = 0;
  const setEntry = (type: number, rva: number, size: number): void => {
    const entry = directory + 12 * entryIndex++;
    out.u32(entry, type);
    out.u32(entry + 4, size);
    out.u32(entry + 8, rva);
    if (!streams.has(type)) streams.set(type, { entry, rva, size });
  };

  // Memory: every range whose bytes the dump carries, stacks first, in list order.
  const ranges: { range: WriterRange; listed: boolean }[] = [
    ...threads.filter((t) => t.stack !== undefined).map((t) => ({ range: t.stack!, listed: stacksListed })),
    ...threads.filter((t) => t.backingStore !== undefined).map((t) => ({ range: t.backingStore!, listed: stacksListed })),
    ...(spec.memory ?? []).map((range) => ({ range, listed: true })),
  ];
  const memoryData = new Map<bigint, number>();
  const dataOf = new Map<WriterRange, number>();
  const listed = ranges.filter((r) => r.listed);
  if (use64) {
    // Memory64List data lie back to back in descriptor order (minidump.md §2.4).
    const base = out.alloc(listed.reduce((n, r) => n + r.range.bytes.length, 0), 16);
    let at = base;
    for (const { range } of listed) {
      out.bytes(at, range.bytes);
      dataOf.set(range, at);
      at += range.bytes.length;
    }
  }
  for (const { range } of ranges) {
    if (dataOf.has(range)) continue;
    const at = out.alloc(range.bytes.length, 16);
    out.bytes(at, range.bytes);
    dataOf.set(range, at);
  }
  for (const [range, at] of dataOf) memoryData.set(range.base, at);

  // SystemInfo (minidump.md §2.6, 56 bytes).
  if (arch !== null) {
    const at = out.alloc(56);
    out.u16(at, arch);
    out.u16(at + 2, 6);
    out.u16(at + 4, 0x0d08);
    out.u8(at + 6, 1);
    out.u8(at + 7, 1);
    const os = spec.osVersion ?? { major: 10, minor: 0, build: 19045, csd: "Service Pack 9" };
    out.u32(at + 8, os.major);
    out.u32(at + 12, os.minor);
    out.u32(at + 16, os.build);
    out.u32(at + 20, spec.platformId ?? 2);
    out.u16(at + 28, 0x100);
    if (arch === 0) {
      out.bytes(at + 32, new TextEncoder().encode("GenuineIntel"));
      out.u32(at + 44, 0x6d8);
    }
    if (spec.armCpu !== undefined) {
      out.u16(at + 2, spec.armCpu.level);
      out.u16(at + 4, 0);
      out.u32(at + 32, spec.armCpu.cpuid);
      out.u32(at + 36, spec.armCpu.elfHwcaps);
    }
    out.u32(at + 24, out.string(os.csd));
    setEntry(STREAM.SystemInfo, at, 56);
  }

  // ThreadList / ThreadExList (minidump.md §2.2): u32 count, then 48- or 64-byte entries.
  const entrySize = ex ? 64 : 48;
  const threadList = out.alloc(4 + pad + entrySize * threads.length);
  out.u32(threadList, threads.length);
  const threadEntries: number[] = [];
  threads.forEach((t, i) => {
    const at = threadList + 4 + pad + entrySize * i;
    threadEntries.push(at);
    out.u32(at, t.id);
    out.u64(at + 16, t.teb ?? 0x7ffdf000n + BigInt(i) * 0x1000n);
    if (t.stack !== undefined) {
      out.u64(at + 24, t.stack.base);
      out.u32(at + 32, t.stack.bytes.length);
      out.u32(at + 36, dataOf.get(t.stack)!);
    }
    const ctx = writeContext(out, spec.machine, t.registers, t.contextFlags, t.contextSize);
    out.u32(at + 40, ctx.size);
    out.u32(at + 44, ctx.rva);
    if (ex && t.backingStore !== undefined) {
      out.u64(at + 48, t.backingStore.base);
      out.u32(at + 56, t.backingStore.bytes.length);
      out.u32(at + 60, dataOf.get(t.backingStore)!);
    }
  });
  setEntry(ex ? STREAM.ThreadExList : STREAM.ThreadList, threadList, 4 + pad + entrySize * threads.length);

  // ModuleList (minidump.md §2.3): 108-byte entries, never the 112-byte C layout.
  const moduleEntries: number[] = [];
  if (modules.length > 0) {
    const list = out.alloc(4 + pad + 108 * modules.length);
    out.u32(list, modules.length);
    modules.forEach((m, i) => {
      const at = list + 4 + pad + 108 * i;
      moduleEntries.push(at);
      out.u64(at, m.base);
      out.u32(at + 8, m.size);
      out.u32(at + 12, m.checksum ?? 0);
      out.u32(at + 16, m.timeDateStamp ?? 0);
      out.u32(at + 20, out.string(m.path));
      if (m.version !== undefined) {
        const [a, b, c, d] = m.version;
        out.u32(at + 24, 0xfeef04bd);
        out.u32(at + 28, 0x10000);
        out.u32(at + 32, ((a << 16) | b) >>> 0);
        out.u32(at + 36, ((c << 16) | d) >>> 0);
      }
      if (m.codeView !== undefined) {
        const cv = codeViewBytes(m.codeView);
        const cvAt = out.alloc(cv.length);
        out.bytes(cvAt, cv);
        out.u32(at + 76, cv.length);
        out.u32(at + 80, cvAt);
      }
      if (m.miscRecord !== undefined) {
        const miscAt = out.alloc(m.miscRecord.length);
        out.bytes(miscAt, m.miscRecord);
        out.u32(at + 84, m.miscRecord.length);
        out.u32(at + 88, miscAt);
      }
    });
    setEntry(STREAM.ModuleList, list, 4 + pad + 108 * modules.length);
  }

  // MemoryList (u32 count, 16-byte descriptors) or Memory64List (u64 count, u64 BaseRva, 16-byte pairs).
  const memoryDescriptors: number[] = [];
  if (use64) {
    const list = out.alloc(16 + 16 * listed.length, 8);
    out.u64(list, BigInt(listed.length));
    out.u64(list + 8, BigInt(listed.length > 0 ? dataOf.get(listed[0]!.range)! : 0));
    listed.forEach(({ range }, i) => {
      const at = list + 16 + 16 * i;
      memoryDescriptors.push(at);
      out.u64(at, range.base);
      out.u64(at + 8, BigInt(range.bytes.length));
    });
    setEntry(STREAM.Memory64List, list, 16 + 16 * listed.length);
  } else {
    const list = out.alloc(4 + pad + 16 * listed.length);
    out.u32(list, listed.length);
    listed.forEach(({ range }, i) => {
      const at = list + 4 + pad + 16 * i;
      memoryDescriptors.push(at);
      out.u64(at, range.base);
      out.u32(at + 8, range.bytes.length);
      out.u32(at + 12, dataOf.get(range)!);
    });
    setEntry(STREAM.MemoryList, list, 4 + pad + 16 * listed.length);
  }

  // Exception (minidump.md §2.5, 168 bytes).
  if (spec.exception !== undefined) {
    const e = spec.exception;
    const at = out.alloc(168, 8);
    out.u32(at, e.threadId);
    out.u32(at + 8, e.code);
    out.u32(at + 12, e.flags ?? 0);
    out.u64(at + 24, e.address);
    const params = e.parameters ?? [];
    out.u32(at + 32, params.length);
    params.slice(0, 15).forEach((p, i) => out.u64(at + 40 + 8 * i, p));
    const registers = e.registers ?? threads.find((t) => t.id === e.threadId)?.registers ?? {};
    const ctx = writeContext(out, spec.machine, registers, e.contextFlags, e.contextSize);
    out.u32(at + 160, ctx.size);
    out.u32(at + 164, ctx.rva);
    setEntry(STREAM.Exception, at, 168);
  }

  // MiscInfo version 1 (minidump.md §2.7): PROCESS_ID | PROCESS_TIMES.
  if (spec.miscInfo !== undefined) {
    const at = out.alloc(24);
    out.u32(at, 24);
    out.u32(at + 4, 0x3);
    out.u32(at + 8, spec.miscInfo.processId);
    out.u32(at + 12, spec.miscInfo.processCreateTime);
    setEntry(STREAM.MiscInfo, at, 24);
  }

  // FunctionTable (minidump.md §2.8): 24-byte header, then per table a 32-byte descriptor, the
  // native descriptor, 12-byte entries and no padding.
  if (spec.functionTable !== undefined) {
    const ft = spec.functionTable;
    const size = 24 + ft.tables.reduce((n, t) => n + 32 + ft.sizeOfNativeDescriptor + 12 * t.functions.length, 0);
    const at = out.alloc(size, 8);
    out.u32(at, 24);
    out.u32(at + 4, 32);
    out.u32(at + 8, ft.sizeOfNativeDescriptor);
    out.u32(at + 12, 12);
    out.u32(at + 16, ft.tables.length);
    let p = at + 24;
    for (const t of ft.tables) {
      out.u64(p, t.minimumAddress);
      out.u64(p + 8, t.maximumAddress);
      out.u64(p + 16, t.baseAddress);
      out.u32(p + 24, t.functions.length);
      p += 32;
      if (t.native !== undefined) out.bytes(p, t.native.subarray(0, ft.sizeOfNativeDescriptor));
      p += ft.sizeOfNativeDescriptor;
      for (const [b, e, u] of t.functions) {
        out.u32(p, b);
        out.u32(p + 4, e);
        out.u32(p + 8, u);
        p += 12;
      }
    }
    setEntry(STREAM.FunctionTable, at, size);
  }

  for (const x of extras) {
    const at = out.alloc(x.data.length);
    out.bytes(at, x.data);
    setEntry(x.type, at, x.data.length);
  }

  return { bytes: out.result(), streams, threadEntries, moduleEntries, memoryDescriptors, memoryData };
}

/** Little-endian field patching for tests that corrupt a written dump. */
export function patch32(bytes: Uint8Array, at: number, value: number): Uint8Array {
  const b = bytes.slice();
  new DataView(b.buffer).setUint32(at, value >>> 0, true);
  return b;
}

/** As {@link patch32}, for a u64 field. */
export function patch64(bytes: Uint8Array, at: number, value: bigint): Uint8Array {
  const b = bytes.slice();
  new DataView(b.buffer).setBigUint64(at, value, true);
  return b;
}
