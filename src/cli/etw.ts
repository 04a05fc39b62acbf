/**
 * `stackwalk etw decode <file>`: decodes a file of raw EVENT_HEADER_EXTENDED_DATA_ITEMs (either
 * form, etw.md §1.2) or an `.etl` file (§5), also inside a `.zip`, and prints every item and stack.
 * Also loads `--etw FILE` inputs for `crosscheck`.
 */
import { basename } from "node:path";
import { InputError } from "../errors.js";
import {
  decodeApiFile,
  decodeDiskEvents,
  decodeStackTrace,
  detectItemsForm,
  etlInZip,
  EVENT_HEADER_EXT_TYPE,
  extTypeName,
  looksLikeEtl,
  readEtl,
  stitchStacks,
  type EtlFile,
  type EtlStack,
  type EtwStack,
  type EtwStackItem,
  type ExtendedDataItem,
  type StackTrace,
} from "../formats/etw.js";
import { inZipMember, isZip } from "../formats/zip.js";
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
