/**
 * Machine -> walker table (Wine dbghelp's "one table per CPU, looked up by machine"): each
 * machine's definition, from its folder's front door (src/arch/<machine>/index.ts): the walkers
 * it offers (each a list of strategies in trust order), how a frame's role registers and
 * parameters are read, its StackWalk64 backend. A machine without an entry here is a compile
 * error.
 */
import type { ArchStrategy } from "../arch/rule.js";
import type { ArchDefinition } from "../arch/definition.js";
import { X86_ARCH } from "../arch/x86/index.js";
import { X64_ARCH } from "../arch/x64/index.js";
import { IA64_ARCH } from "../arch/ia64/index.js";
import { ARM64_ARCH } from "../arch/arm64/index.js";
import { ARM_ARCH } from "../arch/arm/index.js";
import { InputError } from "../errors.js";
import type { Machine } from "../model/machine.js";
import { isWindows, type OperatingSystem } from "../model/snapshot.js";

export { WALKER_NAMES, type WalkerName } from "../arch/definition.js";
import type { WalkerName } from "../arch/definition.js";

/** What a machine offers the walk loop: its definition (arch/definition.ts). */
export type ArchWalker = ArchDefinition;

const TABLE: Record<Machine, ArchDefinition> = { x86: X86_ARCH, x64: X64_ARCH, ia64: IA64_ARCH, arm64: ARM64_ARCH, arm: ARM_ARCH };

/** The walker table for a machine. */
export function archWalker(machine: Machine): ArchWalker {
  return TABLE[machine];
}

/**
 * The strategies `walker` uses on `machine` for code of `os` (absent: Windows); an
 * {@link InputError} when the walker does not apply there.
 */
export function strategiesFor(machine: Machine, walker: WalkerName, os?: OperatingSystem): readonly ArchStrategy[] {
  const arch = TABLE[machine];
  const list = (os === undefined ? undefined : arch.byOs?.[os]?.[walker]) ?? (isWindows({ os }) ? undefined : arch.nonWindows?.[walker]) ?? arch.walkers[walker];
  if (list === undefined) {
    const available = Object.keys(TABLE[machine].walkers).join(", ");
    throw new InputError("unsupported", `walker '${walker}' is not available for ${machine} (available: ${available})`);
  }
  return list;
}
