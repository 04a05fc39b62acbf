/**
 * Image directories (`--images DIR`): module images from disk for snapshots that lack them. A
 * module is matched by its file name in each directory, then by SizeOfImage and, when the
 * snapshot knows it (a minidump's module list), the TimeDateStamp of its code id, the identity a
 * symbol server uses for images. Matching images are laid under the snapshot's memory at their
 * modules' bases with the core's {@link attachSymbolFiles}, so the unwinders find their exception
 * directories and code there (x64-unwind.md §1.1).
 */
import { statSync } from "node:fs";
import { basename, join } from "node:path";
import { attachSymbolFiles, imageFile, symbolFileMismatch, type SymbolFile, type SymbolTarget } from "../formats/symbol-file.js";
import { readInputFile } from "./symbol-store.js";

/** What was found for one module. */
export interface ImageNote {
  module: string;
  file?: string;
  detail: string;
}

/** Lays matching images under `target.memory`; returns a note per module looked at. */
export function attachImageDirectories(target: SymbolTarget, dirs: readonly string[]): ImageNote[] {
  const files: SymbolFile[] = [];
  const notes: ImageNote[] = [];
  for (const module of target.modules) {
    const name = basename(module.name.replace(/\\/g, "/"));
    const reasons: string[] = [];
    let used: string | undefined;
    for (const dir of dirs) {
      const path = join(dir, name);
      try {
        if (!statSync(path).isFile()) continue;
      } catch {
        continue;
      }
      const file = imageFile(readInputFile(path), { name: path });
      const why = symbolFileMismatch(module, target.memory, file);
      if (why !== undefined) {
        reasons.push(why);
        continue;
      }
      files.push(file);
      used = path;
      break;
    }
    const note: ImageNote = { module: module.name, detail: used !== undefined ? `image from ${used}` : reasons.length > 0 ? reasons.join("; ") : `no ${name} under ${dirs.join(", ")}` };
    if (used !== undefined) note.file = used;
    notes.push(note);
  }
  if (files.length > 0) attachSymbolFiles(target, files);
  return notes;
}
