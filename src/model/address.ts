/**
 * ADDRESS and ADDRESS64: the segment:offset pairs a STACKFRAME uses for PC, return address,
 * frame, stack and backing store (stackwalk64.md §1, §2.1).
 *
 * Mode is a 4-byte ADDRESS_MODE enum whose value 0 is AddrMode1616, so a record that a caller
 * only zeroed describes a 16:16 segmented address, not a flat one.
 */
import { bigintField, decodeFields, defineLayout, encodeFields, numberField } from "./record.js";
import type { RecordLayout } from "./record.js";

/** ADDRESS_MODE values (stackwalk64.md §1). */
export const AddressMode = { Mode1616: 0, Mode1632: 1, Real: 2, Flat: 3 } as const;

/** One of the four ADDRESS_MODE values. */
export type AddressMode = (typeof AddressMode)[keyof typeof AddressMode];

/** ADDRESS64: a 64-bit offset, a segment selector and an ADDRESS_MODE (kept as the raw u32). */
export interface Address64 {
  offset: bigint;
  segment: number;
  mode: number;
}

/** ADDRESS (32-bit): the offset is a DWORD, held as a bigint in 0..2^32-1. */
export interface Address32 {
  offset: bigint;
  segment: number;
  mode: number;
}

/** sizeof(ADDRESS64). */
export const ADDRESS64_SIZE = 16;

/** sizeof(ADDRESS). */
export const ADDRESS32_SIZE = 12;

/** ADDRESS64 field table: 2 bytes of padding at 0xA align Mode to 4 (stackwalk64.md §2.1). */
export const ADDRESS64_LAYOUT: RecordLayout = defineLayout("ADDRESS64", ADDRESS64_SIZE, [
  { name: "Offset", offset: 0x0, size: 8, kind: "u64", doc: "DWORD64 linear or segment offset" },
  { name: "Segment", offset: 0x8, size: 2, kind: "u16", doc: "segment selector; ignored in flat mode" },
  { name: "Mode", offset: 0xc, size: 4, kind: "u32", doc: "ADDRESS_MODE; 0 is AddrMode1616" },
]);

/** ADDRESS (32-bit) field table: 2 bytes of padding at 0x6 (stackwalk64.md §2.1). */
export const ADDRESS32_LAYOUT: RecordLayout = defineLayout("ADDRESS", ADDRESS32_SIZE, [
  { name: "Offset", offset: 0x0, size: 4, kind: "u32", doc: "DWORD offset" },
  { name: "Segment", offset: 0x4, size: 2, kind: "u16", doc: "segment selector; ignored in flat mode" },
  { name: "Mode", offset: 0x8, size: 4, kind: "u32", doc: "ADDRESS_MODE; 0 is AddrMode1616" },
]);

/** An all-zero ADDRESS64, as a memset caller leaves it: offset 0, mode AddrMode1616. */
export function zeroAddress64(): Address64 {
  return { offset: 0n, segment: 0, mode: AddressMode.Mode1616 };
}

/** An all-zero ADDRESS (mode AddrMode1616). */
export function zeroAddress32(): Address32 {
  return { offset: 0n, segment: 0, mode: AddressMode.Mode1616 };
}

/** A flat ADDRESS64 at `offset`, segment 0: what callers must set up for AddrPC, AddrFrame, AddrStack. */
export function flatAddress64(offset: bigint): Address64 {
  return { offset, segment: 0, mode: AddressMode.Flat };
}

/** A flat ADDRESS at `offset` (0..2^32-1), segment 0. */
export function flatAddress32(offset: bigint): Address32 {
  return { offset, segment: 0, mode: AddressMode.Flat };
}

/** Writes an ADDRESS64 at `at` in `out` (a new 16-byte buffer when omitted) and returns the buffer. */
export function encodeAddress64(a: Address64, out?: Uint8Array, at = 0): Uint8Array {
  return encodeFields(ADDRESS64_LAYOUT, { Offset: a.offset, Segment: a.segment, Mode: a.mode }, out, at);
}

/** Reads an ADDRESS64 at `offset`; a short input throws InputError("truncated"). */
export function decodeAddress64(bytes: Uint8Array, offset = 0): Address64 {
  const v = decodeFields(ADDRESS64_LAYOUT, bytes, offset);
  return { offset: bigintField(v, "Offset"), segment: numberField(v, "Segment"), mode: numberField(v, "Mode") };
}

/** Writes an ADDRESS at `at` in `out` (a new 12-byte buffer when omitted) and returns the buffer. */
export function encodeAddress32(a: Address32, out?: Uint8Array, at = 0): Uint8Array {
  return encodeFields(ADDRESS32_LAYOUT, { Offset: a.offset, Segment: a.segment, Mode: a.mode }, out, at);
}

/** Reads an ADDRESS at `offset`; a short input throws InputError("truncated"). */
export function decodeAddress32(bytes: Uint8Array, offset = 0): Address32 {
  const v = decodeFields(ADDRESS32_LAYOUT, bytes, offset);
  return { offset: BigInt(numberField(v, "Offset")), segment: numberField(v, "Segment"), mode: numberField(v, "Mode") };
}

/** ADDRESS → ADDRESS64 as Wine converts internally: the offset is zero-extended (stackwalk64.md §2.1). */
export function address32To64Zero(a: Address32): Address64 {
  return { offset: BigInt.asUintN(32, a.offset), segment: a.segment, mode: a.mode };
}

/**
 * ADDRESS → ADDRESS64 as dbghelp.h's Address32To64 does: the offset is sign-extended, so
 * 0x80000000 becomes 0xFFFFFFFF80000000 (stackwalk64.md §2.1).
 */
export function address32To64Sign(a: Address32): Address64 {
  return { offset: BigInt.asUintN(64, BigInt.asIntN(32, a.offset)), segment: a.segment, mode: a.mode };
}

/** ADDRESS64 → ADDRESS as dbghelp.h's Address64To32 does: the offset keeps its low 32 bits. */
export function address64To32(a: Address64): Address32 {
  return { offset: BigInt.asUintN(32, a.offset), segment: a.segment, mode: a.mode };
}
