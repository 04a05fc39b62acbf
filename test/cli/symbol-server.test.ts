/**
 * Symbol paths and HTTP symbol servers, against servers the test starts on 127.0.0.1: one that
 * serves a symbol store (Breakpad's layout for minidump2's .sym files, Microsoft's for a real
 * clang PDB), one that accepts connections and never answers, one that answers everything with
 * garbage. Downloads land in the cache in the store layout; the second walk reads them from there
 * without asking the server; what no server has, and a server that cannot be reached, are notes
 * and warnings naming them, never a failed walk.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { symbolSpec } from "../../src/cli/common.js";
import { emulateCommand } from "../../src/cli/emulate.js";
import { cli } from "../support/cli.js";
import { parseSymbolPath } from "../../src/node/symbol-path.js";
import { parsePdb } from "../../src/formats/pdb.js";
import { parseVector } from "../../src/formats/vector.js";
import { parseWalkJson } from "../support/walk-schema.js";

const FIXTURES = "test/fixtures/breakpad";
const DUMP = join(FIXTURES, "minidump2.dmp");
const EXPECTED = readFileSync(join(FIXTURES, "minidump2.stackwalk.out"), "utf8");

/** A server on 127.0.0.1: `handle` answers; every request path is recorded. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; requests: string[]; server: Server; sockets: Set<Socket> }> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    handle(req, res);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server, sockets };
}

/** Serves the files under `root` by path; anything else is a 404. */
function storeHandler(root: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = join(root, ...decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).split("/").filter((p) => p !== "" && p !== ".."));
    if (existsSync(path) && !path.endsWith(root)) {
      const body = readFileSync(path);
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
      res.end(body);
    } else {
      res.writeHead(404);
      res.end("not found");
    }
  };
}

type Served = Awaited<ReturnType<typeof serve>>;
let store: Served;
let stalled: Served;
let garbage: Served;
const scratch = mkdtempSync(join(tmpdir(), "sw-symsrv-"));

beforeAll(async () => {
  store = await serve(storeHandler(join(FIXTURES, "symbols")));
  stalled = await serve(() => undefined);
  garbage = await serve((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html><body>Symbol server maintenance</body></html>\n");
  });
});

afterAll(async () => {
  for (const s of [store, stalled, garbage]) {
    for (const socket of s.sockets) socket.destroy();
    await new Promise<void>((resolve) => s.server.close(() => resolve()));
  }
  rmSync(scratch, { recursive: true, force: true });
});

const symRequests = (s: Served): string[] => s.requests.filter((r) => /(test_app|kernel32)\.pdb\//.test(r));

describe("symbol servers", () => {
  it("srv*CACHE*URL: downloads minidump2's .sym files into the cache (Breakpad's report, byte for byte), then reads them from the cache without asking", async () => {
    const cache = join(scratch, "cache-a");
    const first = await cli("walk", DUMP, "--symbols", `srv*${cache}*${store.url}`, "--format", "breakpad");
    expect(first.code, first.err).toBe(0);
    expect(first.out).toBe(EXPECTED);
    const sym = join(cache, "test_app.pdb", "5A9832E5287241C1838ED98914E9B7FF1", "test_app.sym");
    expect(first.err).toContain(`symbols: test_app.exe: unwind records from ${store.url}/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym (cached as ${sym})`);
    expect(readFileSync(sym)).toEqual(readFileSync(join(FIXTURES, "symbols/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym")));
    expect(existsSync(join(cache, "kernel32.pdb", "BCE8785C57B44245A669896B6A19B9542", "kernel32.sym"))).toBe(true);
    // Modules the server does not have: asked for the .sym and the PDB, each a 404 in the note.
    expect(first.err).toMatch(/symbols: ntdll\.dll: no symbols on the servers for ntdll\.pdb 36515FB5D04345E491F672FA2E2878C02: .*ntdll\.sym: not there \(404\); .*ntdll\.pdb: not there \(404\)/);
    const asked = symRequests(store).length;
    expect(asked).toBe(2);

    const second = await cli("walk", DUMP, "--symbols", `srv*${cache}*${store.url}`, "--format", "json");
    expect(second.code).toBe(0);
    expect(symRequests(store).length).toBe(asked);
    expect(second.err).toContain(`symbols: test_app.exe: unwind records from ${sym} (cached from ${store.url}/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym)`);
    const doc = parseWalkJson(second.out);
    expect(doc.modules[0].symbol_url).toBe(`${store.url}/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym`);
    expect(doc.threads[0].frames.map((f: { function: string }) => f.function)).toEqual(["`anonymous namespace'::CrashFunction", "main", "__tmainCRTStartup", "BaseProcessStart"]);
  });

  it("--symbols-url with --symbols-cache, as rust-minidump spells them", async () => {
    const cache = join(scratch, "cache-b");
    const r = await cli("walk", DUMP, "--symbols-url", store.url, "--symbols-cache", cache, "--format", "breakpad-m");
    expect(r.code).toBe(0);
    expect(r.out).toBe(readFileSync(join(FIXTURES, "minidump2.stackwalk.machine_readable.out"), "utf8"));
    expect(existsSync(join(cache, "test_app.pdb", "5A9832E5287241C1838ED98914E9B7FF1", "test_app.sym"))).toBe(true);
  });

  it("a server that never answers: a warning naming it after the timeout, asked no more; the walk goes on without its symbols", async () => {
    const cache = join(scratch, "cache-c");
    const before = stalled.requests.length;
    const r = await cli("walk", DUMP, "--symbols", `srv*${cache}*${stalled.url}`, "--symbol-download-timeout-secs", "0.5", "--format", "json");
    expect(r.code).toBe(0);
    // Asked once per open download (at most 6 at a time), then no more: not twice for each of 13 modules.
    const asked = stalled.requests.length - before;
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThanOrEqual(6);
    expect(r.err).toContain(`warning: symbol server ${stalled.url} is given up on (no data for 0.5 s); it is not asked again in this run`);
    expect(r.err).toMatch(/symbols: no symbol file for 13 module\(s\)/);
    expect(parseWalkJson(r.out).modules.every((m: { loaded_symbols: boolean }) => !m.loaded_symbols)).toBe(true);
    expect(existsSync(cache) ? readdirSync(cache) : []).toEqual([]);
  });

  it("a server that answers garbage: a note per file that is not a symbol file, nothing cached, and the next server is asked", async () => {
    const cache = join(scratch, "cache-d");
    const r = await cli("walk", DUMP, "--symbols", `srv*${cache}*${garbage.url};srv*${cache}*${store.url}`, "--format", "breakpad");
    expect(r.code).toBe(0);
    expect(r.out).toBe(EXPECTED);
    expect(r.err).toMatch(new RegExp(`symbols: ntdll\\.dll: no symbols on the servers .*${garbage.url.replaceAll(".", "\\.")}/ntdll\\.pdb/36515FB5D04345E491F672FA2E2878C02/ntdll\\.sym: not a symbol file`));
    expect(r.err).toContain(`unwind records from ${store.url}/test_app.pdb/`);
    expect(readdirSync(cache).sort()).toEqual(["kernel32.pdb", "test_app.pdb"]);
  });

  it("downloads several files at once: a server that takes 300 ms per answer has several of its 24 requests open at a time, at most 6", async () => {
    const handler = storeHandler(join(FIXTURES, "symbols"));
    let open = 0;
    let most = 0;
    const slow = await serve((req, res) => {
      open++;
      most = Math.max(most, open);
      setTimeout(() => {
        open--;
        handler(req, res);
      }, 300);
    });
    try {
      const r = await cli("walk", DUMP, "--symbols", `srv*${join(scratch, "cache-slow")}*${slow.url}`, "--format", "breakpad");
      expect(r.out).toBe(EXPECTED);
      // 13 modules: 2 found at the first try, 11 asked for the .sym and the PDB.
      expect(slow.requests).toHaveLength(2 + 11 * 2);
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(6);
    } finally {
      for (const socket of slow.sockets) socket.destroy();
      slow.server.close();
    }
  });

  it("a server that refuses connections and a directory that does not exist are warnings naming them", async () => {
    const refused = await serve(() => undefined);
    const url = refused.url;
    await new Promise<void>((resolve) => refused.server.close(() => resolve()));
    const r = await cli("walk", DUMP, "--symbols", join(scratch, "no-such-dir"), "--symbols-url", url, "--symbols-cache", join(scratch, "cache-e"));
    expect(r.code).toBe(0);
    expect(r.err).toContain(`warning: symbols: ${join(scratch, "no-such-dir")}: no such directory`);
    expect(r.err).toMatch(new RegExp(`warning: symbol server ${url.replaceAll(".", "\\.")} is given up on \\(ECONNREFUSED\\)`));
  });

  it("a PDB in Microsoft's layout (name.pdb/<id>/name.pdb) for a dump of a real clang program", async () => {
    const dir = mkdtempSync(join(scratch, "clang-"));
    let err = "";
    const emulated = await emulateCommand(["vectors/programs/c/build/x86-fpo/big-frames-varargs.exe", "--break", "sum_ints", "--dmp", "-o", `${dir}/`], { out: () => {}, err: (t) => (err += t) });
    expect(emulated, err).toBe(0);
    rmSync(join(dir, "big-frames-varargs.pdb"), { recursive: true, force: true });
    const pdbFile = "vectors/programs/c/build/x86-fpo/big-frames-varargs.pdb";
    const id = parsePdb(readFileSync(pdbFile)).info.debugId;
    const root = join(scratch, "ms-store");
    mkdirSync(join(root, "big-frames-varargs.pdb", id), { recursive: true });
    copyFileSync(pdbFile, join(root, "big-frames-varargs.pdb", id, "big-frames-varargs.pdb"));
    const ms = await serve(storeHandler(root));
    try {
      const vector = readdirSync(dir).find((f) => f.endsWith(".json"))!;
      const cache = join(scratch, "cache-f");
      const r = await cli("walk", join(dir, vector.replace(/\.json$/, ".dmp")), "--symbols", `srv*${cache}*${ms.url}`, "--format", "json");
      expect(r.code, r.err).toBe(0);
      expect(r.err).toContain(`unwind records from ${ms.url}/big-frames-varargs.pdb/${id}/big-frames-varargs.pdb`);
      expect(ms.requests).toEqual([`/big-frames-varargs.pdb/${id}/big-frames-varargs.sym`, `/big-frames-varargs.pdb/${id}/big-frames-varargs.pdb`]);
      expect(existsSync(join(cache, "big-frames-varargs.pdb", id, "big-frames-varargs.pdb"))).toBe(true);
      const truth = parseVector(readFileSync(join(dir, vector), "utf8")).threads[0]!.truth!;
      const frames = parseWalkJson(r.out).threads[0].frames as { addrPC: string }[];
      expect(frames.map((f) => BigInt(f.addrPC))).toEqual(truth.map((t) => t.pc));
    } finally {
      for (const socket of ms.sockets) socket.destroy();
      ms.server.close();
    }
  });
});

describe("symbol path syntax", () => {
  it("reads directories, srv*, symsrv*, cache*, plain URLs and ; lists; a Windows drive path on another system is a warning", () => {
    expect(parseSymbolPath(["srv*https://a.example"], { defaultCache: "/default" }).servers).toEqual([{ url: "https://a.example", cache: "/default" }]);
    const p = parseSymbolPath(["/syms;srv*/cache*https://msdl.example/download/symbols", "cache*/c2;https://sym.example/", "symsrv*symsrv.dll*/c3*http://s3.example", "srv*C:\\cache*https://x.example"], { defaultCache: "/default", platform: "linux" });
    expect(p.directories).toEqual(["/syms", "/cache", "/c2", "/c3"]);
    expect(p.servers).toEqual([
      { url: "https://msdl.example/download/symbols", cache: "/cache" },
      { url: "https://sym.example", cache: "/c2" },
      { url: "http://s3.example", cache: "/c3" },
      { url: "https://x.example", cache: "/c2" },
    ]);
    expect(p.warnings).toEqual(["srv*C:\\cache*https://x.example: C:\\cache is a Windows path, not a directory on this system"]);
  });

  it("takes _NT_SYMBOL_PATH after --symbols, and --symbols-url servers with --symbols-cache", () => {
    const spec = symbolSpec({ symbols: ["/a"], "symbols-url": ["https://u.example"], "symbols-cache": "/uc" }, { _NT_SYMBOL_PATH: "srv*/nt*https://nt.example", XDG_CACHE_HOME: "/xdg" });
    expect(spec.given).toBe(true);
    expect(spec.path.directories).toEqual(["/a", "/nt", "/uc"]);
    expect(spec.path.servers.map((s) => s.url)).toEqual(["https://nt.example", "https://u.example"]);
    expect(symbolSpec({}, {}).given).toBe(false);
  });

  it("_NT_SYMBOL_PATH is read by the command line when set", async () => {
    // Started without waiting on it: the server answering it runs in this process.
    const { spawn } = await import("node:child_process");
    const { createRequire } = await import("node:module");
    const tsx = createRequire(import.meta.url).resolve("tsx");
    const cache = join(scratch, "cache-nt");
    const child = spawn(process.execPath, ["--import", tsx, "src/cli/stackwalk.ts", "walk", DUMP, "--format", "breakpad"], { env: { ...process.env, _NT_SYMBOL_PATH: `srv*${cache}*${store.url}` } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
    const r = { status, stdout, stderr };
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(EXPECTED);
    expect(existsSync(join(cache, "test_app.pdb"))).toBe(true);
  });
});
