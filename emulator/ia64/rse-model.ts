/**
 * The register stack engine as the model executor runs it (ia64.md §1, documented architecture
 * [A]), written independently of the walker's `src/arch/ia64/rse.ts` so that the two check each
 * other: backing-store addresses are found by stepping one register at a time and stepping over
 * every collection slot (the naive walker the spec's formulas are tested against), not with the
 * skip_regs formula.
 */

/** Whether the backing-store word at `address` is a NaT collection (bits 8..3 all set, §1.5). */
export function isCollectionSlot(address: bigint): boolean {
  return ((address >> 3n) & 0x3fn) === 0x3fn;
}

/** The address of the register `n` registers after (n < 0: before) the one at `address`, one slot at a time. */
export function stepRegisters(address: bigint, n: number): bigint {
  let a = address;
  const step = n < 0 ? -8n : 8n;
  for (let i = 0; i < Math.abs(n); i++) {
    a += step;
    if (isCollectionSlot(a)) a += step;
  }
  return a;
}

/** A frame marker (CFM layout, §1.2): sof in bits 6:0, sol in bits 13:7 (sor and the rename bases 0). */
export function frameMarker(sof: number, sol: number): bigint {
  return BigInt(sof) | (BigInt(sol) << 7n);
}

/** ar.pfs after a br.call (§1.3, §1.4): pfm = the caller's CFM, pec = its ar.ec, ppl = its privilege level. */
export function previousFunctionState(cfm: bigint, ec: number, ppl: number): bigint {
  return cfm | (BigInt(ec) << 52n) | (BigInt(ppl) << 62n);
}

/** cr.ifs as `cover` writes it (§1.3): v = bit 63, ifm = the CFM. */
export function interruptionFrameState(cfm: bigint): bigint {
  return (1n << 63n) | cfm;
}
