/**
 * The rule an IA-64 frame carries (unwind/rule.ts has the kinds every machine shares) and its
 * words: where rp, ar.pfs and psp were saved at the frame's slot, what was read, and the backing
 * store's step. arch/rule.ts puts it in the one union, arch/rule-text.ts dispatches its text here.
 */
import { hex } from "../../hex.js";

/** Where an IA-64 frame's saved register is found. */
export type SaveLocation =
  /** In a general register (n ≥ 32: the backing store at skip(bsp, n − 32)). */
  | { kind: "gr"; reg: number }
  /** In memory at psp + offset (offset = 0x10 − 4·pspoff). */
  | { kind: "psprel"; offset: number }
  /** In memory at sp + offset (offset = 4·spoff). */
  | { kind: "sprel"; offset: number };

/** Where rp is: saved, or still in a branch register (b0, or the one rp_br names). */
export type RpLocation = (SaveLocation & { when: number }) | { kind: "br"; reg: number };
/** Where ar.pfs is: saved, or still live in ar.pfs. */
export type PfsLocation = (SaveLocation & { when: number }) | { kind: "live" };

/** How the caller's sp (this frame's psp) is found. */
export type PspRule =
  /** No frame is allocated (yet, or any more): psp = sp. */
  | { kind: "sp" }
  /** mem_stack_f: psp = sp + size. */
  | { kind: "fixed"; size: number; when: number }
  /** mem_stack_v: psp was saved in a GR or at sp + offset. */
  | { kind: "gr"; reg: number; when: number }
  | { kind: "sprel"; offset: number; when: number };

/** Where an IA-64 function keeps rp, ar.pfs and psp at a frame's IP (ia64.md §2 steps 2-7). */
export interface Ia64Locations {
  rp: RpLocation;
  pfs: PfsLocation;
  psp: PspRule;
}

/**
 * One IA-64 unwind step (ia64.md §2) from the function's unwind descriptors at slot `whenTarget`,
 * or from the leaf rule: rp read at `rpAt` (a register when absent), and the caller's BSP
 * skip(`bsp`, −`sol`). `outermost`: rp was 0.
 */
export interface Ia64Rule extends Ia64Locations {
  kind: "ia64";
  function: { module: string; begin: number; whenTarget: number } | { leaf: string };
  rpAt?: number | bigint;
  bsp: bigint;
  sol: number;
  callerBsp: bigint;
  outermost?: true;
}

/** An IA-64 save location as text: "r33", "[psp-0x10]", "[sp+0x20]". */
export function saveLocationText(l: SaveLocation): string {
  const off = (base: string, o: number): string => `[${base}${o < 0 ? "-" : "+"}${hex(Math.abs(o))}]`;
  return l.kind === "gr" ? `r${l.reg}` : l.kind === "psprel" ? off("psp", l.offset) : off("sp", l.offset);
}

/** An IA-64 psp rule as text: "psp=sp+0x20". */
export function pspText(p: PspRule): string {
  switch (p.kind) {
    case "sp":
      return "psp=sp";
    case "fixed":
      return `psp=sp+${hex(p.size)}`;
    case "gr":
      return `psp=r${p.reg}`;
    case "sprel":
      return `psp=[sp+${hex(p.offset)}]`;
  }
}

/** Where rp, ar.pfs and psp are, as one line: "rp=r33 pfs=r34 psp=sp+0x20". */
export function stateText(s: Ia64Locations): string {
  const rp = s.rp.kind === "br" ? `rp=b${s.rp.reg}` : `rp=${saveLocationText(s.rp)}`;
  const pfs = s.pfs.kind === "live" ? "pfs=ar.pfs" : `pfs=${saveLocationText(s.pfs)}`;
  return `${rp} ${pfs} ${pspText(s.psp)}`;
}

/** The IA-64 rule's own part: `ia64 app.exe+0x1000 t=5 rp=r33 pfs=r34 psp=sp`, or the leaf rule. */
export function ia64Label(r: Pick<Ia64Rule, "function" | "rp" | "pfs" | "psp">): string {
  const f = r.function;
  return "leaf" in f ? `ia64 leaf (${f.leaf}): ${stateText(r)}` : `ia64 ${f.module}+${hex(f.begin)} t=${f.whenTarget} ${stateText(r)}`;
}

/** An IA-64 rule in words (arch/rule-text.ts `ruleText` dispatches here). */
export function ia64RuleText(r: Ia64Rule): string {
  const label = ia64Label(r);
  if (r.outermost === true) return `${label}; rp = 0: the outermost frame`;
  const rp = r.rpAt === undefined ? "" : ` rp@[${hex(r.rpAt)}]`;
  return `${label};${rp} bsp=skip(${hex(r.bsp)}, -${r.sol})=${hex(r.callerBsp)}`;
}
