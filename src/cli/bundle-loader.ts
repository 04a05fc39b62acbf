/**
 * How the bundled bin loads its command files (dist/bin/commands.cjs, emulator-commands.cjs):
 * as CommonJS, compiled with the V8 code cache that `npm run build` writes beside each file
 * (`<file>.cache`, made by esbuild.config.mjs after a walk has run the code, so that it holds the
 * bytecode of the functions a walk calls, not only of the file's top level). Compiling the half
 * megabyte of a command file and then, function by function, the code a walk runs costs a
 * one-dump walk about a fifth of its time over Node's own start; the cache takes most of that
 * away. A cache that V8 does not accept (another Node, other V8 flags, a changed file) is left
 * unused and the file is compiled as without one. The package does not ship the caches: they
 * belong to the Node that built them.
 */
import { isAscii } from "node:buffer";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";

/** A command file, compiled and run: its exports, and the script (to write its cache from). */
export interface LoadedBundle {
  exports: Record<string, unknown>;
  script: Script;
  /** Whether a cache was there and V8 took it. */
  cached: boolean;
}

/** Compiles and runs the CommonJS file `file` (a path) as Node's loader would, with its code cache when there is one. */
export function loadBundle(file: string): LoadedBundle {
  // esbuild writes ASCII, which reads as Latin-1 a good deal sooner than as UTF-8: the same text.
  const bytes = readFileSync(file);
  const source = bytes.toString(isAscii(bytes) ? "latin1" : "utf8");
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(`${file}.cache`);
  } catch {
    // no cache: compiled from the source alone
  }
  // The wrapper Node's own loader puts around a CommonJS file; the cache is made with the same one.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, cachedData === undefined ? { filename: file } : { filename: file, cachedData });
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (e: object, r: NodeJS.Require, m: object, f: string, d: string) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
  return { exports: module.exports, script, cached: cachedData !== undefined && !script.cachedDataRejected };
}

/**
 * The exports of the command file `name` beside the bin's file `binUrl` (its `import.meta.url`).
 * Each command file is one module of the bundle that calls this, so it is loaded once.
 */
export function commandFile(binUrl: string, name: string): Record<string, unknown> {
  return loadBundle(fileURLToPath(new URL(name, binUrl))).exports;
}
