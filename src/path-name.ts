/**
 * The file-name part of a path, whichever system wrote it: dumps, symbol files and the command
 * line give paths with `/` or `\` (Breakpad's PathnameStripper::File reads them the same way).
 */

/** The part of `path` after its last `/` or `\` (all of it when it has neither). */
export function fileNameOf(path: string): string {
  return path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
}
