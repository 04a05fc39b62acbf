/**
 * IA-64 unwind tables, byte for byte (ia64.md §3): the 12-byte IMAGE_IA64_RUNTIME_FUNCTION_ENTRY
 * of `.pdata` [W], the unwind info block's u64 header, and the descriptor records that follow it
 * [A]. Decoding and encoding are exact inverses for every record a canonical encoder writes
 * (ULEB128 values in their shortest form, reserved bits zero).
 *
 * The first byte of a record selects its format by its top 3 bits, differently in prologue and
 * body regions (§3.3), so decoding tracks which kind of region it is in; the P4 spill mask's
 * length also depends on the enclosing prologue's rlen. That Windows uses the same header and
 * descriptor format as the Intel/ELF convention is a modelling choice [M] (§3.2, §6).
 *
 * Bad bytes are an {@link InputError} whose offset is the byte where the bad record starts
 * (relative to what the caller says the bytes start at): a record that runs past the stream's
 * length, an undefined code, reserved bits set, a ULEB128 longer than the value range.
 */
import { hex } from "../../hex.js";
import { InputError } from "../../errors.js";

/** Size of IMAGE_IA64_RUNTIME_FUNCTION_ENTRY (§3.1). */
export const IA64_RUNTIME_FUNCTION_BYTES = 12;

/** The only unwind info version defined (§3.2). */
export const UNWIND_INFO_VERSION = 1;
/** Header flag bits, in the 16-bit flags field (bits 47:32 of the header). */
export const UNW_FLAG_EHANDLER = 0x1;
export const UNW_FLAG_UHANDLER = 0x2;
/** The OS-specific part of the flags field. */
export const UNW_FLAG_OSMASK = 0xf000;

/** One `.pdata` entry: image-relative, end exclusive, bundle-aligned (§3.1). */
export interface Ia64RuntimeFunction {
  begin: number;
  end: number;
  unwindInfo: number;
}

/** The unwind info header (§3.2). */
export interface UnwindInfoHeader {
  version: number;
  /** The 16-bit flags field (EHANDLER = bit 0, UHANDLER = bit 1 of it). */
  flags: number;
  /** Number of 8-byte words of descriptors after the header. */
  length: number;
}

/** P3 `r` values 0-11 (§3.4): where a register is kept, a GR number (or a BR for rp_br). */
export const P3_KINDS = [
  "psp_gr", "rp_gr", "pfs_gr", "preds_gr", "unat_gr", "lc_gr", "rp_br", "rnat_gr", "bsp_gr", "bspstore_gr", "fpsr_gr", "priunat_gr",
] as const;
export type P3Kind = (typeof P3_KINDS)[number];

/** P7 `r` values 0-15. */
export const P7_KINDS = [
  "mem_stack_f", "mem_stack_v", "spill_base", "psp_sprel", "rp_when", "rp_psprel", "pfs_when", "pfs_psprel",
  "preds_when", "preds_psprel", "lc_when", "lc_psprel", "unat_when", "unat_psprel", "fpsr_when", "fpsr_psprel",
] as const;
export type P7Kind = (typeof P7_KINDS)[number];

/** P8 `r` values 1-19 (index 0 is r = 1). */
export const P8_KINDS = [
  "rp_sprel", "pfs_sprel", "preds_sprel", "lc_sprel", "unat_sprel", "fpsr_sprel",
  "bsp_when", "bsp_psprel", "bsp_sprel", "bspstore_when", "bspstore_psprel", "bspstore_sprel",
  "rnat_when", "rnat_psprel", "rnat_sprel", "priunat_when_gr", "priunat_psprel", "priunat_sprel", "priunat_when_mem",
] as const;
export type P8Kind = (typeof P8_KINDS)[number];

/**
 * One descriptor record. `value` in P7/P8 is the record's ULEB128 operand: a time in slots for
 * the `*_when` and mem_stack records, pspoff for `*_psprel` and spill_base, spoff for `*_sprel`.
 */
export type UnwindRecord =
  /** R1 (rlen ≤ 31), R3 (any rlen): a region header; R2 is {@link R2Record}. */
  | { format: "R1" | "R3"; body: boolean; rlen: number }
  | R2Record
  /** P1 br_mem: b1-b5 (bits of brmask) spilled to memory. */
  | { format: "P1"; brmask: number }
  /** P2 br_gr: b1-b5 saved to consecutive GRs from gr. */
  | { format: "P2"; brmask: number; gr: number }
  | { format: "P3"; kind: P3Kind; reg: number }
  /** P4 spill_mask: 2 bits per slot of the enclosing prologue. */
  | { format: "P4"; imask: Uint8Array }
  | { format: "P5"; grmask: number; frmask: number }
  | { format: "P6"; kind: "fr_mem" | "gr_mem"; mask: number }
  | { format: "P7"; kind: P7Kind; value: number; size?: number }
  | { format: "P8"; kind: P8Kind; value: number }
  | { format: "P9"; grmask: number; gr: number }
  /** P10 unwabi: an ABI-specific frame (Linux 3,'i' = interrupt frame). */
  | { format: "P10"; abi: number; context: number }
  | { format: "B1" | "B4"; kind: "label_state" | "copy_state"; label: number }
  /** B2 (ecount ≤ 31) and B3: an epilogue starting t slots before the region's end. */
  | { format: "B2" | "B3"; ecount: number; t: number }
  /** X1: a spill of register `abreg` at time t to psp- or sp-relative memory. */
  | { format: "X1"; sprel: boolean; abreg: number; t: number; offset: number }
  /** X2: a spill of `abreg` to register `ytreg` (or a restore when x = 0 and ytreg = 0). */
  | { format: "X2"; x: number; abreg: number; ytreg: number; t: number }
  | { format: "X3"; sprel: boolean; qp: number; abreg: number; t: number; offset: number }
  | { format: "X4"; qp: number; x: number; abreg: number; ytreg: number; t: number };

/** R2: a prologue header saving rp, ar.pfs, psp and pr (mask bits 3..0) to consecutive GRs from grsave. */
export interface R2Record {
  format: "R2";
  body: false;
  rlen: number;
  mask: number;
  grsave: number;
}

/** A record and where its first byte is. */
export interface DecodedRecord {
  record: UnwindRecord;
  /** Offset of the record's first byte, as the decoder was told the bytes start. */
  offset: number;
}

/** Whether a record opens a region. */
export function isRegionHeader(r: UnwindRecord): r is { format: "R1" | "R3"; body: boolean; rlen: number } | R2Record {
  return r.format === "R1" || r.format === "R2" || r.format === "R3";
}

// --- ULEB128 ---------------------------------------------------------------------------------

/** The largest ULEB128 value decoded: what fits in a u32 (times, sizes and offsets all do). */
const ULEB_MAX = 0xffff_ffff;

/** Appends the shortest ULEB128 encoding of `value` (0 ≤ value ≤ 2^32 − 1). */
export function pushUleb128(out: number[], value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > ULEB_MAX) throw new RangeError(`ULEB128 value ${value} is not a whole number in 0..0xffffffff`);
  let v = value;
  for (;;) {
    const byte = v % 128;
    v = Math.floor(v / 128);
    if (v === 0) {
      out.push(byte);
      return;
    }
    out.push(byte | 0x80);
  }
}

// --- Decoding --------------------------------------------------------------------------------


class Reader {
  pos = 0;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly base: number,
    /** Offset (in `bytes`) of the record being decoded, for errors. */
    public start = 0,
  ) {}

  private fail(what: string): never {
    throw new InputError("truncated", `${what} runs past the end of the descriptors (${this.bytes.length} bytes)`, {
      offset: this.base + this.start,
    });
  }

  u8(what: string): number {
    if (this.pos >= this.bytes.length) this.fail(what);
    return this.bytes[this.pos++]!;
  }

  uleb(what: string): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = this.u8(what);
      value += (b & 0x7f) * scale;
      if (value > ULEB_MAX) {
        throw new InputError("bad-value", `${what} is a ULEB128 larger than 0xffffffff`, { offset: this.base + this.start });
      }
      if ((b & 0x80) === 0) return value;
      scale *= 128;
    }
  }

  take(n: number, what: string): Uint8Array {
    if (this.pos + n > this.bytes.length) this.fail(what);
    const out = this.bytes.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  bad(code: number, why: string): never {
    throw new InputError("bad-value", `descriptor byte ${hex(code)} ${why}`, { offset: this.base + this.start });
  }
}

/** A P4 spill mask's length in bytes for a prologue of `rlen` slots: 2 bits per slot. */
export function spillMaskBytes(rlen: number): number {
  return Math.floor((2 * rlen + 7) / 8);
}

function decodeX(r: Reader, code: number): UnwindRecord {
  switch (code & 7) {
    case 1: {
      const b1 = r.u8("X1");
      const t = r.uleb("X1 t");
      const offset = r.uleb("X1 offset");
      return { format: "X1", sprel: (b1 & 0x80) !== 0, abreg: b1 & 0x7f, t, offset };
    }
    case 2: {
      const b1 = r.u8("X2");
      const b2 = r.u8("X2");
      return { format: "X2", x: b1 >> 7, abreg: b1 & 0x7f, ytreg: b2, t: r.uleb("X2 t") };
    }
    case 3: {
      const b1 = r.u8("X3");
      const b2 = r.u8("X3");
      if ((b1 & 0x40) !== 0 || (b2 & 0x80) !== 0) r.bad(code, "(X3) has reserved bits set");
      const t = r.uleb("X3 t");
      const offset = r.uleb("X3 offset");
      return { format: "X3", sprel: (b1 & 0x80) !== 0, qp: b1 & 0x3f, abreg: b2 & 0x7f, t, offset };
    }
    case 4: {
      const b1 = r.u8("X4");
      const b2 = r.u8("X4");
      const b3 = r.u8("X4");
      if ((b1 & 0xc0) !== 0) r.bad(code, "(X4) has reserved bits set");
      return { format: "X4", qp: b1 & 0x3f, x: b2 >> 7, abreg: b2 & 0x7f, ytreg: b3, t: r.uleb("X4 t") };
    }
    default:
      return r.bad(code, "is not a defined descriptor");
  }
}

/** Decodes one record in a prologue region (§3.3, §3.4). */
function decodePrologueRecord(r: Reader, code: number, rlen: number): UnwindRecord {
  switch (code >> 5) {
    case 4:
      return { format: "P1", brmask: code & 0x1f };
    case 5: {
      if ((code & 0x10) === 0) {
        const b1 = r.u8("P2");
        return { format: "P2", brmask: ((code & 0xf) << 1) | (b1 >> 7), gr: b1 & 0x7f };
      }
      if ((code & 0x08) === 0) {
        const b1 = r.u8("P3");
        const which = ((code & 7) << 1) | (b1 >> 7);
        const kind = P3_KINDS[which];
        if (kind === undefined) r.bad(code, `(P3) has r = ${which}, which is not defined`);
        return { format: "P3", kind, reg: b1 & 0x7f };
      }
      if (code === 0xb8) return { format: "P4", imask: r.take(spillMaskBytes(rlen), `P4's spill mask (${spillMaskBytes(rlen)} bytes for rlen ${rlen})`) };
      if (code === 0xb9) {
        const b1 = r.u8("P5");
        const b2 = r.u8("P5");
        const b3 = r.u8("P5");
        return { format: "P5", grmask: b1 >> 4, frmask: ((b1 & 0xf) << 16) | (b2 << 8) | b3 };
      }
      return r.bad(code, "is not a defined prologue descriptor");
    }
    case 6:
      return { format: "P6", kind: (code & 0x10) !== 0 ? "gr_mem" : "fr_mem", mask: code & 0xf };
    default: {
      if ((code & 0x10) === 0) {
        const kind = P7_KINDS[code & 0xf]!;
        const value = r.uleb(`P7 ${kind}`);
        if (kind === "mem_stack_f") return { format: "P7", kind, value, size: r.uleb("P7 mem_stack_f size") };
        return { format: "P7", kind, value };
      }
      switch (code & 0xf) {
        case 0: {
          const which = r.u8("P8");
          const kind = P8_KINDS[which - 1];
          if (kind === undefined) r.bad(code, `(P8) has r = ${which}, which is not defined`);
          return { format: "P8", kind, value: r.uleb(`P8 ${kind}`) };
        }
        case 1: {
          const b1 = r.u8("P9");
          const b2 = r.u8("P9");
          if ((b1 & 0xf0) !== 0 || (b2 & 0x80) !== 0) r.bad(code, "(P9) has reserved bits set");
          return { format: "P9", grmask: b1 & 0xf, gr: b2 & 0x7f };
        }
        case 0xf:
          return { format: "P10", abi: r.u8("P10"), context: r.u8("P10") };
        case 9:
        case 0xa:
        case 0xb:
        case 0xc:
          return decodeX(r, code);
        default:
          return r.bad(code, "is not a defined prologue descriptor");
      }
    }
  }
}

/** Decodes one record in a body region. */
function decodeBodyRecord(r: Reader, code: number): UnwindRecord {
  switch (code >> 5) {
    case 4:
    case 5:
      return { format: "B1", kind: (code & 0x20) !== 0 ? "copy_state" : "label_state", label: code & 0x1f };
    case 6:
      return { format: "B2", ecount: code & 0x1f, t: r.uleb("B2 t") };
    default: {
      if ((code & 0x10) === 0) {
        if (code !== 0xe0) r.bad(code, "(B3) has reserved bits set");
        const t = r.uleb("B3 t");
        return { format: "B3", t, ecount: r.uleb("B3 ecount") };
      }
      // The kernel's unw_decode_b3_x4 looks only at bits 2:0 here (bit 3 picks copy_state for B4).
      if ((code & 7) === 0) return { format: "B4", kind: (code & 8) !== 0 ? "copy_state" : "label_state", label: r.uleb("B4 label") };
      return decodeX(r, code);
    }
  }
}

/**
 * Decodes a descriptor stream (the bytes after the info header, `8·length` of them). `base` is
 * the offset errors report for `bytes[0]`. Zero bytes at the end are padding, which decodes as
 * zero-length R1 prologue headers, harmless to the region logic (§3.2); they are returned too.
 */
export function decodeDescriptors(bytes: Uint8Array, base = 0): DecodedRecord[] {
  const r = new Reader(bytes, base);
  const out: DecodedRecord[] = [];
  let body = false;
  let rlen = 0;
  while (r.pos < bytes.length) {
    r.start = r.pos;
    const code = r.u8("record");
    let record: UnwindRecord;
    switch (code >> 5) {
      case 0:
      case 1:
        record = { format: "R1", body: (code & 0x20) !== 0, rlen: code & 0x1f };
        break;
      case 2: {
        if ((code & 0x18) !== 0) r.bad(code, "(R2) has reserved bits set");
        const b1 = r.u8("R2");
        record = { format: "R2", body: false, mask: ((code & 7) << 1) | (b1 >> 7), grsave: b1 & 0x7f, rlen: r.uleb("R2 rlen") };
        break;
      }
      case 3: {
        if ((code & 0x1e) !== 0) r.bad(code, "(R3) has reserved bits set or an undefined region type");
        record = { format: "R3", body: (code & 1) === 1, rlen: r.uleb("R3 rlen") };
        break;
      }
      default:
        record = body ? decodeBodyRecord(r, code) : decodePrologueRecord(r, code, rlen);
    }
    if (isRegionHeader(record)) {
      body = record.body;
      rlen = record.rlen;
    }
    out.push({ record, offset: base + r.start });
  }
  return out;
}

// --- Encoding --------------------------------------------------------------------------------

function bits(value: number, width: number, what: string): number {
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** width) throw new RangeError(`${what} = ${value} does not fit in ${width} bits`);
  return value;
}

/** Encodes one record (its shortest form: ULEB128 values are minimal). A field out of range is a RangeError. */
export function encodeRecord(record: UnwindRecord): Uint8Array {
  const o: number[] = [];
  switch (record.format) {
    case "R1":
      o.push((record.body ? 0x20 : 0) | bits(record.rlen, 5, "R1 rlen"));
      break;
    case "R2":
      bits(record.mask, 4, "R2 mask");
      o.push(0x40 | (record.mask >> 1), ((record.mask & 1) << 7) | bits(record.grsave, 7, "R2 grsave"));
      pushUleb128(o, record.rlen);
      break;
    case "R3":
      o.push(0x60 | (record.body ? 1 : 0));
      pushUleb128(o, record.rlen);
      break;
    case "P1":
      o.push(0x80 | bits(record.brmask, 5, "P1 brmask"));
      break;
    case "P2":
      bits(record.brmask, 5, "P2 brmask");
      o.push(0xa0 | (record.brmask >> 1), ((record.brmask & 1) << 7) | bits(record.gr, 7, "P2 gr"));
      break;
    case "P3": {
      const r = P3_KINDS.indexOf(record.kind);
      o.push(0xb0 | (r >> 1), ((r & 1) << 7) | bits(record.reg, 7, "P3 register"));
      break;
    }
    case "P4":
      o.push(0xb8, ...record.imask);
      break;
    case "P5":
      bits(record.frmask, 20, "P5 frmask");
      o.push(0xb9, (bits(record.grmask, 4, "P5 grmask") << 4) | (record.frmask >> 16), (record.frmask >> 8) & 0xff, record.frmask & 0xff);
      break;
    case "P6":
      o.push(0xc0 | (record.kind === "gr_mem" ? 0x10 : 0) | bits(record.mask, 4, "P6 mask"));
      break;
    case "P7":
      o.push(0xe0 | P7_KINDS.indexOf(record.kind));
      pushUleb128(o, record.value);
      if (record.kind === "mem_stack_f") pushUleb128(o, record.size ?? 0);
      else if (record.size !== undefined) throw new RangeError(`P7 ${record.kind} has no size`);
      break;
    case "P8":
      o.push(0xf0, P8_KINDS.indexOf(record.kind) + 1);
      pushUleb128(o, record.value);
      break;
    case "P9":
      o.push(0xf1, bits(record.grmask, 4, "P9 grmask"), bits(record.gr, 7, "P9 gr"));
      break;
    case "P10":
      o.push(0xff, bits(record.abi, 8, "P10 abi"), bits(record.context, 8, "P10 context"));
      break;
    case "B1":
      o.push(0x80 | (record.kind === "copy_state" ? 0x20 : 0) | bits(record.label, 5, "B1 label"));
      break;
    case "B2":
      o.push(0xc0 | bits(record.ecount, 5, "B2 ecount"));
      pushUleb128(o, record.t);
      break;
    case "B3":
      o.push(0xe0);
      pushUleb128(o, record.t);
      pushUleb128(o, record.ecount);
      break;
    case "B4":
      o.push(record.kind === "copy_state" ? 0xf8 : 0xf0);
      pushUleb128(o, record.label);
      break;
    case "X1":
      o.push(0xf9, (record.sprel ? 0x80 : 0) | bits(record.abreg, 7, "X1 abreg"));
      pushUleb128(o, record.t);
      pushUleb128(o, record.offset);
      break;
    case "X2":
      o.push(0xfa, (bits(record.x, 1, "X2 x") << 7) | bits(record.abreg, 7, "X2 abreg"), bits(record.ytreg, 8, "X2 ytreg"));
      pushUleb128(o, record.t);
      break;
    case "X3":
      o.push(0xfb, (record.sprel ? 0x80 : 0) | bits(record.qp, 6, "X3 qp"), bits(record.abreg, 7, "X3 abreg"));
      pushUleb128(o, record.t);
      pushUleb128(o, record.offset);
      break;
    case "X4":
      o.push(0xfc, bits(record.qp, 6, "X4 qp"), (bits(record.x, 1, "X4 x") << 7) | bits(record.abreg, 7, "X4 abreg"), bits(record.ytreg, 8, "X4 ytreg"));
      pushUleb128(o, record.t);
      break;
  }
  return Uint8Array.from(o);
}

/** Encodes records one after another (no padding). */
export function encodeDescriptors(records: readonly UnwindRecord[]): Uint8Array {
  const parts = records.map(encodeRecord);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// --- The info block and the table entry -------------------------------------------------------

/** Packs the u64 header: version in bits 63:48, flags in 47:32, length in 31:0. */
export function packUnwindInfoHeader(h: UnwindInfoHeader): bigint {
  bits(h.version, 16, "version");
  bits(h.flags, 16, "flags");
  bits(h.length, 32, "length");
  return (BigInt(h.version) << 48n) | (BigInt(h.flags) << 32n) | BigInt(h.length);
}

/** Unpacks the u64 header. */
export function unpackUnwindInfoHeader(header: bigint): UnwindInfoHeader {
  return { version: Number((header >> 48n) & 0xffffn), flags: Number((header >> 32n) & 0xffffn), length: Number(header & 0xffff_ffffn) };
}

/**
 * An unwind info block: the header, then the descriptors padded with zero bytes to whole 8-byte
 * words (the header's length counts the words). Handler data is not written.
 */
export function encodeUnwindInfo(records: readonly UnwindRecord[], flags = 0): Uint8Array {
  const body = encodeDescriptors(records);
  const words = Math.ceil(body.length / 8);
  const out = new Uint8Array(8 + 8 * words);
  new DataView(out.buffer).setBigUint64(0, packUnwindInfoHeader({ version: UNWIND_INFO_VERSION, flags, length: words }), true);
  out.set(body, 8);
  return out;
}

/** A decoded unwind info block. */
export interface UnwindInfo {
  header: UnwindInfoHeader;
  records: DecodedRecord[];
}

/**
 * Decodes the info block whose header is at `bytes[0]`; `base` is the offset errors report for it.
 * `bytes` may be longer than the block (only `8 + 8·length` bytes are used).
 */
export function decodeUnwindInfo(bytes: Uint8Array, base = 0): UnwindInfo {
  if (bytes.length < 8) throw new InputError("truncated", `the unwind info header needs 8 bytes, only ${bytes.length} are there`, { offset: base });
  const header = unpackUnwindInfoHeader(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (header.version !== UNWIND_INFO_VERSION) {
    throw new InputError("bad-value", `unwind info version ${header.version}: only version ${UNWIND_INFO_VERSION} is defined`, { offset: base });
  }
  const size = 8 * header.length;
  if (8 + size > bytes.length) {
    throw new InputError("truncated", `the unwind info's ${header.length} descriptor words (${size} bytes) run past the end of the data (${bytes.length - 8} bytes)`, { offset: base });
  }
  return { header, records: decodeDescriptors(bytes.subarray(8, 8 + size), base + 8) };
}

/** Encodes `.pdata` entries, 12 bytes each, in the order given. */
export function encodeRuntimeFunctions(entries: readonly Ia64RuntimeFunction[]): Uint8Array {
  const out = new Uint8Array(entries.length * IA64_RUNTIME_FUNCTION_BYTES);
  const v = new DataView(out.buffer);
  entries.forEach((e, i) => {
    v.setUint32(i * 12, bits(e.begin, 32, "BeginAddress"), true);
    v.setUint32(i * 12 + 4, bits(e.end, 32, "EndAddress"), true);
    v.setUint32(i * 12 + 8, bits(e.unwindInfo, 32, "UnwindInfoAddress"), true);
  });
  return out;
}

/** Decodes `.pdata` bytes; a length that is not a multiple of 12 is an InputError at the partial entry. */
export function decodeRuntimeFunctions(bytes: Uint8Array, base = 0): Ia64RuntimeFunction[] {
  const n = Math.floor(bytes.length / IA64_RUNTIME_FUNCTION_BYTES);
  if (n * IA64_RUNTIME_FUNCTION_BYTES !== bytes.length) {
    throw new InputError("truncated", `${bytes.length} bytes of .pdata is not a whole number of 12-byte IMAGE_IA64_RUNTIME_FUNCTION_ENTRYs`, { offset: base + n * 12 });
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: n }, (_, i) => ({ begin: v.getUint32(i * 12, true), end: v.getUint32(i * 12 + 4, true), unwindInfo: v.getUint32(i * 12 + 8, true) }));
}

/** A record as assembler-like text, e.g. "R1 prologue rlen=6", "P3 rp_gr r33", "P7 mem_stack_f t=2 size=2". */
export function recordText(r: UnwindRecord): string {
  switch (r.format) {
    case "R1":
    case "R3":
      return `${r.format} ${r.body ? "body" : "prologue"} rlen=${r.rlen}`;
    case "R2":
      return `R2 prologue_gr mask=${hex(r.mask)} grsave=r${r.grsave} rlen=${r.rlen}`;
    case "P3":
      return `P3 ${r.kind} ${r.kind === "rp_br" ? "b" : "r"}${r.reg}`;
    case "P7":
      return `P7 ${r.kind} ${r.kind.endsWith("when") || r.kind.startsWith("mem_stack") ? "t" : r.kind.endsWith("sprel") && !r.kind.endsWith("psprel") ? "spoff" : "pspoff"}=${r.value}${r.size !== undefined ? ` size=${r.size}` : ""}`;
    case "P8":
      return `P8 ${r.kind} ${r.kind.includes("when") ? "t" : r.kind.endsWith("psprel") ? "pspoff" : "spoff"}=${r.value}`;
    case "B1":
    case "B4":
      return `${r.format} ${r.kind} ${r.label}`;
    case "B2":
    case "B3":
      return `${r.format} epilogue t=${r.t} ecount=${r.ecount}`;
    default: {
      const { format, ...rest } = r;
      return `${format} ${Object.entries(rest).map(([k, v]) => `${k}=${v instanceof Uint8Array ? Array.from(v, (b) => b.toString(16).padStart(2, "0")).join("") : String(v)}`).join(" ")}`;
    }
  }
}
