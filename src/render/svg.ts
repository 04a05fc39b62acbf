/**
 * The stack diagram of an explained walk as one SVG picture: the memory stack as a column of
 * address-labelled words (address | value | what the word turned out to be), lower addresses at
 * the top, so the innermost frame (frame 0) is at the top and callers lie below it; each frame's
 * words on a band of its own colour, labelled with the frame number and function; return-address
 * slots outlined, with an arrow to the band of the frame each returns into; saved frame pointers
 * with back-chain arrows to the slot they point at. On IA-64 a second column shows the backing
 * store the register stack engine spills stacked registers to, in the same orientation (it grows
 * toward higher addresses, so frame 0's registers are at the bottom), NaT collection words
 * shaded and each frame's BSP marked. A list of the frames with their trust stands at the right.
 *
 * The picture is bounded whatever the depth of the stack: runs of words no unwind read are
 * folded into one row, at most {@link SVG_MAX_FRAMES} frames and {@link SVG_MAX_ROWS} rows per
 * column are drawn, and the picture says what it left out.
 *
 * Elements carry `data-frame` (the frame whose area holds a word, or the frame a band or list
 * entry is) and `data-reads` (the frames whose unwind read a word, space-separated), so that the
 * HTML view can highlight a frame and its reads with CSS classes `current` and `read`.
 */
import { hexPadded } from "../hex.js";
import { machineInfo, registerMark, type Machine } from "../model/machine.js";
import { ruleText } from "../unwind/rule-text.js";
import type { ExplainedWalk, ReadRole, StackArea, StackWord } from "../analysis/explain-model.js";

/** The most rows (words and folded runs) a column of the diagram draws. */
export const SVG_MAX_ROWS = 320;

/** The most frames the diagram draws and lists. */
export const SVG_MAX_FRAMES = 64;

/** Options of {@link renderSvg}. */
export interface SvgOptions {
  /** Prefix for the ids inside the picture, so that several pictures can share one HTML page. */
  idPrefix?: string;
  /**
   * Whether the picture starts with the walk's title, stop reason, truth and notes (default
   * true); a page that shows them itself turns them off. What the caps left out is always said.
   */
  heading?: boolean;
}

/**
 * Escapes text for XML and HTML content and attribute values; characters XML 1.0 does not allow
 * (control characters, lone surrogates, U+FFFE/U+FFFF) become U+FFFD.
 */
export function escapeXml(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Band colour, pale row colour and dark line colour of a frame. */
export function frameColours(frame: number): { band: string; row: string; line: string } {
  if (frame < 0) return { band: "#e5e7eb", row: "#f9fafb", line: "#4b5563" };
  return PALETTE[frame % PALETTE.length]!;
}

const PALETTE = [
  { band: "#bfdbfe", row: "#eff6ff", line: "#1d4ed8" },
  { band: "#bbf7d0", row: "#f0fdf4", line: "#15803d" },
  { band: "#fde68a", row: "#fffbeb", line: "#b45309" },
  { band: "#fbcfe8", row: "#fdf2f8", line: "#be185d" },
  { band: "#99f6e4", row: "#f0fdfa", line: "#0f766e" },
  { band: "#ddd6fe", row: "#f5f3ff", line: "#6d28d9" },
  { band: "#fed7aa", row: "#fff7ed", line: "#c2410c" },
  { band: "#d9f99d", row: "#f7fee7", line: "#4d7c0f" },
];

/** How each role is outlined on a word's value cell. */
const ROLE_STYLE: Record<ReadRole, { stroke: string; dash?: string; text: string }> = {
  "return-address": { stroke: "#dc2626", text: "return address" },
  "saved-frame-pointer": { stroke: "#2563eb", text: "saved frame pointer" },
  "saved-register": { stroke: "#7c3aed", text: "saved register" },
  scanned: { stroke: "#6b7280", dash: "3 2", text: "scanned, passed over" },
  data: { stroke: "#a16207", dash: "1 2", text: "read by the rule" },
};

const ROW = 16;
const CHAR = 7.2;
const PAD = 16;
const LINE = 16;

/** Register names as the rows mark them (the machine table's marks): stack pointer, frame pointer (or null), backing-store pointer (or null). */
function markNames(machine: Machine): { sp: string; fp: string | null; bsp: string | null } {
  const m = machineInfo(machine);
  return { sp: registerMark(machine, m.sp), fp: m.fp === null ? null : registerMark(machine, m.fp), bsp: m.bstore === null ? null : registerMark(machine, m.bstore) };
}

type Row =
  | { kind: "word"; word: StackWord; reads: number[]; marks: string[]; returnsInto?: number; readRole?: ReadRole }
  | { kind: "gap"; count: number; from: bigint; to: bigint; frame: number };

interface ColumnPlan {
  area: StackArea;
  rows: Row[];
  /** Words not drawn because of the row and frame caps. */
  leftOut: number;
}

interface ColumnGeometry {
  x: number;
  bandW: number;
  chainW: number;
  addrW: number;
  valW: number;
  annW: number;
  raW: number;
}

/** A word of `bytes` bytes in hex, padded to its width. */
const wordHex = (v: bigint, bytes: number): string => hexPadded(v, bytes * 2);

/** Cuts text to `max` characters with an ellipsis. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, Math.max(1, max - 1)) + "…";
}

/** Splits text into lines of at most `width` characters, at spaces where it can. */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (word === "") continue;
    let w = word;
    while (w.length > width) {
      if (line !== "") {
        out.push(line);
        line = "";
      }
      out.push(w.slice(0, width));
      w = w.slice(width);
    }
    if (line === "") line = w;
    else if (line.length + 1 + w.length <= width) line += " " + w;
    else {
      out.push(line);
      line = w;
    }
  }
  if (line !== "") out.push(line);
  return out.length > 0 ? out : [""];
}

function text(x: number, y: number, content: string, attrs = ""): string {
  return `<text x="${x}" y="${y}"${attrs === "" ? "" : " " + attrs}>${escapeXml(content)}</text>`;
}

/**
 * The rows of one column: words that matter (read by an unwind, marked by a frame's register,
 * a NaT collection word, the first and last of each frame's area) with one neighbour each side;
 * longer runs of other words folded into one row. `fromEnd` keeps the words nearest the end of
 * the list when the caps cut (the backing store, whose innermost frames are at its end).
 */
function planColumn(
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
  const important = new Array<boolean>(n).fill(false);
  for (let i = 0; i < n; i++) {
    const w = ordered[i]!;
    if (w.role !== undefined || w.natCollection === true || w.value === undefined || readers.has(w.address) || marks.has(w.address)) important[i] = true;
    if (i === 0 || i === n - 1 || ordered[i - 1]!.frame !== w.frame || ordered[i + 1]!.frame !== w.frame) important[i] = true;
  }
  const kept = important.map((v, i) => v || (important[i - 1] ?? false) || (important[i + 1] ?? false));
  const rows: Row[] = [];
  let i = 0;
  while (i < n) {
    if (rows.length >= SVG_MAX_ROWS) {
      for (let j = i; j < n; j++) leftOut++;
      break;
    }
    if (kept[i]) {
      const w = ordered[i]!;
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
    while (j < n && !kept[j] && ordered[j]!.frame === ordered[i]!.frame) j++;
    if (j - i < 3) {
      for (let k = i; k < j; k++) rows.push({ kind: "word", word: ordered[k]!, reads: [], marks: [] });
    } else {
      const a = ordered[i]!.address;
      const b = ordered[j - 1]!.address;
      rows.push({ kind: "gap", count: j - i, from: a < b ? a : b, to: a < b ? b : a, frame: ordered[i]!.frame });
    }
    i = j;
  }
  if (fromEnd) rows.reverse();
  return { area, rows, leftOut };
}

function rowAnnotation(row: Row & { kind: "word" }, machine: Machine): string {
  const parts: string[] = [];
  const w = row.word;
  if (w.natCollection === true) parts.push("NaT collection: the NaT bits of the 63 words before it");
  const role = w.role ?? row.readRole;
  if (role !== undefined) {
    const reg = w.register !== undefined ? registerLabel(machine, w.register) : undefined;
    switch (role) {
      case "return-address":
        parts.push(`return address${row.returnsInto !== undefined ? ` → #${row.returnsInto}` : ""}`);
        break;
      case "saved-frame-pointer":
        parts.push(`saved ${reg ?? markNames(machine).fp ?? "frame pointer"} (back chain)`);
        break;
      case "saved-register":
        parts.push(`saved ${reg ?? "register"}`);
        break;
      default:
        parts.push(`${ROLE_STYLE[role].text} (#${row.reads.join(", #")})`);
    }
  }
  if (w.value === undefined) parts.push("not in the snapshot");
  parts.push(...row.marks);
  return parts.join(" · ");
}

function registerLabel(machine: Machine, register: string): string {
  const role = machineInfo(machine)?.roles.find((r) => r.register === register);
  if (role !== undefined && role.role === "AddrPC") return role.display;
  return register.toUpperCase();
}

function geometry(x: number, wordSize: number, wide: boolean): ColumnGeometry {
  const cell = Math.ceil((wordSize * 2 + 2) * CHAR + 12);
  return { x, bandW: wide ? 170 : 90, chainW: 44, addrW: cell, valW: cell, annW: wide ? 44 * CHAR : 38 * CHAR, raW: 56 };
}

function columnWidth(g: ColumnGeometry): number {
  return g.bandW + g.chainW + g.addrW + g.valW + g.annW + g.raW;
}

/** Draws one column's rows, bands and arrows; returns the SVG and the height used. */
function drawColumn(plan: ColumnPlan, g: ColumnGeometry, top: number, e: ExplainedWalk, wordSize: number, ids: { ra: string; chain: string }): { svg: string[]; height: number } {
  const out: string[] = [];
  const addrX = g.x + g.bandW + g.chainW;
  const valX = addrX + g.addrW;
  const annX = valX + g.valW;
  const rightX = annX + g.annW;
  const maxAnn = Math.floor((g.annW - 8) / CHAR);
  const y = (i: number): number => top + i * ROW;
  const frameOf = (r: Row): number => (r.kind === "word" ? r.word.frame : r.frame);

  // Bands: one per run of rows of the same frame.
  for (let i = 0; i < plan.rows.length; ) {
    const k = frameOf(plan.rows[i]!);
    let j = i;
    while (j < plan.rows.length && frameOf(plan.rows[j]!) === k) j++;
    const c = frameColours(k);
    const f = k >= 0 ? e.frames[k] : undefined;
    const name = k < 0 ? "below #0" : `#${k} ${f?.functionName ?? f?.location ?? ""}`;
    const h = (j - i) * ROW;
    out.push(`<g class="band" data-frame="${k}">`);
    out.push(`<rect x="${g.x}" y="${y(i)}" width="${g.bandW - 4}" height="${h}" fill="${c.band}" stroke="${c.line}" stroke-width="1"/>`);
    out.push(`<title>${escapeXml(k < 0 ? "words below frame 0's stack pointer" : `frame ${k}: ${f?.location ?? ""} (${f?.frame.trust ?? ""})`)}</title>`);
    const chars = Math.floor((g.bandW - 12) / CHAR);
    out.push(text(g.x + 4, y(i) + 12, clip(name, chars), `font-weight="bold" fill="${c.line}"`));
    if (j - i >= 2 && f !== undefined) out.push(text(g.x + 4, y(i) + 12 + ROW, clip(f.frame.trust, chars), `fill="${c.line}"`));
    out.push(`</g>`);
    i = j;
  }

  // Rows.
  const addrRow = new Map<bigint, number>();
  plan.rows.forEach((r, i) => {
    if (r.kind === "word") addrRow.set(r.word.address, i);
  });
  const rowFor = (address: bigint): number | undefined => {
    const hit = addrRow.get(address);
    if (hit !== undefined) return hit;
    const gap = plan.rows.findIndex((r) => r.kind === "gap" && address >= r.from && address <= r.to);
    return gap >= 0 ? gap : undefined;
  };
  plan.rows.forEach((r, i) => {
    const c = frameColours(frameOf(r));
    if (r.kind === "gap") {
      out.push(`<g class="row gap" data-frame="${r.frame}">`);
      out.push(`<rect x="${addrX}" y="${y(i)}" width="${rightX - addrX}" height="${ROW}" fill="${c.row}" stroke="#d1d5db" stroke-dasharray="4 3"/>`);
      out.push(text(addrX + 4, y(i) + 12, `⋯ ${r.count.toLocaleString("en-US")} more words (${wordHex(r.from, wordSize)}..${wordHex(r.to, wordSize)}) that no unwind read`, `fill="#6b7280" font-style="italic"`));
      out.push(`</g>`);
      return;
    }
    const w = r.word;
    const role = w.role ?? r.readRole;
    const classes = ["row"];
    if (role !== undefined) classes.push(`role-${role}`);
    if (w.natCollection === true) classes.push("nat");
    const readsAttr = r.reads.length > 0 ? ` data-reads="${r.reads.join(" ")}"` : "";
    out.push(`<g class="${classes.join(" ")}" data-frame="${w.frame}" data-address="${wordHex(w.address, wordSize)}"${readsAttr}>`);
    out.push(`<rect class="cell" x="${addrX}" y="${y(i)}" width="${rightX - addrX}" height="${ROW}" fill="${c.row}" stroke="#e5e7eb" stroke-width="0.5"/>`);
    const style = role !== undefined ? ROLE_STYLE[role] : undefined;
    const valueFill = w.natCollection === true ? "#9ca3af" : w.value === undefined ? "#ffffff" : c.row;
    const valueStroke = style !== undefined ? `stroke="${style.stroke}" stroke-width="2"${style.dash !== undefined ? ` stroke-dasharray="${style.dash}"` : ""}` : `stroke="#e5e7eb" stroke-width="0.5"`;
    out.push(`<rect class="value" x="${valX + 1}" y="${y(i) + 1}" width="${g.valW - 2}" height="${ROW - 2}" fill="${valueFill}" ${valueStroke}/>`);
    out.push(text(addrX + 4, y(i) + 12, wordHex(w.address, wordSize), `fill="#374151"`));
    out.push(
      w.value === undefined
        ? text(valX + 6, y(i) + 12, "????????", `fill="#9ca3af"`)
        : text(valX + 6, y(i) + 12, wordHex(w.value, wordSize), w.role === "return-address" ? `font-weight="bold"` : ""),
    );
    const ann = rowAnnotation(r, e.machine);
    if (ann !== "") out.push(text(annX + 4, y(i) + 12, clip(ann, maxAnn), style !== undefined ? `fill="${style.stroke}"` : `fill="#374151"`));
    out.push(`<title>${escapeXml(`${wordHex(w.address, wordSize)} = ${w.value === undefined ? "(not in the snapshot)" : wordHex(w.value, wordSize)}${ann !== "" ? ` — ${ann}` : ""}`)}</title>`);
    out.push(`</g>`);
  });

  // Return-address arrows: from the slot to the first row of the frame it returns into.
  const firstRowOf = new Map<number, number>();
  plan.rows.forEach((r, i) => {
    const k = frameOf(r);
    if (!firstRowOf.has(k)) firstRowOf.set(k, i);
  });
  plan.rows.forEach((r, i) => {
    if (r.kind !== "word" || r.returnsInto === undefined) return;
    const k = r.returnsInto;
    const target = firstRowOf.get(k);
    const y0 = y(i) + ROW / 2;
    const x0 = rightX + 2;
    const bulge = x0 + 16 + (k % 3) * 8;
    const c = frameColours(k);
    if (target === undefined) {
      out.push(`<g class="arrow ra" data-reads="${k}">${text(x0 + 4, y0 + 4, `→ #${k}`, `fill="${c.line}"`)}</g>`);
      return;
    }
    const y1 = y(target) + (target === i ? ROW : ROW / 2);
    out.push(
      `<g class="arrow ra" data-reads="${k}"><path d="M${x0},${y0} C${bulge},${y0} ${bulge},${y1} ${x0 + 4},${y1}" fill="none" stroke="#dc2626" stroke-width="1.5" marker-end="url(#${ids.ra})"/>` +
        text(bulge + 2, (y0 + y1) / 2 + 4, `#${k}`, `fill="#dc2626" font-size="10"`) +
        `</g>`,
    );
  });

  // Back-chain arrows: from a saved frame pointer to the slot it points at.
  plan.rows.forEach((r, i) => {
    if (r.kind !== "word" || r.word.role !== "saved-frame-pointer" || r.word.value === undefined) return;
    const target = rowFor(r.word.value);
    const y0 = y(i) + ROW / 2;
    const x0 = addrX - 2;
    const readsAttr = r.reads.length > 0 ? ` data-reads="${r.reads.join(" ")}"` : "";
    if (target === undefined || target === i) {
      out.push(`<g class="arrow chain"${readsAttr}>${text(g.x + g.bandW, y0 + 4, r.word.value === 0n ? "end" : "↓ off", `fill="#2563eb" font-size="10"`)}</g>`);
      return;
    }
    const y1 = y(target) + ROW / 2;
    const bulge = addrX - 12 - (i % 3) * 9;
    out.push(`<g class="arrow chain"${readsAttr}><path d="M${x0},${y0} C${bulge},${y0} ${bulge},${y1} ${x0 - 3},${y1}" fill="none" stroke="#2563eb" stroke-width="1.5" marker-end="url(#${ids.chain})"/></g>`);
  });
  return { svg: out, height: plan.rows.length * ROW };
}

/** Renders the diagram of one explained walk as a standalone SVG document. */
export function renderSvg(e: ExplainedWalk, options: SvgOptions = {}): string {
  const p = (options.idPrefix ?? "sw-").replace(/[^A-Za-z0-9_-]/g, "_");
  const ids = { ra: `${p}arrow-ra`, chain: `${p}arrow-chain`, title: `${p}title` };
  const info = machineInfo(e.machine);
  const wordSize = e.wordSize === 4 || e.wordSize === 8 ? e.wordSize : (info?.pointerSize ?? 8);
  const frameLimit = Math.min(e.frames.length, SVG_MAX_FRAMES);
  const ia64 = e.backingStore !== undefined;

  const stackGeo = geometry(PAD, wordSize, true);
  const stackPlan = planColumn("stack", e.stack, wordSize, e, frameLimit, false);
  const bsGeo = ia64 ? geometry(PAD + columnWidth(stackGeo) + 24, 8, false) : undefined;
  const bsPlan = ia64 ? planColumn("backing-store", e.backingStore ?? [], 8, e, frameLimit, true) : undefined;
  const listX = (bsGeo !== undefined ? bsGeo.x + columnWidth(bsGeo) : PAD + columnWidth(stackGeo)) + 24;
  const listChars = 58;
  const width = Math.ceil(listX + listChars * CHAR + PAD);
  const wrapAt = Math.floor((width - 2 * PAD) / CHAR);

  // Header: what this is, how the walk ended, what the reader should know first.
  const head: string[] = [];
  let hy = PAD + 14;
  const headLine = (content: string, attrs: string): void => {
    for (const l of wrap(content, wrapAt)) {
      head.push(text(PAD, hy, l, attrs));
      hy += LINE;
    }
  };
  const early = e.stop.reason !== "end-of-stack";
  if (options.heading ?? true) {
    headLine(e.title, `font-size="14" font-weight="bold"`);
    headLine(
      `${info?.title ?? e.machine} · thread ${e.threadId} · walker ${e.walker} · ${e.frames.length} frame${e.frames.length === 1 ? "" : "s"}`,
      `fill="#374151"`,
    );
    headLine(`${early ? "Stopped early: " : "Stop: "}${e.stopText}`, `fill="${early ? "#b91c1c" : "#374151"}"${early ? ` font-weight="bold"` : ""}`);
    if (e.truth !== undefined) headLine(`Ground truth: ${e.truth.text}`, `fill="${e.truth.exact ? "#15803d" : "#b91c1c"}"`);
    for (const n of e.notes) headLine(`Note: ${n}`, `fill="#92400e"`);
  }
  const capped: string[] = [];
  if (e.frames.length > frameLimit) capped.push(`frames #${frameLimit}..#${e.frames.length - 1} (${(e.frames.length - frameLimit).toLocaleString("en-US")}) are not drawn`);
  const leftOut = stackPlan.leftOut + (bsPlan?.leftOut ?? 0);
  if (leftOut > 0) capped.push(`${leftOut.toLocaleString("en-US")} words past the cut are not drawn`);
  if (capped.length > 0) headLine(`Cut: this diagram draws at most ${SVG_MAX_FRAMES} frames and ${SVG_MAX_ROWS} rows per column; ${capped.join("; ")}.`, `fill="#b91c1c"`);

  // Legend.
  hy += 4;
  const legend: string[] = [];
  let lx = PAD;
  for (const role of ["return-address", "saved-frame-pointer", "saved-register", "scanned", "data"] as const) {
    const s = ROLE_STYLE[role];
    legend.push(`<rect x="${lx}" y="${hy - 10}" width="22" height="12" fill="#ffffff" stroke="${s.stroke}" stroke-width="2"${s.dash !== undefined ? ` stroke-dasharray="${s.dash}"` : ""}/>`);
    legend.push(text(lx + 28, hy, s.text, `fill="${s.stroke}"`));
    lx += 28 + s.text.length * CHAR + 18;
  }
  if (ia64) {
    legend.push(`<rect x="${lx}" y="${hy - 10}" width="22" height="12" fill="#9ca3af"/>`);
    legend.push(text(lx + 28, hy, "NaT collection word", `fill="#374151"`));
    lx += 28 + 19 * CHAR + 18;
  }
  legend.push(text(lx, hy, "???????? not in the snapshot", `fill="#9ca3af"`));
  hy += LINE;
  legend.push(`<path d="M${PAD},${hy - 4} h22" stroke="#dc2626" stroke-width="1.5" marker-end="url(#${ids.ra})"/>`);
  legend.push(text(PAD + 30, hy, "return-address slot → the frame it returns into", `fill="#dc2626"`));
  const chainX = PAD + 30 + 48 * CHAR + 18;
  legend.push(`<path d="M${chainX},${hy - 4} h22" stroke="#2563eb" stroke-width="1.5" marker-end="url(#${ids.chain})"/>`);
  legend.push(text(chainX + 30, hy, "saved frame pointer → the slot it points at (the back chain)", `fill="#2563eb"`));
  hy += LINE + 8;

  // Column headings.
  const columnsTop = hy + 2 * LINE + 6;
  const headings: string[] = [];
  const heading = (g: ColumnGeometry, title: string, orientation: string): void => {
    const addrX = g.x + g.bandW + g.chainW;
    headings.push(text(g.x, hy, title, `font-weight="bold"`));
    headings.push(text(g.x, hy + LINE, orientation, `fill="#4b5563" font-size="11"`));
    headings.push(text(g.x, hy + 2 * LINE, "frame", `fill="#6b7280" font-size="11"`));
    headings.push(text(addrX + 4, hy + 2 * LINE, "address", `fill="#6b7280" font-size="11"`));
    headings.push(text(addrX + g.addrW + 6, hy + 2 * LINE, "value", `fill="#6b7280" font-size="11"`));
    headings.push(text(addrX + g.addrW + g.valW + 4, hy + 2 * LINE, "what it is", `fill="#6b7280" font-size="11"`));
  };
  heading(stackGeo, "Memory stack", `addresses increase downward; frame 0 (innermost) is at the top, its callers below`);
  if (bsGeo !== undefined) heading(bsGeo, "Backing store (RSE)", `addresses increase downward; it grows up, so frame 0's registers are last`);
  headings.push(text(listX, hy, "Frames", `font-weight="bold"`));
  headings.push(text(listX, hy + LINE, "# location · trust · truth", `fill="#4b5563" font-size="11"`));

  const body: string[] = [];
  const stackDrawn = drawColumn(stackPlan, stackGeo, columnsTop, e, wordSize, ids);
  body.push(...stackDrawn.svg);
  let stackBottom = columnsTop + stackDrawn.height;
  if (stackPlan.rows.length === 0) {
    body.push(text(stackGeo.x, columnsTop + 12, "(no stack words to show)", `fill="#6b7280"`));
    stackBottom += ROW;
  }
  const footer = (g: ColumnGeometry, plan: ColumnPlan, at: number, extra: string[]): number => {
    let fy = at + 14;
    const lines = [...extra];
    if (plan.leftOut > 0) lines.unshift(`✂ ${plan.leftOut.toLocaleString("en-US")} more words are not drawn (cap: ${SVG_MAX_FRAMES} frames, ${SVG_MAX_ROWS} rows)`);
    for (const l of lines) {
      for (const w of wrap(l, Math.floor((columnWidth(g) - 8) / CHAR))) {
        body.push(text(g.x, fy, w, `fill="${l.startsWith("✂") || early ? "#b91c1c" : "#374151"}"`));
        fy += LINE;
      }
    }
    return fy;
  };
  let bottom = footer(stackGeo, stackPlan, stackBottom, [`${early ? "■ walk stopped early: " : "■ "}${e.stopText}`]);
  if (bsGeo !== undefined && bsPlan !== undefined) {
    const drawn = drawColumn(bsPlan, bsGeo, columnsTop, e, 8, ids);
    body.push(...drawn.svg);
    let bsBottom = columnsTop + drawn.height;
    if (bsPlan.rows.length === 0) {
      body.push(text(bsGeo.x, columnsTop + 12, "(no backing-store words to show)", `fill="#6b7280"`));
      bsBottom += ROW;
    }
    const f0 = e.frames[0];
    const top = f0 !== undefined && f0.frame.addrBStore !== 0n ? ` (${wordHex(f0.frame.addrBStore, 8)}): frame 0's own stacked registers are still in the register file` : "";
    bottom = Math.max(bottom, footer(bsGeo, bsPlan, bsBottom, [`BSP #0${top}`]));
  }

  // The frame list.
  const list: string[] = [];
  e.frames.slice(0, frameLimit).forEach((f, i) => {
    const c = frameColours(f.index);
    const ly = columnsTop + i * ROW;
    const truth = f.truth !== undefined ? ` · ${f.truth}` : "";
    const label = `#${f.index} ${f.location} · ${f.frame.trust}${truth}`;
    list.push(`<g class="legend-frame" data-frame="${f.index}">`);
    list.push(`<rect x="${listX}" y="${ly + 2}" width="12" height="12" fill="${c.band}" stroke="${c.line}"/>`);
    list.push(text(listX + 18, ly + 12, clip(label, listChars - 3), f.truth === "differs" || f.truth === "extra" ? `fill="#b91c1c"` : `fill="#111827"`));
    list.push(`<title>${escapeXml(`frame ${f.index}: ${f.location}; ${f.frame.trust}: ${ruleText(f.frame.rule)}${truth}`)}</title>`);
    list.push(`</g>`);
  });
  if (e.frames.length === 0) list.push(text(listX, columnsTop + 12, "(no frames)", `fill="#b91c1c"`));
  if (e.frames.length > frameLimit) list.push(text(listX, columnsTop + frameLimit * ROW + 12, `✂ ${(e.frames.length - frameLimit).toLocaleString("en-US")} more frames not drawn`, `fill="#b91c1c"`));
  bottom = Math.max(bottom, columnsTop + (frameLimit + 1) * ROW + 8);

  const height = Math.ceil(bottom + PAD);
  const description = `Stack diagram of ${e.title}: ${e.frames.length} frames on ${info?.title ?? e.machine}. ${e.stopText}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="stack-diagram" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="12" role="img" aria-labelledby="${ids.title}">`,
    `<title id="${ids.title}">${escapeXml(`${e.title} — thread ${e.threadId}`)}</title>`,
    `<desc>${escapeXml(description)}</desc>`,
    `<defs>`,
    `<marker id="${ids.ra}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#dc2626"/></marker>`,
    `<marker id="${ids.chain}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#2563eb"/></marker>`,
    `</defs>`,
    `<style>.band.current rect, .legend-frame.current rect { stroke: #111827; stroke-width: 3px; } .row.read rect.cell, .row.read rect.value { fill: #fde047; } .row.read rect.value { stroke-width: 3px; } .arrow.read path { stroke-width: 3px; }</style>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    ...head,
    ...legend,
    ...headings,
    ...body,
    ...list,
    `</svg>`,
    "",
  ].join("\n");
}
