/**
 * The ThreadNames, UnloadedModuleList and HandleData streams, on dumps written by the test's own writer
 * (which shares no code with the reader), and what the JSON makes of them as rust-minidump's
 * schema has it: `threads[].thread_name`, the top-level `unloaded_modules` in the dump's order
 * (code id TimeDateStamp + SizeOfImage in lower case), and for a frame outside every loaded
 * module its `unloaded_modules` by name, sorted, with each name's offsets sorted and without
 * repeats; `handles` with each handle's type and object name. Damaged entries are passed over
 * with a note.
 */
import { describe, expect, it } from "vitest";
import { bytesSource, readMinidump } from "../../src/formats/minidump.js";
import { cli } from "../support/cli.js";
import { writeMinidump, type MinidumpSpec } from "../support/minidump-writer.js";
import { parseWalkJson } from "../support/walk-schema.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const THREAD_NAMES = 24;
const UNLOADED_MODULES = 14;

/** Little-endian bytes of u32 and u64 fields. */
function fields(...values: (number | bigint)[]): number[] {
  const out: number[] = [];
  for (const v of values) {
    const n = typeof v === "bigint" ? 8 : 4;
    const big = BigInt(v);
    for (let i = 0; i < n; i++) out.push(Number((big >> BigInt(8 * i)) & 0xffn));
  }
  return out;
}

/** A MINIDUMP_STRING: its byte length, UTF-16LE text and a NUL. */
function minidumpString(text: string): number[] {
  const units = [...text].flatMap((ch) => [ch.charCodeAt(0) & 0xff, ch.charCodeAt(0) >> 8]);
  return [...fields(units.length), ...units, 0, 0];
}

/**
 * A stream whose entries point at strings stored after them in the stream itself: `entries`
 * gets each string's absolute RVA (the stream's own RVA is known after a first write).
 */
function withStrings(base: number, strings: string[], entries: (rvas: number[]) => number[], headerBytes: number): Uint8Array {
  const encoded = strings.map(minidumpString);
  const rvas: number[] = [];
  let at = base + headerBytes;
  for (const e of encoded) {
    rvas.push(at);
    at += e.length;
  }
  const head = entries(rvas);
  expect(head.length).toBe(headerBytes);
  return Uint8Array.from([...head, ...encoded.flat()]);
}

const UNLOADED_AT = 0x6000_0000n;

function spec(names: (base: number) => Uint8Array, unloaded: (base: number) => Uint8Array): MinidumpSpec {
  const stack = new Uint8Array(0x40);
  return {
    machine: "x86",
    threads: [
      { id: 7, registers: { eip: UNLOADED_AT + 0x1234n, esp: 0x0012_f000n, ebp: 0n }, stack: { base: 0x0012_f000n, bytes: stack } },
      { id: 9, registers: { eip: 0x0040_1000n, esp: 0x0013_f000n, ebp: 0n }, stack: { base: 0x0013_f000n, bytes: stack } },
    ],
    modules: [{ path: "C:\\app\\app.exe", base: 0x0040_0000n, size: 0x1_0000, timeDateStamp: 0x1234abcd }],
    exception: { threadId: 7, code: 0xc0000005, address: UNLOADED_AT + 0x1234n, parameters: [0n, UNLOADED_AT + 0x1234n] },
    extraStreams: [
      { type: THREAD_NAMES, data: names(0) },
      { type: UNLOADED_MODULES, data: unloaded(0) },
    ],
  };
}

/** Writes the dump twice: the second time the strings' RVAs are those of the first layout. */
function dump(): Uint8Array {
  const names = (base: number): Uint8Array =>
    withStrings(base, ["main", "worker"], (r) => [...fields(2), ...fields(7, BigInt(r[0]!)), ...fields(9, BigInt(r[1]!))], 4 + 2 * 12);
  const unloaded = (base: number): Uint8Array =>
    withStrings(
      base,
      ["C:\\old\\plugin.dll", "C:\\old\\plugin.dll", "C:\\old\\codec.dll", "C:\\old\\far.dll"],
      (r) => [
        ...fields(12, 24, 4),
        ...fields(UNLOADED_AT, 0x2000, 0, 0x5a5a0001, r[0]!),
        // Reloaded at the same place: one offset.
        ...fields(UNLOADED_AT, 0x2000, 0, 0x5a5a0001, r[1]!),
        ...fields(UNLOADED_AT + 0x1000n, 0x1000, 0, 0x00000002, r[2]!),
        ...fields(0x7000_0000n, 0x1000, 0, 0x00000003, r[3]!),
      ],
      12 + 4 * 24,
    );
  const first = writeMinidump(spec(names, unloaded));
  const at = (type: number): number => first.streams.get(type)!.rva;
  return writeMinidump(spec(() => names(at(THREAD_NAMES)), () => unloaded(at(UNLOADED_MODULES)))).bytes;
}

describe("ThreadNames and UnloadedModuleList", () => {
  it("an unloaded module list of 70,000 entries: the first 65,536 are read, the rest passed over with a note", () => {
    const n = 70_000;
    const list = new Uint8Array(12 + n * 24);
    list.set(fields(12, 24, n), 0);
    for (let i = 0; i < n; i++) list.set(fields(0x6000_0000n + BigInt(i) * 0x1000n, 0x1000, 0, 0, 0), 12 + i * 24);
    const d = readMinidump(bytesSource(writeMinidump({ ...spec(() => Uint8Array.from(fields(0)), () => list), extraStreams: [{ type: UNLOADED_MODULES, data: list }] }).bytes));
    expect(d.unloadedModules).toHaveLength(65_536);
    expect(d.notes).toContainEqual(expect.stringMatching(/UnloadedModuleList: 70000 entries; the first 65536 are read \(the limit of modules read from one dump\), the rest passed over$/));
  });

  it("are read: names by thread id, unloaded modules in the dump's order", () => {
    const d = readMinidump(bytesSource(dump()));
    expect([...(d.threadNames ?? new Map())]).toEqual([
      [7, "main"],
      [9, "worker"],
    ]);
    expect(d.unloadedModules?.map((u) => [u.name, u.base, u.size, u.timeDateStamp])).toEqual([
      ["plugin.dll", UNLOADED_AT, 0x2000, 0x5a5a0001],
      ["plugin.dll", UNLOADED_AT, 0x2000, 0x5a5a0001],
      ["codec.dll", UNLOADED_AT + 0x1000n, 0x1000, 2],
      ["far.dll", 0x7000_0000n, 0x1000, 3],
    ]);
    expect(d.notes).toEqual([]);
  });

  it("fill the JSON's thread_name, unloaded_modules and a frame's unloaded_modules", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "unloaded-")), "names.dmp");
    writeFileSync(file, dump());
    const r = await cli("walk", file, "--format", "json");
    expect(r.code).toBe(0);
    const doc = parseWalkJson(r.out);
    expect(doc.threads.map((t: { thread_id: number; thread_name: string }) => [t.thread_id, t.thread_name])).toEqual([
      [7, "main"],
      [9, "worker"],
    ]);
    expect(doc.crashing_thread.thread_name).toBe("main");
    expect(doc.unloaded_modules).toEqual([
      { base_addr: "0x60000000", end_addr: "0x60002000", filename: "plugin.dll", code_id: "5a5a00012000", cert_subject: null },
      { base_addr: "0x60000000", end_addr: "0x60002000", filename: "plugin.dll", code_id: "5a5a00012000", cert_subject: null },
      { base_addr: "0x60001000", end_addr: "0x60002000", filename: "codec.dll", code_id: "000000021000", cert_subject: null },
      { base_addr: "0x70000000", end_addr: "0x70001000", filename: "far.dll", code_id: "000000031000", cert_subject: null },
    ]);
    const top = doc.threads[0].frames[0];
    expect([top.module, top.unloaded_modules]).toEqual([
      null,
      [
        { module: "codec.dll", offsets: ["0x00000234"] },
        { module: "plugin.dll", offsets: ["0x00001234"] },
      ],
    ]);
    // A frame in a loaded module lists none.
    expect(doc.threads[1].frames[0].unloaded_modules).toBeNull();
  });

  it("pass over a name outside the file and an entry of no bytes, with a note each", () => {
    const names = (): Uint8Array => Uint8Array.from([...fields(1), ...fields(7, 0xffff_0000n)]);
    const unloaded = (): Uint8Array => Uint8Array.from([...fields(12, 24, 1), ...fields(UNLOADED_AT, 0, 0, 0, 0)]);
    const d = readMinidump(bytesSource(writeMinidump(spec(names, unloaded)).bytes));
    expect(d.threadNames?.size).toBe(0);
    expect(d.unloadedModules).toEqual([]);
    expect(d.notes).toHaveLength(2);
    expect(d.notes[0]).toMatch(/thread name 0 \(thread 7\): RVA 0xffff0000 lies outside the file/);
    expect(d.notes[1]).toMatch(/unloaded module 0: 0x0 bytes at 0x60000000 cover nothing/);
  });
});

describe("HandleData", () => {
  const HANDLE_DATA = 12;
  const handles = (base: number): Uint8Array =>
    withStrings(
      base,
      ["File", "\\Device\\HarddiskVolume1\\log.txt", "Event"],
      (r) => [...fields(16, 32, 2, 0), ...fields(0x44n, r[0]!, r[1]!, 0, 0x12019f, 1, 2), ...fields(0x48n, r[2]!, 0, 0, 0x1f0003, 1, 1)],
      16 + 2 * 32,
    );
  const handleSpec = (data: Uint8Array): MinidumpSpec => ({ ...spec(() => Uint8Array.from(fields(0)), () => Uint8Array.from(fields(12, 24, 0))), extraStreams: [{ type: HANDLE_DATA, data }] });

  it("is read, and is the JSON's handles (an object name of RVA 0 is null)", async () => {
    const first = writeMinidump(handleSpec(handles(0)));
    const bytes = writeMinidump(handleSpec(handles(first.streams.get(HANDLE_DATA)!.rva))).bytes;
    const d = readMinidump(bytesSource(bytes));
    expect(d.handles?.map((h) => [h.handle, h.typeName, h.objectName, h.grantedAccess])).toEqual([
      [0x44n, "File", "\\Device\\HarddiskVolume1\\log.txt", 0x12019f],
      [0x48n, "Event", undefined, 0x1f0003],
    ]);
    const file = join(mkdtempSync(join(tmpdir(), "handles-")), "handles.dmp");
    writeFileSync(file, bytes);
    const doc = parseWalkJson((await cli("walk", file, "--format", "json")).out);
    expect(doc.handles).toEqual([
      { handle: 0x44, type_name: "File", object_name: "\\Device\\HarddiskVolume1\\log.txt" },
      { handle: 0x48, type_name: "Event", object_name: null },
    ]);
  });

  it("a list of 70,000 descriptors: the first 65,536 are read, the rest passed over with a note", () => {
    const n = 70_000;
    const list = new Uint8Array(16 + n * 32);
    list.set(fields(16, 32, n, 0), 0);
    for (let i = 0; i < n; i++) list.set(fields(BigInt(4 * i + 4), 0, 0, 0, 0, 1, 1), 16 + i * 32);
    const d = readMinidump(bytesSource(writeMinidump(handleSpec(list)).bytes));
    expect(d.handles).toHaveLength(65_536);
    expect(d.handles?.[65_535]?.handle).toBe(4n * 65_535n + 4n);
    expect(d.notes).toContainEqual(expect.stringMatching(/HandleData: 70000 descriptors; the first 65536 are read \(the limit of handles read from one dump\), the rest passed over$/));
  });

  it("is null in the JSON of a dump without the stream, and a descriptor size below 32 loses the stream with a note", async () => {
    const bad = readMinidump(bytesSource(writeMinidump(handleSpec(Uint8Array.from(fields(16, 8, 0, 0)))).bytes));
    expect(bad.handles).toBeUndefined();
    expect(bad.notes.join("\n")).toMatch(/HandleData SizeOfDescriptor 8 is less than the 32 bytes of a descriptor/);
    const file = join(mkdtempSync(join(tmpdir(), "handles-")), "none.dmp");
    writeFileSync(file, writeMinidump({ ...spec(() => Uint8Array.from(fields(0)), () => Uint8Array.from(fields(12, 24, 0))), extraStreams: [] }).bytes);
    expect(parseWalkJson((await cli("walk", file, "--format", "json")).out).handles).toBeNull();
  });
});

describe("Mozilla's MozMacosBootargs and MozSoftErrors streams", () => {
  const BOOTARGS = 0x4d7a0002;
  const SOFT_ERRORS = 0x4d7a0004;
  const errors = [{ InitErrors: [{ StopProcessFailed: "No such process" }] }];
  const mozSpec = (bootargs: (base: number) => Uint8Array, soft: string): MinidumpSpec => ({
    ...spec(() => Uint8Array.from(fields(0)), () => Uint8Array.from(fields(12, 24, 0))),
    extraStreams: [
      { type: BOOTARGS, data: bootargs(0) },
      { type: SOFT_ERRORS, data: new TextEncoder().encode(soft) },
    ],
  });
  const bootargs = (base: number): Uint8Array => withStrings(base, ["-v debug=0x144"], (r) => [...fields(BOOTARGS), ...fields(BigInt(r[0]!))], 12);

  it("are read, and are the JSON's mac_boot_args and soft_errors", async () => {
    const first = writeMinidump(mozSpec(bootargs, JSON.stringify(errors)));
    const placed = mozSpec(() => bootargs(first.streams.get(BOOTARGS)!.rva), JSON.stringify(errors));
    const bytes = writeMinidump(placed).bytes;
    const d = readMinidump(bytesSource(bytes));
    expect(d.macBootArgs).toBe("-v debug=0x144");
    expect(d.softErrors).toEqual(errors);
    const file = join(mkdtempSync(join(tmpdir(), "moz-")), "moz.dmp");
    writeFileSync(file, bytes);
    const doc = parseWalkJson((await cli("walk", file, "--format", "json")).out);
    expect(doc.mac_boot_args).toBe("-v debug=0x144");
    expect(doc.soft_errors).toEqual(errors);
  });

  it("a boot-arguments RVA outside the file, or soft errors that are not a JSON list, are passed over with a note", () => {
    const bad = readMinidump(bytesSource(writeMinidump(mozSpec(() => Uint8Array.from([...fields(BOOTARGS), ...fields(0x1_0000_0000n)]), '{"not":"a list"}')).bytes));
    expect(bad.macBootArgs).toBeUndefined();
    expect(bad.softErrors).toBeUndefined();
    expect(bad.notes.join("\n")).toMatch(/MozMacosBootargs RVA 4294967296 lies outside the file[\s\S]*MozSoftErrors stream is JSON but not a list of errors/);
  });
});


/** A NUL-terminated UTF-8 string's bytes. */
const cString = (text: string): number[] => [...new TextEncoder().encode(text), 0];

describe("Mozilla's MozMacosCrashInfoStream", () => {
  const CRASH_INFO = 0x4d7a0001;
  /** A version-5 record: stream type, version, thread, dialog mode, abort cause (40 bytes), then its five strings. */
  const record = (thread: bigint, dialogMode: bigint, abortCause: bigint, strings: string[], version = 5n): number[] => [
    ...fields(BigInt(CRASH_INFO), version, thread, dialogMode, abortCause),
    ...strings.flatMap(cString),
  ];
  /** The stream: its header (stream type, count, record_start_size 40, 20 descriptors) and the records after it, at `base`. */
  const stream = (base: number, records: number[][], startSize = 40, count = records.length): Uint8Array => {
    const descriptors: number[] = [];
    let at = base + 12 + 20 * 8;
    for (let i = 0; i < 20; i++) {
      const r = records[i];
      descriptors.push(...fields(r?.length ?? 0, r === undefined ? 0 : at));
      at += r?.length ?? 0;
    }
    return Uint8Array.from([...fields(CRASH_INFO, count, startSize), ...descriptors, ...records.flat()]);
  };
  const macSpec = (data: Uint8Array): MinidumpSpec => ({
    ...spec(() => Uint8Array.from(fields(0)), () => Uint8Array.from(fields(12, 24, 0))),
    platformId: 0x8101,
    extraStreams: [{ type: CRASH_INFO, data }],
  });
  /** The dump with the stream placed where its records' RVAs say. */
  const placed = (records: number[][], startSize?: number, count?: number): Uint8Array => {
    const first = writeMinidump(macSpec(stream(0, records, startSize, count)));
    return writeMinidump(macSpec(stream(first.streams.get(CRASH_INFO)!.rva, records, startSize, count))).bytes;
  };

  it("is read, and is the JSON's mac_crash_info: a field null where it is 0 or empty", async () => {
    const records = [
      record(0x1234n, 0n, 0x5n, ["/usr/lib/system/libsystem_c.dylib", "abort() called", "", "", ""]),
      record(0n, 0n, 0n, ["", "", "", "", ""]),
    ];
    const bytes = placed(records);
    const d = readMinidump(bytesSource(bytes));
    expect(d.macCrashInfo?.map((r) => [r.version, r.thread, r.abortCause, r.modulePath, r.message])).toEqual([
      [5n, 0x1234n, 5n, "/usr/lib/system/libsystem_c.dylib", "abort() called"],
      [5n, 0n, 0n, "", ""],
    ]);
    const file = join(mkdtempSync(join(tmpdir(), "moz-")), "crash-info.dmp");
    writeFileSync(file, bytes);
    const doc = parseWalkJson((await cli("walk", file, "--format", "json")).out);
    expect(doc.mac_crash_info).toEqual({
      num_records: 2,
      records: [
        { thread: "0x00001234", dialog_mode: null, abort_cause: "0x00000005", module: "/usr/lib/system/libsystem_c.dylib", message: "abort() called", signature_string: null, backtrace: null, message2: null },
        { thread: null, dialog_mode: null, abort_cause: null, module: null, message: null, signature_string: null, backtrace: null, message2: null },
      ],
    });
  });

  it("gives a version-4 record no abort cause, and a version below 4 no thread or strings", async () => {
    const v4 = [...fields(BigInt(CRASH_INFO), 4n, 0x77n, 0x1n), 0, 0, 0, 0, 0, 0, 0, 0, ...["m", "msg", "sig", "bt", "msg2"].flatMap(cString)];
    const d4 = readMinidump(bytesSource(placed([v4])));
    expect(d4.macCrashInfo).toEqual([{ version: 4n, thread: 0x77n, dialogMode: 1n, modulePath: "m", message: "msg", signatureString: "sig", backtrace: "bt", message2: "msg2" }]);
    const d1 = readMinidump(bytesSource(placed([[...fields(BigInt(CRASH_INFO), 1n)]], 16)));
    expect(d1.macCrashInfo).toEqual([{ version: 1n }]);
  });

  it("damaged: a string without its NUL, two versions, a record outside the file, a short header lose the stream with a note; a version-0 record is passed over", () => {
    const unterminated = [...fields(BigInt(CRASH_INFO), 5n, 1n, 0n, 0n), ...new TextEncoder().encode("no terminator")];
    const notes = (bytes: Uint8Array): string => {
      const d = readMinidump(bytesSource(bytes));
      expect(d.macCrashInfo).toBeUndefined();
      return d.notes.join("\n");
    };
    expect(notes(placed([unterminated]))).toMatch(/MozMacosCrashInfo stream passed over: MozMacosCrashInfo record 0: its modulePath string has no NUL before the record ends/);
    const two = [record(1n, 0n, 0n, ["", "", "", "", ""]), [...fields(BigInt(CRASH_INFO), 4n, 1n, 0n), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]];
    expect(notes(placed(two))).toMatch(/MozMacosCrashInfo records have two versions \(5 and 4\)/);
    expect(notes(placed([record(1n, 0n, 0n, ["", "", "", "", ""])], 32))).toMatch(/the fixed part of a version 5 record is 40 bytes, more than the 32 the header gives it/);
    const outside = Uint8Array.from([...fields(CRASH_INFO, 1, 40), ...fields(48, 0x7fff_0000), ...new Array<number>(19 * 8).fill(0)]);
    expect(notes(writeMinidump(macSpec(outside)).bytes)).toMatch(/MozMacosCrashInfo record 0: RVA 0x7fff0000 lies outside the file/);
    expect(notes(writeMinidump(macSpec(Uint8Array.from(fields(CRASH_INFO, 1, 40)))).bytes)).toMatch(/MozMacosCrashInfo stream holds 12 bytes, fewer than its 172-byte header/);
    const zero = readMinidump(bytesSource(placed([[...fields(BigInt(CRASH_INFO), 0n)]])));
    expect(zero.macCrashInfo).toEqual([]);
    expect(zero.notes.join("\n")).toMatch(/MozMacosCrashInfo record 0 has version 0: passed over/);
    const many = readMinidump(bytesSource(placed([record(1n, 0n, 0n, ["", "", "", "", ""])], 40, 25)));
    expect(many.notes.join("\n")).toMatch(/MozMacosCrashInfo record count 25 is more than the 20 its header has room for/);
  });
});

describe("Mozilla's MozLinuxLimits stream", () => {
  const LIMITS = 0x4d7a0003;
  // /proc/self/limits as Linux writes it: "%-25s %-20s %-20s %-10s", no unit for the priorities.
  const text = [
    "Limit                     Soft Limit           Hard Limit           Units     ",
    "Max cpu time              unlimited            unlimited            seconds   ",
    "Max stack size            8388608              unlimited            bytes     ",
    "Max core file size        0                    unlimited            bytes     ",
    "Max open files            1024                 1048576              files     ",
    "Max nice priority         0                    0                    ",
    "Max realtime timeout      unlimited            unlimited            us        ",
    "",
  ].join("\n");
  const linuxSpec = (data: Uint8Array): MinidumpSpec => ({
    ...spec(() => Uint8Array.from(fields(0)), () => Uint8Array.from(fields(12, 24, 0))),
    platformId: 0x8201,
    extraStreams: [{ type: LIMITS, data }],
  });

  it("is read, and is the JSON's proc_limits: Unlimited, Limited with the number, unit n/a where the line has none", async () => {
    const bytes = writeMinidump(linuxSpec(new TextEncoder().encode(text))).bytes;
    const d = readMinidump(bytesSource(bytes));
    expect(d.procLimits).toHaveLength(6);
    expect(d.notes).toEqual([]);
    const file = join(mkdtempSync(join(tmpdir(), "moz-")), "limits.dmp");
    writeFileSync(file, bytes);
    const doc = parseWalkJson((await cli("walk", file, "--format", "json")).out);
    expect(doc.proc_limits).toEqual({
      limits: [
        { name: "Max cpu time", soft: "Unlimited", hard: "Unlimited", unit: "seconds" },
        { name: "Max stack size", soft: { Limited: 8388608 }, hard: "Unlimited", unit: "bytes" },
        { name: "Max core file size", soft: { Limited: 0 }, hard: "Unlimited", unit: "bytes" },
        { name: "Max open files", soft: { Limited: 1024 }, hard: { Limited: 1048576 }, unit: "files" },
        { name: "Max nice priority", soft: { Limited: 0 }, hard: { Limited: 0 }, unit: "n/a" },
        { name: "Max realtime timeout", soft: "Unlimited", hard: "Unlimited", unit: "us" },
      ],
    });
  });

  it("damaged: a value that is no number is Error, a line that does not split is passed over with a note, a stream without limits is null", async () => {
    const bad = "Limit   Soft Limit   Hard Limit   Units\nMax open files   lots   4096   files\nrubbish\n\u00ff\u0000\n";
    const bytes = writeMinidump(linuxSpec(new TextEncoder().encode(bad))).bytes;
    const d = readMinidump(bytesSource(bytes));
    expect(d.procLimits).toEqual([{ name: "Max open files", soft: "lots", hard: "4096", unit: "files" }]);
    expect(d.notes.join("\n")).toMatch(/MozLinuxLimits line "rubbish" is not a limit's name, values and unit: passed over[\s\S]*MozLinuxLimits line "ÿ" is not/);
    const file = join(mkdtempSync(join(tmpdir(), "moz-")), "bad-limits.dmp");
    writeFileSync(file, bytes);
    const doc = parseWalkJson((await cli("walk", file, "--format", "json")).out);
    expect(doc.proc_limits).toEqual({ limits: [{ name: "Max open files", soft: "Error", hard: { Limited: 4096 }, unit: "files" }] });
    const empty = readMinidump(bytesSource(writeMinidump(linuxSpec(Uint8Array.from([0xff, 0xfe, 0x0a]))).bytes));
    expect(empty.procLimits).toBeUndefined();
    expect(empty.notes.join("\n")).toMatch(/MozLinuxLimits stream holds no limit: passed over/);
  });
});
