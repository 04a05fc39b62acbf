/**
 * A bounds-checked little-endian cursor over bytes, for parsing files. Every failed read throws
 * an {@link InputError} naming the byte offset (relative to the whole input, not the view).
 */
import { hex } from "../hex.js";
import { InputError } from "../errors.js";

/** Reads little-endian values from a byte view; errors carry the absolute byte offset. */
export class ByteCursor {
  private readonly view: DataView;
  /** Current position, relative to the start of `bytes`. */
  pos: number;

  /**
   * @param bytes the bytes to read
   * @param base the absolute offset of `bytes[0]` in the whole input, used in error offsets
   */
  constructor(
    readonly bytes: Uint8Array,
    readonly base = 0,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
  }

  /** Bytes left after the current position. */
  get remaining(): number {
    return this.bytes.byteLength - this.pos;
  }

  /** The absolute offset of the current position. */
  get offset(): number {
    return this.base + this.pos;
  }

  /**
   * Throws unless `size` bytes are readable at `at` (relative); `what` names the field. The
   * error's offset lies inside the input: the field's, or the end of the input when the field
   * would start past it (the message then says where it was wanted).
   */
  need(size: number, what: string, at = this.pos): void {
    const length = this.bytes.byteLength;
    if (at < 0 || size < 0 || at + size > length) {
      const end = this.base + length;
      if (at >= 0 && at <= length) {
        throw new InputError("truncated", `${what}: needs ${size} byte(s) at offset ${hex(this.base + at)}, but the input ends at offset ${hex(end)}`, { offset: this.base + at });
      }
      const wanted = at < 0 ? `-${hex(-at)}` : hex(this.base + at);
      const why = size > 0 ? `needs ${size} byte(s) at offset ${wanted}, outside the input` : `offset ${wanted} lies outside the input`;
      throw new InputError("truncated", `${what}: ${why}, which ends at offset ${hex(end)}`, { offset: end });
    }
  }

  /** Moves to a position relative to the start of the view. */
  seek(pos: number, what = "seek"): this {
    this.need(0, what, pos);
    this.pos = pos;
    return this;
  }

  /** Skips `n` bytes. */
  skip(n: number, what = "skip"): this {
    this.need(n, what);
    this.pos += n;
    return this;
  }

  u8(what = "u8"): number {
    this.need(1, what);
    return this.view.getUint8(this.pos++);
  }

  u16(what = "u16"): number {
    this.need(2, what);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }

  u32(what = "u32"): number {
    this.need(4, what);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  i32(what = "i32"): number {
    this.need(4, what);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }

  u64(what = "u64"): bigint {
    this.need(8, what);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** A sub-view of `n` bytes (no copy); the position moves past it. */
  take(n: number, what = "bytes"): Uint8Array {
    this.need(n, what);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A cursor over the next `n` bytes whose error offsets stay absolute; this cursor moves past them. */
  sub(n: number, what = "bytes"): ByteCursor {
    const at = this.offset;
    return new ByteCursor(this.take(n, what), at);
  }
}
