/**
 * What walkers keep between frames and between the walks of one snapshot, in one object the
 * caller owns and passes in (framehop's `Cache`): unwind tables per module, parsed programs,
 * answers about return addresses, rules per return address, and the scratch objects the per-frame
 * code writes its extra results into. A walk makes a cache when it is given none; walks of the
 * threads of one snapshot share one. Nothing a walker learns is kept anywhere else.
 *
 * A cache holds one value per {@link CacheSlot}. A slot is declared once, by the module that
 * makes its values (`const TABLES = cacheSlot("x64 tables", () => new ImageKeyed())`); slots are
 * numbered as they are declared, so that finding a value is an array index.
 *
 * Whatever is worked out from a snapshot's images is keyed by the image memory as well as by the
 * module ({@link ImageKeyed}): one cache may serve snapshots that share modules but map different
 * images, and each gets the tables of its own.
 */
import type { MemoryReader } from "../memory/reader.js";

/** A kind of value a cache holds, and how to make its first one. */
export interface CacheSlot<T> {
  readonly id: number;
  readonly name: string;
  readonly make: () => T;
}

let declared = 0;

/** Declares a kind of value caches hold (at module level, once). */
export function cacheSlot<T>(name: string, make: () => T): CacheSlot<T> {
  return { id: declared++, name, make };
}

/** The state a walk keeps: one value per slot, made on first use. */
export class UnwindCache {
  private readonly values: unknown[] = [];

  /** This cache's value for `slot`. */
  get<T>(slot: CacheSlot<T>): T {
    let value = this.values[slot.id] as T | undefined;
    if (value === undefined) {
      value = slot.make();
      this.values[slot.id] = value;
    }
    return value;
  }
}

/**
 * Values worked out from a snapshot's image memory for one key (a module, a module list): found
 * by the memory and the key together. The last pair asked about is answered without a lookup:
 * a walk asks about one snapshot many times in a row.
 */
export class ImageKeyed<K extends object, V> {
  private readonly byImages = new WeakMap<MemoryReader, WeakMap<K, V>>();
  private lastImages: MemoryReader | undefined;
  private lastKey: K | undefined;
  private lastValue: V | undefined;

  /** The value for `images` and `key`, made by `make` on first use. */
  get(images: MemoryReader, key: K, make: () => V): V {
    if (key === this.lastKey && images === this.lastImages) return this.lastValue!;
    let byKey = this.byImages.get(images);
    if (byKey === undefined) {
      byKey = new WeakMap();
      this.byImages.set(images, byKey);
    }
    let value = byKey.get(key);
    if (value === undefined && !byKey.has(key)) {
      value = make();
      byKey.set(key, value);
    }
    this.lastImages = images;
    this.lastKey = key;
    this.lastValue = value;
    return value!;
  }
}

/** A slot of values keyed by an object alone (a parsed program per record). */
export function keyedSlot<K extends object, V>(name: string): CacheSlot<WeakMap<K, V>> {
  return cacheSlot(name, () => new WeakMap<K, V>());
}

/** The value for `key` in a keyed slot of `cache`, made by `make` on first use. */
export function keyed<K extends object, V>(cache: UnwindCache, slot: CacheSlot<WeakMap<K, V>>, key: K, make: () => V): V {
  const map = cache.get(slot);
  let value = map.get(key);
  if (value === undefined && !map.has(key)) {
    value = make();
    map.set(key, value);
  }
  return value!;
}
