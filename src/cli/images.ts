/**
 * `--images DIR`: module images from disk for snapshots that lack them. A module is matched by
 * its file name in each directory, then by SizeOfImage and, when the snapshot knows it (a
 * minidump's module list), the TimeDateStamp of its code id, the identity a symbol server uses
 * for images. Matching images are mapped under the snapshot's memory at their modules' bases,
 * so the unwinders find their exception directories and code there (x64-unwind.md §1.1).
 */
import { readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { InputError } from "../errors.js";
import { parsePe } from "../formats/pe.js";
import { OverlayMemory } from "../memory/overlay-memory.js";
import type { MemoryRegion } from "../memory/region-memory.js";
import type { Snapshot } from "../model/snapshot.js";

/** What was found for one module. */
export interface ImageNote {
  module: string;
  file?: string;
  detail: string;
}

/** Maps matching images under `snapshot.memory`; returns a note per module looked at. */
export function attachImages(snapshot: Snapshot, dirs: readonly string[]): ImageNote[] {
  const regions: MemoryRegion[] = [];
  const notes: ImageNote[] = [];
  for (const module of snapshot.modules) {
    const name = basename(module.name.replace(/\\/g, "/"));
    const reasons: string[] = [];
    let used: string | undefined;
    for (const dir of dirs) {
      const file = join(dir, name);
      try {
        if (!statSync(file).isFile()) continue;
      } catch {
        continue;
      }
      let pe;
      try {
        pe = parsePe(readFileSync(file));
      } catch (e) {
        if (e instanceof InputError) throw e.inFile(file);
        throw e;
      }
      if (BigInt(pe.sizeOfImage) !== module.size) {
        reasons.push(`${file} has SizeOfImage 0x${pe.sizeOfImage.toString(16)}, the module 0x${module.size.toString(16)}`);
        continue;
      }
      const stamp = pe.timeDateStamp.toString(16).toUpperCase().padStart(8, "0");
      if (module.codeId !== undefined && !module.codeId.toUpperCase().startsWith(stamp)) {
        reasons.push(`${file} has TimeDateStamp ${stamp}, the module's code id is ${module.codeId}`);
        continue;
      }
      regions.push({ base: module.base, bytes: pe.mapped(), origin: file });
      used = file;
      break;
    }
    const note: ImageNote = { module: module.name, detail: used !== undefined ? `image from ${used}` : reasons.length > 0 ? reasons.join("; ") : `no ${name} under ${dirs.join(", ")}` };
    if (used !== undefined) note.file = used;
    notes.push(note);
  }
  if (regions.length > 0) snapshot.memory = new OverlayMemory(snapshot.memory, regions);
  return notes;
}
