/**
 * What SymFunctionTableAccess64 returns on ARM: a pointer to the IMAGE_ARM_RUNTIME_FUNCTION_ENTRY
 * that covers an address. Here it is the entry's address in the target, in the image's exception
 * directory as the snapshot maps it, so a caller can read the 8 bytes itself.
 */
import { readMappedImage } from "../../formats/pe-mapped.js";
import { ARM_RUNTIME_FUNCTION_BYTES } from "../../formats/unwind-data/arm.js";
import { isProblem } from "../../formats/unwind-data/problem.js";
import { moduleAt, type Snapshot } from "../../model/snapshot.js";
import type { UnwindCache } from "../../unwind/cache.js";
import { armLookupEntry, armTables } from "./tables.js";

/** The address of the `.pdata` entry covering `address`, or 0 (NULL) when there is none. */
export function armFunctionTableAccess(target: Snapshot, address: bigint, cache?: UnwindCache): bigint {
  const module = moduleAt(target.modules, address);
  if (module === undefined) return 0n;
  const tables = armTables(module, target.memory, cache);
  if (tables === undefined || tables.problem !== undefined) return 0n;
  const entry = armLookupEntry(tables, Number(address - module.base) & ~1);
  const dir = readMappedImage(target.memory, module.base)?.exceptionDirectory;
  if (entry === undefined || isProblem(entry) || dir === undefined) return 0n;
  return module.base + BigInt(dir.rva + entry.index * ARM_RUNTIME_FUNCTION_BYTES);
}
