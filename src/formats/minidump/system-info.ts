/**
 * The SystemInfo stream (type 7, minidump.md §2.6): the processor and operating system. It is
 * read first, since the layout of every CONTEXT record depends on its ProcessorArchitecture
 * (minidump.md §3.3).
 */
import { InputError } from "../../errors.js";
import type { Machine } from "../../model/machine.js";
import { MINIDUMP_STREAM, PROCESSOR_ARCHITECTURE } from "./constants.js";
import { MACHINE_OF_ARCH } from "./context.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpStreamEntry } from "./types.js";

/** SystemInfo's CPU union. */
export type MinidumpCpuInfo =
  | { kind: "x86"; vendorId: string; versionInformation: number; featureInformation: number; amdExtendedCpuFeatures: number }
  | { kind: "other"; processorFeatures: [bigint, bigint] };

/** The SystemInfo stream (type 7). */
export interface MinidumpSystemInfo {
  processorArchitecture: number;
  processorLevel: number;
  processorRevision: number;
  numberOfProcessors: number;
  productType: number;
  majorVersion: number;
  minorVersion: number;
  buildNumber: number;
  platformId: number;
  csdVersionRva: number;
  /** The service-pack string ("Service Pack 2"), when CSDVersionRva is not 0. */
  csdVersion?: string;
  suiteMask: number;
  cpu: MinidumpCpuInfo;
  /** The machine ProcessorArchitecture names, when the walker models it. */
  machine?: Machine;
}

/** sizeof(MINIDUMP_SYSTEM_INFO). */
export const SYSTEM_INFO_SIZE = 56;

function readSystemInfo(input: MinidumpInput, s: MinidumpStreamEntry): MinidumpSystemInfo {
  if (s.location.dataSize < SYSTEM_INFO_SIZE) {
    throw new InputError("truncated", `SystemInfo stream is ${s.location.dataSize} bytes, not ${SYSTEM_INFO_SIZE}`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, SYSTEM_INFO_SIZE, "SystemInfo");
  const processorArchitecture = c.u16();
  const processorLevel = c.u16();
  const processorRevision = c.u16();
  const numberOfProcessors = c.u8();
  const productType = c.u8();
  const majorVersion = c.u32();
  const minorVersion = c.u32();
  const buildNumber = c.u32();
  const platformId = c.u32();
  const csdAt = c.offset;
  const csdVersionRva = c.u32();
  const suiteMask = c.u16();
  c.skip(2);
  let cpu: MinidumpCpuInfo;
  if (processorArchitecture === PROCESSOR_ARCHITECTURE.INTEL || processorArchitecture === PROCESSOR_ARCHITECTURE.IA32_ON_WIN64) {
    const vendor = c.take(12);
    // Breakpad prints the 12 bytes as a C string: up to the first NUL.
    const vendorId = Array.from(vendor, (b) => String.fromCharCode(b)).join("").split("\0", 1)[0]!;
    cpu = { kind: "x86", vendorId, versionInformation: c.u32(), featureInformation: c.u32(), amdExtendedCpuFeatures: c.u32() };
  } else {
    cpu = { kind: "other", processorFeatures: [c.u64(), c.u64()] };
  }
  const info: MinidumpSystemInfo = {
    processorArchitecture,
    processorLevel,
    processorRevision,
    numberOfProcessors,
    productType,
    majorVersion,
    minorVersion,
    buildNumber,
    platformId,
    csdVersionRva,
    suiteMask,
    cpu,
  };
  if (csdVersionRva !== 0) {
    // Breakpad leaves the service-pack string out when it cannot be read.
    const csd = input.optionalString(csdVersionRva, csdAt, "SystemInfo CSDVersion", "SystemInfo CSDVersion");
    if (csd !== undefined) info.csdVersion = csd;
  }
  const machine = MACHINE_OF_ARCH[processorArchitecture];
  if (machine !== undefined) info.machine = machine;
  return info;
}

/** The SystemInfo stream's reader. */
export const systemInfoStream: MinidumpStream<MinidumpSystemInfo> = {
  type: MINIDUMP_STREAM.SystemInfo,
  read: (input, entry, held) => readSystemInfo(input, { ...entry, location: held }),
  store(dump, info) {
    dump.systemInfo = info;
  },
};
