/**
 * EVENT_HEADER_EXTENDED_DATA_ITEM in its two forms (etw.md §1.2) and the stack items it carries
 * (§1.5). The API form is the 16-byte struct `EVENT_RECORD.ExtendedData` points at, whose
 * DataPtr refers to memory elsewhere; the on-disk ETL form is an 8-byte header with the data
 * inline, padded to 8 bytes, chained by the Linkage bit.
 */
import { hex, hexPadded } from "../../hex.js";
import { InputError } from "../../errors.js";
import { ByteCursor } from "../../memory/cursor.js";

/** EVENT_HEADER_EXT_TYPE_* values (etw.md §1.3). MAX is not a bound: it changed between SDKs. */
export const EVENT_HEADER_EXT_TYPE = {
  RELATED_ACTIVITYID: 0x01,
  SID: 0x02,
  TS_ID: 0x03,
  INSTANCE_INFO: 0x04,
  STACK_TRACE32: 0x05,
  STACK_TRACE64: 0x06,
  PEBS_INDEX: 0x07,
  PMC_COUNTERS: 0x08,
  PSM_KEY: 0x09,
  EVENT_KEY: 0x0a,
  EVENT_SCHEMA_TL: 0x0b,
  PROV_TRAITS: 0x0c,
  PROCESS_START_KEY: 0x0d,
  CONTROL_GUID: 0x0e,
  QPC_DELTA: 0x0f,
  CONTAINER_ID: 0x10,
  STACK_KEY32: 0x11,
  STACK_KEY64: 0x12,
} as const;

/** The name of an ExtType, or `0x..` for a value no header defines. */
export function extTypeName(extType: number): string {
  for (const [name, value] of Object.entries(EVENT_HEADER_EXT_TYPE)) if (value === extType) return name;
  return hexPadded(extType, 4);
}

/** One extended data item; unknown types keep their data as raw bytes. */
export interface ExtendedDataItem {
  extType: number;
  /** Linkage bit: another item follows this one. */
  linkage: boolean;
  /** Reserved1 (API form only; 0 on disk). */
  reserved1: number;
  /** Bits 1-15 of the linkage word. */
  reserved2: number;
  data: Uint8Array;
  /** Byte offset of the item in the input it was decoded from. */
  offset?: number;
}

/** Size of the API-form header (etw.md §1.2). */
export const API_ITEM_SIZE = 16;
/** Size of the on-disk header that precedes the inline data. */
export const DISK_ITEM_HEADER_SIZE = 8;

/**
 * Decodes `count` API-form items (16 bytes each) from `headers`. Each DataPtr must point into
 * `memory`, a buffer that starts at address `memoryBase` (the process memory the record lived in).
 */
export function decodeApiItems(headers: Uint8Array, count: number, memory: Uint8Array, memoryBase: bigint, baseOffset = 0): ExtendedDataItem[] {
  const c = new ByteCursor(headers, baseOffset);
  const items: ExtendedDataItem[] = [];
  for (let i = 0; i < count; i++) {
    const offset = c.offset;
    const reserved1 = c.u16("Reserved1");
    const extType = c.u16("ExtType");
    const word = c.u16("Linkage");
    const dataSize = c.u16("DataSize");
    const ptrAt = c.offset;
    const dataPtr = c.u64("DataPtr");
    const start = dataPtr - memoryBase;
    if (dataPtr < memoryBase || start + BigInt(dataSize) > BigInt(memory.length)) {
      throw new InputError(
        "bad-value",
        `item ${i}: DataPtr ${hex(dataPtr)} + DataSize ${dataSize} is outside the data buffer ${hex(memoryBase)}..${hex(memoryBase + BigInt(memory.length))}`,
        { offset: ptrAt },
      );
    }
    const s = Number(start);
    items.push({ extType, linkage: (word & 1) === 1, reserved1, reserved2: word >> 1, data: memory.subarray(s, s + dataSize), offset });
  }
  return items;
}

/** Encodes items in the API form: 16-byte headers, and the data packed (8-aligned) into a buffer at `dataBase`. */
export function encodeApiItems(items: readonly ExtendedDataItem[], dataBase: bigint): { headers: Uint8Array; data: Uint8Array } {
  const headers = new Uint8Array(API_ITEM_SIZE * items.length);
  const hv = new DataView(headers.buffer);
  let size = 0;
  for (const it of items) size += align8(it.data.length);
  const data = new Uint8Array(size);
  let at = 0;
  items.forEach((it, i) => {
    checkDataSize(it.data.length, i);
    const o = i * API_ITEM_SIZE;
    hv.setUint16(o, it.reserved1, true);
    hv.setUint16(o + 2, it.extType, true);
    hv.setUint16(o + 4, (it.reserved2 << 1) | (it.linkage ? 1 : 0), true);
    hv.setUint16(o + 6, it.data.length, true);
    hv.setBigUint64(o + 8, dataBase + BigInt(at), true);
    data.set(it.data, at);
    at += align8(it.data.length);
  });
  return { headers, data };
}

/**
 * Decodes an on-disk chain of items starting at the beginning of `bytes` (etw.md §1.2): each has
 * a total size (header + data, rounded up to 8), the type, the Linkage bit and DataSize; the chain
 * ends at the first item whose Linkage is 0.
 */
export function decodeDiskItems(bytes: Uint8Array, baseOffset = 0): ExtendedDataItem[] {
  return decodeDiskChain(bytes, baseOffset).items;
}

/** One on-disk chain and the position just past its last item (relative to `bytes`). */
function decodeDiskChain(bytes: Uint8Array, baseOffset: number): { items: ExtendedDataItem[]; end: number } {
  const c = new ByteCursor(bytes, baseOffset);
  const items: ExtendedDataItem[] = [];
  for (;;) {
    const offset = c.offset;
    const start = c.pos;
    const total = c.u16("item size");
    const extType = c.u16("ExtType");
    const word = c.u16("Linkage");
    const dataSize = c.u16("DataSize");
    if (total < DISK_ITEM_HEADER_SIZE + dataSize) {
      throw new InputError("bad-value", `item size ${total} is smaller than its header (8) plus DataSize ${dataSize}`, { offset });
    }
    c.need(total, `item of ${total} bytes`, start);
    const data = c.take(dataSize, "item data");
    c.seek(start + total);
    const linkage = (word & 1) === 1;
    items.push({ extType, linkage, reserved1: 0, reserved2: word >> 1, data, offset });
    if (!linkage) return { items, end: c.pos };
    if (c.remaining === 0) throw new InputError("truncated", "the Linkage bit says another item follows, but the input ends", { offset: c.offset });
  }
}

/**
 * Decodes a sequence of on-disk chains, one per event, until the end of `bytes` (zero bytes
 * after the last chain are padding). An empty input holds no event.
 */
export function decodeDiskEvents(bytes: Uint8Array, baseOffset = 0): ExtendedDataItem[][] {
  const events: ExtendedDataItem[][] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.subarray(at).every((b) => b === 0)) break;
    const { items, end } = decodeDiskChain(bytes.subarray(at), baseOffset + at);
    events.push(items);
    at += end;
  }
  return events;
}

/**
 * Decodes a file in the API form: 16-byte EVENT_HEADER_EXTENDED_DATA_ITEM headers up to the first
 * whose Linkage bit is clear, each DataPtr an offset into the same file (where a producer that
 * dumps `EVENT_RECORD.ExtendedData` with its data would put them).
 */
export function decodeApiFile(bytes: Uint8Array, baseOffset = 0): ExtendedDataItem[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (;;) {
    const at = count * API_ITEM_SIZE;
    if (at + API_ITEM_SIZE > bytes.length) {
      throw new InputError("truncated", `${count === 0 ? "the first item header" : `the Linkage bit of item ${count - 1} says another item follows, but its 16-byte header`} runs past the end of the input`, {
        offset: baseOffset + at,
      });
    }
    count++;
    if ((v.getUint16(at + 4, true) & 1) === 0) break;
  }
  return decodeApiItems(bytes.subarray(0, count * API_ITEM_SIZE), count, bytes, 0n, baseOffset);
}

/** The two forms a file of raw extended-data items can take (etw.md §1.2). */
export type ItemsForm = "disk" | "api";

/**
 * Tells the forms apart by their first item: an on-disk item starts with its total size, at least
 * 8 + DataSize and within the input; an API header starts with Reserved1 (0 in practice) and has
 * a DataPtr at offset 8 that, in a file, points past the headers and within the input.
 */
export function detectItemsForm(bytes: Uint8Array): ItemsForm {
  if (bytes.length < DISK_ITEM_HEADER_SIZE) return "disk";
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const first = v.getUint16(0, true);
  const dataSize = v.getUint16(6, true);
  const disk = first >= DISK_ITEM_HEADER_SIZE + dataSize && first <= bytes.length;
  let api = false;
  if (bytes.length >= API_ITEM_SIZE) {
    const ptr = v.getBigUint64(8, true);
    api = ptr >= BigInt(API_ITEM_SIZE) && ptr + BigInt(dataSize) <= BigInt(bytes.length);
  }
  if (api && (first === 0 || !disk)) return "api";
  return "disk";
}

/** Encodes items in the on-disk form; Linkage is set on every item but the last. */
export function encodeDiskItems(items: readonly ExtendedDataItem[]): Uint8Array {
  let size = 0;
  for (const it of items) size += DISK_ITEM_HEADER_SIZE + align8(it.data.length);
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  let at = 0;
  items.forEach((it, i) => {
    checkDataSize(it.data.length, i);
    const total = DISK_ITEM_HEADER_SIZE + align8(it.data.length);
    v.setUint16(at, total, true);
    v.setUint16(at + 2, it.extType, true);
    v.setUint16(at + 4, (it.reserved2 << 1) | (i < items.length - 1 ? 1 : 0), true);
    v.setUint16(at + 6, it.data.length, true);
    out.set(it.data, at + DISK_ITEM_HEADER_SIZE);
    at += total;
  });
  return out;
}

/** A decoded STACK_TRACE32/64 item: innermost address first (etw.md §1.5). */
export interface StackTrace {
  matchId: bigint;
  addressSize: 4 | 8;
  addresses: bigint[];
}

/** The address count of a stack item: (DataSize − 8) / size; an error when that is not whole. */
export function stackTraceCount(dataSize: number, addressSize: 4 | 8, offset = 0): number {
  if (dataSize < 8) throw new InputError("bad-value", `a stack item needs at least 8 bytes for MatchId, DataSize is ${dataSize}`, { offset });
  if ((dataSize - 8) % addressSize !== 0) {
    throw new InputError("bad-value", `DataSize ${dataSize} leaves ${(dataSize - 8) % addressSize} byte(s) after MatchId that are not a whole ${addressSize}-byte address`, { offset });
  }
  return (dataSize - 8) / addressSize;
}

/** Decodes a STACK_TRACE32 (ExtType 5) or STACK_TRACE64 (ExtType 6) item. */
export function decodeStackTrace(item: ExtendedDataItem): StackTrace {
  const at = item.offset ?? 0;
  const size = item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE32 ? 4 : item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE64 ? 8 : 0;
  if (size === 0) throw new InputError("bad-value", `item type ${extTypeName(item.extType)} is not a stack trace`, { offset: at });
  const count = stackTraceCount(item.data.length, size, at);
  const c = new ByteCursor(item.data, at);
  const matchId = c.u64("MatchId");
  const addresses: bigint[] = [];
  for (let i = 0; i < count; i++) addresses.push(size === 4 ? BigInt(c.u32("Address")) : c.u64("Address"));
  return { matchId, addressSize: size, addresses };
}

/** Encodes a stack trace as a STACK_TRACE32 or STACK_TRACE64 item. */
export function encodeStackTrace(trace: StackTrace): ExtendedDataItem {
  const data = new Uint8Array(8 + trace.addressSize * trace.addresses.length);
  const v = new DataView(data.buffer);
  v.setBigUint64(0, trace.matchId, true);
  trace.addresses.forEach((a, i) => {
    if (trace.addressSize === 4) v.setUint32(8 + 4 * i, Number(a & 0xffff_ffffn), true);
    else v.setBigUint64(8 + 8 * i, a, true);
  });
  const extType = trace.addressSize === 4 ? EVENT_HEADER_EXT_TYPE.STACK_TRACE32 : EVENT_HEADER_EXT_TYPE.STACK_TRACE64;
  return { extType, linkage: false, reserved1: 0, reserved2: 0, data };
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

function checkDataSize(n: number, index: number): void {
  if (n > 0xffff - DISK_ITEM_HEADER_SIZE - 7) throw new RangeError(`item ${index}: ${n} bytes of data do not fit the 16-bit DataSize and item size`);
}
