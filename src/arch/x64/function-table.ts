/**
 * What SymFunctionTableAccess64 returns on x64: a pointer to the RUNTIME_FUNCTION that covers an
 * address (stackwalk64.md §3, §7.3). Here it is the entry's address in the target, in the image's
 * exception directory as the snapshot maps it, so a caller can read the 12 bytes itself.
 */
import { readMappedImage } from "../../formats/pe-mapped.js";
import { moduleAt, type Snapshot } from "../../model/snapshot.js";
import { findEntryIndex, x64Tables } from "./tables.js";

/** The address of the RUNTIME_FUNCTION covering `address`, or 0 (NULL) when there is none. */
export function x64FunctionTableAccess(target: Snapshot, address: bigint): bigint {
  const module = moduleAt(target.modules, address);
  if (module === undefined) return 0n;
  const tables = x64Tables(module, target.memory);
  if (tables === undefined || tables.problem !== undefined) return 0n;
  const index = findEntryIndex(tables, Number(address - module.base));
  const dir = readMappedImage(target.memory, module.base)?.exceptionDirectory;
  if (index < 0 || dir === undefined) return 0n;
  return module.base + BigInt(dir.rva + index * 12);
}
