/**
 * Writes the readable assembly of every x86 corpus program to vectors/programs/x86/<name>.asm,
 * and of every x64 corpus program to vectors/programs/x64/<name>.asm: the exact text that
 * {@link buildX86Program} and {@link buildX64Program} assemble. Run it after changing a spec or a
 * generator: `npx tsx emulator/programs/write-sources.ts`; tests keep the files equal to the
 * generated text.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildX86Program } from "./x86-chain.js";
import { X86_CORPUS_SPECS, X86_ETW_SPECS } from "./x86-corpus.js";
import { buildX64Program } from "./x64-chain.js";
import { X64_CORPUS_SPECS } from "./x64-corpus.js";

/** Where the x86 sources live, relative to the repository. */
export const X86_SOURCES_DIR = fileURLToPath(new URL("../../vectors/programs/x86/", import.meta.url));

/** Writes `<dir>/<name>.asm` for every x86 corpus program and returns the paths written. */
export async function writeX86Sources(dir: string = X86_SOURCES_DIR): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const spec of [...X86_CORPUS_SPECS, ...X86_ETW_SPECS]) {
    const program = await buildX86Program(spec);
    const path = join(dir, `${program.name}.asm`);
    writeFileSync(path, program.asm);
    written.push(path);
  }
  return written;
}

/** Where the x64 sources live, relative to the repository. */
export const X64_SOURCES_DIR = fileURLToPath(new URL("../../vectors/programs/x64/", import.meta.url));

/** Writes `<dir>/<name>.asm` for every x64 corpus program and returns the paths written. */
export async function writeX64Sources(dir: string = X64_SOURCES_DIR): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const spec of X64_CORPUS_SPECS) {
    const program = await buildX64Program(spec);
    const path = join(dir, `${program.name}.asm`);
    writeFileSync(path, program.asm);
    written.push(path);
  }
  return written;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const path of await writeX86Sources()) console.log(path);
  for (const path of await writeX64Sources()) console.log(path);
}
