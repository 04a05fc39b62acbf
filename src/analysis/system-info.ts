/**
 * What a minidump says about the system it was written on, named as Breakpad's processor names it
 * (minidump_processor.cc GetOSInfo / GetCPUInfo; minidump.md §2.6, §6.1): the operating system and
 * its version, the CPU and its family/model/stepping, the processor count. Shared by the Breakpad
 * report and the JSON document, so both say the same.
 */
import type { Minidump } from "../formats/minidump.js";

/** A dump's system, as Breakpad prints it. */
export interface DumpSystemInfo {
  /** `Windows NT`, `Linux`, `Mac OS X`, …, or the PlatformId as `0x%08x`; empty without SystemInfo. */
  os: string;
  /** `major.minor.build` and the CSD text after a space, when the dump has one. */
  osVersion: string;
  /** `x86`, `amd64`, …, or the ProcessorArchitecture as `0x%04x`; empty without SystemInfo. */
  cpu: string;
  /** `[vendor ]family F model M stepping S` on x86 and amd64, else empty. */
  cpuInfo: string;
  cpuCount: number;
}

// Breakpad's MD_OS_* platform ids and their names.
const OS_NAMES: Readonly<Record<number, string>> = {
  1: "Windows",
  2: "Windows NT",
  0x8101: "Mac OS X",
  0x8102: "iOS",
  0x8201: "Linux",
  0x8202: "Solaris",
  0x8203: "Android",
  0x8204: "PS3",
  0x8205: "NaCl",
  0x8206: "Fuchsia",
};

// ProcessorArchitecture → Breakpad's CPU name; others print as 0x%04x.
const CPU_NAMES: Readonly<Record<number, string>> = {
  0: "x86",
  9: "amd64",
  3: "ppc",
  0x8002: "ppc64",
  0x8001: "sparc",
  5: "arm",
  12: "arm64",
  0x8003: "arm64",
  1: "mips",
  0x8004: "mips64",
};

const hex8 = (n: number): string => `0x${(n >>> 0).toString(16).padStart(8, "0")}`;

/** The system a dump was written on, from its SystemInfo stream (empty texts and 0 CPUs without one). */
export function dumpSystemInfo(dump: Minidump): DumpSystemInfo {
  const sys = dump.systemInfo;
  if (sys === undefined) return { os: "", osVersion: "", cpu: "", cpuInfo: "", cpuCount: 0 };
  const arch = sys.processorArchitecture;
  let cpuInfo = "";
  if (arch === 0 || arch === 9) {
    const vendor = sys.cpu.kind === "x86" && arch === 0 ? `${sys.cpu.vendorId} ` : "";
    cpuInfo = `${vendor}family ${sys.processorLevel} model ${sys.processorRevision >> 8} stepping ${sys.processorRevision & 0xff}`;
  }
  return {
    os: OS_NAMES[sys.platformId] ?? hex8(sys.platformId),
    osVersion: `${sys.majorVersion >>> 0}.${sys.minorVersion >>> 0}.${sys.buildNumber >>> 0}${sys.csdVersion !== undefined ? ` ${sys.csdVersion}` : ""}`,
    cpu: CPU_NAMES[arch] ?? `0x${arch.toString(16).padStart(4, "0")}`,
    cpuInfo,
    cpuCount: sys.numberOfProcessors,
  };
}
