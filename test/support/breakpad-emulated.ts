/**
 * Breakpad's own reports of the emulator's break dumps (test/fixtures/breakpad-emulated): every
 * twelfth function break of the real C programs (x86 FPO and EBP-frame builds, x64, ARM64), each
 * written as a minidump with and without the module images, and walked with and without the
 * `.sym` store the emulator writes for it. `emulatedCases()` makes the dumps and stores again
 * (the product's writer; the same bytes every time); the reports come from Breakpad's
 * `minidump_stackwalk`, run by this file as a script:
 *
 *   npx tsx test/support/breakpad-emulated.ts path/to/minidump_stackwalk
 *
 * (or the path in BREAKPAD_MINIDUMP_STACKWALK), which rewrites the fixture.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { arm64ModuleCfi } from "../../src/entry/arch.js";
import { x64ModuleCfi } from "../../src/arch/x64/cfi-from-unwind.js";
import { formatBreakpadSym, symFileInput, symFileStorePath } from "../../src/formats/breakpad-sym-write.js";
import { bytesSink, writeMinidump } from "../../src/formats/minidump-write.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { arm64DumpHits, x64DumpHits, x86FpDumpHits, x86FpoDumpHits, type BreakHit } from "./break-dumps.js";

/** Every how many break hits of a class one is taken. */
const EVERY = 12;

/** One dump and its symbol store. */
export interface EmulatedCase {
  /** `<class>/<program>/<function>/<step>/<images|no-images>/<syms|no-syms>`. */
  key: string;
  dump: Uint8Array;
  /** The store's files by path under the store, empty for a walk without symbols. */
  syms: Map<string, string>;
}

/** The memory ranges of a snapshot outside its modules' images. */
function withoutImages(snapshot: Snapshot): { start: bigint; size: bigint }[] {
  const regions = (snapshot.memory as unknown as { regions: { base: bigint; bytes: Uint8Array }[] }).regions;
  return regions.filter((r) => !snapshot.modules.some((m) => r.base >= m.base && r.base < m.base + m.size)).map((r) => ({ start: r.base, size: BigInt(r.bytes.length) }));
}

/** The `.sym` store the emulator's `--dmp` writes for a snapshot's modules. */
function symStore(snapshot: Snapshot): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of snapshot.modules) {
    const input = symFileInput(m, snapshot.machine, snapshot.memory);
    if (input === undefined) continue;
    if (snapshot.machine === "x64") input.stackCfi = x64ModuleCfi(m, snapshot.memory);
    if (snapshot.machine === "arm64") input.stackCfi = arm64ModuleCfi(m, snapshot.memory);
    out.set(symFileStorePath(input), formatBreakpadSym(input));
  }
  return out;
}

/** Every case, in a fixed order. */
export function* emulatedCases(): Generator<EmulatedCase> {
  const classes: [string, BreakHit[]][] = [["x86-fpo", x86FpoDumpHits()], ["x86-fp", x86FpDumpHits()], ["x64", x64DumpHits()], ["arm64", arm64DumpHits()]];
  for (const [name, hits] of classes) {
    for (let i = 0; i < hits.length; i += EVERY) {
      const h = hits[i]!;
      for (const images of [true, false]) {
        const sink = bytesSink();
        writeMinidump(h.vector, sink, images ? {} : { ranges: withoutImages(h.vector) });
        const dump = sink.bytes();
        const store = symStore(h.vector);
        for (const syms of [true, false]) {
          yield { key: `${name}/${h.program}/${h.function}/${h.step}/${images ? "images" : "no-images"}/${syms ? "syms" : "no-syms"}`, dump, syms: syms ? store : new Map() };
        }
      }
    }
  }
}

/** Writes a case's dump and store under `dir`: the arguments of a `minidump_stackwalk` run. */
export function caseFiles(c: EmulatedCase, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const dump = join(dir, "case.dmp");
  writeFileSync(dump, c.dump);
  if (c.syms.size === 0) return [dump];
  for (const [path, text] of c.syms) {
    mkdirSync(dirname(join(dir, "symbols", path)), { recursive: true });
    writeFileSync(join(dir, "symbols", path), text);
  }
  return [dump, join(dir, "symbols")];
}

if (process.argv[1]?.endsWith("breakpad-emulated.ts")) {
  const tool = process.argv[2] ?? process.env["BREAKPAD_MINIDUMP_STACKWALK"];
  if (tool === undefined) throw new Error("give the path of Breakpad's minidump_stackwalk (or set BREAKPAD_MINIDUMP_STACKWALK)");
  const work = mkdtempSync(join(tmpdir(), "breakpad-emulated-"));
  const reports: Record<string, string> = {};
  let n = 0;
  for (const c of emulatedCases()) {
    const args = caseFiles(c, join(work, String(n++)));
    reports[c.key] = execFileSync(tool, args, { stdio: ["ignore", "pipe", "ignore"], maxBuffer: 1 << 26 }).toString();
  }
  writeFileSync("test/fixtures/breakpad-emulated/reports.json.gz", gzipSync(JSON.stringify(reports, null, 1), { level: 9 }));
  console.log(`${n} reports written to test/fixtures/breakpad-emulated/reports.json.gz`);
}
