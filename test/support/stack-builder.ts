/**
 * Builds stack memory with labels instead of hex arrays:
 *
 *     const s = new StackBuilder(0x0012ff00n);
 *     s.mark("frame1").u32(s.ref("frame2")).u32(0x00401055);
 *
 * Labels may be referenced before they are marked; references resolve in {@link build}.
 */

/** A reference to a label's address plus an addend, resolved at build time. */
export interface LabelRef {
  label: string;
  add: bigint;
}

/** A value a slot can hold. */
export type SlotValue = bigint | number | LabelRef;

interface Slot {
  at: number;
  size: 4 | 8;
  value: SlotValue;
}

/** The built memory and the labels' addresses. */
export interface BuiltStack {
  base: bigint;
  bytes: Uint8Array;
  labels: Record<string, bigint>;
}

/** A label-based memory builder for little-endian stacks. */
export class StackBuilder {
  private readonly slots: Slot[] = [];
  private readonly labels = new Map<string, number>();
  private length = 0;

  constructor(
    readonly base: bigint,
    readonly width: 4 | 8 = 4,
  ) {}

  /** The address of the next byte. */
  here(): bigint {
    return this.base + BigInt(this.length);
  }

  /** Names the current address. */
  mark(label: string): this {
    if (this.labels.has(label)) throw new Error(`label "${label}" is marked twice`);
    this.labels.set(label, this.length);
    return this;
  }

  /** A reference to `label` (+ `add`), usable before the label is marked. */
  ref(label: string, add: number | bigint = 0): LabelRef {
    return { label, add: BigInt(add) };
  }

  /** Appends a 32-bit value. */
  u32(value: SlotValue): this {
    return this.push(4, value);
  }

  /** Appends a 64-bit value. */
  u64(value: SlotValue): this {
    return this.push(8, value);
  }

  /** Appends a pointer-sized value. */
  ptr(value: SlotValue): this {
    return this.push(this.width, value);
  }

  /** Appends `n` zero bytes. */
  zeros(n: number): this {
    this.length += n;
    return this;
  }

  /** Appends `count` pointer-sized fill words (distinctive garbage that is not an address in any module). */
  fill(count: number, value: SlotValue = 0xccccccccn): this {
    for (let i = 0; i < count; i++) this.ptr(value);
    return this;
  }

  private push(size: 4 | 8, value: SlotValue): this {
    this.slots.push({ at: this.length, size, value });
    this.length += size;
    return this;
  }

  /** Resolves labels and returns the bytes. */
  build(): BuiltStack {
    const labels: Record<string, bigint> = {};
    for (const [name, off] of this.labels) labels[name] = this.base + BigInt(off);
    const bytes = new Uint8Array(this.length);
    const view = new DataView(bytes.buffer);
    for (const slot of this.slots) {
      let v: bigint;
      if (typeof slot.value === "object") {
        const at = labels[slot.value.label];
        if (at === undefined) throw new Error(`label "${slot.value.label}" is referenced but never marked`);
        v = at + slot.value.add;
      } else v = BigInt(slot.value);
      if (slot.size === 4) view.setUint32(slot.at, Number(v & 0xffff_ffffn), true);
      else view.setBigUint64(slot.at, v & 0xffff_ffff_ffff_ffffn, true);
    }
    return { base: this.base, bytes, labels };
  }
}
