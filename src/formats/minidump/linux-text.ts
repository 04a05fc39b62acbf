/**
 * Breakpad's Linux streams that are copies of text files: LinuxCpuInfo (0x47670003, /proc/cpuinfo),
 * LinuxLsbRelease (0x47670005, /etc/lsb-release) and LinuxMaps (0x47670009, /proc/self/maps),
 * kept as text (decoded as UTF-8, at most MINIDUMP_LIMITS.maxTextStreamBytes of each). What the
 * text says is read by src/analysis/linux-info.ts.
 */
import { MINIDUMP_LIMITS, MINIDUMP_STREAM, streamTypeName } from "./constants.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation, MinidumpStreamEntry } from "./types.js";

/** The Linux text streams a dump holds. */
export interface MinidumpLinuxText {
  cpuInfo?: string;
  lsbRelease?: string;
  maps?: string;
}

/** The stream's text; undefined when the file holds none of it (the container has said so). */
function readText(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): string | undefined {
  if (held.dataSize === 0) return undefined;
  const name = streamTypeName(s.streamType);
  let size = held.dataSize;
  if (size > MINIDUMP_LIMITS.maxTextStreamBytes) {
    input.note(s.offset + 4, `${name} stream of ${size} bytes: only its first ${MINIDUMP_LIMITS.maxTextStreamBytes} are read`);
    size = MINIDUMP_LIMITS.maxTextStreamBytes;
  }
  return new TextDecoder("utf-8").decode(input.cursor(held.rva, size, `${name} stream`).bytes);
}

/** A reader of one Linux text stream, stored under `key`. */
function textStream(type: number, key: keyof MinidumpLinuxText): MinidumpStream<string | undefined> {
  return {
    type,
    read: (input, entry, held) => readText(input, entry, held),
    store(dump, text) {
      if (text !== undefined) dump.linux = { ...dump.linux, [key]: text };
    },
  };
}

export const linuxCpuInfoStream = textStream(MINIDUMP_STREAM.LinuxCpuInfo, "cpuInfo");
export const linuxLsbReleaseStream = textStream(MINIDUMP_STREAM.LinuxLsbRelease, "lsbRelease");
export const linuxMapsStream = textStream(MINIDUMP_STREAM.LinuxMaps, "maps");
