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
  /** `[vendor ]family F model M stepping S` on x86 and amd64, `ARMv7 …` on ARM, else empty. */
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

/** ARM CPU ids by implementer (CPUID bits 24-31) and by part (CPUID & 0xff00fff0), and the ELF hwcap bits, as Breakpad names them. */
const ARM_VENDORS: Readonly<Record<number, string>> = { 0x41: "ARM", 0x51: "Qualcomm", 0x56: "Marvell", 0x69: "Intel/Marvell" };
const ARM_PARTS: Readonly<Record<number, string>> = {
  0x4100c050: "Cortex-A5", 0x4100c080: "Cortex-A8", 0x4100c090: "Cortex-A9", 0x4100c0f0: "Cortex-A15", 0x4100c140: "Cortex-R4", 0x4100c150: "Cortex-R5",
  0x4100b360: "ARM1136", 0x4100b560: "ARM1156", 0x4100b760: "ARM1176", 0x4100b020: "ARM11-MPCore", 0x41009260: "ARM926", 0x41009460: "ARM946",
  0x41009660: "ARM966", 0x510006f0: "Krait", 0x510000f0: "Scorpion",
};
const ARM_HWCAPS = ["swp", "half", "thumb", "26bit", "fastmult", "fpa", "vfpv2", "edsp", "java", "iwmmxt", "crunch", "thumbee", "neon", "vfpv3", "vfpv3d16", "tls", "vfpv4", "idiva", "idivt"];

/** Breakpad's ARM CPU text: `ARMv<level>`, the vendor and part of a CPUID, the ELF hwcap features (the CPU union's two u32s). */
function armCpuInfo(level: number, features: bigint): string {
  const cpuid = Number(features & 0xffff_ffffn);
  const hwcaps = Number((features >> 32n) & 0xffff_ffffn);
  let out = `ARMv${level}`;
  if (cpuid !== 0) {
    const vendor = (cpuid >>> 24) & 0xff;
    const part = (cpuid & 0xff00fff0) >>> 0;
    out += ` ${ARM_VENDORS[vendor] ?? `vendor(0x${vendor.toString(16)})`} ${ARM_PARTS[part] ?? `part(0x${part.toString(16)})`}`;
  }
  if (hwcaps !== 0) out += ` features: ${ARM_HWCAPS.filter((_, i) => (hwcaps & (1 << i)) !== 0).join(",")}`;
  return out;
}

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
  if (arch === 5) cpuInfo = armCpuInfo(sys.processorLevel, sys.cpu.kind === "other" ? sys.cpu.processorFeatures[0] : 0n);
  return {
    os: OS_NAMES[sys.platformId] ?? hex8(sys.platformId),
    osVersion: `${sys.majorVersion >>> 0}.${sys.minorVersion >>> 0}.${sys.buildNumber >>> 0}${sys.csdVersion !== undefined ? ` ${sys.csdVersion}` : ""}`,
    cpu: CPU_NAMES[arch] ?? `0x${arch.toString(16).padStart(4, "0")}`,
    cpuInfo,
    cpuCount: sys.numberOfProcessors,
  };
}
