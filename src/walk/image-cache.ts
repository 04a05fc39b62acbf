/**
 * A value kept per snapshot image memory and module list: what walkers learn from code bytes
 * (whether a word is a return address) does not change during a walk, and walks ask about one
 * snapshot many times in a row, so the last pair asked about is answered without a lookup.
 */
import type { MemoryReader } from "../memory/reader.js";
import type { Module } from "../model/snapshot.js";

export class ImageCache<V> {
  private readonly byImages = new WeakMap<MemoryReader, WeakMap<readonly Module[], V>>();
  private lastImages: MemoryReader | undefined;
  private lastModules: readonly Module[] | undefined;
  private lastValue: V | undefined;

  constructor(private readonly make: () => V) {}

  /** The value for `images` and `modules`, made on first use. */
  get(modules: readonly Module[], images: MemoryReader): V {
    if (modules === this.lastModules && images === this.lastImages) return this.lastValue!;
    let byModules = this.byImages.get(images);
    if (byModules === undefined) {
      byModules = new WeakMap();
      this.byImages.set(images, byModules);
    }
    let value = byModules.get(modules);
    if (value === undefined) {
      value = this.make();
      byModules.set(modules, value);
    }
    this.lastModules = modules;
    this.lastImages = images;
    this.lastValue = value;
    return value;
  }
}
