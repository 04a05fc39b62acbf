/**
 * Module images from a symbol server, as WinDbg fetches them: the emulator's dumps of every
 * function break of the real C programs and every capture of the synthetic chains (x64, x86
 * built without frame pointers, ARM64; test/support/break-dumps.ts), written with the images
 * withheld, walk exactly as they do with the images in the dump once a server on 127.0.0.1
 * serves the images in the symbol-store layout (`name.exe/<TimeDateStamp><SizeOfImage>/name.exe`,
 * a third of them only as the compressed `name.ex_` cabinet, a third only through `file.ptr`).
 * The truth is the emulator's shadow call stack. The second pass over the same cache asks the
 * server nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compressedName, imageStoreKey } from "../../src/formats/store-path.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { attachImagePath, downloadImages } from "../../src/node/images.js";
import { parseSymbolPath } from "../../src/node/symbol-path.js";
import { compareWithTruth } from "../../src/walk/compare.js";
import { walkThread } from "../../src/walk/walk.js";
import { arm64DumpHits, dumpOf, scoreDumps, x64DumpHits, x86FpoDumpHits, type BreakHit } from "../support/break-dumps.js";
import { writeCab } from "../support/cab-writer.js";
import { imageFileOf, serveFiles, type ImageServer } from "../support/image-server.js";

const CLASSES = [
  { name: "x64", hits: x64DumpHits },
  { name: "x86 FPO", hits: x86FpoDumpHits },
  { name: "ARM64", hits: arm64DumpHits },
] as const;

const withheld = (h: BreakHit): Snapshot => dumpOf(h.vector, { withholdImages: true, symbols: false });

let server: ImageServer;
const scratch = mkdtempSync(join(tmpdir(), "sw-image-server-"));
/** The requests each image costs a client with an empty cache: 1 (the file), 2 (a 404, the cabinet) or 4 (two 404s, file.ptr, the file it points at). */
let expectedRequests = 0;
let images = 0;
const hits = new Map<string, BreakHit[]>();

beforeAll(async () => {
  server = await serveFiles();
  let n = 0;
  for (const c of CLASSES) {
    const list = c.hits();
    hits.set(c.name, list);
    for (const h of list) {
      const d = withheld(h);
      for (const [i, m] of d.modules.entries()) {
        const { name, key } = imageStoreKey(m.name, m.codeId!);
        const at = `${name}/${key}`;
        if ([`${at}/${name}`, `${at}/${compressedName(name)}`, `${at}/file.ptr`].some((p) => server.files.has(p))) continue;
        const bytes = imageFileOf(h.vector.memory, h.vector.modules[i]!, m.codeId!);
        const form = n++ % 3;
        if (form === 0) {
          server.files.set(`${at}/${name}`, bytes);
          expectedRequests += 1;
        } else if (form === 1) {
          server.files.set(`${at}/${compressedName(name)}`, writeCab([{ name, bytes }]));
          expectedRequests += 2;
        } else {
          server.files.set(`elsewhere/${n}/${name}`, bytes);
          server.files.set(`${at}/file.ptr`, `PATH:${server.url}/elsewhere/${n}/${name}`);
          expectedRequests += 4;
        }
      }
    }
  }
  images = n;
}, 120_000);

afterAll(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Walks every hit's dump, images withheld, with the images of `srv*cache*server`; the exact stacks. */
async function walkWithServer(list: readonly BreakHit[], cache: string): Promise<Set<BreakHit>> {
  const exact = new Set<BreakHit>();
  const path = parseSymbolPath([`srv*${cache}*${server.url}`]);
  for (const h of list) {
    const d = withheld(h);
    const local = attachImagePath(d, path);
    const fetched = await downloadImages(d, path);
    expect(fetched.warnings).toEqual([]);
    const notes = [...local, ...fetched.notes];
    for (const m of d.modules) expect(notes.find((n) => n.module === m.name && n.file !== undefined), `${h.program}: ${m.name}: ${notes.map((n) => n.detail).join("; ")}`).toBeDefined();
    const walk = walkThread(d, d.threads[0]!, { walker: "auto" });
    if (compareWithTruth(h.vector.machine, walk, h.truth).exact) exact.add(h);
  }
  return exact;
}

describe("images from a symbol server", () => {
  const cache = join(scratch, "cache");

  it("the dumps with images withheld walk as exactly as with the images in the dump (the figure without the server beside it); the server is asked once per image", async () => {
    for (const c of CLASSES) {
      const list = hits.get(c.name)!;
      const exact = await walkWithServer(list, cache);
      const inDump = scoreDumps(list, { withholdImages: false, symbols: false }, { walker: "auto" });
      const without = scoreDumps(list, { withholdImages: true, symbols: false }, { walker: "auto" });
      console.log(`${c.name}: ${exact.size}/${list.length} exact with the images from the server; ${inDump.stacks}/${list.length} with the images in the dump; ${without.stacks}/${list.length} without images`);
      expect(exact.size).toBe(list.length);
      expect(list.filter((h) => exact.has(h) !== inDump.exact.has(h))).toEqual([]);
    }
    console.log(`${images} images served, ${server.requests.length} requests`);
    expect(server.requests.length).toBe(expectedRequests);
  }, 600_000);

  it("the second run reads the cache only: no request", async () => {
    const before = server.requests.length;
    for (const c of CLASSES) expect((await walkWithServer(hits.get(c.name)!, cache)).size).toBe(hits.get(c.name)!.length);
    expect(server.requests.length).toBe(before);
  }, 600_000);
});
