/**
 * Hostile symbol servers on 127.0.0.1 (issue 33): one that sends a byte a second, one whose
 * chunked body never ends, a gzip bomb, one that fails with 503, redirects (to another server,
 * in a loop, to a file: URL), and a run longer than its deadline. Each run must end with the
 * documented warning or note; the tests count requests and bytes, never time (the test timeout
 * is only a guard against a hang), and no file is written outside the cache.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Module } from "../../src/model/snapshot.js";
import { DOWNLOAD_LIMITS, downloadMemoryBound, downloadSymbols, parseSymbolPath } from "../../src/node/symbol-path.js";
import { cli } from "../support/cli.js";
import { filesUnder } from "../support/files.js";
import { countModuleReads } from "../support/module-reads.js";

interface Served {
  url: string;
  requests: string[];
  /** Body bytes the handler handed to the socket, over all requests. */
  sent: { bytes: number };
  close: () => Promise<void>;
}

const servers: Served[] = [];

/** A server on 127.0.0.1 whose handler counts what it sends in `sent.bytes`. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse, sent: { bytes: number }) => void): Promise<Served> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const sent = { bytes: 0 };
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? "");
    handle(req, res, sent);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const served: Served = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    sent,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(served);
  return served;
}

/** Writes `chunk` again and again while the client reads, at most `limit` times (a bounded loop). */
function endless(res: ServerResponse, sent: { bytes: number }, chunk: Buffer, limit: number): void {
  let n = 0;
  const pump = (): void => {
    while (n < limit && !res.destroyed) {
      n++;
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    res.end();
  };
  pump();
}

const scratch = mkdtempSync(join(tmpdir(), "sw-hostile-"));
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `n` modules with distinct debug ids (a.pdb … ), no symbols, no memory: what a dump without symbols gives the downloader. */
function target(n: number): { modules: Module[]; memory: RegionMemory } {
  const modules = Array.from({ length: n }, (_, i): Module => ({
    name: `m${i}.dll`,
    base: 0x1000_0000n + BigInt(i) * 0x10_0000n,
    size: 0x1000n,
    symbols: [],
    debugFile: `m${i}.pdb`,
    debugId: `${i.toString(16).toUpperCase().padStart(32, "0")}1`,
  }));
  return { modules, memory: new RegionMemory([]) };
}

/** A Breakpad .sym file for module `i` of {@link target}. */
const symFor = (i: number): string => `MODULE windows x86 ${i.toString(16).toUpperCase().padStart(32, "0")}1 m${i}.pdb\nFUNC 100 10 0 f${i}\n`;

describe("hostile symbol servers", () => {
  it("the memory bound is the stated one: 5 × 32 MiB + 2 × 512 MiB by default", () => {
    expect(downloadMemoryBound()).toBe(5 * 32 * 2 ** 20 + 2 * 512 * 2 ** 20);
    // With images, a compressed one being checked is extracted into one more copy of at most the cap.
    expect(downloadMemoryBound({ images: true })).toBe(5 * 32 * 2 ** 20 + 3 * 512 * 2 ** 20);
    expect(downloadMemoryBound({ concurrency: 2, maxBytes: 100, shareBytes: 10 })).toBe(210);
    expect(DOWNLOAD_LIMITS).toMatchObject({ timeoutMs: 30_000, downloadDeadlineMs: 300_000, runDeadlineMs: 600_000, concurrency: 6 });
  });

  it("one byte a second: the download deadline gives the server up once, the downloads in flight end, no other module asks it", async () => {
    const drip = await serve((_req, res, sent) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      let n = 0;
      const timer = setInterval(() => {
        if (res.destroyed || ++n > 600) {
          clearInterval(timer);
          res.end();
          return;
        }
        sent.bytes++;
        res.write("M");
      }, 1000);
      res.on("close", () => clearInterval(timer));
    });
    const cache = join(scratch, "drip");
    const t = target(40);
    const r = await downloadSymbols(t, parseSymbolPath([`srv*${cache}*${drip.url}`]), { downloadDeadlineMs: 1500 });
    expect(r.warnings).toEqual([`symbol server ${drip.url} is given up on (a download took more than 1.5 s); it is not asked again in this run`]);
    // Only the downloads that were in flight when the first deadline passed were asked: not one per module.
    expect(drip.requests.length).toBeLessThanOrEqual(DOWNLOAD_LIMITS.concurrency);
    expect(r.notes).toEqual([]);
    expect(filesUnder(cache)).toEqual([]);
  }, 60_000);

  it("an endless chunked body: each file ends at the byte cap (a note), whatever the headers say; the server sent little more than the cap per file", async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const flood = await serve((req, res, sent) => {
      // Half the answers claim a small Content-Length-free body type; none ends.
      res.writeHead(200, { "content-type": req.url?.endsWith(".sym") ? "text/plain" : "application/octet-stream", "transfer-encoding": "chunked" });
      endless(res, sent, chunk, 100_000);
    });
    const cache = join(scratch, "flood");
    const maxBytes = 1 << 20;
    const r = await downloadSymbols(target(8), parseSymbolPath([`srv*${cache}*${flood.url}`]), { maxBytes, shareBytes: 256 * 1024 });
    expect(r.warnings).toEqual([]);
    expect(r.notes).toHaveLength(8);
    for (const n of r.notes) expect(n.misses).toEqual([expect.stringMatching(/\.sym: more than the 1048576-byte limit$/), expect.stringMatching(/\.pdb: more than the 1048576-byte limit$/)]);
    expect(flood.requests).toHaveLength(16);
    // What the client took is bounded by the cap; the rest is socket buffers (a few MiB per connection at most).
    expect(flood.sent.bytes).toBeLessThan(16 * (maxBytes + 8 * 2 ** 20));
    expect(filesUnder(cache)).toEqual([]);
  }, 60_000);

  it("a gzip bomb (1 GiB of zeros in about 1 MiB): decoded bytes count against the cap as they come, and memory stays far below the bomb", async () => {
    const member = gzipSync(Buffer.alloc(1 << 20), { level: 9 });
    const bomb = await serve((_req, res, sent) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-encoding": "gzip", "content-length": String(member.length * 1024) });
      endless(res, sent, member, 1024);
    });
    const cache = join(scratch, "bomb");
    let peak = 0;
    const before = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - before)), 5);
    let r: Awaited<ReturnType<typeof downloadSymbols>>;
    try {
      r = await downloadSymbols(target(4), parseSymbolPath([`srv*${cache}*${bomb.url}`]), { maxBytes: 4 << 20, shareBytes: 1 << 20 });
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss - before);
    expect(r.notes).toHaveLength(4);
    for (const n of r.notes) expect(n.misses).toEqual([expect.stringMatching(/more than the 4194304-byte limit once decoded$/), expect.stringMatching(/more than the 4194304-byte limit once decoded$/)]);
    // 8 bombs of 1 GiB each were offered; all of them inflated would be 8 GiB.
    expect(peak).toBeLessThan(512 * 2 ** 20);
    expect(filesUnder(cache)).toEqual([]);
  }, 60_000);

  it("a server that fails (503) is given up on once, not once per module", async () => {
    const failing = await serve((_req, res) => {
      res.writeHead(503);
      res.end("maintenance");
    });
    const r = await downloadSymbols(target(30), parseSymbolPath([`srv*${join(scratch, "503")}*${failing.url}`]), {});
    expect(r.warnings).toEqual([`symbol server ${failing.url} is given up on (it answered HTTP 503); it is not asked again in this run`]);
    expect(failing.requests.length).toBeLessThanOrEqual(DOWNLOAD_LIMITS.concurrency);
    expect(r.notes).toEqual([]);
  });

  it("redirects: to another server is followed and the file cached under the module's identity; a loop, a file: URL and a hostile Location write nothing", async () => {
    const storage = await serve((req, res) => {
      const m = /^\/store\/m(\d+)\.sym$/.exec(req.url ?? "");
      if (m === null) {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200);
      res.end(symFor(Number(m[1])));
    });
    const front = await serve((req, res) => {
      const url = req.url ?? "";
      const m = /^\/m(\d+)\.pdb\//.exec(url);
      if (m === null) {
        res.writeHead(404);
        res.end();
        return;
      }
      const i = Number(m[1]);
      const location =
        i === 0 ? `${storage.url}/store/m0.sym` : i === 1 ? url : i === 2 ? "file:///etc/passwd" : i === 3 ? "../../../../../../tmp/evil.sym" : i === 4 ? `${storage.url}/..%2f..%2fevil` : "";
      res.writeHead(302, { location });
      res.end();
    });
    const cache = join(scratch, "redirect");
    const r = await downloadSymbols(target(5), parseSymbolPath([`srv*${cache}*${front.url}`]), {});
    expect(r.warnings).toEqual([]);
    const byModule = new Map(r.notes.map((n) => [n.module, n]));
    const id0 = `${"0".repeat(32)}1`;
    expect(byModule.get("m0.dll")?.detail).toBe(`unwind records from ${front.url}/m0.pdb/${id0}/m0.sym (redirected to ${storage.url}/store/m0.sym) (cached as ${join(cache, "m0.pdb", id0, "m0.sym")})`);
    expect(byModule.get("m1.dll")?.misses?.[0]).toMatch(/m1\.sym: more than 5 redirects$/);
    expect(byModule.get("m2.dll")?.misses?.[0]).toMatch(/m2\.sym: a redirect to file: \(only http and https are followed\)$/);
    expect(byModule.get("m3.dll")?.misses?.[0]).toMatch(/m3\.sym: not there \(404\)$/);
    expect(byModule.get("m4.dll")?.misses?.[0]).toMatch(/m4\.sym: not there \(404\)$/);
    // A redirect loop asks 1 + 5 times per file, for the .sym and the .pdb.
    expect(front.requests.filter((u) => u.startsWith("/m1.pdb/"))).toHaveLength(12);
    expect(filesUnder(cache)).toEqual([join("m0.pdb", id0, "m0.sym")]);
    expect(existsSync("/tmp/evil.sym")).toBe(false);
  });

  it("many modules, each with its file on the server: every file is attached, and the module list is read a few times per module, not once per module or per file", async () => {
    const store = await serve((req, res) => {
      const m = /^\/m(\d+)\.pdb\/[0-9A-F]+\/m\d+\.sym$/.exec(req.url ?? "");
      res.writeHead(m === null ? 404 : 200);
      res.end(m === null ? "" : symFor(Number(m[1])));
    });
    const n = 400;
    const t = target(n);
    const counter = countModuleReads(t);
    const r = await downloadSymbols(t, parseSymbolPath([`srv*${join(scratch, "many")}*${store.url}`]), {});
    expect(r.warnings).toEqual([]);
    expect(r.notes.filter((note) => note.file !== undefined)).toHaveLength(n);
    expect(t.modules.every((m, i) => m.symbols[0]?.name === `f${i}`)).toBe(true);
    // Looked through to choose the modules, once each to read it, once to index the modules by
    // debug id, once to put the new modules in, once to order the notes: a search of the list
    // per module or per file would read n² / 2 entries.
    expect(counter.reads).toBeLessThanOrEqual(6 * n);
  }, 60_000);

  it("the run's deadline ends all downloads: one warning, and the modules not reached are not asked", async () => {
    const slow = await serve((_req, res) => {
      const timer = setTimeout(() => {
        res.writeHead(404);
        res.end();
      }, 200);
      res.on("close", () => clearTimeout(timer));
    });
    const r = await downloadSymbols(target(60), parseSymbolPath([`srv*${join(scratch, "run")}*${slow.url}`]), { runDeadlineMs: 500, concurrency: 2 });
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^symbol downloads stopped at the run's deadline of 0\.5 s; \d+ module\(s\) got no answer$/);
    // 60 modules × 2 files at 2 at once would be 60 × 200 ms; the deadline came long before.
    expect(slow.requests.length).toBeLessThan(120);
  }, 60_000);
});

describe("the download limits on the command line", () => {
  const dump = join(scratch, "windows.dmp");
  writeFileSync(dump, execFileSync("gzip", ["-dc", "test/fixtures/real-dumps/symbolicator-windows/windows.dmp.gz"]));

  it("walk --help names the flags and their defaults; a bad value is a usage error", async () => {
    const help = await cli("walk", "--help");
    expect(help.out).toContain("--symbol-download-deadline-secs S  give a server up when one download takes more than S\n                   seconds, redirects included (300)");
    expect(help.out).toContain("--symbol-run-deadline-secs S  stop all downloads for an input after S seconds (600)");
    const bad = await cli("walk", dump, "--symbol-run-deadline-secs", "0");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--symbol-run-deadline-secs takes a number of seconds > 0, not "0"');
  });

  it("--symbol-download-deadline-secs: a server sending a byte a second is given up on once and the walk ends", async () => {
    const drip = await serve((_req, res) => {
      res.writeHead(200);
      let n = 0;
      const timer = setInterval(() => (res.destroyed || ++n > 600 ? clearInterval(timer) : res.write("M")), 1000);
      res.on("close", () => clearInterval(timer));
    });
    const cache = join(scratch, "cli-drip");
    const r = await cli("walk", dump, "--symbols", `srv*${cache}*${drip.url}`, "--symbol-download-deadline-secs", "1.5", "--format", "text");
    expect(r.code, r.err).toBe(0);
    expect(r.err.match(/is given up on/g)).toHaveLength(1);
    expect(r.err).toContain(`warning: symbol server ${drip.url} is given up on (a download took more than 1.5 s); it is not asked again in this run`);
    expect(drip.requests.length).toBeLessThanOrEqual(DOWNLOAD_LIMITS.concurrency);
    expect(filesUnder(cache)).toEqual([]);
    expect(readFileSync(dump).length).toBeGreaterThan(0);
  }, 60_000);
});
