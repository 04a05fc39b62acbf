/**
 * The rows of a stack diagram's column, before anything is drawn (render/svg.ts draws them): which
 * words are shown and which runs are folded, the frames that read each word, the registers that
 * mark it, and where each saved frame pointer's back chain leads. Bounded by {@link SVG_MAX_ROWS}.
 */
import { machineInfo, registerMark, type Machine } from "../model/machine.js";
import type { ExplainedWalk, ReadRole, StackArea, StackWord } from "../analysis/explain-model.js";

/** The most rows (words and folded runs) a column of the diagram draws. */
export const SVG_MAX_ROWS = 320;

/** Register names as the rows mark them (the machine table's marks): stack pointer, frame pointer (or null), backing-store pointer (or null). */
export function markNames(machine: Machine): { sp: string; fp: string | null; bsp: string | null } {
  const m = machineInfo(machine);
  return { sp: registerMark(machine, m.sp), fp: m.fp === null ? null : registerMark(machine, m.fp), bsp: m.bstore === null ? null : registerMark(machine, m.bstore) };
}

/** Where a saved frame pointer leads: the row it points at, the end of the chain (0), itself, or a word not drawn. */
type ChainTarget = number | "end" | "self" | "outside";

export type Row =
  | { kind: "word"; word: StackWord; reads: number[]; marks: string[]; returnsInto?: number; readRole?: ReadRole; chain?: ChainTarget }
  | { kind: "gap"; count: number; from: bigint; to: bigint; frame: number };

export interface ColumnPlan {
  area: StackArea;
  rows: Row[];
  /** Words not drawn because of the row and frame caps. */
  leftOut: number;
}

/**
 * The rows of one column: words that matter (read by an unwind, marked by a frame's register,
 * a NaT collection word, the first and last of each frame's area) with one neighbour each side;
 * longer runs of other words folded into one row. `fromEnd` keeps the words nearest the end of
 * the list when the caps cut (the backing store, whose innermost frames are at its end).
 */
export function planColumn(
  area: StackArea,
  words: readonly StackWord[],
  wordSize: number,
  e: ExplainedWalk,
  frameLimit: number,
  fromEnd: boolean,
): ColumnPlan {
  const readers = new Map<bigint, number[]>();
  const returnsInto = new Map<bigint, number>();
  const readRoles = new Map<bigint, ReadRole>();
  const ws = BigInt(wordSize);
  const base = words[0]?.address ?? 0n;
  const slot = (a: bigint): bigint => (a < base ? a : a - ((a - base) % ws));
  for (const f of e.frames) {
    for (const r of f.reads) {
      if (r.area !== area) continue;
      const key = slot(r.address);
      const list = readers.get(key) ?? [];
      if (!list.includes(f.index)) list.push(f.index);
      readers.set(key, list);
      if (r.role === "return-address") returnsInto.set(key, f.index);
      if (!readRoles.has(key)) readRoles.set(key, r.role);
    }
  }
  const names = markNames(e.machine);
  const marks = new Map<bigint, Map<string, number[]>>();
  const mark = (address: bigint, name: string, frame: number): void => {
    let byName = marks.get(address);
    if (byName === undefined) marks.set(address, (byName = new Map()));
    const list = byName.get(name) ?? [];
    list.push(frame);
    byName.set(name, list);
  };
  for (const f of e.frames.slice(0, frameLimit)) {
    if (area === "stack") {
      mark(f.frame.addrStack, names.sp, f.index);
      if (names.fp !== null && f.frame.addrFrame !== 0n) mark(f.frame.addrFrame, names.fp, f.index);
    } else if (names.bsp !== null && f.frame.addrBStore !== 0n) mark(f.frame.addrBStore, names.bsp, f.index);
  }
  const drawable = words.filter((w) => w.frame < frameLimit);
  let leftOut = words.length - drawable.length;
  const ordered = fromEnd ? [...drawable].reverse() : drawable;
  const n = ordered.length;
  const important = ordered.map((w, i) => {
    if (w.role !== undefined || w.natCollection === true || w.value === undefined || readers.has(w.address) || marks.has(w.address)) return true;
    return i === 0 || i === n - 1 || ordered[i - 1]?.frame !== w.frame || ordered[i + 1]?.frame !== w.frame;
  });
  const kept = important.map((v, i) => v || (important[i - 1] ?? false) || (important[i + 1] ?? false));
  const rows: Row[] = [];
  let i = 0;
  while (i < n) {
    const w = ordered[i];
    if (w === undefined) break;
    if (rows.length >= SVG_MAX_ROWS) {
      leftOut += n - i;
      break;
    }
    if (kept[i] === true) {
      const byName = marks.get(w.address);
      const row: Row = {
        kind: "word",
        word: w,
        reads: readers.get(w.address) ?? [],
        marks: byName === undefined ? [] : [...byName].map(([name, fs]) => `${name} ${fs.map((k) => `#${k}`).join(" ")}`),
      };
      const into = returnsInto.get(w.address);
      if (into !== undefined) row.returnsInto = into;
      const readRole = readRoles.get(w.address);
      if (readRole !== undefined) row.readRole = readRole;
      rows.push(row);
      i++;
      continue;
    }
    let j = i;
    while (j < n && kept[j] !== true && ordered[j]?.frame === w.frame) j++;
    if (j - i < 3) {
      for (const word of ordered.slice(i, j)) rows.push({ kind: "word", word, reads: [], marks: [] });
    } else {
      const a = w.address;
      const b = ordered[j - 1]?.address ?? a;
      rows.push({ kind: "gap", count: j - i, from: a < b ? a : b, to: a < b ? b : a, frame: w.frame });
    }
    i = j;
  }
  if (fromEnd) rows.reverse();
  chainTargets(rows);
  return { area, rows, leftOut };
}

/** Where each saved frame pointer of a column leads: the row holding the word it points at, when drawn. */
function chainTargets(rows: Row[]): void {
  const rowOf = new Map<bigint, number>();
  rows.forEach((r, i) => {
    if (r.kind === "word") rowOf.set(r.word.address, i);
  });
  rows.forEach((r, i) => {
    if (r.kind !== "word" || r.word.role !== "saved-frame-pointer" || r.word.value === undefined) return;
    const v = r.word.value;
    if (v === 0n) {
      r.chain = "end";
      return;
    }
    const target = rowOf.get(v) ?? rows.findIndex((g) => g.kind === "gap" && v >= g.from && v <= g.to);
    r.chain = target === i ? "self" : target < 0 ? "outside" : target;
  });
}
