/**
 * The IA-64 register stack engine as a walker sees it (ia64.md §1, documented architecture [A]):
 * the frame-marker registers (CFM, ar.pfs, cr.ifs) as bit fields of a `bigint`, backing-store
 * addressing with its NaT collection slots, and the instruction pointer as bundle + slot.
 *
 * Backing-store arithmetic follows the skip/count formulas of ia64.md §1.6 exactly. Every 64th
 * word of the backing store (an address whose bits 8..3 are all set) holds a NaT collection
 * instead of a register, so moving n registers is not moving 8·n bytes: {@link skipRegs} and
 * {@link numRegs} account for the collection slots crossed. The counts are small (a frame has at
 * most 96 registers), so the slot arithmetic runs on numbers and only the final address is a
 * bigint; `Math.trunc` gives the C division toward zero that the negative case needs.
 */
import type { MemoryReader } from "../../memory/reader.js";
import { RegionMemory } from "../../memory/region-memory.js";
import type { Registers } from "../../model/snapshot.js";

/** The most registers a frame can have (CFM.sof ≤ 96, §1.2). */
export const MAX_FRAME_REGISTERS = 96;

/** cr.ifs / StIFS bit 63: the ifm field is valid (§1.3). */
export const IFS_VALID = 1n << 63n;

/** The current frame marker (§1.2): 38 bits. */
export interface Cfm {
  /** Size of frame: inputs + locals + outputs (bits 6:0). */
  sof: number;
  /** Size of locals: inputs + locals (bits 13:7). */
  sol: number;
  /** Size of the rotating region ÷ 8 (bits 17:14). */
  sor: number;
  /** Register rename bases (bits 24:18, 31:25, 37:32). */
  rrbGr: number;
  rrbFr: number;
  rrbPr: number;
}

/** ar.pfs (§1.3): the previous frame marker, epilog count and privilege level. */
export interface Pfs {
  /** pfm, bits 37:0: a copy of the caller's CFM. */
  pfm: Cfm;
  /** pec, bits 57:52: the caller's ar.ec. */
  pec: number;
  /** ppl, bits 63:62: the caller's privilege level. */
  ppl: number;
}

/** cr.ifs, the CONTEXT's StIFS (§1.3): the interrupted frame's marker and its valid bit. */
export interface Ifs {
  valid: boolean;
  ifm: Cfm;
}

/** A CFM with every field 0 except the sizes. */
export function cfm(sof: number, sol: number, sor = 0): Cfm {
  return { sof, sol, sor, rrbGr: 0, rrbFr: 0, rrbPr: 0 };
}

function field(value: number, bits: number, name: string): bigint {
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** bits) throw new RangeError(`${name} = ${value} does not fit in ${bits} bits`);
  return BigInt(value);
}

/** Packs a CFM into its 38-bit layout; a field too wide for its bits is a RangeError. */
export function packCfm(c: Cfm): bigint {
  return (
    field(c.sof, 7, "sof") |
    (field(c.sol, 7, "sol") << 7n) |
    (field(c.sor, 4, "sor") << 14n) |
    (field(c.rrbGr, 7, "rrb.gr") << 18n) |
    (field(c.rrbFr, 7, "rrb.fr") << 25n) |
    (field(c.rrbPr, 6, "rrb.pr") << 32n)
  );
}

/** Unpacks the low 38 bits of `value` as a CFM (higher bits are ignored). */
export function unpackCfm(value: bigint): Cfm {
  return {
    sof: Number(value & 0x7fn),
    sol: Number((value >> 7n) & 0x7fn),
    sor: Number((value >> 14n) & 0xfn),
    rrbGr: Number((value >> 18n) & 0x7fn),
    rrbFr: Number((value >> 25n) & 0x7fn),
    rrbPr: Number((value >> 32n) & 0x3fn),
  };
}

/** Packs ar.pfs: pfm in bits 37:0, pec in 57:52, ppl in 63:62. */
export function packPfs(p: Pfs): bigint {
  return packCfm(p.pfm) | (field(p.pec, 6, "pec") << 52n) | (field(p.ppl, 2, "ppl") << 62n);
}

/** Unpacks ar.pfs (bits 51:38 and 61:58 are reserved and ignored). */
export function unpackPfs(value: bigint): Pfs {
  return { pfm: unpackCfm(value), pec: Number((value >> 52n) & 0x3fn), ppl: Number((value >> 62n) & 3n) };
}

/** Packs cr.ifs: ifm in bits 37:0, v in bit 63. */
export function packIfs(i: Ifs): bigint {
  return packCfm(i.ifm) | (i.valid ? IFS_VALID : 0n);
}

/** Unpacks cr.ifs. */
export function unpackIfs(value: bigint): Ifs {
  return { valid: (value & IFS_VALID) !== 0n, ifm: unpackCfm(value) };
}

/** sof of a packed CFM, PFS or IFS (bits 6:0). */
export function sofOf(marker: bigint): number {
  return Number(marker & 0x7fn);
}

/** sol of a packed CFM, PFS or IFS (bits 13:7). */
export function solOf(marker: bigint): number {
  return Number((marker >> 7n) & 0x7fn);
}

/**
 * Why a frame marker cannot describe a real frame, or undefined when it can: sol ≤ sof ≤ 96 and
 * the rotating region (sor·8 registers) fits in the frame (§1.2, `alloc`).
 */
export function frameMarkerProblem(marker: bigint): string | undefined {
  const sof = sofOf(marker);
  const sol = solOf(marker);
  const sor = Number((marker >> 14n) & 0xfn);
  if (sof > MAX_FRAME_REGISTERS) return `sof ${sof} is more than ${MAX_FRAME_REGISTERS} registers`;
  if (sol > sof) return `sol ${sol} is more than sof ${sof}`;
  if (sor * 8 > sof) return `the rotating region (sor ${sor} = ${sor * 8} registers) is larger than sof ${sof}`;
  return undefined;
}

/** slot_num(a) = (a >> 3) & 0x3f: the word's index in its 512-byte group (§1.6). */
export function slotNum(address: bigint): number {
  return Number((address >> 3n) & 0x3fn);
}

/** is_rnat_slot(a): the word holds a NaT collection, not a register (bits 8..3 all set). */
export function isRnatSlot(address: bigint): boolean {
  return (address & 0x1f8n) === 0x1f8n;
}

/** rnat_addr(a) = a | 0x1f8: the collection word that holds the NaT bit of the register at a. */
export function rnatAddr(address: bigint): bigint {
  return address | 0x1f8n;
}

/**
 * skip_regs(a, n): the backing-store address n registers from a (n < 0 moves down), skipping
 * every collection slot crossed. d = slot_num(a) + n, less 62 when n < 0; the result is
 * a + 8·(n + d/63) with the division truncated toward zero, as in C. `a` must not itself be a
 * collection slot (BSP never is).
 */
export function skipRegs(address: bigint, n: number): bigint {
  let d = Number((address >> 3n) & 0x3fn) + n;
  if (n < 0) d -= 62;
  return address + BigInt(8 * (n + Math.trunc(d / 63)));
}

/**
 * num_regs(bspstore, bsp): how many registers lie in [bspstore, bsp), not counting collection
 * slots. With s = (bsp − bspstore)/8 words, the result is s − (slot_num(bspstore) + s)/64.
 */
export function numRegs(bspstore: bigint, bsp: bigint): number {
  const s = Number((bsp - bspstore) / 8n);
  return s - Math.trunc((slotNum(bspstore) + s) / 64);
}

/**
 * The NaT bit of the register stored at `address`: bit slot_num(address) of the collection word
 * at rnat_addr(address), which is still in ar.rnat (the CONTEXT's RsRNAT) when that word is at
 * or above BSPSTORE — the RSE has not stored it yet (§1.5, the kernel's `unw_access_gr` test).
 * Returns 0 or 1, or −1 when the collection word is below BSPSTORE but cannot be read.
 */
export function natBit(address: bigint, bspstore: bigint, rnat: bigint, memory: MemoryReader): 0 | 1 | -1 {
  const collection = address | 0x1f8n;
  const bit = (address >> 3n) & 0x3fn;
  if (collection >= bspstore) return Number((rnat >> bit) & 1n) as 0 | 1;
  const word = readWord(memory, collection);
  if (word === undefined) return -1;
  return Number((word >> bit) & 1n) as 0 | 1;
}

/** The little-endian 64-bit word at `address`, or undefined when it is not all readable. */
export function readWord(memory: MemoryReader, address: bigint): bigint | undefined {
  if (memory instanceof RegionMemory) {
    // The usual case, a snapshot's own memory: one region lookup and one 8-byte read.
    const i = memory.indexOf(address);
    if (i < 0) return undefined;
    const off = Number(address - memory.regions[i]!.base);
    if (off + 8 <= memory.regions[i]!.bytes.length) return memory.viewOf(i).getBigUint64(off, true);
  }
  if (memory.u32 !== undefined) {
    const lo = memory.u32(address);
    if (lo === undefined) return undefined;
    const hi = memory.u32(address + 4n);
    if (hi === undefined) return undefined;
    return (BigInt(hi) << 32n) | BigInt(lo);
  }
  const b = memory.read(address, 8);
  if (b === undefined || b.length < 8) return undefined;
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
}

// --- Instruction effects on the register stack (§1.4) ----------------------------------------

/** The register-stack state the frame instructions change: BSP, CFM, ar.pfs, ar.ec, PSR.cpl. */
export interface RseState {
  bsp: bigint;
  /** The current frame marker, packed (§1.2). */
  cfm: bigint;
  /** ar.pfs, packed (§1.3). */
  pfs: bigint;
  ec: number;
  cpl: number;
}

/**
 * `br.call`: ar.pfs ← {pfm = CFM, pec = ar.ec, ppl = cpl}; the callee's frame is the caller's
 * outputs (sof − sol registers, sol = sor = 0, rename bases 0); BSP ← skip(BSP, sol), so the
 * caller's first output becomes the callee's r32. (The return link goes to a branch register.)
 */
export function brCall(s: RseState): RseState {
  const sof = sofOf(s.cfm);
  const sol = solOf(s.cfm);
  return { bsp: skipRegs(s.bsp, sol), cfm: BigInt(sof - sol), pfs: (s.cfm & ((1n << 38n) - 1n)) | (BigInt(s.ec & 0x3f) << 52n) | (BigInt(s.cpl & 3) << 62n), ec: s.ec, cpl: s.cpl };
}

/**
 * `alloc r1 = ar.pfs, i, l, o, r`: r1 ← ar.pfs; sof = i + l + o, sol = i + l, sor = r / 8. BSP does
 * not change. A frame of more than 96 registers, or a rotating region larger than it, is a
 * RangeError (the instruction faults).
 */
export function alloc(s: RseState, ins: number, locals: number, outs: number, rotating = 0): { state: RseState; r1: bigint } {
  const sof = ins + locals + outs;
  if (sof > MAX_FRAME_REGISTERS || rotating % 8 !== 0 || rotating > sof) throw new RangeError(`alloc ${ins}, ${locals}, ${outs}, ${rotating} is not a valid frame`);
  return { state: { ...s, cfm: packCfm(cfm(sof, ins + locals, rotating / 8)) }, r1: s.pfs };
}

/**
 * `br.ret`: CFM ← pfs.pfm, ar.ec ← pfs.pec, cpl ← ppl (privilege can only drop: the numerically
 * larger level wins), BSP ← skip(BSP, −pfs.pfm.sol).
 */
export function brRet(s: RseState): RseState {
  const pfs = unpackPfs(s.pfs);
  return { bsp: skipRegs(s.bsp, -pfs.pfm.sol), cfm: packCfm(pfs.pfm), pfs: s.pfs, ec: pfs.pec, cpl: Math.max(s.cpl, pfs.ppl) };
}

/**
 * `cover`: the current frame joins the dirty partition: BSP ← skip(BSP, sof) and CFM ← an empty
 * frame; `ifs` is what cr.ifs gets when PSR.ic = 0 (v = 1, ifm = the old CFM).
 */
export function cover(s: RseState): { state: RseState; ifs: bigint } {
  return { state: { ...s, bsp: skipRegs(s.bsp, sofOf(s.cfm)), cfm: 0n }, ifs: IFS_VALID | s.cfm };
}

// --- Instruction pointers (§4.3) -------------------------------------------------------------

/** cr.ipsr bits 42:41 (ri) in place. */
const RI_BITS = 3n << 41n;

/** cr.ipsr.ri: the slot (0-2) of the interrupted instruction, bits 42:41 (§4.1). */
export function ipsrSlot(ipsr: bigint): number {
  return Number((ipsr >> 41n) & 3n);
}

/** cr.ipsr with ri replaced by `slot`. */
export function withIpsrSlot(ipsr: bigint, slot: number): bigint {
  return (ipsr & ~(3n << 41n)) | (BigInt(slot & 3) << 41n);
}

/**
 * The address form used in AddrPC (a modelling choice [M], ia64.md §4.3): Microsoft's
 * `bundle | slot·4`, so slots 0, 1, 2 read as offsets 0, 4, 8 inside the 16-byte bundle.
 */
export function pcOf(bundle: bigint, slot: number): bigint {
  return bundle | BigInt(slot << 2);
}

/** The bundle address of a `bundle | slot·4` PC. */
export function pcBundle(pc: bigint): bigint {
  return pc & ~0xfn;
}

/** The slot of a `bundle | slot·4` PC (0-2; 3 when bits 3:2 are 11, which is no slot). */
export function pcSlot(pc: bigint): number {
  return Number((pc >> 2n) & 3n);
}

/** Whether a `bundle | slot·4` PC names a real slot: bits 1:0 clear and slot ≤ 2. */
export function isValidPc(pc: bigint): boolean {
  return (pc & 3n) === 0n && (pc & 0xcn) !== 0xcn;
}

/** The Linux/gdb form `bundle | slot` (0-2) of a `bundle | slot·4` PC [A]. */
export function toLinuxIp(pc: bigint): bigint {
  return pcBundle(pc) | BigInt(pcSlot(pc));
}

/** The `bundle | slot·4` form of a Linux/gdb `bundle | slot` IP. */
export function fromLinuxIp(ip: bigint): bigint {
  return (ip & ~0xfn) | ((ip & 3n) << 2n);
}

/**
 * AddrPC of a frame's registers: StIIP (the bundle) with StIPSR.ri as `slot·4` in bits 3:2. A
 * caller frame's StIPSR has ri = 0 (a return resumes at slot 0). Undefined without StIIP.
 */
export function ia64Pc(registers: Registers): bigint | undefined {
  const iip = registers["stiip"];
  if (iip === undefined) return undefined;
  const ipsr = registers["stipsr"];
  if (ipsr === undefined) return iip;
  const ri = ipsr & RI_BITS;
  return ri === 0n ? iip : iip | (ri >> 39n);
}
