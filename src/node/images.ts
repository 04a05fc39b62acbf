/**
 * Module images from disk and from symbol servers, for snapshots that lack them (most dumps hold
 * only stacks). Matching images are laid under the snapshot's memory at their modules' bases with
 * the core's {@link attachSymbolFiles}, so the walk uses them as it uses an image in the dump:
 * exception directories and unwind data, code for call-site checks, FPO data, headers
 * (x64-unwind.md §1.1).
 *
 * - Image directories (`--images DIR`): `DIR/<module file name>`, matched by SizeOfImage and,
 *   when the snapshot knows it (a minidump's module list), the TimeDateStamp of its code id.
 * - Symbol paths (symbol-path.ts): the symbol-store layout for binaries (cab.md §4), in every
 *   directory and cache of the path and then on its servers: `<name>/<key>/<name>`, the
 *   compressed `<name>/<key>/<nam_>` (a cabinet, cab.ts) and `<name>/<key>/file.ptr`, the key
 *   the module's TimeDateStamp (`%08X`) and SizeOfImage (`%x`). A downloaded image is kept
 *   uncompressed in the server's cache under the same key, so the next walk reads it from disk.
 *
 * An image is used only when it is the module's: its SizeOfImage, TimeDateStamp and machine must
 * be the module's and the snapshot's; another is refused with a note. Module names come from the
 * dump and are untrusted: a name that cannot name one file in a store (store-path.ts) is never
 * looked for, and nothing is read or written outside the directories of the path but what a
 * store's own `file.ptr` points at (a local store's pointer to a file on this system; a server's
 * pointer is followed only to an http(s) URL, as one more redirect).
 */
import { readFileSync, statSync } from "node:fs";
import { basename, isAbsolute, join } from "node:path";
import { InputError } from "../errors.js";
import { CAB_MAGIC, readCabinet } from "../formats/cab.js";
import { readMappedImage } from "../formats/pe-mapped.js";
import { compressedName, imageStoreKey, isPeCodeId } from "../formats/store-path.js";
import { attachSymbolFiles, imageFile, symbolFileMismatch, type ImageFile, type SymbolTarget } from "../formats/symbol-file.js";
import type { Module } from "../model/snapshot.js";
import { DOWNLOAD_LIMITS, DownloadRun, writeAtomically, type DownloadOptions, type Fetched } from "./download.js";
import { ioReason } from "./file-source.js";
import type { SymbolPath, SymbolServer } from "./symbol-path.js";
import { isFile, readInputFile, type SymbolFileCache } from "./symbol-store.js";
import { fileNameOf } from "../path-name.js";

/** What was found for one module. */
export interface ImageNote {
  module: string;
  /** The image file used (on disk, or the cache a download was kept in). */
  file?: string;
  /** The URL the image was downloaded from (now, or into the cache it was read from). */
  url?: string;
  detail: string;
  /** What each server answered, when none had the image. */
  misses?: string[];
  /** An image was found but refused: another build, another machine, damaged, or not an image. */
  refused?: boolean;
}

/** Lays matching images under `target.memory`; returns a note per module looked at. */
export function attachImageDirectories(target: SymbolTarget, dirs: readonly string[]): ImageNote[] {
  const files: ImageFile[] = [];
  const notes: ImageNote[] = [];
  for (const module of target.modules) {
    const name = basename(module.name.replace(/\\/g, "/"));
    const reasons: string[] = [];
    let used: string | undefined;
    for (const dir of dirs) {
      const path = join(dir, name);
      try {
        if (!statSync(path).isFile()) continue;
      } catch {
        continue;
      }
      const file = imageFile(readInputFile(path), { name: path });
      const why = symbolFileMismatch(module, target.memory, file, target.machine);
      if (why !== undefined) {
        reasons.push(why);
        continue;
      }
      files.push(file);
      used = path;
      break;
    }
    const note: ImageNote = { module: module.name, detail: used !== undefined ? `image from ${used}` : reasons.length > 0 ? reasons.join("; ") : `no ${name} under ${dirs.join(", ")}` };
    if (used !== undefined) note.file = used;
    notes.push(note);
  }
  if (files.length > 0) attachSymbolFiles(target, files);
  return notes;
}

/** The most bytes of a `file.ptr` read: a path or a message. */
const POINTER_MAX_BYTES = 4096;

/** Whether the snapshot lacks `module`'s image: its headers are not at its base, or a section of it is not in memory. */
function lacksImage(module: Module, target: SymbolTarget): boolean {
  const mapped = readMappedImage(target.memory, module.base);
  if (mapped === undefined || mapped.sections === undefined) return true;
  return mapped.sections.some((s) => target.memory.read(module.base + BigInt(s.virtualAddress), 1) === undefined);
}

/**
 * A module's store directory (`name/key`), or undefined when its identity cannot name one: a code
 * id that is not a TimeDateStamp and the module's own SizeOfImage (an ELF build id), an unusable name.
 */
function storeDir(module: Module): { name: string; key: string } | undefined {
  // An ELF or Mach-O module's code id names no store directory (most of a Linux dump's modules).
  if (module.codeId === undefined || !isPeCodeId(module.codeId)) return undefined;
  try {
    const dir = imageStoreKey(module.path ?? module.name, module.codeId);
    return BigInt(`0x${dir.key.slice(8)}`) === module.size ? dir : undefined;
  } catch (e) {
    if (e instanceof InputError) return undefined;
    throw e;
  }
}

/** The three files a store may hold for an image, store-relative, in the order a client asks for them. */
function storeFiles(dir: { name: string; key: string }): { image: string; compressed: string; pointer: string } {
  const at = `${dir.name}/${dir.key}`;
  return { image: `${at}/${dir.name}`, compressed: `${at}/${compressedName(dir.name)}`, pointer: `${at}/file.ptr` };
}

/**
 * The image in `bytes`, named `name`: a PE file as it is, or the file a cabinet holds (the one
 * named like the module, else its only file), extracted with the cap `maxBytes`; else why not.
 */
function imageFromBytes(bytes: Uint8Array, name: string, moduleName: string, maxBytes: number): { file: ImageFile; bytes: Uint8Array } | string {
  const magic = String.fromCharCode(...bytes.subarray(0, 4));
  let image = bytes;
  if (magic === CAB_MAGIC) {
    try {
      const cab = readCabinet(bytes, { maxBytes });
      const wanted = moduleName.toLowerCase();
      const member = cab.files.find((f) => fileNameOf(f.name).toLowerCase() === wanted) ?? (cab.files.length === 1 ? cab.files[0] : undefined);
      if (member === undefined) return `a cabinet without ${moduleName} (it holds ${cab.files.length} file(s))`;
      image = cab.extract(member);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      return `a cabinet that cannot be read (${e.message})`;
    }
  } else if (magic === "PK\x03\x04") return "a zip archive, not a cabinet (only cabinets are read)";
  else if (!magic.startsWith("MZ")) return "not an image (no MZ header) or a cabinet (no MSCF)";
  try {
    return { file: imageFile(image, { name }), bytes: image };
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return `not an image that can be read (${e.reason})`;
  }
}

/** What a `file.ptr` says: a path or URL the file is at, or a message why it is not available. */
function readPointer(bytes: Uint8Array): { path: string } | { message: string } | { bad: string } {
  if (bytes.length > POINTER_MAX_BYTES) return { bad: `a file.ptr of ${bytes.length} bytes (at most ${POINTER_MAX_BYTES})` };
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes).replace(/^\ufeff/, "").trim();
  const clipped = (t: string): string => JSON.stringify(t.length > 200 ? `${t.slice(0, 200)}…` : t);
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(text)) return { bad: "a file.ptr that is not text" };
  const m = /^(PATH|MSG):(.*)$/s.exec(text);
  if (m === null) return { bad: `a file.ptr that says neither PATH: nor MSG: (${clipped(text)})` };
  if (m[1] === "MSG") return { message: clipped(m[2]!.trim()) };
  const path = m[2]!.trim();
  if (path === "" || /[\r\n]/.test(path)) return { bad: `a file.ptr whose PATH is ${path === "" ? "empty" : "several lines"}` };
  return { path };
}

/** Reads a file of a local store whole, when it is a file no larger than `max`; undefined when there is none, a reason when it cannot be read. */
function readLocal(path: string, max: number): Uint8Array | undefined | { why: string } {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) return undefined;
    size = st.size;
  } catch {
    return undefined;
  }
  if (size > max) return { why: `${path}: ${size} bytes, more than the ${max}-byte limit` };
  try {
    return readFileSync(path);
  } catch (e) {
    return { why: `${path}: cannot read: ${ioReason(e)}` };
  }
}

/** The server a cache belongs to, and the URL a cached file came from, when `file` is in a server's cache. */
export function cachedFrom(path: SymbolPath, file: string): string | undefined {
  const server = path.servers.find((s) => file.startsWith(`${s.cache}/`) || file.startsWith(`${s.cache}\\`));
  return server === undefined ? undefined : `${server.url}/${file.slice(server.cache.length + 1).replaceAll("\\", "/")}`;
}

/** Options of {@link attachImagePath}. */
export interface ImagePathOptions {
  /** The largest image file read, compressed or not (default: DOWNLOAD_LIMITS' 512 MiB). */
  maxBytes?: number;
  /**
   * The symbol files' cache of a batch: which store files each module identity has is then looked
   * for once for all its dumps (`SymbolFileCache.located`), as its symbol files are, and read for
   * each dump (a file gone since is looked for again).
   */
  cache?: SymbolFileCache;
}

/** A store file that may hold a module's image: the image, its compressed form, or a `file.ptr`. */
interface StoreImageFile {
  file: string;
  kind: "image" | "compressed" | "pointer";
}

/** The store files there are for an image identity under `roots`, in the order a client asks for them. */
function storeImageFiles(roots: readonly string[], dir: { name: string }, keys: readonly string[]): StoreImageFile[] {
  const out: StoreImageFile[] = [];
  for (const root of roots) {
    for (const key of keys) {
      const rel = storeFiles({ name: dir.name, key });
      for (const kind of ["image", "compressed", "pointer"] as const) {
        const file = join(root, ...rel[kind].split("/"));
        if (isFile(file)) out.push({ file, kind });
      }
    }
  }
  return out;
}

/**
 * Fills in images for the modules of `target` that lack them from the symbol-store layout in
 * the directories of `path` (stores, and server caches, where earlier walks kept what they
 * downloaded): `<name>/<key>/<name>`, the compressed `<name>/<key>/<nam_>`, and a `file.ptr`
 * pointing at a file on this system. Returns a note per module that could name a store
 * directory; one whose name or code id cannot (a vector's, an ELF module's) is not looked for.
 */
export function attachImagePath(target: SymbolTarget, path: SymbolPath, options: ImagePathOptions = {}): ImageNote[] {
  const maxBytes = options.maxBytes ?? DOWNLOAD_LIMITS.maxBytes;
  const files: ImageFile[] = [];
  const notes: ImageNote[] = [];
  for (const module of target.modules) {
    if (!lacksImage(module, target)) continue;
    const dir = storeDir(module);
    if (dir === undefined) continue;
    const refused: string[] = [];
    let used: { file: string; image: ImageFile } | undefined;
    const keys = dir.key === dir.key.toUpperCase() ? [dir.key] : [dir.key, dir.key.toUpperCase()];
    const take = (bytes: Uint8Array, file: string): boolean => {
      const got = imageFromBytes(bytes, file, dir.name, maxBytes);
      const why = typeof got === "string" ? `${file}: ${got}` : symbolFileMismatch(module, target.memory, got.file, target.machine);
      if (why !== undefined || typeof got === "string") {
        refused.push(why ?? file);
        return false;
      }
      used = { file, image: got.file };
      return true;
    };
    // Reads the store files found, in order, until one is this module's image; false when one is gone.
    const search = (candidates: readonly StoreImageFile[]): boolean => {
      refused.length = 0;
      for (const { file, kind } of candidates) {
        const bytes = readLocal(file, kind === "pointer" ? POINTER_MAX_BYTES : maxBytes);
        if (bytes === undefined) return false;
        if (!(bytes instanceof Uint8Array)) {
          refused.push(bytes.why);
          continue;
        }
        if (kind !== "pointer") {
          if (take(bytes, file)) return true;
          continue;
        }
        const pointer = readPointer(bytes);
        if ("bad" in pointer) refused.push(`${file}: ${pointer.bad}`);
        else if ("message" in pointer) refused.push(`${file}: the store says ${pointer.message}`);
        else if (!isAbsolute(pointer.path)) refused.push(`${file}: points at ${JSON.stringify(pointer.path)}, not a path on this system`);
        else {
          const target = readLocal(pointer.path, maxBytes);
          if (target === undefined) refused.push(`${file}: points at ${pointer.path}, which is not there`);
          else if (!(target instanceof Uint8Array)) refused.push(target.why);
          else if (take(target, pointer.path)) return true;
        }
      }
      return true;
    };
    const look = (): StoreImageFile[] => storeImageFiles(path.directories, dir, keys);
    // With a batch's cache, where an earlier dump found this identity's files; the folders are
    // searched again when one of them is gone since (or went while they were read).
    let located = (_again: boolean): readonly StoreImageFile[] => look();
    if (options.cache !== undefined) {
      const cache = options.cache;
      const key = `images\0${path.directories.join("\0")}\0${dir.name}\0${dir.key}`;
      located = (again) => cache.located(key, look, again);
    }
    if (!search(located(false))) search(located(true));
    if (used === undefined) {
      if (refused.length > 0) notes.push({ module: module.name, detail: refused.join("; "), refused: true });
      else notes.push({ module: module.name, detail: `no ${dir.name} ${dir.key} in ${path.directories.length === 0 ? "no directory" : path.directories.join(", ")}` });
      continue;
    }
    files.push(used.image);
    const url = cachedFrom(path, used.file);
    const note: ImageNote = { module: module.name, file: used.file, detail: `image from ${used.file}${url === undefined ? "" : ` (cached from ${url})`}` };
    if (url !== undefined) note.url = url;
    notes.push(note);
  }
  if (files.length > 0) attachSymbolFiles(target, files);
  return notes;
}

/** What {@link downloadImages} did: a note per module it asked about, and a warning per server it gave up on (and one if the run's deadline passed). */
export interface ImageDownloadResult {
  notes: ImageNote[];
  warnings: string[];
}

/**
 * Asks the servers of `path`, in order, for the image of each module of `target` that lacks one
 * and whose identity names a store directory: `<name>/<key>/<name>`, then the compressed
 * `<nam_>` (a cabinet: stored or MSZIP folders, extracted with the byte cap), then `file.ptr`
 * (a pointer to an http(s) URL is followed once, as a redirect; a pointer to a file share is a
 * note). An image whose SizeOfImage, TimeDateStamp or machine is not the module's is refused
 * with a note; a matching one is attached and kept uncompressed in the server's cache as
 * `<name>/<key>/<name>`, the name the module's identity gives. The limits, and a server given
 * up on once per run, are those of `downloadSymbols` ({@link DownloadOptions}).
 */
export async function downloadImages(target: SymbolTarget, path: SymbolPath, options: DownloadOptions = {}): Promise<ImageDownloadResult> {
  if (path.servers.length === 0) return { notes: [], warnings: [] };
  const run = new DownloadRun(options);
  const images = imageDownloader(target, path, run);
  const wanted: number[] = [];
  target.modules.forEach((m, i) => {
    if (images.wants(m)) wanted.push(i);
  });
  await run.run(wanted, (index) => images.fetch(index));
  return { notes: images.finish(), warnings: run.warnings };
}

/** The image half of a download run: which modules it wants, fetching one (by its place in the module list), and attaching what was found (in one layer) at the end. */
export function imageDownloader(target: SymbolTarget, path: SymbolPath, run: DownloadRun): { wants(m: Module): boolean; fetch(index: number): Promise<void>; finish(): ImageNote[] } {
  const found: ImageFile[] = [];
  const notes: ImageNote[] = [];
  /** Modules of one identity are fetched once. */
  const done = new Set<string>();
  const maxBytes = run.limits.maxBytes;
  return {
    wants: (m) => storeDir(m) !== undefined && lacksImage(m, target),
    // The module at `index` of the list (nothing is attached before the run ends).
    async fetch(index) {
      const module = target.modules[index]!;
      if (!lacksImage(module, target)) return;
      const dir = storeDir(module)!;
      const rel = storeFiles(dir);
      if (done.has(rel.image.toLowerCase())) return;
      done.add(rel.image.toLowerCase());
      let refused = false;
      const use = (bytes: Uint8Array, url: string, from: string, server: SymbolServer): Fetched => {
        const via = from === url ? "" : ` (redirected to ${from})`;
        const got = imageFromBytes(bytes, url, dir.name, maxBytes);
        const why = typeof got === "string" ? got : symbolFileMismatch(module, target.memory, got.file, target.machine);
        if (why !== undefined || typeof got === "string") {
          refused = true;
          return { ok: false, reason: `${why}${via}` };
        }
        // Kept uncompressed, under the name the module's identity gives, never one a server gives.
        const cached = join(server.cache, ...rel.image.split("/"));
        writeAtomically(cached, got.bytes);
        found.push(got.file);
        notes.push({ module: module.name, file: cached, url, detail: `image from ${url}${via} (cached as ${cached})` });
        return { ok: true };
      };
      let pointer: { url: string; from: string; server: SymbolServer } | undefined;
      const asked = await run.ask(module.name, path.servers, [rel.image, rel.compressed, rel.pointer], (bytes, url, from, server, r) => {
        if (r !== rel.pointer) return use(bytes, url, from, server);
        const p = readPointer(bytes);
        if ("bad" in p) return { ok: false, reason: p.bad };
        if ("message" in p) return { ok: false, reason: `the server says ${p.message}` };
        let next: URL | undefined;
        try {
          next = /^https?:\/\//i.test(p.path) ? new URL(p.path) : undefined;
        } catch {
          next = undefined;
        }
        if (next === undefined) return { ok: false, reason: `points at ${JSON.stringify(p.path)}, a path on the server's side (a file share), which is not read` };
        if (next.protocol === "http:" && new URL(from).protocol === "https:") return { ok: false, reason: `points from https to ${next.href} (plain http is not followed from https)` };
        pointer = { url: next.href, from: url, server };
        return { ok: true };
      });
      const misses = [...asked.misses];
      if (pointer !== undefined) {
        const { url, from, server } = pointer;
        const got = await run.fetch(url, server.url, (bytes, at) => use(bytes, url, at, server));
        if (got.ok) return;
        misses.push(`${from} points at ${url}: ${"givenUp" in got ? got.givenUp || "the run ended" : got.status === 404 ? "not there (404)" : got.reason}`);
      } else if (asked.found) return;
      if (misses.length === 0) return;
      const note: ImageNote = { module: module.name, detail: `no ${refused ? "usable " : ""}image on the servers for ${dir.name} ${dir.key}: ${misses.join("; ")}`, misses };
      if (refused) note.refused = true;
      notes.push(note);
    },
    finish() {
      if (found.length > 0) attachSymbolFiles(target, found);
      const order = new Map(target.modules.map((m, i) => [m.name, i]));
      return notes.sort((a, b) => (order.get(a.module) ?? 0) - (order.get(b.module) ?? 0));
    },
  };
}
