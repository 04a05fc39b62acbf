/**
 * `stackwalk etw decode <file>`: decodes a file of raw EVENT_HEADER_EXTENDED_DATA_ITEMs (either
 * form, etw.md §1.2) or an `.etl` file (§5), also inside a `.zip`, and prints every item and stack.
 * Also loads `--etw FILE` inputs for `crosscheck`.
 */
import { inflateRawSync } from "node:zlib";
import { basename } from "node:path";
import { InputError } from "../errors.js";
import {
  decodeApiFile,
  decodeDiskEvents,
  decodeStackTrace,
  detectItemsForm,
  EVENT_HEADER_EXT_TYPE,
  extTypeName,
  type ExtendedDataItem,
  type StackTrace,
} from "../etw/extended-data.js";
import { looksLikeEtl, readEtl, type EtlFile, type EtlStack } from "../etw/etl.js";
import { stitchStacks, type EtwStack, type EtwStackItem } from "../etw/stitch.js";
import { EXIT, parseOptions, readInputFile, UsageError, type Io } from "./common.js";

/** The forms `--form` takes. */
export const FORMS = ["auto", "disk", "api", "etl"] as const;
type Form = (typeof FORMS)[number];

/** Usage text of `etw`. */
export const ETW_USAGE = `usage: stackwalk etw decode <file> [--form ${FORMS.join("|")}] [--summary] [--json]

Decodes ETW extended data and prints every item and every stack it carries:
- a file of raw EVENT_HEADER_EXTENDED_DATA_ITEMs in the on-disk ETL form (8-byte headers, data
  inline and padded to 8, chained by the Linkage bit; several chains in a row are several
  events), or in the API form (16-byte headers up to the first without Linkage, each DataPtr an
  offset into the same file);
- an .etl trace (XPRESS-compressed buffers included), or a .zip holding one: its STACK_TRACE32/64
  and STACK_KEY items, kernel StackWalk events and stack-key cache references resolved by their
  definitions (docs/spec/etw.md §2, §5).
STACK_TRACE items are stitched by MatchId: kernel part first, then user part; unmatched halves
are listed, flagged.
Exit status: 0 decoded, 2 bad input (the message names the byte offset).

  --form F     ${FORMS[0]} (default): recognise the form; ${FORMS.slice(1, -1).join(", ")} or ${FORMS[FORMS.length - 1]}: force it
  --summary    for an .etl, print the counts without listing every stack
  --json       print one JSON document instead
`;

/** An ETW file, decoded. */
export type LoadedEtw =
  | { kind: "items"; file: string; form: "disk" | "api"; events: ExtendedDataItem[][] }
  | { kind: "etl"; file: string; member?: string; etl: EtlFile };

/** Reads and decodes an ETW file; errors are {@link InputError}s naming the file (and the zip member). */
export function loadEtwFile(file: string, form: Form = "auto"): LoadedEtw {
  const raw = readInputFile(file);
  let bytes = raw;
  let member: { name: string; dataOffset: number } | undefined;
  try {
    if (form !== "disk" && form !== "api" && isZip(raw)) {
      const entry = etlInZip(raw);
      bytes = entry.bytes;
      member = entry;
    }
    const etl = form === "etl" || (form === "auto" && looksLikeEtl(bytes));
    if (etl) {
      const loaded: LoadedEtw = { kind: "etl", file, etl: readEtl(bytes) };
      if (member !== undefined) loaded.member = member.name;
      return loaded;
    }
    if (bytes.length === 0) throw new InputError("truncated", "the file is empty: no extended data item", { offset: 0 });
    const chosen = form === "auto" ? detectItemsForm(bytes) : form;
    const events = chosen === "api" ? [decodeApiFile(bytes)] : decodeDiskEvents(bytes);
    // Decode every stack item now, so that a bad one is reported as bad input with its offset.
    for (const items of events) for (const item of items) if (isStackTrace(item)) decodeStackTrace(item);
    return { kind: "items", file, form: chosen, events };
  } catch (e) {
    if (e instanceof InputError) {
      const inner = member === undefined ? e : inZipMember(e, member);
      throw inner.file === undefined ? inner.inFile(file) : inner;
    }
    throw e;
  }
}

function isStackTrace(item: ExtendedDataItem): boolean {
  return item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE32 || item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE64;
}

/**
 * The stack items of a loaded file, for stitching: each STACK_TRACE item of an items file; for an
 * .etl, the stacks of thread `thread` (every stack when it is undefined), StackWalk and resolved
 * stack-key stacks included. Notes say what was left out.
 */
export function etwStackItems(loaded: LoadedEtw, thread?: number): { items: EtwStackItem[]; notes: string[]; pointerSize?: 4 | 8 } {
  const name = basename(loaded.file);
  const notes: string[] = [];
  if (loaded.kind === "items") {
    const items: EtwStackItem[] = [];
    loaded.events.forEach((event, e) =>
      event.forEach((item, i) => {
        if (isStackTrace(item)) items.push({ trace: decodeStackTrace(item), source: `${name} event ${e} item ${i} (offset 0x${(item.offset ?? 0).toString(16)})` });
        else if (item.extType === EVENT_HEADER_EXT_TYPE.STACK_KEY32 || item.extType === EVENT_HEADER_EXT_TYPE.STACK_KEY64) {
          notes.push(`${name} event ${e} item ${i}: ${extTypeName(item.extType)} names a cached stack that only a trace's stack-key definitions resolve (etw.md §2.2): not compared`);
        }
      }),
    );
    return { items, notes };
  }
  const log = loaded.etl.log;
  const chosen = loaded.etl.stacks.filter((s) => thread === undefined || s.tid === thread);
  if (thread !== undefined) notes.push(`${name}: ${chosen.length} of ${loaded.etl.stacks.length} stacks belong to thread ${thread}`);
  const items = chosen
    .filter((s) => s.addresses.length > 0 || s.carrier !== "stack-key")
    .map((s): EtwStackItem => {
      const item: EtwStackItem = { trace: { matchId: s.matchId ?? 0n, addressSize: log.pointerSize, addresses: s.addresses }, source: `${name} ${etlStackName(s)}` };
      if (s.tid !== undefined) item.thread = s.tid;
      return item;
    });
  return { items, notes, pointerSize: log.pointerSize };
}

function etlStackName(s: EtlStack): string {
  const where = `buffer 0x${s.bufferOffset.toString(16)} +0x${s.recordOffset.toString(16)}`;
  if (s.carrier === "extended-item") return `${extTypeName(s.extType!)} at ${where}`;
  if (s.carrier === "stackwalk") return `StackWalk at ${where}`;
  return `${s.keyKind} stack-key 0x${s.key!.toString(16)} reference at ${where}`;
}

/** Runs `etw`. */
export function etwCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseOptions(argv, {
    form: { type: "string" },
    summary: { type: "boolean" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(ETW_USAGE);
    return EXIT.ok;
  }
  const [sub, ...files] = positionals;
  if (sub !== "decode") throw new UsageError(sub === undefined ? "etw needs a subcommand: decode" : `unknown etw subcommand "${sub}" (subcommands: decode)`);
  if (files.length !== 1) throw new UsageError(`etw decode takes exactly one file (got ${files.length})`);
  const form = (values.form ?? "auto") as Form;
  if (!(FORMS as readonly string[]).includes(form)) throw new UsageError(`--form must be one of ${FORMS.join(", ")}, not "${values.form}"`);
  const loaded = loadEtwFile(files[0]!, form);
  const { items } = etwStackItems(loaded);
  const stacks = loaded.kind === "items" ? stitchStacks(items) : [];
  if (values.json) {
    io.out(JSON.stringify(loaded.kind === "items" ? itemsJson(loaded, stacks) : etlJson(loaded, values.summary === true), null, 2) + "\n");
  } else {
    io.out(loaded.kind === "items" ? itemsText(loaded, stacks) : etlText(loaded, values.summary === true));
  }
  return EXIT.ok;
}

const addr = (v: bigint, size: 4 | 8): string => `0x${v.toString(16).padStart(size * 2, "0")}`;
const hexBytes = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

function traceText(t: StackTrace): string {
  const list = t.addresses.length === 0 ? "an empty stack" : t.addresses.map((a) => addr(a, t.addressSize)).join(" ");
  return `MatchId 0x${t.matchId.toString(16)}, ${t.addresses.length} address${t.addresses.length === 1 ? "" : "es"}: ${list}`;
}

function itemsText(loaded: Extract<LoadedEtw, { kind: "items" }>, stacks: EtwStack[]): string {
  const lines: string[] = [];
  const n = loaded.events.length;
  lines.push(`${loaded.file}: ${loaded.form === "api" ? "API-form" : "on-disk"} extended data items (etw.md §1.2), ${n} event${n === 1 ? "" : "s"}`);
  loaded.events.forEach((event, e) => {
    lines.push(`event ${e}: ${event.length} item${event.length === 1 ? "" : "s"}`);
    event.forEach((item, i) => {
      const head = `  item ${i} at 0x${(item.offset ?? 0).toString(16)}: ${extTypeName(item.extType)} (0x${item.extType.toString(16).padStart(2, "0")}), Linkage ${item.linkage ? 1 : 0}, DataSize ${item.data.length}`;
      if (isStackTrace(item)) lines.push(head, `    ${traceText(decodeStackTrace(item))}`);
      else lines.push(`${head}${item.data.length > 0 ? `: ${hexBytes(item.data)}` : ""}`);
    });
  });
  lines.push(`stacks, stitched by MatchId (etw.md §2.3): ${stacks.length}`);
  stacks.forEach((s, i) => {
    const parts = s.parts.map((p) => `${p.role} ${p.source}`).join(" + ");
    lines.push(`  stack ${i}: MatchId 0x${s.matchId.toString(16)}, ${s.status}, ${s.addresses.length} address${s.addresses.length === 1 ? "" : "es"} (${parts})`);
    for (const note of s.notes) lines.push(`    note: ${note}`);
  });
  return lines.join("\n") + "\n";
}

function itemsJson(loaded: Extract<LoadedEtw, { kind: "items" }>, stacks: EtwStack[]): unknown {
  return {
    file: loaded.file,
    form: loaded.form,
    events: loaded.events.map((event) =>
      event.map((item) => {
        const out: Record<string, unknown> = {
          offset: item.offset ?? 0,
          extType: item.extType,
          name: extTypeName(item.extType),
          linkage: item.linkage,
          reserved1: item.reserved1,
          reserved2: item.reserved2,
          dataSize: item.data.length,
        };
        if (isStackTrace(item)) {
          const t = decodeStackTrace(item);
          out["stack"] = { matchId: t.matchId.toString(), addressSize: t.addressSize, addresses: t.addresses.map((a) => addr(a, t.addressSize)) };
        } else out["data"] = hexBytes(item.data);
        return out;
      }),
    ),
    stacks: stacks.map((s) => ({
      matchId: s.matchId.toString(),
      status: s.status,
      parts: s.parts,
      addresses: s.addresses.map((a) => addr(a, s.addressSize)),
      notes: s.notes,
    })),
  };
}

function etlSummary(loaded: Extract<LoadedEtw, { kind: "etl" }>): string[] {
  const { log, counts, notes } = loaded.etl;
  const format = log.compressionFormat === undefined ? "none" : log.compressionFormat === 3 ? "XPRESS" : String(log.compressionFormat);
  const types = Object.entries(counts.headerTypes)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  const nonzero = loaded.etl.stacks.filter((s) => s.carrier === "extended-item" && s.matchId !== undefined && s.matchId !== 0n).length;
  const d = counts.keyDefinitions;
  return [
    `${loaded.file}${loaded.member !== undefined ? ` (${loaded.member})` : ""}: ETL trace (etw.md §5), pointer size ${log.pointerSize}, ${log.numberOfProcessors} processors, LogFileMode 0x${log.logFileMode.toString(16).padStart(8, "0")}, compression ${format}`,
    `  ${counts.buffers} buffers (${counts.compressedBuffers} compressed), ${counts.records} records: ${types}`,
    `  extended items: ${counts.stackTrace64} STACK_TRACE64, ${counts.stackTrace32} STACK_TRACE32 (${nonzero} with a nonzero MatchId), ${counts.stackKeyItems} STACK_KEY`,
    `  StackWalk events: ${counts.stackWalk} (${counts.stackWalkKernelOnly} kernel-only)`,
    `  stack-key references: ${counts.keyReferencesKernel} kernel + ${counts.keyReferencesUser} user, resolved by ${d.create + d.delete + d.rundown} definitions (${d.create} create, ${d.delete} delete, ${d.rundown} rundown) of ${counts.distinctKeys} keys; ${counts.unresolvedReferences} unresolved`,
    ...notes.map((n) => `  note: ${n}`),
  ];
}

function etlText(loaded: Extract<LoadedEtw, { kind: "etl" }>, summary: boolean): string {
  const lines = etlSummary(loaded);
  if (!summary) {
    const size = loaded.etl.log.pointerSize;
    loaded.etl.stacks.forEach((s, i) => {
      const who = `pid ${s.pid ?? "-"} tid ${s.tid ?? "-"} time ${s.eventTimeStamp}`;
      const match = s.matchId !== undefined ? ` MatchId 0x${s.matchId.toString(16)}` : "";
      const list = s.addresses.length === 0 ? "(unresolved)" : s.addresses.map((a) => addr(a, size)).join(" ");
      lines.push(`stack ${i}: ${etlStackName(s)}, ${who}${match}, ${s.addresses.length} addresses: ${list}`);
    });
  }
  return lines.join("\n") + "\n";
}

function etlJson(loaded: Extract<LoadedEtw, { kind: "etl" }>, summary: boolean): unknown {
  const { log, counts, notes, stacks } = loaded.etl;
  const size = log.pointerSize;
  return {
    file: loaded.file,
    member: loaded.member ?? null,
    form: "etl",
    log,
    counts,
    notes,
    stacks: summary
      ? undefined
      : stacks.map((s) => ({
          carrier: s.carrier,
          extType: s.extType === undefined ? null : extTypeName(s.extType),
          matchId: s.matchId?.toString() ?? null,
          key: s.key === undefined ? null : `0x${s.key.toString(16)}`,
          keyKind: s.keyKind ?? null,
          pid: s.pid ?? null,
          tid: s.tid ?? null,
          eventTimeStamp: s.eventTimeStamp.toString(),
          timestamp: s.timestamp.toString(),
          headerType: s.headerType,
          provider: s.provider ?? null,
          eventId: s.eventId ?? null,
          opcode: s.opcode ?? null,
          bufferOffset: s.bufferOffset,
          recordOffset: s.recordOffset,
          addresses: s.addresses.map((a) => addr(a, size)),
        })),
  };
}

const hexText = (n: number): string => `0x${n.toString(16)}`;

/**
 * An error inside a zipped member, as the archive's: it names the member and where its data
 * starts in the archive (the error's offset), with the offset in the unpacked member in words.
 */
export function inZipMember(e: InputError, member: { name: string; dataOffset: number }): InputError {
  const within = e.offset === undefined ? "" : `, at offset ${hexText(e.offset)} of the unpacked member`;
  return new InputError(e.code, `zip member ${member.name} (its data at archive offset ${hexText(member.dataOffset)})${within}: ${e.reason}`, { offset: member.dataOffset });
}

/**
 * The largest zip member inflated: 1 GiB. A member is inflated to at most the size its entry
 * declares (and no more than this), so a small archive cannot unpack to gigabytes.
 */
export const ZIP_MEMBER_LIMIT = 1 << 30;

/** Whether `bytes` start with a zip local file header. */
export function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

/**
 * The one `.etl` member of a zip archive, inflated (PKWARE APPNOTE: the end-of-central-directory
 * record, the central directory, the local header; methods 0 stored and 8 deflate).
 */
export function etlInZip(zip: Uint8Array): { name: string; bytes: Uint8Array; dataOffset: number } {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let eocd = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (v.getUint32(at, true) === 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new InputError("bad-magic", "a zip archive without an end-of-central-directory record", { offset: zip.length });
  const entries = v.getUint16(eocd + 10, true);
  let at = v.getUint32(eocd + 16, true);
  const entriesAt = eocd + 16;
  const found: { name: string; etl: boolean; method: number; compressed: number; size: number; local: number; entry: number }[] = [];
  for (let i = 0; i < entries; i++) {
    if (at + 46 > zip.length || v.getUint32(at, true) !== 0x02014b50) {
      throw new InputError("bad-value", `zip central directory entry ${i} is not at ${hexText(at)}, where the directory says${at + 46 > zip.length ? ` (the archive has ${zip.length} bytes)` : ""}`, { offset: i === 0 ? entriesAt : Math.min(at, zip.length) });
    }
    const nameLength = v.getUint16(at + 28, true);
    const decoded = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    // A name with control characters is shown quoted as JSON, so that no message breaks its line.
    const name = /[\u0000-\u001f\u007f]/.test(decoded) ? JSON.stringify(decoded) : decoded;
    found.push({ name, etl: decoded.toLowerCase().endsWith(".etl"), method: v.getUint16(at + 10, true), compressed: v.getUint32(at + 20, true), size: v.getUint32(at + 24, true), local: v.getUint32(at + 42, true), entry: at });
    at += 46 + nameLength + v.getUint16(at + 30, true) + v.getUint16(at + 32, true);
  }
  const etls = found.filter((e) => e.etl);
  if (etls.length !== 1) {
    throw new InputError("bad-value", `the zip archive holds ${etls.length} .etl files (${found.map((e) => e.name).join(", ") || "no files"}); decode needs exactly one`, { offset: 0 });
  }
  const e = etls[0]!;
  if (e.local + 30 > zip.length || v.getUint32(e.local, true) !== 0x04034b50) {
    throw new InputError("bad-value", `zip member ${e.name}: no local header at ${hexText(e.local)}, where its directory entry says${e.local + 30 > zip.length ? ` (the archive has ${zip.length} bytes)` : ""}`, { offset: e.entry + 42 });
  }
  const start = e.local + 30 + v.getUint16(e.local + 26, true) + v.getUint16(e.local + 28, true);
  if (e.compressed === 0xffff_ffff || e.size === 0xffff_ffff) throw new InputError("unsupported", `zip member ${e.name} uses ZIP64 sizes`, { offset: e.local });
  if (start + e.compressed > zip.length) {
    throw new InputError("truncated", `zip member ${e.name}: ${e.compressed} compressed bytes at ${hexText(start)} need ${start + e.compressed} bytes, the archive has ${zip.length}`, { offset: Math.min(start, e.local) });
  }
  if (e.size > ZIP_MEMBER_LIMIT) throw new InputError("unsupported", `zip member ${e.name} declares ${e.size} unpacked bytes, more than the ${ZIP_MEMBER_LIMIT} read`, { offset: e.entry + 24 });
  const data = zip.subarray(start, start + e.compressed);
  let bytes: Uint8Array;
  if (e.method === 0) bytes = data;
  else if (e.method === 8) {
    try {
      // Never more than the entry declares (one byte more shows that it would inflate further).
      bytes = new Uint8Array(inflateRawSync(data, { maxOutputLength: e.size + 1 }));
    } catch (err) {
      const why = err instanceof RangeError ? `it inflates to more than the ${e.size} bytes its entry says` : err instanceof Error ? err.message : String(err);
      throw new InputError("bad-value", `zip member ${e.name} does not inflate: ${why}`, { offset: start });
    }
  } else throw new InputError("unsupported", `zip member ${e.name} uses compression method ${e.method} (only 0 stored and 8 deflate are read)`, { offset: e.local });
  if (bytes.length !== e.size) throw new InputError("bad-value", `zip member ${e.name} inflates to ${bytes.length} bytes, not the ${e.size} its entry says`, { offset: start });
  return { name: e.name, bytes, dataOffset: start };
}
