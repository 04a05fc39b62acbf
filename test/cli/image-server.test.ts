/**
 * Images through symbol paths on the command line, and against hostile names and servers (all
 * servers on 127.0.0.1). A stack-only x64 dump of the emulator's recursion-callbacks walks
 * exactly (the truth is the CPU's shadow stack) with its image from a server, a compressed one
 * from a local store, or one a local store's file.ptr points at; the second walk reads the cache.
 * Module names from a dump never make a path outside the store, and a server that sends
 * pointers, bombs, images of another build or machine, or fails, costs a note or one warning;
 * every test checks that nothing is written outside the cache (tests count requests and bytes,
 * never time).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Module } from "../../src/model/snapshot.js";
import { downloadImages } from "../../src/node/images.js";
import { loadSnapshot } from "../../src/node/load.js";
import { downloadSymbols, parseSymbolPath } from "../../src/node/symbol-path.js";
import { SymbolFileCache } from "../../src/node/symbol-store.js";
import { writeCab } from "../support/cab-writer.js";
import { cli } from "../support/cli.js";
import { filesUnder } from "../support/files.js";
import { serveFiles, STACK_ONLY_IMAGE, stackOnlyDump, type ImageServer } from "../support/image-server.js";
import { parseWalkJson } from "../support/walk-schema.js";

const IMAGE = new Uint8Array(readFileSync(STACK_ONLY_IMAGE));
/** recursion-callbacks.exe's store directory: TimeDateStamp B295B967, SizeOfImage 0x5000. */
const KEY = "recursion-callbacks.exe/B295B9675000";
const OTHER_BUILD = new Uint8Array(readFileSync("vectors/programs/c/build/x64/big-frames-varargs.exe"));
const X86_IMAGE = new Uint8Array(readFileSync("vectors/programs/c/build/x86-fpo/recursion-callbacks.exe"));

const scratch = mkdtempSync(join(tmpdir(), "sw-image-cli-"));
const servers: ImageServer[] = [];
async function serve(files: Record<string, Uint8Array | string> = {}): Promise<ImageServer> {
  const s = await serveFiles(new Map(Object.entries(files)));
  servers.push(s);
  return s;
}
let dump: { file: string; truth: [string, string][] };

beforeAll(() => {
  dump = stackOnlyDump(mkdtempSync(join(scratch, "dump-")));
});
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(scratch, { recursive: true, force: true });
});

const frames = (out: string): [string, string][] => (parseWalkJson(out).threads[0].frames as { addrPC: string; addrStack: string }[]).map((f) => [f.addrPC, f.addrStack]);

describe("images through symbol paths on the command line", () => {
  it("srv*CACHE*URL: the image is fetched in the store layout, the walk is exact, and the second walk reads the cache without asking", async () => {
    const server = await serve({ [`${KEY}/recursion-callbacks.exe`]: IMAGE });
    const cache = join(scratch, "cache-a");
    const without = await cli("walk", dump.file, "--walker", "unwind", "--format", "json");
    expect(frames(without.out)).not.toEqual(dump.truth);
    const first = await cli("walk", dump.file, "--symbols", `srv*${cache}*${server.url}`, "--walker", "unwind", "--format", "json");
    expect(first.code, first.err).toBe(0);
    const cached = join(cache, "recursion-callbacks.exe", "B295B9675000", "recursion-callbacks.exe");
    expect(first.err).toContain(`images: recursion-callbacks.exe: image from ${server.url}/${KEY}/recursion-callbacks.exe (cached as ${cached})\n`);
    expect(frames(first.out)).toEqual(dump.truth);
    expect(readFileSync(cached)).toEqual(Buffer.from(IMAGE));
    const asked = server.requests.length;
    expect(server.requests.filter((r) => r.startsWith("recursion-callbacks.exe/"))).toEqual([`${KEY}/recursion-callbacks.exe`]);

    const second = await cli("walk", dump.file, "--symbols", `srv*${cache}*${server.url}`, "--walker", "unwind", "--format", "json");
    expect(second.err).toContain(`images: recursion-callbacks.exe: image from ${cached} (cached from ${server.url}/${KEY}/recursion-callbacks.exe)\n`);
    expect(frames(second.out)).toEqual(dump.truth);
    expect(server.requests.filter((r) => r.startsWith("recursion-callbacks.exe/"))).toHaveLength(1);
    expect(server.requests.length).toBe(asked + 2); // the .sym and the PDB, which the server lacks
    expect(filesUnder(cache)).toEqual([join("recursion-callbacks.exe", "B295B9675000", "recursion-callbacks.exe")]);
  });

  it("the compressed form only: name.ex_ is extracted and kept uncompressed; a server without the image is one line", async () => {
    const server = await serve({ [`${KEY}/recursion-callbacks.ex_`]: writeCab([{ name: "recursion-callbacks.exe", bytes: IMAGE }]) });
    const empty = await serve();
    const cache = join(scratch, "cache-b");
    const r = await cli("walk", dump.file, "--symbols", `srv*${cache}*${empty.url};srv*${cache}*${server.url}`, "--walker", "unwind", "--format", "json");
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`images: recursion-callbacks.exe: image from ${server.url}/${KEY}/recursion-callbacks.ex_ (cached as ${join(cache, "recursion-callbacks.exe", "B295B9675000", "recursion-callbacks.exe")})`);
    expect(frames(r.out)).toEqual(dump.truth);
    expect(empty.requests.filter((p) => p.startsWith("recursion-callbacks.exe/"))).toEqual([`${KEY}/recursion-callbacks.exe`, `${KEY}/recursion-callbacks.ex_`, `${KEY}/file.ptr`]);
    expect(readFileSync(join(cache, KEY, "recursion-callbacks.exe"))).toEqual(Buffer.from(IMAGE));
    const none = await cli("walk", dump.file, "--symbols", `srv*${join(scratch, "cache-b2")}*${empty.url}`, "--format", "json");
    expect(none.err).toContain("images: no image on the servers for 1 module(s): recursion-callbacks.exe\n");
  });

  it("a local store: the compressed form, and a file.ptr that points at a file on this system", async () => {
    const store = join(scratch, "store");
    mkdirSync(join(store, KEY), { recursive: true });
    writeFileSync(join(store, KEY, "recursion-callbacks.ex_"), writeCab([{ name: "recursion-callbacks.exe", bytes: IMAGE }]));
    const r = await cli("walk", dump.file, "--symbols", store, "--walker", "unwind", "--format", "json");
    expect(r.err).toContain(`images: recursion-callbacks.exe: image from ${join(store, KEY, "recursion-callbacks.ex_")}\n`);
    expect(frames(r.out)).toEqual(dump.truth);

    const pointed = join(scratch, "builds", "recursion-callbacks.exe");
    mkdirSync(join(scratch, "builds"), { recursive: true });
    writeFileSync(pointed, IMAGE);
    const pstore = join(scratch, "pstore");
    mkdirSync(join(pstore, KEY), { recursive: true });
    writeFileSync(join(pstore, KEY, "file.ptr"), `PATH:${pointed}`);
    const p = await cli("walk", dump.file, "--symbols", pstore, "--walker", "unwind", "--format", "json");
    expect(p.err).toContain(`images: recursion-callbacks.exe: image from ${pointed}\n`);
    expect(frames(p.out)).toEqual(dump.truth);
  });

  it("in a batch, a module's store files are searched for once for every dump, read for each, and searched again once one is gone", async () => {
    const store = join(scratch, "batch-store");
    mkdirSync(join(store, KEY), { recursive: true });
    writeFileSync(join(store, KEY, "recursion-callbacks.exe"), IMAGE);
    // Counts the searches (a miss of the cache's `located`), not the time they take.
    class Counting extends SymbolFileCache {
      searches: string[] = [];
      override located<T>(key: string, look: () => T, again = false): T {
        return super.located(key, () => (this.searches.push(key.split("\0")[0]!), look()), again);
      }
    }
    const cache = new Counting();
    const load = async (): Promise<string> => {
      let err = "";
      const input = await loadSnapshot(dump.file, { symbols: [store], symbolCache: cache, onNote: (line) => (err += `${line}\n`) });
      input.close();
      return err;
    };
    expect(await load()).toContain(`images: recursion-callbacks.exe: image from ${join(store, KEY, "recursion-callbacks.exe")}\n`);
    const first = cache.searches.filter((k) => k === "images").length;
    expect(first).toBe(1);
    for (let i = 0; i < 3; i++) expect(await load()).toContain(`image from ${join(store, KEY, "recursion-callbacks.exe")}`);
    expect(cache.searches.filter((k) => k === "images")).toHaveLength(1);
    // Gone: the next dump searches again and finds the compressed form put there meanwhile.
    rmSync(join(store, KEY, "recursion-callbacks.exe"));
    writeFileSync(join(store, KEY, "recursion-callbacks.ex_"), writeCab([{ name: "recursion-callbacks.exe", bytes: IMAGE }]));
    expect(await load()).toContain(`images: recursion-callbacks.exe: image from ${join(store, KEY, "recursion-callbacks.ex_")}\n`);
    expect(cache.searches.filter((k) => k === "images")).toHaveLength(2);
  });

  it("Breakpad's walker never reads images, so none is asked for", async () => {
    const server = await serve({ [`${KEY}/recursion-callbacks.exe`]: IMAGE });
    const r = await cli("walk", dump.file, "--symbols", `srv*${join(scratch, "cache-c")}*${server.url}`, "--format", "breakpad");
    expect(r.code, r.err).toBe(0);
    expect(server.requests.filter((p) => p.startsWith("recursion-callbacks.exe/"))).toEqual([]);
    expect(r.err).not.toContain("images:");
  });
});

/** Modules with the given names, recursion-callbacks.exe's identity (an x64 image of 0x5000 bytes) and no memory: what a stack-only dump gives. */
function target(names: readonly string[]): { modules: Module[]; memory: RegionMemory; machine: "x64" } {
  const modules = names.map((name, i): Module => ({ name, base: 0x1_4000_0000n + BigInt(i) * 0x10_0000n, size: 0x5000n, symbols: [], codeId: "B295B9675000" }));
  return { modules, memory: new RegionMemory([]), machine: "x64" };
}

describe("hostile module names", () => {
  it("a name that cannot name one file in a store is not looked for: no request, nothing read or written outside the cache", async () => {
    const hostile = ["..", ".", "", "C:", "C:evil.exe", "evil.exe\u0000.dll", "evil.exe:stream", "nul", "CON.dll", "trailing.exe.", `${"a".repeat(300)}.exe`, "x\ny.exe", "../", "..\\"];
    // A server that answers every request with the image: any request made for a hostile name would be served.
    const server = await serveFiles();
    servers.push(server);
    const files = server.files;
    for (const n of ["..", "."]) files.set(`${n}/B295B9675000/${n}`, IMAGE);
    const cache = join(scratch, "names", "cache");
    mkdirSync(cache, { recursive: true });
    const sentinel = join(scratch, "names", "B295B9675000");
    const t = target(hostile);
    const r = await downloadImages(t, parseSymbolPath([`srv*${cache}*${server.url}`]));
    expect(r.notes).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(server.requests).toEqual([]);
    expect(filesUnder(join(scratch, "names"))).toEqual([]);
    expect(existsSync(sentinel)).toBe(false);
  });

  it("a full Windows path names its file only: C:\\Windows\\..\\app.exe is app.exe, fetched and cached under the cache", async () => {
    const server = await serve({ [`${KEY}/recursion-callbacks.exe`]: IMAGE });
    const cache = join(scratch, "path-cache");
    const t = target(["C:\\Windows\\..\\..\\recursion-callbacks.exe"]);
    t.modules[0]!.path = t.modules[0]!.name;
    const r = await downloadImages(t, parseSymbolPath([`srv*${cache}*${server.url}`]));
    expect(r.notes[0]?.file).toBe(join(cache, KEY, "recursion-callbacks.exe"));
    expect(filesUnder(cache)).toEqual([join(KEY, "recursion-callbacks.exe")]);
  });
});

describe("hostile image servers", () => {
  const one = (): ReturnType<typeof target> => target(["recursion-callbacks.exe"]);
  const run = async (files: Record<string, Uint8Array | string>, cache: string, options = {}): Promise<{ detail: string; server: ImageServer; warnings: string[] }> => {
    const server = await serve(files);
    const r = await downloadImages(one(), parseSymbolPath([`srv*${cache}*${server.url}`]), options);
    return { detail: r.notes.map((n) => n.detail).join("\n"), server, warnings: r.warnings };
  };

  it("images of another build or another machine are refused with a note, never cached", async () => {
    const cache = join(scratch, "refused");
    const other = await run({ [`${KEY}/recursion-callbacks.exe`]: OTHER_BUILD }, cache);
    expect(other.detail).toMatch(/no usable image on the servers for recursion-callbacks\.exe B295B9675000: .*has TimeDateStamp B28B5A6F, the module's code id is B295B9675000/);
    const x86 = await run({ [`${KEY}/recursion-callbacks.exe`]: X86_IMAGE }, cache);
    expect(x86.detail).toContain("is built for x86, the snapshot is x64");
    const html = await run({ [`${KEY}/recursion-callbacks.exe`]: "<html>maintenance</html>" }, cache);
    expect(html.detail).toContain("not an image (no MZ header) or a cabinet (no MSCF)");
    expect(filesUnder(cache)).toEqual([]);
  });

  it("cabinet bombs: a declared size over the cap, a cabinet that inflates past what it declares, zeros that are no image", async () => {
    const cache = join(scratch, "bombs");
    const maxBytes = 1 << 20;
    const zeros = new Uint8Array(64 << 20);
    const huge = writeCab([{ name: "recursion-callbacks.exe", bytes: zeros }]);
    expect(huge.length).toBeLessThan(1 << 20);
    const over = await run({ [`${KEY}/recursion-callbacks.ex_`]: huge }, cache, { maxBytes });
    expect(over.detail).toContain(`declares ${64 << 20} bytes, more than the ${maxBytes}-byte limit`);
    // A cabinet that declares 4 KiB for a file whose blocks hold 64 MiB: only the blocks up to the declared end are read.
    const lying = huge.slice();
    new DataView(lying.buffer).setUint32(44, 4096, true);
    const lie = await run({ [`${KEY}/recursion-callbacks.ex_`]: lying }, cache, { maxBytes });
    expect(lie.detail).toContain("not an image that can be read");
    const inside = writeCab([{ name: "recursion-callbacks.exe", bytes: new Uint8Array(maxBytes) }]);
    const notImage = await run({ [`${KEY}/recursion-callbacks.ex_`]: inside }, cache, { maxBytes });
    expect(notImage.detail).toContain("not an image that can be read");
    const lzx = writeCab([{ name: "recursion-callbacks.exe", bytes: IMAGE }]);
    lzx[42] = 0x03;
    const unsupported = await run({ [`${KEY}/recursion-callbacks.ex_`]: lzx }, cache);
    expect(unsupported.detail).toContain("compressed with LZX (only none and MSZIP are read)");
    expect(filesUnder(cache)).toEqual([]);
  });

  it("file.ptr: a message, a file share, a local path and a file: URL are notes and nothing is read; an http URL is followed once, a redirect loop is bounded", async () => {
    const cache = join(scratch, "pointers");
    const secret = join(scratch, "secret.exe");
    writeFileSync(secret, IMAGE);
    const cases: [string, RegExp][] = [
      ["MSG:withdrawn by the vendor", /the server says "withdrawn by the vendor"/],
      ["PATH:\\\\builds\\share\\recursion-callbacks.exe", /a path on the server's side \(a file share\), which is not read/],
      [`PATH:${secret}`, /a path on the server's side \(a file share\), which is not read/],
      ["PATH:file:///etc/passwd", /a path on the server's side/],
      ["garbage", /says neither PATH: nor MSG:/],
      ["x".repeat(10_000), /a file\.ptr of 10000 bytes/],
    ];
    for (const [text, why] of cases) expect((await run({ [`${KEY}/file.ptr`]: text }, cache)).detail).toMatch(why);
    // The pointed-at server redirects to itself.
    const redirecting = await serveWith((req, res) => res.writeHead(302, { location: req.url ?? "/" }).end());
    const looping = await serve({ [`${KEY}/file.ptr`]: `PATH:${redirecting.url}/loop` });
    const r = await downloadImages(one(), parseSymbolPath([`srv*${cache}*${looping.url}`]));
    expect(r.notes[0]?.detail).toMatch(/points at .*\/loop: more than 5 redirects/);
    expect(redirecting.count()).toBe(6);
    const good = await serve({ "builds/recursion-callbacks.exe": IMAGE });
    const pointer = await serve({ [`${KEY}/file.ptr`]: `PATH:${good.url}/builds/recursion-callbacks.exe` });
    const ok = await downloadImages(one(), parseSymbolPath([`srv*${cache}*${pointer.url}`]));
    expect(ok.notes[0]?.detail).toBe(`image from ${good.url}/builds/recursion-callbacks.exe (cached as ${join(cache, KEY, "recursion-callbacks.exe")})`);
    expect(filesUnder(cache)).toEqual([join(KEY, "recursion-callbacks.exe")]);
  });

  it("a failing server costs one warning for symbols and images together, not one per module", async () => {
    const failing = await serveWith((_req, res) => res.writeHead(503).end());
    const t = target(Array.from({ length: 20 }, (_, i) => `m${i}.dll`));
    for (const [i, m] of t.modules.entries()) {
      m.debugFile = `m${i}.pdb`;
      m.debugId = `${i.toString(16).toUpperCase().padStart(32, "0")}1`;
    }
    const r = await downloadSymbols(t, parseSymbolPath([`srv*${join(scratch, "503")}*${failing.url}`]), { images: true });
    expect(r.warnings).toEqual([`symbol server ${failing.url} is given up on (it answered HTTP 503); it is not asked again in this run`]);
    expect(failing.count()).toBeLessThanOrEqual(6);
    expect(r.notes).toEqual([]);
    expect(r.images).toEqual([]);
  });
});

/** A server on 127.0.0.1 whose answers `handle` writes; counts the requests. */
async function serveWith(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; count: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    n++;
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push({ url, files: new Map(), requests: [], close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return { url, count: () => n };
}
