/**
 * `walk --format json` of minidump2.dmp with its symbols beside rust-minidump's own
 * `minidump-stackwalk --json` of the same dump and symbols (test/fixtures/rust-minidump, see its
 * ORIGIN.txt): every value rust-minidump gives is looked up at the same path of the project's
 * document and compared, and the agreement is printed. The few values allowed to differ are
 * listed below, each with its reason.
 */
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { fixtureDir, fixtureFile } from "../support/fixtures.js";
import { parseWalkJson } from "../support/walk-schema.js";

/** Every leaf of a JSON value (an empty array or object counts as a leaf), by JSON Pointer path. */
function leaves(value: unknown, path = ""): [string, unknown][] {
  if (Array.isArray(value)) return value.length === 0 ? [[path, value]] : value.flatMap((v, i) => leaves(v, `${path}/${i}`));
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    return entries.length === 0 ? [[path, value]] : entries.flatMap(([k, v]) => leaves(v, `${path}/${k}`));
  }
  return [[path, value]];
}

/** The value at a JSON Pointer path, or undefined when the document has none there. */
function at(doc: unknown, path: string): unknown {
  let v: unknown = doc;
  for (const key of path.split("/").slice(1)) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/**
 * Values allowed to differ, by path, with the reason. rust-minidump (like Breakpad) does not walk
 * the thread that wrote the dump (the Breakpad info stream's dump thread, here thread 4544); the
 * project walks every thread, so that thread has frames.
 */
const ALLOWED: readonly { path: RegExp; reason: string }[] = [
  { path: /^\/threads\/1\/(frame_count|frames)$/, reason: "the dump-writer thread: rust-minidump skips it, the project walks it" },
  {
    path: /^\/modules\/(1|10)\/missing_symbols$/,
    reason: "ntdll.dll and dbghelp.dll: only the dump-writer thread's frames are in them, so only the project looked for their symbols",
  },
];

describe("walk --format json of minidump2.dmp beside rust-minidump's --json", () => {
  it("gives every value rust-minidump gives, at the same path", async () => {
    const theirs: unknown = JSON.parse(readFileSync(fixtureFile("rust-minidump/minidump2.rust-minidump.json"), "utf8"));
    // rust-minidump's own test store holds test_app's symbols alone.
    const store = mkdtempSync(join(tmpdir(), "rust-minidump-store-"));
    cpSync(join(fixtureDir("breakpad/symbols"), "test_app.pdb"), join(store, "test_app.pdb"), { recursive: true });
    const r = await cli("walk", fixtureFile("breakpad/minidump2.dmp"), "--symbols", store, "--format", "json");
    expect(r.code).toBe(0);
    const ours = parseWalkJson(r.out);
    const all = leaves(theirs);
    const differ = all.filter(([path, v]) => JSON.stringify(at(ours, path)) !== JSON.stringify(v));
    const unexplained = differ.filter(([path]) => !ALLOWED.some((a) => a.path.test(path)));
    console.log(`rust-minidump's JSON of minidump2.dmp: ${all.length - differ.length} of ${all.length} values equal; ${differ.length - unexplained.length} allowed differences (${ALLOWED.map((a) => a.reason).join("; ")})`);
    expect(unexplained.map(([path, v]) => `${path}: rust-minidump ${JSON.stringify(v)}, project ${JSON.stringify(at(ours, path))}`)).toEqual([]);
    // Every allowed difference is still one (the list stays honest).
    for (const a of ALLOWED) expect(differ.some(([path]) => a.path.test(path))).toBe(true);
  });
});
