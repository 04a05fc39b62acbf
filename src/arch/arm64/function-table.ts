/**
 * What SymFunctionTableAccess64 returns on ARM64: a pointer to the IMAGE_ARM64_RUNTIME_FUNCTION_ENTRY
 * that covers an address (arm64.md §3.1). Here it is the entry's address in the target, in the
 * image's exception directory as the snapshot maps it, so a caller can read the 8 bytes itself.
 */
import { ARM64_RUNTIME_FUNCTION_BYTES, readMappedImage } from "../../formats/pe-mapped.js";
import { isProblem } from "../../formats/unwind-data/problem.js";
import { moduleAt, type Snapshot } from "../../model/snapshot.js";
import type { UnwindCache } from "../../unwind/cache.js";
import { arm64Tables, lookupEntry } from "./tables.js";

/** The address of the `.pdata` entry covering `address`, or 0 (NULL) when there is none. */
export function arm64FunctionTableAccess(target: Snapshot, address: bigint, cache?: UnwindCache): bigint {
  const module = moduleAt(target.modules, address);
  if (module === undefined) return 0n;
  const tables = arm64Tables(module, target.memory, cache);
  if (tables === undefined || tables.problem !== undefined) return 0n;
  const entry = lookupEntry(tables, Number(address - module.base));
  const dir = readMappedImage(target.memory, module.base)?.exceptionDirectory;
  if (entry === undefined || isProblem(entry) || dir === undefined) return 0n;
  return module.base + BigInt(dir.rva + entry.index * ARM64_RUNTIME_FUNCTION_BYTES);
}
