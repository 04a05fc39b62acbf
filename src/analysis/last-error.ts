/**
 * A Windows thread's last error (what GetLastError would have returned), as rust-minidump gives
 * it in `threads[].last_error_value`: the u32 LastErrorValue of the thread's TEB (at TEB + 0x34
 * on x86, + 0x68 on x64), read from the dump's memory when the dump captured the TEB, and
 * written as the error's name (`ERROR_SUCCESS`, `ERROR_FILE_NOT_FOUND`, an NTSTATUS name) or, for
 * a code not in the table, as hex.
 */
import type { Minidump } from "../formats/minidump.js";
import { machineInfo, type Machine } from "../model/machine.js";
import { readU32, type MemoryReader } from "../memory/reader.js";
import { NTSTATUS_NAMES } from "./breakpad-crash.js";


/** SystemInfo.PlatformId values of Windows. */
const WINDOWS_PLATFORMS = new Set([1, 2]);

/** winerror.h names of the Win32 errors seen most (the rest are written in hex). */
const WIN32_ERRORS: Readonly<Record<number, string>> = {
  0: "ERROR_SUCCESS", 1: "ERROR_INVALID_FUNCTION", 2: "ERROR_FILE_NOT_FOUND", 3: "ERROR_PATH_NOT_FOUND",
  4: "ERROR_TOO_MANY_OPEN_FILES", 5: "ERROR_ACCESS_DENIED", 6: "ERROR_INVALID_HANDLE", 7: "ERROR_ARENA_TRASHED",
  8: "ERROR_NOT_ENOUGH_MEMORY", 9: "ERROR_INVALID_BLOCK", 10: "ERROR_BAD_ENVIRONMENT", 11: "ERROR_BAD_FORMAT",
  12: "ERROR_INVALID_ACCESS", 13: "ERROR_INVALID_DATA", 14: "ERROR_OUTOFMEMORY", 15: "ERROR_INVALID_DRIVE",
  16: "ERROR_CURRENT_DIRECTORY", 17: "ERROR_NOT_SAME_DEVICE", 18: "ERROR_NO_MORE_FILES", 19: "ERROR_WRITE_PROTECT",
  20: "ERROR_BAD_UNIT", 21: "ERROR_NOT_READY", 31: "ERROR_GEN_FAILURE", 32: "ERROR_SHARING_VIOLATION",
  33: "ERROR_LOCK_VIOLATION", 38: "ERROR_HANDLE_EOF", 50: "ERROR_NOT_SUPPORTED", 80: "ERROR_FILE_EXISTS",
  87: "ERROR_INVALID_PARAMETER", 109: "ERROR_BROKEN_PIPE", 111: "ERROR_BUFFER_OVERFLOW", 122: "ERROR_INSUFFICIENT_BUFFER",
  123: "ERROR_INVALID_NAME", 126: "ERROR_MOD_NOT_FOUND", 127: "ERROR_PROC_NOT_FOUND", 183: "ERROR_ALREADY_EXISTS",
  187: "ERROR_SEM_NOT_FOUND", 203: "ERROR_ENVVAR_NOT_FOUND", 231: "ERROR_PIPE_BUSY", 232: "ERROR_NO_DATA",
  233: "ERROR_PIPE_NOT_CONNECTED", 234: "ERROR_MORE_DATA", 258: "WAIT_TIMEOUT", 259: "ERROR_NO_MORE_ITEMS",
  288: "ERROR_NOT_OWNER", 487: "ERROR_INVALID_ADDRESS", 535: "ERROR_PIPE_CONNECTED", 995: "ERROR_OPERATION_ABORTED",
  996: "ERROR_IO_INCOMPLETE", 997: "ERROR_IO_PENDING", 998: "ERROR_NOACCESS", 1008: "ERROR_NO_TOKEN",
  1114: "ERROR_DLL_INIT_FAILED", 1168: "ERROR_NOT_FOUND", 1400: "ERROR_INVALID_WINDOW_HANDLE", 1450: "ERROR_NO_SYSTEM_RESOURCES",
  1460: "ERROR_TIMEOUT", 10035: "WSAEWOULDBLOCK",
};

/** The name of a Win32 error or NTSTATUS code, else the code as `0x%08x`. */
export function windowsErrorName(code: number): string {
  const c = code >>> 0;
  return WIN32_ERRORS[c] ?? NTSTATUS_NAMES[c] ?? `0x${c.toString(16).padStart(8, "0")}`;
}

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
