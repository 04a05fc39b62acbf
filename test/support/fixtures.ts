/**
 * The repository's own fixtures (test/fixtures/, each folder with its origin and licence). A file
 * may be stored gzip-compressed as `NAME.gz`; `fixtureFile` gives a path to its bytes either way
 * (a compressed one is unpacked once per process into a temporary folder), and `fixtureBytes`
 * gives the bytes.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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
