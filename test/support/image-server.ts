/**
 * A symbol server for images, as tests start it on 127.0.0.1: a map of store-relative paths
 * (`app.exe/<key>/app.exe`, `app.ex_`, `file.ptr`) to bytes, every request counted. And the
 * file form of an image the emulator mapped (the C programs' images are the committed files of
 * vectors/programs/c/build; a synthetic program's is rebuilt from its mapped sections, which is
 * what its file held, each section at its PointerToRawData), and a dump whose image is withheld.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { minidumpBytes } from "../../src/formats/minidump-write.js";
import { peCodeId, parsePe } from "../../src/formats/pe.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import type { MemoryReader } from "../../src/memory/reader.js";
import type { Module } from "../../src/model/snapshot.js";
import { ROOT } from "./corpus.js";

/** A server of `files` (path → bytes; a function is called with the request's path and writes the answer itself). */
export interface ImageServer {
  url: string;
  files: Map<string, Uint8Array | string>;
  /** The paths asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Starts a server of `files` on 127.0.0.1 (404 for anything else). */
export async function serveFiles(files = new Map<string, Uint8Array | string>()): Promise<ImageServer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
    requests.push(path);
    const body = files.get(path);
    if (body === undefined) res.writeHead(404).end("not found");
    else res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    files,
    requests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const u16 = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** The file an image mapped in `memory` at `module.base` was loaded from: the headers, then each section's raw bytes at its PointerToRawData. */
export function unmappedImage(memory: MemoryReader, module: Module): Uint8Array {
  const mapped = memory.read(module.base, Number(module.size));
  if (mapped === undefined) throw new Error(`${module.name}: the image is not in memory`);
  const nt = u32(mapped, 0x3c);
  const sections = u16(mapped, nt + 6);
  const optional = nt + 24;
  const table = optional + u16(mapped, nt + 20);
  const sizeOfHeaders = u32(mapped, optional + 60);
  const parts: { va: number; raw: number; size: number }[] = [];
  let end = sizeOfHeaders;
  for (let i = 0; i < sections; i++) {
    const s = table + 40 * i;
    const part = { va: u32(mapped, s + 12), size: u32(mapped, s + 16), raw: u32(mapped, s + 20) };
    parts.push(part);
    end = Math.max(end, part.raw + part.size);
  }
  const file = new Uint8Array(end);
  file.set(mapped.subarray(0, sizeOfHeaders));
  for (const p of parts) file.set(mapped.subarray(p.va, p.va + p.size), p.raw);
  return file;
}

const BUILD = join(ROOT, "vectors/programs/c/build");
let built: Map<string, Uint8Array> | undefined;

/** The committed images of the C programs, by `name/codeId`. */
function builtImages(): Map<string, Uint8Array> {
  if (built === undefined) {
    built = new Map();
    for (const arch of readdirSync(BUILD)) {
      for (const f of readdirSync(join(BUILD, arch)).filter((n) => n.endsWith(".exe"))) {
        const bytes = new Uint8Array(readFileSync(join(BUILD, arch, f)));
        const pe = parsePe(bytes);
        built.set(`${f}/${peCodeId(pe.timeDateStamp, pe.sizeOfImage)}`.toLowerCase(), bytes);
      }
    }
  }
  return built;
}

/** The file of `module`'s image (whose code id is `codeId`): the committed build when there is one, else the mapped image unmapped. */
export function imageFileOf(memory: MemoryReader, module: Module, codeId: string): Uint8Array {
  const committed = builtImages().get(`${module.name}/${codeId}`.toLowerCase());
  return committed ?? unmappedImage(memory, module);
}


/**
 * A dump of the deepest snapshot of the x64 recursion-callbacks sweep with only the stack's
 * memory in it (the image withheld, as most dumps hold), written to `dir`; with its truth
 * (frames' PC and SP as the JSON output writes them).
 */
export function stackOnlyDump(dir: string): { file: string; truth: [string, string][] } {
  const sweep = parseSweep(readFileSync(join(ROOT, STACK_ONLY_SWEEP), "utf8"), STACK_ONLY_SWEEP);
  let best: { bytes: Uint8Array; truth: [string, string][] } | undefined;
  let depth = 0;
  for (const v of replaySweep(sweep)) {
    const truth = v.threads[0]!.truth!;
    if (truth.length <= depth) continue;
    depth = truth.length;
    const image = v.modules[0]!;
    const ranges = v.memory.regions
      .filter((r) => r.base + BigInt(r.bytes.length) <= image.base || r.base >= image.base + image.size)
      .map((r) => ({ start: r.base, size: BigInt(r.bytes.length) }));
    const hex = (x: bigint): string => "0x" + x.toString(16).padStart(16, "0");
    best = { bytes: minidumpBytes(v, { ranges }), truth: truth.map((t) => [hex(t.pc), hex(t.sp)]) };
  }
  const file = join(dir, "rc.dmp");
  writeFileSync(file, best!.bytes);
  return { file, truth: best!.truth };
}

/** The sweep {@link stackOnlyDump} is made from, and the image it withholds. */
export const STACK_ONLY_SWEEP = "vectors/x64/c/recursion-callbacks.sweep.json";
export const STACK_ONLY_IMAGE = "vectors/programs/c/build/x64/recursion-callbacks.exe";
