/**
 * The dump's structures as the writer builds them in memory before they go out: a growable
 * little-endian buffer addressed by file offset.
 */
import { hex } from "../../hex.js";

const U32_MAX = 0xffff_ffff;

/** A growable little-endian buffer addressed by absolute file offset. */
export class Structures {
  private buf = new Uint8Array(4096);
  private view = new DataView(this.buf.buffer);
  length = 0;

  /** Reserves `size` zero bytes at the next offset aligned to `align`; returns the offset. */
  alloc(size: number, align = 4): number {
    const at = Math.ceil(this.length / align) * align;
    this.grow(at + size);
    this.length = at + size;
    return at;
  }

  private grow(n: number): void {
    if (n <= this.buf.length) return;
    let size = this.buf.length;
    while (size < n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf);
    this.buf = b;
    this.view = new DataView(b.buffer);
  }

  u8(at: number, v: number): void {
    this.buf[at] = v;
  }
  u16(at: number, v: number): void {
    this.view.setUint16(at, v, true);
  }
  u32(at: number, v: number): void {
    if (!Number.isInteger(v) || v < 0 || v > U32_MAX) throw new RangeError(`minidump writer: ${v} does not fit a u32 field at offset ${hex(at)}`);
    this.view.setUint32(at, v, true);
  }
  u64(at: number, v: bigint): void {
    this.view.setBigUint64(at, v, true);
  }
  bytes(at: number, b: Uint8Array): void {
    this.buf.set(b, at);
  }

  /** A MINIDUMP_STRING (u32 byte length, UTF-16LE, NUL); returns its RVA. */
  string(text: string): number {
    const at = this.alloc(4 + 2 * text.length + 2);
    this.u32(at, 2 * text.length);
    for (let i = 0; i < text.length; i++) this.u16(at + 4 + 2 * i, text.charCodeAt(i));
    return at;
  }

  /** The structures built so far. */
  used(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}
