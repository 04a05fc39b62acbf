/**
 * What a dump says of the process's address space, region by region, with each region's access
 * rights: a Windows dump's MemoryInfoList stream (each region's PAGE_* protection) or a Linux
 * dump's /proc/self/maps (each mapping's `rwx` permissions), as rust-minidump unifies them. The
 * crash analysis asks of an address whether it was mapped, and readable, writable or executable.
 */
import type { Minidump, MinidumpMemoryInfo } from "../formats/minidump.js";
import { countStartingAtOrBelow } from "../formats/sorted-ranges.js";

/** One region: [start, end) with its rights. */
export interface MemoryRegion {
  start: bigint;
  end: bigint;
  read: boolean;
  write: boolean;
  exec: boolean;
}

/** PAGE_* protections that allow reading, writing and executing (winnt.h). */
const PAGE_READABLE = 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80;
const PAGE_WRITABLE = 0x04 | 0x08 | 0x40 | 0x80;
const PAGE_EXECUTABLE = 0x10 | 0x20 | 0x40 | 0x80;

/** A MemoryInfoList's regions with their rights. */
export function regionsFromMemoryInfo(info: readonly MinidumpMemoryInfo[]): MemoryRegion[] {
  return sortRegions(
    info
      .filter((r) => r.size > 0n)
      .map((r) => ({ start: r.base, end: r.base + r.size, read: (r.protect & PAGE_READABLE) !== 0, write: (r.protect & PAGE_WRITABLE) !== 0, exec: (r.protect & PAGE_EXECUTABLE) !== 0 })),
  );
}

/** /proc/self/maps' mappings (`start-end perms …` lines) with their rights. */
export function regionsFromMaps(maps: string): MemoryRegion[] {
  const out: MemoryRegion[] = [];
  for (const line of maps.split("\n")) {
    const m = /^([0-9a-fA-F]+)-([0-9a-fA-F]+)\s+([r-])([w-])([x-])/.exec(line);
    if (m === null) continue;
    const start = BigInt(`0x${m[1]}`);
    const end = BigInt(`0x${m[2]}`);
    if (end > start) out.push({ start, end, read: m[3] === "r", write: m[4] === "w", exec: m[5] === "x" });
  }
  return sortRegions(out);
}

function sortRegions(regions: MemoryRegion[]): MemoryRegion[] {
  return regions.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

/** The dump's regions (MemoryInfoList first, else /proc/self/maps); undefined when it records neither. */
export function dumpRegions(dump: Minidump | undefined): MemoryRegion[] | undefined {
  if (dump?.memoryInfo !== undefined) return regionsFromMemoryInfo(dump.memoryInfo);
  if (dump?.linux?.maps !== undefined) return regionsFromMaps(dump.linux.maps);
  return undefined;
}

/** The index of the region holding `address` in a sorted list, or −1. */
export function regionIndexAt(regions: readonly MemoryRegion[], address: bigint): number {
  const found = countStartingAtOrBelow(regions, address, (r) => r.start) - 1;
  return found >= 0 && address < regions[found]!.end ? found : -1;
}

/** The region holding `address`, if any. */
export function regionAt(regions: readonly MemoryRegion[], address: bigint): MemoryRegion | undefined {
  const i = regionIndexAt(regions, address);
  return i < 0 ? undefined : regions[i];
}

/** Whether a region allows any access at all. */
export function accessible(region: MemoryRegion): boolean {
  return region.read || region.write || region.exec;
}

/** The largest region rust-minidump takes for a guard page: 32 KiB. */
const GUARD_MAX_SIZE = 2n << 14n;

/**
 * Whether `address` lies in a likely guard page, as rust-minidump judges it: a mapped region
 * with no rights, smaller than 32 KiB, right beside a region that has some.
 */
export function isLikelyGuardPage(regions: readonly MemoryRegion[], address: bigint): boolean {
  const i = regionIndexAt(regions, address);
  if (i < 0) return false;
  const r = regions[i]!;
  if (accessible(r) || r.end - r.start >= GUARD_MAX_SIZE) return false;
  const before = regions[i - 1];
  const after = regions[i + 1];
  return (before !== undefined && before.end === r.start && accessible(before)) || (after !== undefined && after.start === r.end && accessible(after));
}
