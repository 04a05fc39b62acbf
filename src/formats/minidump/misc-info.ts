/**
 * The MiscInfo stream (type 15, minidump.md §2.7): the process id and times, in the fields
 * common to every version of MINIDUMP_MISC_INFO.
 */
import { InputError } from "../../errors.js";
import { MINIDUMP_STREAM } from "./constants.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpStreamEntry } from "./types.js";

/** The MiscInfo stream (type 15): the fields common to every version. */
export interface MinidumpMiscInfo {
  sizeOfInfo: number;
  /** 1-5 from SizeOfInfo (minidump.md §2.7); undefined for a size no version has. */
  version?: number;
  flags1: number;
  processId: number;
  processCreateTime: number;
  processUserTime: number;
  processKernelTime: number;
}

/** MINIDUMP_MISC1_PROCESS_ID: Flags1 bit saying ProcessId is valid (minidump.md §2.7). */
export const MISC1_PROCESS_ID = 0x1;

/** The process id a MiscInfo stream records, or undefined when it has none (Flags1 lacks MINIDUMP_MISC1_PROCESS_ID). */
export function miscProcessId(info: MinidumpMiscInfo | undefined): number | undefined {
  return info !== undefined && (info.flags1 & MISC1_PROCESS_ID) !== 0 ? info.processId >>> 0 : undefined;
}

/** sizeof(MINIDUMP_MISC_INFO), version 1. */
export const MISC_INFO_MIN_SIZE = 24;
/** MINIDUMP_MISC_INFO versions by SizeOfInfo. */
const MISC_INFO_VERSIONS: Readonly<Record<number, number>> = { 24: 1, 44: 2, 232: 3, 832: 4, 1364: 5 };

function readMiscInfo(input: MinidumpInput, s: MinidumpStreamEntry): MinidumpMiscInfo {
  if (s.location.dataSize < MISC_INFO_MIN_SIZE) {
    throw new InputError("truncated", `MiscInfo stream is ${s.location.dataSize} bytes, less than the ${MISC_INFO_MIN_SIZE} of version 1`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, MISC_INFO_MIN_SIZE, "MiscInfo");
  const sizeOfInfo = c.u32();
  if (sizeOfInfo < MISC_INFO_MIN_SIZE || sizeOfInfo > s.location.dataSize) {
    throw new InputError("bad-value", `MiscInfo SizeOfInfo ${sizeOfInfo} is not between ${MISC_INFO_MIN_SIZE} and the stream's ${s.location.dataSize} bytes`, {
      offset: s.location.rva,
    });
  }
  const info: MinidumpMiscInfo = {
    sizeOfInfo,
    flags1: c.u32(),
    processId: c.u32(),
    processCreateTime: c.u32(),
    processUserTime: c.u32(),
    processKernelTime: c.u32(),
  };
  const version = MISC_INFO_VERSIONS[sizeOfInfo];
  if (version !== undefined) info.version = version;
  return info;
}

/** The MiscInfo stream's reader. */
export const miscInfoStream: MinidumpStream<MinidumpMiscInfo> = {
  type: MINIDUMP_STREAM.MiscInfo,
  read: (input, entry, held) => readMiscInfo(input, { ...entry, location: held }),
  store(dump, info) {
    dump.miscInfo = info;
  },
};
