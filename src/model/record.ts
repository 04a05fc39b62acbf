/**
 * A small field-table codec for the fixed-layout, little-endian Windows records the project
 * models byte for byte (stackwalk64.md §2, minidump.md §3, ia64.md §4.1, x86-fpo.md §1).
 *
 * A record is described once, as data: a name, a total size and a table of fields with their
 * byte offsets. The same table drives encoding, decoding, bounds checks and any view that wants
 * to list offsets. Bytes that no field names (padding, areas the model leaves opaque) are never
 * touched by the encoder, so they keep whatever the target buffer held.
 */
import { hex } from "../hex.js";
import { InputError } from "../errors.js";

/** How a field's bytes are interpreted: little-endian unsigned integers, or raw bytes. */
export type FieldKind = "u8" | "u16" | "u32" | "u64" | "bytes";

/** A decoded field value: u8/u16/u32 as number, u64 as bigint, bytes as a copy. */
export type FieldValue = number | bigint | Uint8Array;

/** One row of a field table. */
export interface FieldSpec {
  /** The field's name as the SDK header spells it; array elements as `Params[0]`. */
  readonly name: string;
  /** Byte offset from the start of the record. */
  readonly offset: number;
  /** Size in bytes. */
  readonly size: number;
  /** How the bytes are read and written. */
  readonly kind: FieldKind;
  /** A short note for listings. */
  readonly doc?: string;
  /** For a `bytes` field that holds a nested record: that record's layout. */
  readonly record?: RecordLayout;
}

/** A record layout: a name, the total size (including padding) and the field table. */
export interface RecordLayout {
  /** The record's SDK name, e.g. `STACKFRAME64`. */
  readonly name: string;
  /** sizeof the record in bytes. */
  readonly size: number;
  /** Fields in offset order. */
  readonly fields: readonly FieldSpec[];
}

/** Field values keyed by field name. */
export type FieldValues = Record<string, FieldValue>;

/** Values to encode, keyed by field name; integer fields accept number or bigint. */
export type FieldInput = Readonly<Record<string, number | bigint | Uint8Array>>;

const KIND_SIZE: Readonly<Record<Exclude<FieldKind, "bytes">, number>> = { u8: 1, u16: 2, u32: 4, u64: 8 };

/**
 * Builds a layout and checks it: every field inside the record, integer sizes matching their
 * kind, fields in ascending offset order without overlap, names unique. A bad table is a
 * programming error, so it throws a plain Error at module load.
 */
export function defineLayout(name: string, size: number, fields: readonly FieldSpec[]): RecordLayout {
  if (!Number.isInteger(size) || size <= 0) throw new Error(`${name}: bad record size ${size}`);
  const seen = new Set<string>();
  let end = 0;
  for (const f of fields) {
    if (seen.has(f.name)) throw new Error(`${name}.${f.name}: duplicate field name`);
    seen.add(f.name);
    if (f.kind !== "bytes" && KIND_SIZE[f.kind] !== f.size) {
      throw new Error(`${name}.${f.name}: kind ${f.kind} needs size ${KIND_SIZE[f.kind]}, not ${f.size}`);
    }
    if (f.record !== undefined && (f.kind !== "bytes" || f.record.size !== f.size)) {
      throw new Error(`${name}.${f.name}: nested ${f.record.name} must be a bytes field of size ${f.record.size}`);
    }
    if (!Number.isInteger(f.offset) || f.offset < end) throw new Error(`${name}.${f.name}: overlaps or is out of order`);
    if (f.size <= 0 || f.offset + f.size > size) throw new Error(`${name}.${f.name}: lies outside the ${size}-byte record`);
    end = f.offset + f.size;
  }
  return Object.freeze({ name, size, fields: Object.freeze(fields.map((f) => Object.freeze({ ...f }))) });
}

/** The field called `name`; throws a RangeError if the layout has none. */
export function fieldOf(layout: RecordLayout, name: string): FieldSpec {
  const f = layout.fields.find((x) => x.name === name);
  if (f === undefined) throw new RangeError(`${layout.name} has no field ${name}`);
  return f;
}

/**
 * The layout with nested records expanded into their leaf fields, named `Outer.Inner` and placed
 * at their offsets from the start of the outer record. Useful for listings and for tests.
 */
export function flattenLayout(layout: RecordLayout): FieldSpec[] {
  const out: FieldSpec[] = [];
  for (const f of layout.fields) {
    if (f.record === undefined) {
      out.push(f);
      continue;
    }
    for (const inner of flattenLayout(f.record)) {
      const leaf: FieldSpec = { name: `${f.name}.${inner.name}`, offset: f.offset + inner.offset, size: inner.size, kind: inner.kind };
      out.push(inner.doc === undefined ? leaf : { ...leaf, doc: inner.doc });
    }
  }
  return out;
}

/** A DataView over exactly the bytes of `bytes`, honouring its byteOffset into a larger buffer. */
export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function checkStart(layout: RecordLayout, offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`${layout.name}: bad offset ${offset}`);
}

/**
 * Throws an InputError ("truncated") unless a whole `layout` record fits in `bytes` at `offset`.
 * The error's offset is the start of the first leaf field that does not fit entirely, counted
 * from the start of `bytes`; when only trailing padding is missing it is the end of the input.
 */
export function requireRecord(layout: RecordLayout, bytes: Uint8Array, offset = 0): void {
  checkStart(layout, offset);
  if (offset + layout.size <= bytes.byteLength) return;
  const cut = flattenLayout(layout).find((f) => offset + f.offset + f.size > bytes.byteLength);
  const at = cut === undefined ? bytes.byteLength : offset + cut.offset;
  const what = cut === undefined ? "its trailing padding" : `field ${cut.name}`;
  throw new InputError(
    "truncated",
    `${layout.name} (${layout.size} bytes at offset ${hex(offset)}) is cut off at ${what}: the input is ${bytes.byteLength} bytes`,
    { offset: at },
  );
}

/** Decodes every field of a `layout` record found at `offset` in `bytes`. */
export function decodeFields(layout: RecordLayout, bytes: Uint8Array, offset = 0): FieldValues {
  requireRecord(layout, bytes, offset);
  const view = viewOf(bytes);
  const out: FieldValues = {};
  for (const f of layout.fields) {
    const at = offset + f.offset;
    switch (f.kind) {
      case "u8":
        out[f.name] = view.getUint8(at);
        break;
      case "u16":
        out[f.name] = view.getUint16(at, true);
        break;
      case "u32":
        out[f.name] = view.getUint32(at, true);
        break;
      case "u64":
        out[f.name] = view.getBigUint64(at, true);
        break;
      case "bytes":
        out[f.name] = bytes.slice(at, at + f.size);
        break;
    }
  }
  return out;
}

function integerIn(layout: RecordLayout, f: FieldSpec, value: number | bigint, bits: number): bigint {
  const max = (1n << BigInt(bits)) - 1n;
  let v: bigint;
  if (typeof value === "bigint") v = value;
  else if (Number.isSafeInteger(value)) v = BigInt(value);
  else throw new RangeError(`${layout.name}.${f.name} = ${value} is not an integer`);
  if (v < 0n || v > max) throw new RangeError(`${layout.name}.${f.name} = ${value} is out of range 0..${hex(max)}`);
  return v;
}

/**
 * Writes the given fields of a `layout` record into `out` at `offset` (a new zeroed buffer of
 * the record's size when `out` is omitted) and returns `out`. Fields missing from `values`, and
 * bytes no field names, are left as they were. An unknown field name or a value that does not
 * fit its field throws a RangeError naming the field.
 */
export function encodeFields(layout: RecordLayout, values: FieldInput, out?: Uint8Array, offset = 0): Uint8Array {
  const target = out ?? new Uint8Array(layout.size);
  checkStart(layout, offset);
  if (offset + layout.size > target.byteLength) {
    throw new RangeError(`${layout.name}: ${layout.size} bytes do not fit at offset ${offset} of a ${target.byteLength}-byte buffer`);
  }
  for (const name of Object.keys(values)) fieldOf(layout, name);
  const view = viewOf(target);
  for (const f of layout.fields) {
    const value = values[f.name];
    if (value === undefined) continue;
    const at = offset + f.offset;
    if (f.kind === "bytes") {
      if (!(value instanceof Uint8Array) || value.byteLength !== f.size) {
        throw new RangeError(`${layout.name}.${f.name} needs exactly ${f.size} bytes`);
      }
      target.set(value, at);
      continue;
    }
    if (value instanceof Uint8Array) throw new RangeError(`${layout.name}.${f.name} needs an integer, not bytes`);
    const v = integerIn(layout, f, value, f.size * 8);
    switch (f.kind) {
      case "u8":
        view.setUint8(at, Number(v));
        break;
      case "u16":
        view.setUint16(at, Number(v), true);
        break;
      case "u32":
        view.setUint32(at, Number(v), true);
        break;
      case "u64":
        view.setBigUint64(at, v, true);
        break;
    }
  }
  return target;
}

/** The number stored under `name` in decoded values (a u8, u16 or u32 field). */
export function numberField(values: FieldValues, name: string): number {
  const v = values[name];
  if (typeof v !== "number") throw new TypeError(`field ${name} is not a 32-bit-or-smaller integer`);
  return v;
}

/** The bigint stored under `name` in decoded values (a u64 field). */
export function bigintField(values: FieldValues, name: string): bigint {
  const v = values[name];
  if (typeof v !== "bigint") throw new TypeError(`field ${name} is not a 64-bit integer`);
  return v;
}

/** The bytes stored under `name` in decoded values (a bytes field). */
export function bytesField(values: FieldValues, name: string): Uint8Array {
  const v = values[name];
  if (!(v instanceof Uint8Array)) throw new TypeError(`field ${name} is not a bytes field`);
  return v;
}
