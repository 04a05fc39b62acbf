/**
 * Mozilla's minidump streams ("Mz", 0x4d7a....) that rust-minidump's JSON gives:
 * - MozMacosCrashInfoStream (0x4d7a0001): the `__DATA,__crash_info` records of a macOS process's
 *   modules, the JSON's `mac_crash_info`. A header (stream type, record count, the size of a
 *   record's fixed part, and 20 location descriptors), then per record its stream type and
 *   version (u64 each), from version 4 the thread and dialog mode, from version 5 the abort
 *   cause, and at the fixed part's size five NUL-terminated UTF-8 strings (module path, message,
 *   signature string, backtrace, second message). As rust-minidump reads it: at most 20 records,
 *   a record of version 0 is passed over, and records of two versions, a fixed part larger than
 *   the header says, a string without its NUL or not UTF-8, or a record outside the file lose
 *   the stream.
 * - MozMacosBootargsStream (0x4d7a0002), the macOS kernel's boot arguments (stream_type u32, then
 *   an RVA64 of a MINIDUMP_STRING), the JSON's `mac_boot_args`.
 * - MozLinuxLimits (0x4d7a0003): the text of /proc/self/limits, the JSON's `proc_limits`: each
 *   line a limit's name, its soft and hard values (a number or `unlimited`) and its unit, which
 *   some limits lack; the heading line is passed over, and so, with a note, is a line that does
 *   not split that way.
 * - MozSoftErrors (0x4d7a0004), the errors the dump writer met and went on from, as JSON text,
 *   the JSON's `soft_errors`.
 * A string or text that cannot be read is passed over with a note.
 */
import { MINIDUMP_LIMITS, MINIDUMP_STREAM } from "./constants.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation } from "./types.js";
import type { MinidumpInput } from "./input.js";
import { InputError } from "../../errors.js";

/** MINIDUMP_MAC_BOOTARGS: the stream type it repeats and the RVA64 of the boot arguments. */
const BOOTARGS_SIZE = 12;

/** The MozMacosBootargsStream's reader: the boot arguments, or undefined when the string is not in the file. */
export const macBootArgsStream: MinidumpStream<string | undefined> = {
  type: MINIDUMP_STREAM.MozMacosBootargs,
  read(input, s, held) {
    if (held.dataSize < BOOTARGS_SIZE) throw new InputError("truncated", `MozMacosBootargs stream holds ${held.dataSize} bytes, fewer than its ${BOOTARGS_SIZE}`, { offset: s.offset + 4 });
    const c = input.cursor(held.rva, BOOTARGS_SIZE, "MozMacosBootargs stream");
    c.u32();
    const rva = c.u64();
    if (rva >= 1n << 32n) {
      input.note(held.rva + 4, `MozMacosBootargs RVA ${rva} lies outside the file: the boot arguments are passed over`);
      return undefined;
    }
    return input.optionalString(Number(rva), held.rva + 4, "MozMacosBootargs bootargs", "the boot arguments");
  },
  store(dump, text) {
    if (text !== undefined) dump.macBootArgs = text;
  },
};

/** The MozSoftErrors stream's reader: its list of errors, or undefined when the text is not a JSON list. */
export const softErrorsStream: MinidumpStream<unknown[] | undefined> = {
  type: MINIDUMP_STREAM.MozSoftErrors,
  read(input, _s, held) {
    const text = new TextDecoder("utf-8").decode(input.cursor(held.rva, held.dataSize, "MozSoftErrors stream").bytes);
    let value: unknown;
    try {
      value = JSON.parse(text.replace(/\0+$/, "")) as unknown;
    } catch (e) {
      input.note(held.rva, `MozSoftErrors stream is not JSON (${e instanceof Error ? e.message : String(e)}): passed over`);
      return undefined;
    }
    if (Array.isArray(value)) return value;
    input.note(held.rva, "MozSoftErrors stream is JSON but not a list of errors: passed over");
    return undefined;
  },
  store(dump, value) {
    if (value !== undefined) dump.softErrors = value;
  },
};

/** One `__DATA,__crash_info` record of MozMacosCrashInfoStream; the fields its version does not have are undefined. */
export interface MinidumpMacCrashInfoRecord {
  version: bigint;
  /** From version 4. */
  thread?: bigint;
  dialogMode?: bigint;
  /** From version 5. */
  abortCause?: bigint;
  /** From version 4: the strings, in the order the record stores them. */
  modulePath?: string;
  message?: string;
  signatureString?: string;
  backtrace?: string;
  message2?: string;
}

/** MINIDUMP_MAC_CRASH_INFO: stream type, record count, record_start_size, then 20 location descriptors. */
const CRASH_INFO_RECORDS = 20;
const CRASH_INFO_HEADER_SIZE = 12 + CRASH_INFO_RECORDS * 8;
/** The strings a version-4 (and later) record carries after its fixed part. */
const CRASH_INFO_STRINGS = ["modulePath", "message", "signatureString", "backtrace", "message2"] as const;

/** The size of a record's fixed part at a version: stream type and version, then thread and dialog mode (4), abort cause (5). */
function crashInfoFixedSize(version: bigint): number {
  return version >= 5n ? 40 : version >= 4n ? 32 : 16;
}

/** One record at a location; `at` is the offset of its descriptor, `startSize` the header's record_start_size. */
function crashInfoRecord(input: MinidumpInput, loc: MinidumpLocation, at: number, startSize: number, what: string): MinidumpMacCrashInfoRecord {
  input.location(loc, at, what);
  const c = input.cursor(loc.rva, loc.dataSize, what, at);
  c.u64(`${what} stream type`);
  const version = c.u64(`${what} version`);
  if (version === 0n) return { version };
  const fixed = crashInfoFixedSize(version);
  if (fixed > startSize) throw new InputError("bad-value", `${what}: the fixed part of a version ${version} record is ${fixed} bytes, more than the ${startSize} the header gives it`, { offset: loc.rva + 8 });
  const record: MinidumpMacCrashInfoRecord = { version };
  if (version < 4n) return record;
  record.thread = c.u64(`${what} thread`);
  record.dialogMode = c.u64(`${what} dialog mode`);
  if (version >= 5n) record.abortCause = c.u64(`${what} abort cause`);
  c.seek(startSize, `${what} strings`);
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  for (const key of CRASH_INFO_STRINGS) {
    const start = c.pos;
    const end = c.bytes.indexOf(0, start);
    if (end < 0) throw new InputError("truncated", `${what}: its ${key} string has no NUL before the record ends`, { offset: loc.rva + start });
    try {
      record[key] = utf8.decode(c.bytes.subarray(start, end));
    } catch {
      throw new InputError("bad-value", `${what}: its ${key} string is not UTF-8`, { offset: loc.rva + start });
    }
    c.seek(end + 1);
  }
  return record;
}

/** The MozMacosCrashInfoStream's reader: its records, in the stream's order. */
export const macCrashInfoStream: MinidumpStream<MinidumpMacCrashInfoRecord[]> = {
  type: MINIDUMP_STREAM.MozMacosCrashInfo,
  read(input, s, held) {
    if (held.dataSize < CRASH_INFO_HEADER_SIZE) throw new InputError("truncated", `MozMacosCrashInfo stream holds ${held.dataSize} bytes, fewer than its ${CRASH_INFO_HEADER_SIZE}-byte header`, { offset: s.offset + 4 });
    const c = input.cursor(held.rva, CRASH_INFO_HEADER_SIZE, "MozMacosCrashInfo stream");
    c.u32();
    const count = c.u32();
    const startSize = c.u32();
    if (count > CRASH_INFO_RECORDS) input.note(held.rva + 4, `MozMacosCrashInfo record count ${count} is more than the ${CRASH_INFO_RECORDS} its header has room for: the first ${CRASH_INFO_RECORDS} are read`);
    const records: MinidumpMacCrashInfoRecord[] = [];
    let version: bigint | undefined;
    for (let i = 0; i < Math.min(count, CRASH_INFO_RECORDS); i++) {
      const at = held.rva + 12 + i * 8;
      const loc = { dataSize: c.u32(), rva: c.u32() };
      const record = crashInfoRecord(input, loc, at, startSize, `MozMacosCrashInfo record ${i}`);
      if (version !== undefined && record.version !== version) {
        throw new InputError("bad-value", `MozMacosCrashInfo records have two versions (${version} and ${record.version}), which cannot share one string offset`, { offset: loc.rva + 8 });
      }
      version = record.version;
      if (record.version === 0n) input.note(loc.rva + 8, `MozMacosCrashInfo record ${i} has version 0: passed over`);
      else records.push(record);
    }
    return records;
  },
  store(dump, records) {
    dump.macCrashInfo = records;
  },
};

/** One line of /proc/self/limits: the limit's name, its soft and hard values as written, and its unit when the line has one. */
export interface MinidumpProcLimit {
  name: string;
  soft: string;
  hard: string;
  unit?: string;
}

/** A limit's value: a number or `unlimited`. */
const LIMIT_VALUE = /^(?:\d+|unlimited)$/;

/** A line of /proc/self/limits split into its name, values and unit; undefined when it does not split that way. */
export function procLimitLine(line: string): MinidumpProcLimit | undefined {
  const words = line.trim().split(/\s+/);
  const unit = words.length > 0 && !LIMIT_VALUE.test(words[words.length - 1]!) ? words.pop() : undefined;
  if (words.length < 3) return undefined;
  const hard = words.pop()!;
  const soft = words.pop()!;
  return unit === undefined ? { name: words.join(" "), soft, hard } : { name: words.join(" "), soft, hard, unit };
}

/** The most limits kept from one MozLinuxLimits stream (/proc/self/limits has 16). */
const MAX_PROC_LIMITS = 1024;

/** The MozLinuxLimits stream's reader: the limits of /proc/self/limits, in the file's order. */
export const linuxLimitsStream: MinidumpStream<MinidumpProcLimit[] | undefined> = {
  type: MINIDUMP_STREAM.MozLinuxLimits,
  read(input, _s, held) {
    if (held.dataSize === 0) return undefined;
    const size = Math.min(held.dataSize, MINIDUMP_LIMITS.maxTextStreamBytes);
    if (size < held.dataSize) input.note(held.rva, `MozLinuxLimits stream of ${held.dataSize} bytes: only its first ${size} are read`);
    const bytes = input.cursor(held.rva, size, "MozLinuxLimits stream").bytes;
    const text = new TextDecoder("utf-8");
    const limits: MinidumpProcLimit[] = [];
    for (let start = 0; start < bytes.length; ) {
      const nl = bytes.indexOf(0x0a, start);
      const end = nl < 0 ? bytes.length : nl;
      const line = text.decode(bytes.subarray(start, end)).replace(/\0+$/, "");
      const at = held.rva + start;
      start = end + 1;
      if (line.trim() === "" || /^Limit\s+Soft Limit/.test(line)) continue;
      const limit = procLimitLine(line);
      if (limit === undefined) input.note(at, `MozLinuxLimits line ${JSON.stringify(line.slice(0, 80))} is not a limit's name, values and unit: passed over`);
      else if (limits.length === MAX_PROC_LIMITS) {
        input.note(at, `MozLinuxLimits stream holds more than ${MAX_PROC_LIMITS} limits: the rest are passed over`);
        break;
      } else limits.push(limit);
    }
    if (limits.length === 0) input.note(held.rva, "MozLinuxLimits stream holds no limit: passed over");
    return limits.length === 0 ? undefined : limits;
  },
  store(dump, limits) {
    if (limits !== undefined) dump.procLimits = limits;
  },
};
