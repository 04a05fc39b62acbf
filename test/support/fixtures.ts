/**
 * The repository's own fixtures (test/fixtures/, each folder with its origin and licence). A file
 * may be stored gzip-compressed as `NAME.gz`; `fixtureFile` gives a path to its bytes either way
 * (a compressed one is unpacked once per process into a temporary folder), `fixtureBytes` gives
 * the bytes, and `fixtureDir` a folder holding a fixture folder's files unpacked (a symbol store).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

/** The fixtures folder, absolute. */
export const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

let unpacked: string | undefined;

/** The path of fixture `rel` (relative to test/fixtures), unpacking `rel.gz` when only that is stored. */
export function fixtureFile(rel: string): string {
  const plain = join(FIXTURES, rel);
  if (existsSync(plain)) return plain;
  const packed = `${plain}.gz`;
  if (!existsSync(packed)) throw new Error(`fixture ${rel} is not in test/fixtures (neither ${rel} nor ${rel}.gz)`);
  unpacked ??= mkdtempSync(join(tmpdir(), "stackwalk-fixtures-"));
  const out = join(unpacked, rel);
  if (!existsSync(out)) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, gunzipSync(readFileSync(packed)));
  }
  return out;
}

/** The bytes of fixture `rel` (relative to test/fixtures), stored plain or as `rel.gz`. */
export function fixtureBytes(rel: string): Uint8Array {
  return readFileSync(fixtureFile(rel));
}

/** A folder holding every file of fixture folder `rel` (relative to test/fixtures) unpacked, made once per process. */
export function fixtureDir(rel: string): string {
  unpacked ??= mkdtempSync(join(tmpdir(), "stackwalk-fixtures-"));
  const out = join(unpacked, "dirs", rel);
  if (existsSync(out)) return out;
  const copy = (from: string, to: string): void => {
    mkdirSync(to, { recursive: true });
    for (const e of readdirSync(from, { withFileTypes: true })) {
      const source = join(from, e.name);
      if (e.isDirectory()) copy(source, join(to, e.name));
      else if (e.name.endsWith(".gz")) writeFileSync(join(to, e.name.slice(0, -3)), gunzipSync(readFileSync(source)));
      else copyFileSync(source, join(to, e.name));
    }
  };
  copy(join(FIXTURES, rel), out);
  return out;
}
