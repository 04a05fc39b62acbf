/**
 * Breakpad's own streams: BreakpadInfo (0x47670001, minidump.md §2.9), which names the thread
 * that wrote the dump, and the assertion stream (0x47670002), an invalid-parameter or
 * pure-virtual-call report.
 */
import { InputError } from "../../errors.js";
import { MINIDUMP_STREAM } from "./constants.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpStreamEntry } from "./types.js";

/** Breakpad's own stream (0x47670001). */
export interface MinidumpBreakpadInfo {
  validity: number;
  /** The thread that wrote the dump (Breakpad skips it), when the validity bit says so. */
  dumpThreadId?: number;
  requestingThreadId?: number;
}

/** Breakpad's assertion stream (0x47670002): an invalid-parameter or pure-virtual-call report. */
export interface MinidumpAssertion {
  expression: string;
  function: string;
  file: string;
  line: number;
  /** 1 invalid parameter, 2 pure virtual call (MD_ASSERTION_INFO_TYPE_*). */
  type: number;
}

const BREAKPAD_INFO_SIZE = 12;
/** MDRawAssertionInfo: three 128-unit UTF-16 strings, the line and the type. */
const ASSERTION_STRING_BYTES = 256;
const ASSERTION_INFO_SIZE = 3 * ASSERTION_STRING_BYTES + 8;

function readBreakpadInfo(input: MinidumpInput, s: MinidumpStreamEntry): MinidumpBreakpadInfo {
  if (s.location.dataSize < BREAKPAD_INFO_SIZE) {
    throw new InputError("truncated", `Breakpad info stream is ${s.location.dataSize} bytes, not ${BREAKPAD_INFO_SIZE}`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, BREAKPAD_INFO_SIZE, "Breakpad info");
  const validity = c.u32();
  const dumpThreadId = c.u32();
  const requestingThreadId = c.u32();
  const info: MinidumpBreakpadInfo = { validity };
  if (validity & 1) info.dumpThreadId = dumpThreadId;
  if (validity & 2) info.requestingThreadId = requestingThreadId;
  return info;
}

/**
 * Breakpad's assertion stream (MDRawAssertionInfo, 776 bytes): expression, function and file as
 * 128 UTF-16 units each (up to the first NUL), then the line and the assertion type. Breakpad
 * reads it only when the stream is exactly that size.
 */
function readAssertion(input: MinidumpInput, s: MinidumpStreamEntry): MinidumpAssertion {
  if (s.location.dataSize !== ASSERTION_INFO_SIZE) {
    throw new InputError("bad-value", `Breakpad assertion stream is ${s.location.dataSize} bytes, not ${ASSERTION_INFO_SIZE}`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, ASSERTION_INFO_SIZE, "Breakpad assertion stream");
  const text = (): string => {
    const units = c.take(ASSERTION_STRING_BYTES);
    let n = 0;
    while (n < ASSERTION_STRING_BYTES && (units[n] !== 0 || units[n + 1] !== 0)) n += 2;
    return new TextDecoder("utf-16le").decode(units.subarray(0, n));
  };
  const expression = text();
  const fn = text();
  const sourceFile = text();
  return { expression, function: fn, file: sourceFile, line: c.u32(), type: c.u32() };
}

/** The BreakpadInfo stream's reader. */
export const breakpadInfoStream: MinidumpStream<MinidumpBreakpadInfo> = {
  type: MINIDUMP_STREAM.BreakpadInfo,
  read: (input, entry, held) => readBreakpadInfo(input, { ...entry, location: held }),
  store(dump, info) {
    dump.breakpadInfo = info;
  },
};

/** The Breakpad assertion stream's reader. */
export const assertionStream: MinidumpStream<MinidumpAssertion> = {
  type: MINIDUMP_STREAM.BreakpadAssertionInfo,
  read: (input, entry, held) => readAssertion(input, { ...entry, location: held }),
  store(dump, assertion) {
    dump.assertion = assertion;
  },
};
