/**
 * A snapshot's memory with images laid under it: reads come from the snapshot, and where it has
 * no bytes (a minidump rarely holds its modules' code and unwind tables), from image files mapped
 * at their modules' bases (`--images`). Never throws.
 */
import type { MemoryReader } from "./reader.js";
import { RegionMemory, type MemoryRegion } from "./region-memory.js";

/** `top` first, then `images` for what `top` lacks. */
export class OverlayMemory implements MemoryReader {
  private readonly below: RegionMemory;

  constructor(
    private readonly top: MemoryReader,
    images: readonly MemoryRegion[],
  ) {
    this.below = new RegionMemory(images);
  }

  read(address: bigint, size: number): Uint8Array | undefined {
    return this.top.read(address, size) ?? this.below.read(address, size);
  }

  u32(address: bigint): number | undefined {
    const v = this.top.u32 !== undefined ? this.top.u32(address) : undefined;
    if (v !== undefined) return v;
    const b = this.read(address, 4);
    return b === undefined ? undefined : (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }

  u32n(address: number): number | undefined {
    return (this.top.u32n !== undefined ? this.top.u32n(address) : undefined) ?? this.below.u32n(address);
  }
}
