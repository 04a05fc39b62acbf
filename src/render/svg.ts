/**
 * The stack diagram of an explained walk as one SVG picture: the memory stack as a column of
 * address-labelled words (address | value | what the word turned out to be), lower addresses at
 * the top, so the innermost frame (frame 0) is at the top and callers lie below it; each frame's
 * words on a band of its own colour, labelled with the frame number and function; return-address
 * slots outlined, with an arrow to the band of the frame each returns into; saved frame pointers
 * with back-chain arrows to the slot they point at. On IA-64 a second column below the first
 * shows the backing store the register stack engine spills stacked registers to, in the same
 * orientation (it grows toward higher addresses, so frame 0's registers are at the bottom), NaT
 * collection words shaded and each frame's BSP marked. The list of the frames, with their trust
 * and source lines, closes the picture.
 *
 * The picture is about as wide as one column of words, so that it reads at its own size in a
 * page or a README and scales down to a narrow pane; text that does not fit its place wraps onto
 * more lines (a row grows to hold its words), and a band label too long for its band keeps the
 * innermost part of the name, the whole of it in the band's title (shown on hover). Each fact is
 * said once: the stop reason in the heading, what the caps left out in one line.
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
import { machineInfo, type Machine } from "../model/machine.js";
import { markNames, planColumn, SVG_MAX_ROWS, type ColumnPlan, type Row } from "./svg-rows.js";
import { ruleText } from "../arch/rule-text.js";
import type { ExplainedFrame, ExplainedWalk, ReadRole } from "../analysis/explain-model.js";

export { SVG_MAX_ROWS } from "./svg-rows.js";

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
  /** Whether the picture ends with the list of frames (default true); a page that lists them itself turns it off. */
  frameList?: boolean;
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
  return PALETTE[frame % PALETTE.length] ?? PALETTE[0];
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
] as const;

/**
 * How each role is outlined on a word's value cell. The hues are Okabe and Ito's (vermilion,
 * blue, reddish purple, bluish green), darkened to 5:1 or more on white: under deuteranopia and
 * protanopia the return address stays warm and the saved frame pointer blue, and what could
 * still be mistaken is told apart by the outline (solid, dashed, dotted) and said in words.
 */
const ROLE_STYLE: Record<ReadRole, { stroke: string; dash?: string; text: string }> = {
  "return-address": { stroke: "#b84200", text: "return address" },
  "saved-frame-pointer": { stroke: "#0066a6", text: "saved frame pointer" },
  "saved-register": { stroke: "#a3407d", text: "saved register" },
  scanned: { stroke: "#6b7280", dash: "3 2", text: "scanned, passed over" },
  data: { stroke: "#00775a", dash: "1 2", text: "read by the rule" },
};

/** The roles in the order the legend lists them. */
const LEGEND_ROLES = ["return-address", "saved-frame-pointer", "saved-register", "scanned", "data"] as const;

/** Height of one line of a row. */
const ROW = 16;
/** The picture's font size in px. */
const FONT = 12;
/**
 * The advance of a character as a fraction of the font size: 0.602 for DejaVu Sans Mono and
 * Menlo, less for Consolas; rounded up so that text laid out with it never runs past its place.
 */
const EM = 0.6025;
/** The width of one character at `size` px. */
const charWidth = (size = FONT): number => size * EM;
/** How many characters of `size` px fit in `width`. */
const fits = (width: number, size = FONT): number => Math.max(1, Math.floor(width / charWidth(size)));
/** The width of `text` at `size` px. */
const textWidth = (text: string, size = FONT): number => [...text].length * charWidth(size);
const PAD = 16;
const LINE = 16;
/** Characters of the "what it is" cell before its text wraps. */
const NOTE_CHARS = 36;
/** Characters of a band's label. */
const BAND_CHARS = 22;

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
  const chars = [...text];
  return chars.length <= max ? text : chars.slice(0, Math.max(1, max - 1)).join("") + "…";
}

/**
 * A name in at most `max` characters: whole when it fits, else its innermost part (from the last
 * `::` outside template arguments and parameter lists) after an ellipsis, cut at the end when
 * even that is too long.
 */
export function fitName(name: string, max: number): string {
  if ([...name].length <= max) return name;
  let depth = 0;
  let cut = -1;
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === "<" || c === "(") depth++;
    else if ((c === ">" || c === ")") && depth > 0) depth--;
    else if (depth === 0 && c === ":" && name[i + 1] === ":") cut = i + 2;
  }
  return clip(cut > 0 ? "…" + name.slice(cut - 2) : name, max);
}

/** Splits text into lines of at most `width` characters, at spaces where it can. */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (word === "") continue;
    let w = [...word];
    while (w.length > width) {
      if (line !== "") {
        out.push(line);
        line = "";
      }
      out.push(w.slice(0, width).join(""));
      w = w.slice(width);
    }
    const piece = w.join("");
    if (line === "") line = piece;
    else if ([...line].length + 1 + w.length <= width) line += " " + piece;
    else {
      out.push(line);
      line = piece;
    }
  }
  if (line !== "") out.push(line);
  return out.length > 0 ? out : [""];
}

function text(x: number, y: number, content: string, attrs = ""): string {
  return `<text x="${round(x)}" y="${round(y)}"${attrs === "" ? "" : " " + attrs}>${escapeXml(content)}</text>`;
}

/** A coordinate with at most two decimals. */
const round = (v: number): number => Math.round(v * 100) / 100;

/** `file:line` of a frame, when symbols give its source line. */
const sourceOf = (f: ExplainedFrame): string | undefined => (f.source === undefined ? undefined : `${f.source.file}:${f.source.line}`);

/** What a word turned out to be, in words: its role, the frames that read it, the registers that point at it. */
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
      case "saved-frame-pointer": {
        const saved = `saved ${reg ?? markNames(machine).fp ?? "frame pointer"}`;
        if (row.chain === "end") parts.push(`${saved} = 0: the back chain ends`);
        else if (row.chain === "outside") parts.push(`${saved} (back chain) → a word not drawn`);
        else if (row.chain === "self") parts.push(`${saved} (back chain) → itself`);
        else parts.push(`${saved} (back chain)`);
        break;
      }
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
  const role = machineInfo(machine).roles.find((r) => r.register === register);
  if (role !== undefined && role.role === "AddrPC") return role.display;
  return register.toUpperCase();
}

function geometry(x: number, wordSize: number): ColumnGeometry {
  const cell = Math.ceil(textWidth("0x" + "0".repeat(wordSize * 2)) + 12);
  return {
    x,
    bandW: Math.ceil(BAND_CHARS * charWidth() + 10),
    chainW: 40,
    addrW: cell,
    valW: cell,
    annW: Math.ceil(NOTE_CHARS * charWidth() + 10),
    raW: 56,
  };
}

function columnWidth(g: ColumnGeometry): number {
  return g.bandW + g.chainW + g.addrW + g.valW + g.annW + g.raW;
}

/** Draws one column's rows, bands and arrows from `top`; returns the SVG and the height used. */
function drawColumn(plan: ColumnPlan, g: ColumnGeometry, top: number, e: ExplainedWalk, wordSize: number, ids: { ra: string; chain: string }): { svg: string[]; height: number } {
  const out: string[] = [];
  const addrX = g.x + g.bandW + g.chainW;
  const valX = addrX + g.addrW;
  const annX = valX + g.valW;
  const rightX = annX + g.annW;
  const frameOf = (r: Row): number => (r.kind === "word" ? r.word.frame : r.frame);

  // Each row's lines: the annotation of a word (its value on the first), the words of a gap.
  const lines = plan.rows.map((r) =>
    r.kind === "gap"
      ? wrap(`⋯ ${r.count.toLocaleString("en-US")} words that no unwind read: ${wordHex(r.from, wordSize)}..${wordHex(r.to, wordSize)}`, fits(rightX - addrX - 8))
      : wrap(rowAnnotation(r, e.machine), fits(g.annW - 8)),
  );
  const tops: number[] = [];
  let y = top;
  for (const l of lines) {
    tops.push(y);
    y += l.length * ROW;
  }
  const bottom = y;
  const rowTop = (i: number): number => tops[i] ?? bottom;
  const rowHeight = (i: number): number => (lines[i]?.length ?? 1) * ROW;

  // Bands: one per run of rows of the same frame.
  for (let i = 0; i < plan.rows.length; ) {
    const first = plan.rows[i];
    if (first === undefined) break;
    const k = frameOf(first);
    let j = i;
    while (j < plan.rows.length && frameOf(plan.rows[j] ?? first) === k) j++;
    const c = frameColours(k);
    const f = k >= 0 ? e.frames[k] : undefined;
    const h = rowTop(j) - rowTop(i);
    const chars = fits(g.bandW - 10);
    // Inline frames have no band of their own: their names go under the frame's, in its band.
    const inlined = (f?.inlines ?? []).map((x) => `↳ inlined ${fitName(x.functionName, Math.max(1, chars - 10))}`);
    const label = k < 0 ? ["below #0"] : [`#${k} ${fitName(f?.functionName ?? f?.location ?? "", Math.max(1, chars - `#${k} `.length))}`, f?.frame.trust ?? "", ...inlined];
    const inlineTitle = (f?.inlines ?? []).map((x) => `; inlined here: ${x.location}${x.source !== undefined ? ` — ${x.source.file}:${x.source.line}` : ""}`).join("");
    const title = f === undefined ? "words below frame 0's stack pointer" : `frame ${k}: ${f.location}${sourceOf(f) !== undefined ? ` — ${sourceOf(f)}` : ""} (${f.frame.trust})${inlineTitle}`;
    out.push(`<g class="band" data-frame="${k}">`);
    out.push(`<rect x="${g.x}" y="${round(rowTop(i))}" width="${g.bandW - 4}" height="${round(h)}" fill="${c.band}" stroke="${c.line}" stroke-width="1"/>`);
    out.push(`<title>${escapeXml(title)}</title>`);
    label.slice(0, Math.max(1, Math.floor(h / ROW))).forEach((l, n) => {
      out.push(text(g.x + 4, rowTop(i) + 12 + n * ROW, clip(l, chars), n === 0 ? `font-weight="bold" fill="${c.line}"` : `fill="${c.line}"`));
    });
    out.push(`</g>`);
    i = j;
  }

  // Rows.
  plan.rows.forEach((r, i) => {
    const c = frameColours(frameOf(r));
    const ry = rowTop(i);
    const rh = rowHeight(i);
    const rowLines = lines[i] ?? [];
    if (r.kind === "gap") {
      out.push(`<g class="row gap" data-frame="${r.frame}">`);
      out.push(`<rect x="${addrX}" y="${ry}" width="${rightX - addrX}" height="${rh}" fill="${c.row}" stroke="#d1d5db" stroke-dasharray="4 3"/>`);
      rowLines.forEach((l, n) => out.push(text(addrX + 4, ry + 12 + n * ROW, l, `fill="#6b7280" font-style="italic"`)));
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
    out.push(`<rect class="cell" x="${addrX}" y="${ry}" width="${rightX - addrX}" height="${rh}" fill="${c.row}" stroke="#e5e7eb" stroke-width="0.5"/>`);
    const style = role !== undefined ? ROLE_STYLE[role] : undefined;
    const valueFill = w.natCollection === true ? "#9ca3af" : w.value === undefined ? "#ffffff" : c.row;
    const valueStroke = style !== undefined ? `stroke="${style.stroke}" stroke-width="2"${style.dash !== undefined ? ` stroke-dasharray="${style.dash}"` : ""}` : `stroke="#e5e7eb" stroke-width="0.5"`;
    out.push(`<rect class="value" x="${valX + 1}" y="${ry + 1}" width="${g.valW - 2}" height="${ROW - 2}" fill="${valueFill}" ${valueStroke}/>`);
    out.push(text(addrX + 4, ry + 12, wordHex(w.address, wordSize), `fill="#374151"`));
    out.push(
      w.value === undefined
        ? text(valX + 6, ry + 12, "?".repeat(wordSize * 2), `fill="#9ca3af"`)
        : text(valX + 6, ry + 12, wordHex(w.value, wordSize), w.role === "return-address" ? `font-weight="bold"` : ""),
    );
    const ann = rowLines.join(" ");
    const annFill = style !== undefined ? `fill="${style.stroke}"` : `fill="#374151"`;
    rowLines.forEach((l, n) => {
      if (l !== "") out.push(text(annX + 4, ry + 12 + n * ROW, l, annFill));
    });
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
    const y0 = rowTop(i) + ROW / 2;
    const x0 = rightX + 2;
    const bulge = x0 + 16 + (k % 3) * 8;
    const c = frameColours(k);
    if (target === undefined) {
      out.push(`<g class="arrow ra" data-reads="${k}">${text(x0 + 4, y0 + 4, `→ #${k}`, `fill="${c.line}"`)}</g>`);
      return;
    }
    const y1 = target === i ? rowTop(i) + rowHeight(i) : rowTop(target) + ROW / 2;
    out.push(
      `<g class="arrow ra" data-reads="${k}"><path d="M${x0},${round(y0)} C${bulge},${round(y0)} ${bulge},${round(y1)} ${x0 + 4},${round(y1)}" fill="none" stroke="#b84200" stroke-width="1.5" marker-end="url(#${ids.ra})"/>` +
        text(bulge + 2, (y0 + y1) / 2 + 4, `#${k}`, `fill="#b84200"`) +
        `</g>`,
    );
  });

  // Back-chain arrows: from a saved frame pointer to the slot it points at (the annotation says where the others lead).
  plan.rows.forEach((r, i) => {
    if (r.kind !== "word" || typeof r.chain !== "number") return;
    const y0 = rowTop(i) + ROW / 2;
    const y1 = rowTop(r.chain) + ROW / 2;
    const x0 = addrX - 2;
    const bulge = addrX - 12 - (i % 3) * 9;
    const readsAttr = r.reads.length > 0 ? ` data-reads="${r.reads.join(" ")}"` : "";
    out.push(`<g class="arrow chain"${readsAttr}><path d="M${x0},${round(y0)} C${bulge},${round(y0)} ${bulge},${round(y1)} ${x0 - 3},${round(y1)}" fill="none" stroke="#0066a6" stroke-width="1.5" marker-end="url(#${ids.chain})"/></g>`);
  });
  return { svg: out, height: bottom - top };
}

/** What the legend has to explain: the roles, shadings and arrows the columns draw. */
function legendEntries(plans: readonly ColumnPlan[]): { roles: Set<ReadRole>; nat: boolean; unreadable: boolean; ra: boolean; chain: boolean } {
  const found = { roles: new Set<ReadRole>(), nat: false, unreadable: false, ra: false, chain: false };
  for (const plan of plans) {
    for (const r of plan.rows) {
      if (r.kind !== "word") continue;
      const role = r.word.role ?? r.readRole;
      if (role !== undefined) found.roles.add(role);
      if (r.word.natCollection === true) found.nat = true;
      if (r.word.value === undefined) found.unreadable = true;
      if (r.returnsInto !== undefined) found.ra = true;
      if (typeof r.chain === "number") found.chain = true;
    }
  }
  return found;
}

/** Renders the diagram of one explained walk as a standalone SVG document. */
export function renderSvg(e: ExplainedWalk, options: SvgOptions = {}): string {
  const p = (options.idPrefix ?? "sw-").replace(/[^A-Za-z0-9_-]/g, "_");
  const ids = { ra: `${p}arrow-ra`, chain: `${p}arrow-chain`, title: `${p}title` };
  const info = machineInfo(e.machine);
  const wordSize = e.wordSize === 4 || e.wordSize === 8 ? e.wordSize : info.pointerSize;
  const frameLimit = Math.min(e.frames.length, SVG_MAX_FRAMES);

  const stackPlan = planColumn("stack", e.stack, wordSize, e, frameLimit, false);
  const bsPlan = e.backingStore !== undefined ? planColumn("backing-store", e.backingStore, 8, e, frameLimit, true) : undefined;
  const stackGeo = geometry(PAD, wordSize);
  const bsGeo = geometry(PAD, 8);
  const width = Math.ceil(PAD + Math.max(columnWidth(stackGeo), bsPlan !== undefined ? columnWidth(bsGeo) : 0) + PAD);
  const inner = width - 2 * PAD;

  // Heading: what this is, how the walk ended, what the reader should know first.
  const head: string[] = [];
  let hy = PAD + 14;
  const headLine = (content: string, attrs: string, size = FONT): void => {
    for (const l of wrap(content, fits(inner, size))) {
      head.push(text(PAD, hy, l, attrs));
      hy += size > FONT ? LINE + 2 : LINE;
    }
  };
  const early = e.stop.reason !== "end-of-stack";
  if (options.heading ?? true) {
    headLine(e.title, `font-size="14" font-weight="bold"`, 14);
    headLine(`${info.title} · thread ${e.threadId} · walker ${e.walker} · ${e.frames.length} frame${e.frames.length === 1 ? "" : "s"}`, `fill="#374151"`);
    headLine(`${early ? "Stopped early: " : "Stop: "}${e.stopText}`, `fill="${early ? "#b91c1c" : "#374151"}"${early ? ` font-weight="bold"` : ""}`);
    if (e.truth !== undefined) headLine(`Ground truth: ${e.truth.text}`, `fill="${e.truth.exact ? "#15803d" : "#b91c1c"}"`);
    for (const n of e.notes) headLine(`Note: ${n}`, `fill="#92400e"`);
  }
  const capped: string[] = [];
  if (e.frames.length > frameLimit) capped.push(`frames #${frameLimit}..#${e.frames.length - 1} (${(e.frames.length - frameLimit).toLocaleString("en-US")}) are not drawn`);
  const leftOut = stackPlan.leftOut + (bsPlan?.leftOut ?? 0);
  if (leftOut > 0) capped.push(`${leftOut.toLocaleString("en-US")} words past the cut are not drawn`);
  if (capped.length > 0) headLine(`Cut: this diagram draws at most ${SVG_MAX_FRAMES} frames and ${SVG_MAX_ROWS} rows per column; ${capped.join("; ")}.`, `fill="#b91c1c"`);

  // Legend: only what the columns draw, flowed into as many lines as the width needs.
  hy += 4;
  const legend: string[] = [];
  const present = legendEntries(bsPlan !== undefined ? [stackPlan, bsPlan] : [stackPlan]);
  const items: { width: number; draw: (x: number, y: number) => string[] }[] = [];
  const boxItem = (label: string, fill: string, stroke: string, colour: string, dash?: string): void => {
    items.push({
      width: 28 + textWidth(label),
      draw: (x, y) => [
        `<rect x="${round(x)}" y="${y - 10}" width="22" height="12" fill="${fill}"${stroke === "" ? "" : ` stroke="${stroke}" stroke-width="2"`}${dash !== undefined ? ` stroke-dasharray="${dash}"` : ""}/>`,
        text(x + 28, y, label, `fill="${colour}"`),
      ],
    });
  };
  for (const role of LEGEND_ROLES) {
    const s = ROLE_STYLE[role];
    if (present.roles.has(role)) boxItem(s.text, "#ffffff", s.stroke, s.stroke, s.dash);
  }
  if (present.nat) boxItem("NaT collection word", "#9ca3af", "", "#374151");
  if (present.unreadable) {
    const label = `${"?".repeat(wordSize * 2)} not in the snapshot`;
    items.push({ width: textWidth(label), draw: (x, y) => [text(x, y, label, `fill="#9ca3af"`)] });
  }
  const arrowItem = (label: string, colour: string, marker: string): void => {
    items.push({
      width: 30 + textWidth(label),
      draw: (x, y) => [`<path d="M${round(x)},${y - 4} h22" stroke="${colour}" stroke-width="1.5" marker-end="url(#${marker})"/>`, text(x + 30, y, label, `fill="${colour}"`)],
    });
  };
  if (present.ra) arrowItem("return-address slot → the frame it returns into", "#b84200", ids.ra);
  if (present.chain) arrowItem("saved frame pointer → the slot it points at (the back chain)", "#0066a6", ids.chain);
  let lx = PAD;
  for (const item of items) {
    if (lx > PAD && lx + item.width > width - PAD) {
      lx = PAD;
      hy += LINE;
    }
    legend.push(...item.draw(lx, hy));
    lx += item.width + 18;
  }
  if (items.length > 0) hy += LINE + 8;

  // Columns, one below the other, each under its heading.
  const body: string[] = [];
  const column = (g: ColumnGeometry, plan: ColumnPlan, title: string, orientation: string, empty: string, footer: string[]): void => {
    const addrX = g.x + g.bandW + g.chainW;
    body.push(text(g.x, hy, title, `font-weight="bold"`));
    hy += LINE;
    for (const l of wrap(orientation, fits(columnWidth(g)))) {
      body.push(text(g.x, hy, l, `fill="#4b5563"`));
      hy += LINE;
    }
    body.push(text(g.x, hy, "frame", `fill="#4b5563"`));
    body.push(text(addrX + 4, hy, "address", `fill="#4b5563"`));
    body.push(text(addrX + g.addrW + 6, hy, "value", `fill="#4b5563"`));
    body.push(text(addrX + g.addrW + g.valW + 4, hy, "what it is", `fill="#4b5563"`));
    hy += 6;
    const drawn = drawColumn(plan, g, hy, e, plan.area === "stack" ? wordSize : 8, ids);
    body.push(...drawn.svg);
    hy += drawn.height;
    if (plan.rows.length === 0) {
      body.push(text(g.x, hy + 12, empty, `fill="#6b7280"`));
      hy += ROW;
    }
    const notes = plan.leftOut > 0 ? ["⋯ the rest of this column is not drawn", ...footer] : footer;
    hy += notes.length > 0 ? 14 : 0;
    for (const l of notes) {
      for (const w of wrap(l, fits(columnWidth(g) - 8))) {
        body.push(text(g.x, hy, w, `fill="${l.startsWith("⋯") ? "#b91c1c" : "#374151"}"`));
        hy += LINE;
      }
    }
    hy += 4;
  };
  column(stackGeo, stackPlan, "Memory stack", "addresses increase downward; frame 0 (innermost) is at the top, its callers below", "(no stack words to show)", []);
  if (bsPlan !== undefined) {
    const f0 = e.frames[0];
    const bsp0 = f0 !== undefined && f0.frame.addrBStore !== 0n ? [`BSP #0 (${wordHex(f0.frame.addrBStore, 8)}): frame 0's own stacked registers are still in the register file`] : [];
    hy += LINE + 12;
    column(bsGeo, bsPlan, "Backing store (RSE)", "addresses increase downward; it grows up, so frame 0's registers are last", "(no backing-store words to show)", bsp0);
  }

  // The frame list: every drawn frame with its trust, truth and source line, wrapped to the width.
  const list: string[] = [];
  if (options.frameList ?? true) {
    hy += LINE + 12;
    list.push(text(PAD, hy, "Frames", `font-weight="bold"`));
    hy += LINE;
    const sources = e.frames.slice(0, frameLimit).some((f) => f.source !== undefined);
    list.push(text(PAD, hy, `# location · trust${e.truth !== undefined ? " · truth" : ""}${sources ? ", then the source line" : ""}`, `fill="#4b5563"`));
    hy += 6;
    for (const f of e.frames.slice(0, frameLimit)) {
      const c = frameColours(f.index);
      const truth = f.truth !== undefined ? ` · ${f.truth}` : "";
      const source = sourceOf(f);
      const label = wrap(`#${f.index} ${f.location} · ${f.frame.trust}${truth}`, fits(inner - 18));
      // The frame's inline frames follow it in the list, marked as living in its band.
      const inlined = (f.inlines ?? []).flatMap((x) => wrap(`  ↳ inlined in #${f.index}: ${x.location}${x.source !== undefined ? ` ${x.source.file}:${x.source.line}` : ""}`, fits(inner - 18)));
      const lines = [...(source === undefined ? label : [...label, ...wrap(source, fits(inner - 18))]), ...inlined];
      const colour = f.truth === "differs" || f.truth === "extra" ? `fill="#b91c1c"` : `fill="#111827"`;
      list.push(`<g class="legend-frame" data-frame="${f.index}">`);
      list.push(`<rect x="${PAD}" y="${hy + 2}" width="12" height="12" fill="${c.band}" stroke="${c.line}"/>`);
      lines.forEach((l, n) => list.push(text(PAD + 18, hy + 12 + n * ROW, l, n < label.length ? colour : `fill="#4b5563"`)));
      list.push(`<title>${escapeXml(`frame ${f.index}: ${f.location}${source !== undefined ? ` — ${source}` : ""}; ${f.frame.trust}: ${ruleText(f.frame.rule)}${truth}`)}</title>`);
      list.push(`</g>`);
      hy += lines.length * ROW;
    }
    if (e.frames.length === 0) {
      list.push(text(PAD, hy + 12, "(no frames)", `fill="#b91c1c"`));
      hy += ROW;
    }
  }

  const height = Math.ceil(hy + PAD);
  const description = `Stack diagram of ${e.title}: ${e.frames.length} frames on ${info.title}.`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="stack-diagram" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="${FONT}" role="img" aria-labelledby="${ids.title}">`,
    `<title id="${ids.title}">${escapeXml(`${e.title} — thread ${e.threadId}`)}</title>`,
    `<desc>${escapeXml(description)}</desc>`,
    `<defs>`,
    `<marker id="${ids.ra}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#b84200"/></marker>`,
    `<marker id="${ids.chain}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#0066a6"/></marker>`,
    `</defs>`,
    `<style>.band.current rect, .legend-frame.current rect { stroke: #111827; stroke-width: 3px; } .row.read rect.cell, .row.read rect.value { fill: #fde047; } .row.read rect.value { stroke-width: 3px; } .arrow.read path { stroke-width: 3px; }</style>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    ...head,
    ...legend,
    ...body,
    ...list,
    `</svg>`,
    "",
  ].join("\n");
}
