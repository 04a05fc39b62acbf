/**
 * A stack-only reader of `.etl` files (etw.md §5): the buffers, their XPRESS (plain LZ77)
 * compression, the records inside them, and every stack they carry (etw.md §2.1):
 * - STACK_TRACE32/64 extended items on EVENT_HEADER records (and STACK_KEY32/64 references);
 * - kernel StackWalk events (group 0x18, opcode 32) with the stack inline;
 * - the stack-key cache: references (opcodes 37 kernel, 38 user) resolved by the next definition
 *   of their key in time order (opcodes 34, 35, 36; etw.md §2.2).
 * Addresses are read as `bigint`: kernel addresses do not fit in a double.
 */
import { hex } from "../../hex.js";
import { guidRegistryText } from "../guid.js";
import { InputError } from "../../errors.js";
import { ByteCursor } from "../../memory/cursor.js";
import { zipEntries, zipMember } from "../zip.js";
import { decodeDiskItems, decodeStackTrace, EVENT_HEADER_EXT_TYPE } from "./extended-data.js";

/** Size of WMI_BUFFER_HEADER, the header of every buffer (etw.md §5.1). */
export const WMI_BUFFER_HEADER_SIZE = 0x48;

/** WMI_BUFFER_HEADER.BufferFlag bits (etw.md §5.1). */
export const ETL_BUFFER_FLAG = {
  FLUSH_MARKER: 0x01,
  EVENTS_LOST: 0x02,
  BUFFER_LOST: 0x04,
  RTBACKUP_CORRUPT: 0x08,
  RTBACKUP: 0x10,
  PROC_INDEX: 0x20,
  COMPRESSED: 0x40,
} as const;

/**
 * What the reader accepts: a buffer (compressed or not) of at most 64 MiB. ETW's own buffers are
 * at most 16 MiB (BufferSize is given in KiB, up to 16384), so a larger one is damage, and
 * nothing is allocated for it.
 */
export const ETL_LIMITS = { maxBufferBytes: 64 * 1024 * 1024 } as const;

/** LogFileMode bit that enables buffer compression (etw.md §5.2). */
export const EVENT_TRACE_COMPRESSED_MODE = 0x0400_0000;

/** COMPRESSION_FORMAT numbers in the first buffer's State (etw.md §5.2). */
export const COMPRESSION_FORMAT = { LZNT1: 2, XPRESS: 3, XPRESS_HUFF: 4 } as const;

/** ntwmi.h TRACE_HEADER_TYPE_* values (etw.md §5.3). */
export const TRACE_HEADER_TYPE = {
  SYSTEM32: 0x01,
  SYSTEM64: 0x02,
  COMPACT32: 0x03,
  COMPACT64: 0x04,
  FULL_HEADER32: 0x0a,
  INSTANCE32: 0x0b,
  TIMED: 0x0c,
  ERROR: 0x0d,
  WNODE: 0x0e,
  MESSAGE: 0x0f,
  PERFINFO32: 0x10,
  PERFINFO64: 0x11,
  EVENT_HEADER32: 0x12,
  EVENT_HEADER64: 0x13,
  FULL_HEADER64: 0x14,
  INSTANCE64: 0x15,
} as const;

/** The StackWalk event group (HookId high byte) and its opcodes (etw.md §2.1). */
export const STACKWALK_GROUP = 0x18;
export const STACKWALK_OPCODE = { STACK_WALK: 32, KEY_CREATE: 34, KEY_DELETE: 35, KEY_RUNDOWN: 36, KEY_KERNEL: 37, KEY_USER: 38 } as const;

/** The fields of TRACE_LOGFILE_HEADER a stack reader needs (etw.md §5.3). */
export interface EtlLogHeader {
  bufferSize: number;
  version: number;
  providerVersion: number;
  numberOfProcessors: number;
  logFileMode: number;
  buffersWritten: number;
  pointerSize: 4 | 8;
  eventsLost: number;
  /** COMPRESSION_FORMAT from the first buffer's State, when LogFileMode has COMPRESSED_MODE. */
  compressionFormat?: number;
}

/** One buffer as the file holds it. */
export interface EtlBuffer {
  /** File offset of its WMI_BUFFER_HEADER. */
  offset: number;
  bufferSize: number;
  savedOffset: number;
  filledBytes: number;
  sequence: bigint;
  processor: number;
  flags: number;
  type: number;
  compressed: boolean;
  /** Records found in it. */
  records: number;
}

/** What carried a stack (etw.md §2.1). */
export type EtlStackCarrier = "extended-item" | "stackwalk" | "stack-key";

/** One stack found in the file. */
export interface EtlStack {
  carrier: EtlStackCarrier;
  /** Extended items: the ExtType (STACK_TRACE32/64, STACK_KEY32/64). */
  extType?: number;
  /** Extended items: MatchId (etw.md §2.3). */
  matchId?: bigint;
  /** Stack keys: the key, which of the two reference events named it, and the definition that resolved it. */
  key?: bigint;
  keyKind?: "kernel" | "user";
  resolvedBy?: number;
  pid?: number;
  tid?: number;
  /** The raw TimeStamp of the event the stack belongs to (StackWalk and key events: EventTimeStamp). */
  eventTimeStamp: bigint;
  /** The TimeStamp of the record itself. */
  timestamp: bigint;
  /** The record's header type (TRACE_HEADER_TYPE). */
  headerType: number;
  /** Extended items: the provider GUID, event Id and opcode of the event. */
  provider?: string;
  eventId?: number;
  opcode?: number;
  /** Innermost first. Empty for an unresolved stack-key reference. */
  addresses: bigint[];
  /** Where the record is: its buffer's file offset and its offset in the (decompressed) buffer. */
  bufferOffset: number;
  recordOffset: number;
}

/** Counts of what the reader found. */
export interface EtlCounts {
  buffers: number;
  compressedBuffers: number;
  records: number;
  /** Records per header type name. */
  headerTypes: Record<string, number>;
  stackTrace32: number;
  stackTrace64: number;
  stackKeyItems: number;
  stackWalk: number;
  /** StackWalk events whose every address is kernel-mode. */
  stackWalkKernelOnly: number;
  keyReferencesKernel: number;
  keyReferencesUser: number;
  keyDefinitions: Record<"create" | "delete" | "rundown", number>;
  distinctKeys: number;
  unresolvedReferences: number;
}

/** A decoded file. */
export interface EtlFile {
  log: EtlLogHeader;
  buffers: EtlBuffer[];
  /** Extended-item and StackWalk stacks, then stack-key references, each group in time order. */
  stacks: EtlStack[];
  counts: EtlCounts;
  notes: string[];
}

/** Whether `bytes` look like an ETL file: a buffer header followed by the SYSTEM header of the log file header (etw.md §5.3). */
export function looksLikeEtl(bytes: Uint8Array): boolean {
  if (bytes.length < WMI_BUFFER_HEADER_SIZE + 8) return false;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const marker = v.getUint32(WMI_BUFFER_HEADER_SIZE, true);
  const type = (marker >>> 16) & 0xff;
  return marker >>> 24 === 0xc0 && (type === TRACE_HEADER_TYPE.SYSTEM32 || type === TRACE_HEADER_TYPE.SYSTEM64) && v.getUint16(WMI_BUFFER_HEADER_SIZE + 6, true) === 0;
}

/**
 * The one `.etl` member of a zip archive, inflated (the public sample traces come zipped, etw.md
 * §6): its name, its bytes and where its data starts in the archive (for errors, `inZipMember`).
 */
export function etlInZip(zip: Uint8Array): { name: string; bytes: Uint8Array; dataOffset: number } {
  const found = zipEntries(zip);
  const etls = found.filter((e) => e.storedName.toLowerCase().endsWith(".etl"));
  if (etls.length !== 1) {
    throw new InputError("bad-value", `the zip archive holds ${etls.length} .etl files (${found.map((e) => e.name).join(", ") || "no files"}); decode needs exactly one`, { offset: 0 });
  }
  return zipMember(zip, etls[0]!);
}

/**
 * Decompresses plain LZ77 (MS-XCA §2.4, etw.md §5.2) to exactly `outLength` bytes. Errors name
 * the input offset (`baseOffset` + position).
 */
export function decompressLz77(input: Uint8Array, outLength: number, baseOffset = 0): Uint8Array {
  if (!Number.isSafeInteger(outLength) || outLength < 0 || outLength > ETL_LIMITS.maxBufferBytes) {
    throw new InputError("bad-value", `LZ77: an output of ${outLength} bytes is not a size from 0 to ${ETL_LIMITS.maxBufferBytes}`, { offset: baseOffset });
  }
  const out = new Uint8Array(outLength);
  const fail = (code: "truncated" | "bad-value", reason: string, at: number): never => {
    throw new InputError(code, `LZ77: ${reason}`, { offset: baseOffset + at });
  };
  let inPos = 0;
  let outPos = 0;
  let flags = 0;
  let flagCount = 0;
  let halfByteAt = -1;
  const need = (n: number): void => {
    if (inPos + n > input.length) fail("truncated", `the compressed data ends after ${input.length} bytes, with ${outLength - outPos} of ${outLength} bytes still to produce`, inPos);
  };
  const u16 = (): number => {
    need(2);
    const v = input[inPos]! | (input[inPos + 1]! << 8);
    inPos += 2;
    return v;
  };
  while (outPos < outLength) {
    if (flagCount === 0) {
      need(4);
      flags = (input[inPos]! | (input[inPos + 1]! << 8) | (input[inPos + 2]! << 16) | (input[inPos + 3]! << 24)) >>> 0;
      inPos += 4;
      flagCount = 32;
    }
    flagCount--;
    if (((flags >>> flagCount) & 1) === 0) {
      need(1);
      out[outPos++] = input[inPos++]!;
      continue;
    }
    const matchAt = inPos;
    const m = u16();
    const offset = (m >>> 3) + 1;
    let length = m & 7;
    if (length === 7) {
      if (halfByteAt < 0) {
        need(1);
        length = input[inPos]! & 15;
        halfByteAt = inPos;
        inPos++;
      } else {
        length = input[halfByteAt]! >>> 4;
        halfByteAt = -1;
      }
      if (length === 15) {
        need(1);
        length = input[inPos++]!;
        if (length === 255) {
          length = u16();
          if (length === 0) {
            need(4);
            length = (input[inPos]! | (input[inPos + 1]! << 8) | (input[inPos + 2]! << 16) | (input[inPos + 3]! << 24)) >>> 0;
            inPos += 4;
          }
          if (length < 22) fail("bad-value", `an extended match length of ${length} is below 22`, matchAt);
          length -= 22;
        }
        length += 15;
      }
      length += 7;
    }
    length += 3;
    if (offset > outPos) fail("bad-value", `a match refers ${offset} bytes back, before the start of the output (${outPos} bytes produced)`, matchAt);
    if (outPos + length > outLength) fail("bad-value", `a match of ${length} bytes runs past the expected ${outLength} bytes`, matchAt);
    for (let i = 0; i < length; i++, outPos++) out[outPos] = out[outPos - offset]!;
  }
  return out;
}


function headerTypeName(type: number): string {
  for (const [name, value] of Object.entries(TRACE_HEADER_TYPE)) if (value === type) return name;
  return hex(type);
}

/** A record's place, for error messages and results. */
interface Place {
  buffer: EtlBuffer;
  /** Offset of the record in the (decompressed) buffer. */
  at: number;
}

/** A stack-key or StackWalk event in time order, before resolution. */
interface KeyEvent {
  kind: "reference" | "definition";
  opcode: number;
  key: bigint;
  timestamp: bigint;
  order: number;
  stack?: EtlStack;
  addresses?: bigint[];
}

/**
 * Reads every buffer of an ETL file and extracts its stacks (etw.md §5.5 steps 1 to 4).
 * Errors are {@link InputError}s naming the file offset; inside a compressed buffer, the
 * buffer's offset, with the offset in the decompressed buffer in the message.
 */
export function readEtl(bytes: Uint8Array): EtlFile {
  if (!looksLikeEtl(bytes)) {
    throw new InputError("bad-magic", "not an ETL file: no WMI_BUFFER_HEADER followed by a SYSTEM header with HookId 0 (the log file header) at offset 0x48", { offset: 0 });
  }
  const notes: string[] = [];
  const buffers: EtlBuffer[] = [];
  const stacks: EtlStack[] = [];
  const keyEvents: KeyEvent[] = [];
  const headerTypes: Record<string, number> = {};
  const counts: EtlCounts = {
    buffers: 0,
    compressedBuffers: 0,
    records: 0,
    headerTypes,
    stackTrace32: 0,
    stackTrace64: 0,
    stackKeyItems: 0,
    stackWalk: 0,
    stackWalkKernelOnly: 0,
    keyReferencesKernel: 0,
    keyReferencesUser: 0,
    keyDefinitions: { create: 0, delete: 0, rundown: 0 },
    distinctKeys: 0,
    unresolvedReferences: 0,
  };
  let log: EtlLogHeader | undefined;
  let order = 0;
  let offset = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < 4) {
      notes.push(`${bytes.length - offset} byte(s) after the last buffer at offset ${hex(offset)} are not a buffer`);
      break;
    }
    const c = new ByteCursor(bytes.subarray(offset), offset);
    const bufferSize = c.u32("WMI_BUFFER_HEADER.BufferSize");
    if (bufferSize === 0) break;
    c.need(WMI_BUFFER_HEADER_SIZE, "WMI_BUFFER_HEADER", 0);
    if (bufferSize < WMI_BUFFER_HEADER_SIZE) throw new InputError("bad-value", `BufferSize ${bufferSize} is smaller than the 0x48-byte buffer header`, { offset });
    c.need(bufferSize, `a buffer of BufferSize ${hex(bufferSize)}`, 0);
    const savedOffset = c.u32("SavedOffset");
    const sequence = c.seek(0x18).u64("SequenceNumber");
    const processor = c.seek(0x28).u8("ProcessorNumber");
    const state = c.seek(0x2c).u32("State");
    const filledBytes = c.u32("FilledBytes");
    const flags = c.u16("BufferFlag");
    const type = c.u16("BufferType");
    const compressed = (flags & ETL_BUFFER_FLAG.COMPRESSED) !== 0;
    const buffer: EtlBuffer = { offset, bufferSize, savedOffset, filledBytes, sequence, processor, flags, type, compressed, records: 0 };
    let data: Uint8Array;
    let end: number;
    if (compressed) {
      if (log === undefined) throw new InputError("bad-value", "the first buffer is compressed: the log file header must be readable first", { offset });
      if (log.compressionFormat !== COMPRESSION_FORMAT.XPRESS) {
        throw new InputError("unsupported", `compressed buffer in format ${log.compressionFormat ?? "unknown"} (LogFileMode ${hex(log.logFileMode)}); only XPRESS (3, plain LZ77) is read`, { offset });
      }
      if (savedOffset < WMI_BUFFER_HEADER_SIZE) throw new InputError("bad-value", `SavedOffset ${hex(savedOffset)} of a compressed buffer is below the 0x48-byte header`, { offset: offset + 4 });
      // A compressed buffer unpacks to at most the log's buffer size: nothing larger is allocated.
      const most = Math.min(Math.max(log.bufferSize, WMI_BUFFER_HEADER_SIZE), ETL_LIMITS.maxBufferBytes);
      if (savedOffset > most) throw new InputError("bad-value", `SavedOffset ${hex(savedOffset)} of a compressed buffer (its unpacked size) exceeds the log's BufferSize ${hex(log.bufferSize)}${log.bufferSize > ETL_LIMITS.maxBufferBytes ? ` (at most ${hex(ETL_LIMITS.maxBufferBytes)} is read)` : ""}`, { offset: offset + 4 });
      data = new Uint8Array(savedOffset);
      data.set(bytes.subarray(offset, offset + WMI_BUFFER_HEADER_SIZE));
      data.set(decompressLz77(bytes.subarray(offset + WMI_BUFFER_HEADER_SIZE, offset + bufferSize), savedOffset - WMI_BUFFER_HEADER_SIZE, offset + WMI_BUFFER_HEADER_SIZE), WMI_BUFFER_HEADER_SIZE);
      end = savedOffset;
      counts.compressedBuffers++;
    } else {
      data = bytes.subarray(offset, offset + bufferSize);
      end = Math.min(filledBytes, bufferSize);
    }
    let at = WMI_BUFFER_HEADER_SIZE;
    while (at + 4 <= end) {
      const place: Place = { buffer, at };
      const record = readRecord(data, at, end, place);
      if (record === undefined) break;
      buffer.records++;
      counts.records++;
      headerTypes[headerTypeName(record.type)] = (headerTypes[headerTypeName(record.type)] ?? 0) + 1;
      const body = data.subarray(at, at + record.size);
      if (log === undefined) {
        log = readLogHeader(body, record, place, state);
      } else {
        inRecord(place, () => collect(body, record, place, log!));
      }
      at += (record.size + 7) & ~7;
    }
    buffers.push(buffer);
    counts.buffers++;
    offset += bufferSize;
  }
  if (log === undefined) throw new InputError("truncated", "the file holds no log file header record", { offset: WMI_BUFFER_HEADER_SIZE });

  function collect(body: Uint8Array, record: RecordHead, place: Place, logHeader: EtlLogHeader): void {
    const type = record.type;
    if (type === TRACE_HEADER_TYPE.EVENT_HEADER32 || type === TRACE_HEADER_TYPE.EVENT_HEADER64) {
      collectExtendedItems(body, record, place);
      return;
    }
    const grows = type === TRACE_HEADER_TYPE.SYSTEM32 || type === TRACE_HEADER_TYPE.SYSTEM64 || type === TRACE_HEADER_TYPE.COMPACT32 || type === TRACE_HEADER_TYPE.COMPACT64;
    const perfinfo = type === TRACE_HEADER_TYPE.PERFINFO32 || type === TRACE_HEADER_TYPE.PERFINFO64;
    if (!grows && !perfinfo) return;
    const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
    const hook = v.getUint16(6, true);
    if (hook >>> 8 !== STACKWALK_GROUP) return;
    const version = v.getUint16(0, true);
    const fixed = perfinfo ? 0x10 : type === TRACE_HEADER_TYPE.COMPACT32 || type === TRACE_HEADER_TYPE.COMPACT64 ? 0x18 : 0x20;
    // Growing headers (etw.md §5.3): a PEBS index adds 8 bytes, each PMC counter 8 more.
    const headerSize = fixed + ((version & 0x8000) !== 0 ? 8 : 0) + ((version & 0x700) >>> 8) * 8;
    if (headerSize > record.size) throw new InputError("bad-value", `a StackWalk record of ${record.size} bytes is smaller than its ${headerSize}-byte header`);
    const timestamp = perfinfo ? v.getBigUint64(8, true) : v.getBigUint64(0x10, true);
    const payload = new ByteCursor(body.subarray(headerSize, record.size), place.at + headerSize);
    const ptr = logHeader.pointerSize;
    const pointer = (what: string): bigint => (ptr === 8 ? payload.u64(what) : BigInt(payload.u32(what)));
    const opcode = hook & 0xff;
    const base = { headerType: type, timestamp, bufferOffset: place.buffer.offset, recordOffset: place.at };
    if (opcode === STACKWALK_OPCODE.STACK_WALK) {
      const eventTimeStamp = payload.u64("EventTimeStamp");
      const pid = payload.u32("StackProcess");
      const tid = payload.u32("StackThread");
      const addresses: bigint[] = [];
      while (payload.remaining >= ptr) addresses.push(pointer("Stack"));
      stacks.push({ carrier: "stackwalk", pid, tid, eventTimeStamp, addresses, ...base });
      counts.stackWalk++;
      if (addresses.length > 0 && addresses.every((a) => isKernel(a, ptr))) counts.stackWalkKernelOnly++;
    } else if (opcode === STACKWALK_OPCODE.KEY_KERNEL || opcode === STACKWALK_OPCODE.KEY_USER) {
      const eventTimeStamp = payload.u64("EventTimeStamp");
      const pid = payload.u32("pid");
      const tid = payload.u32("tid");
      const key = pointer("StackKey");
      const keyKind = opcode === STACKWALK_OPCODE.KEY_KERNEL ? "kernel" : "user";
      const stack: EtlStack = { carrier: "stack-key", key, keyKind, pid, tid, eventTimeStamp, addresses: [], ...base };
      if (keyKind === "kernel") counts.keyReferencesKernel++;
      else counts.keyReferencesUser++;
      keyEvents.push({ kind: "reference", opcode, key, timestamp, order: order++, stack });
    } else if (opcode === STACKWALK_OPCODE.KEY_CREATE || opcode === STACKWALK_OPCODE.KEY_DELETE || opcode === STACKWALK_OPCODE.KEY_RUNDOWN) {
      const key = pointer("StackKey");
      const addresses: bigint[] = [];
      while (payload.remaining >= ptr) addresses.push(pointer("Stack"));
      counts.keyDefinitions[opcode === STACKWALK_OPCODE.KEY_CREATE ? "create" : opcode === STACKWALK_OPCODE.KEY_DELETE ? "delete" : "rundown"]++;
      keyEvents.push({ kind: "definition", opcode, key, timestamp, order: order++, addresses });
    }
  }

  function collectExtendedItems(body: Uint8Array, record: RecordHead, place: Place): void {
    const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
    if (record.size < 0x50) throw new InputError("bad-value", `an EVENT_HEADER record of ${record.size} bytes is smaller than the 0x50-byte header`);
    const flags = v.getUint16(4, true);
    if ((flags & 1) === 0) return;
    const tid = v.getUint32(8, true);
    const pid = v.getUint32(0xc, true);
    const timestamp = v.getBigUint64(0x10, true);
    const provider = guidRegistryText(body.subarray(0x18, 0x28));
    const eventId = v.getUint16(0x28, true);
    const opcode = body[0x2d]!;
    const items = decodeDiskItems(body.subarray(0x50, record.size), place.at + 0x50);
    for (const item of items) {
      const base = { pid, tid, timestamp, eventTimeStamp: timestamp, headerType: record.type, provider, eventId, opcode, bufferOffset: place.buffer.offset, recordOffset: item.offset ?? place.at };
      if (item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE32 || item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE64) {
        const trace = decodeStackTrace(item);
        stacks.push({ carrier: "extended-item", extType: item.extType, matchId: trace.matchId, addresses: trace.addresses, ...base });
        if (trace.addressSize === 4) counts.stackTrace32++;
        else counts.stackTrace64++;
      } else if (item.extType === EVENT_HEADER_EXT_TYPE.STACK_KEY32 || item.extType === EVENT_HEADER_EXT_TYPE.STACK_KEY64) {
        const c = new ByteCursor(item.data, item.offset ?? 0);
        const matchId = c.u64("MatchId");
        const key = item.extType === EVENT_HEADER_EXT_TYPE.STACK_KEY32 ? BigInt(c.u32("StackKey")) : c.u64("StackKey");
        const stack: EtlStack = { carrier: "extended-item", extType: item.extType, matchId, key, addresses: [], ...base };
        counts.stackKeyItems++;
        keyEvents.push({ kind: "reference", opcode: 0, key, timestamp, order: order++, stack });
      }
    }
  }

  // Stack keys (etw.md §2.2): in time order, a reference binds to the next definition of its key.
  keyEvents.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.order - b.order));
  const pending = new Map<bigint, EtlStack[]>();
  const keys = new Set<bigint>();
  const references: EtlStack[] = [];
  for (const e of keyEvents) {
    if (e.kind === "reference") {
      const list = pending.get(e.key);
      if (list === undefined) pending.set(e.key, [e.stack!]);
      else list.push(e.stack!);
      references.push(e.stack!);
      continue;
    }
    keys.add(e.key);
    const waiting = pending.get(e.key);
    if (waiting !== undefined) {
      for (const s of waiting) {
        s.addresses = [...e.addresses!];
        s.resolvedBy = e.opcode;
      }
      pending.delete(e.key);
    }
  }
  counts.distinctKeys = keys.size;
  for (const list of pending.values()) counts.unresolvedReferences += list.length;
  if (counts.unresolvedReferences > 0) notes.push(`${counts.unresolvedReferences} stack-key reference(s) found no later definition of their key: their stacks are unknown (etw.md §2.2)`);
  const byTime = (a: EtlStack, b: EtlStack): number => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0);
  stacks.sort(byTime);
  return { log, buffers, stacks: [...stacks, ...references], counts, notes };
}

function isKernel(address: bigint, pointerSize: 4 | 8): boolean {
  return address >= (pointerSize === 4 ? 0x8000_0000n : 0xffff_0000_0000_0000n);
}

/** A record's header type and size. */
interface RecordHead {
  type: number;
  size: number;
}

/**
 * The record at `at` (etw.md §5.3): its header type from the first u32's flag byte, its size from
 * the header type's size field. Undefined at the end-of-records markers 0xFFFFFFFF and 0.
 */
function readRecord(data: Uint8Array, at: number, end: number, place: Place): RecordHead | undefined {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const marker = v.getUint32(at, true);
  if (marker === 0xffff_ffff || marker === 0) return undefined;
  const flagsByte = marker >>> 24;
  if ((flagsByte & 0x80) === 0) throw located(place, new InputError("bad-value", `record marker ${hex(marker)} has no trace-header flag (0x80 in its high byte)`));
  let type: number;
  if ((flagsByte & 0xc0) === 0xc0) type = (marker >>> 16) & 0xff;
  else type = TRACE_HEADER_TYPE.MESSAGE;
  const sizeAt4 =
    type === TRACE_HEADER_TYPE.SYSTEM32 ||
    type === TRACE_HEADER_TYPE.SYSTEM64 ||
    type === TRACE_HEADER_TYPE.COMPACT32 ||
    type === TRACE_HEADER_TYPE.COMPACT64 ||
    type === TRACE_HEADER_TYPE.PERFINFO32 ||
    type === TRACE_HEADER_TYPE.PERFINFO64;
  if (sizeAt4 && at + 8 > end) throw located(place, new InputError("truncated", `a ${headerTypeName(type)} record needs 8 bytes for its size field, but the buffer's data ends at ${hex(end)}`));
  const size = sizeAt4 ? v.getUint16(at + 4, true) : v.getUint16(at, true);
  if (size < 8) throw located(place, new InputError("bad-value", `a ${headerTypeName(type)} record of ${size} bytes is smaller than any trace header`));
  if (at + size > end) throw located(place, new InputError("truncated", `a ${headerTypeName(type)} record of ${size} bytes runs past the end of the buffer's data at ${hex(end)}`));
  return { type, size };
}

/** Runs `f` and re-locates its errors in the file. */
function inRecord(place: Place, f: () => void): void {
  try {
    f();
  } catch (e) {
    if (e instanceof InputError) throw located(place, e);
    throw e;
  }
}

/** An error inside a buffer, located by file offset (or by buffer offset and decompressed offset for a compressed buffer). */
function located(place: Place, e: InputError): InputError {
  const inner = e.offset ?? place.at;
  if (place.buffer.compressed) {
    return new InputError(e.code, `compressed buffer at ${hex(place.buffer.offset)}, record at decompressed offset ${hex(place.at)} (error at ${hex(inner)}): ${e.reason}`, { offset: place.buffer.offset });
  }
  return new InputError(e.code, `record at ${hex(place.buffer.offset + place.at)}: ${e.reason}`, { offset: place.buffer.offset + inner });
}

/** The log file header: the first record, a SYSTEM header with HookId 0 followed by TRACE_LOGFILE_HEADER (etw.md §5.3). */
function readLogHeader(body: Uint8Array, record: RecordHead, place: Place, state: number): EtlLogHeader {
  if (record.type !== TRACE_HEADER_TYPE.SYSTEM32 && record.type !== TRACE_HEADER_TYPE.SYSTEM64) {
    throw located(place, new InputError("bad-value", `the first record is ${headerTypeName(record.type)}, not the SYSTEM header of the log file header`));
  }
  const c = new ByteCursor(body, place.buffer.offset + place.at);
  c.seek(0x20, "TRACE_LOGFILE_HEADER");
  const bufferSize = c.u32("BufferSize");
  const version = c.u32("Version");
  const providerVersion = c.u32("ProviderVersion");
  const numberOfProcessors = c.u32("NumberOfProcessors");
  c.skip(8 + 4 + 4, "EndTime, TimerResolution, MaximumFileSize");
  const logFileMode = c.u32("LogFileMode");
  const buffersWritten = c.u32("BuffersWritten");
  c.skip(4, "StartBuffers");
  const pointerSizeAt = c.offset;
  const pointerSize = c.u32("PointerSize");
  const eventsLost = c.u32("EventsLost");
  if (pointerSize !== 4 && pointerSize !== 8) throw new InputError("bad-value", `PointerSize ${pointerSize} is neither 4 nor 8`, { offset: pointerSizeAt });
  const log: EtlLogHeader = { bufferSize, version, providerVersion, numberOfProcessors, logFileMode, buffersWritten, pointerSize, eventsLost };
  if ((logFileMode & EVENT_TRACE_COMPRESSED_MODE) !== 0) log.compressionFormat = state & 0xffff;
  return log;
}
