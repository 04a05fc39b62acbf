/**
 * A Windows thread's last error (what GetLastError would have returned), as rust-minidump gives
 * it in `threads[].last_error_value`: the u32 LastErrorValue of the thread's TEB (at TEB + 0x34
 * on x86, + 0x68 on x64), read from the dump's memory when the dump captured the TEB, and
 * written as rust-minidump names it (windows-errors.ts: `ERROR_SUCCESS`, `ERROR_FILE_NOT_FOUND`,
 * an NTSTATUS name, or `unknown 0x%08x`).
 */
import type { Minidump } from "../formats/minidump.js";
import { machineInfo, type Machine } from "../model/machine.js";
import { readU32, type MemoryReader } from "../memory/reader.js";
import { windowsErrorName } from "./windows-errors.js";

/** SystemInfo.PlatformId values of Windows. */
const WINDOWS_PLATFORMS = new Set([1, 2]);

/** The LastErrorValue in a TEB at `teb`, or undefined when the dump did not capture it. */
export function tebLastError(machine: Machine, teb: bigint, memory: MemoryReader): number | undefined {
  const offset = machineInfo(machine).tebLastError;
  if (offset === undefined || teb === 0n) return undefined;
  const v = readU32(memory, teb + offset);
  return v === undefined ? undefined : Number(v);
}

/** A Windows dump's thread's last error in rust-minidump's words; null off Windows or when its TEB is not in the dump. */
export function lastErrorValue(dump: Minidump | undefined, machine: Machine, threadId: number, memory: MemoryReader | undefined): string | null {
  if (dump === undefined || memory === undefined || !WINDOWS_PLATFORMS.has(dump.systemInfo?.platformId ?? -1)) return null;
  const thread = dump.threads.find((t) => t.id === threadId);
  const code = thread === undefined ? undefined : tebLastError(machine, thread.teb, memory);
  return code === undefined ? null : windowsErrorName(code);
}
