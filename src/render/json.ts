/** `walk --format json`: the schema fixed in DESIGN.md "Contract". */
import { formatAddress, type Machine } from "../model/machine.js";
import type { Module } from "../model/snapshot.js";
import { ruleText } from "../unwind/rule-text.js";
import type { Frame } from "../walk/frame.js";
import type { ThreadWalk } from "../walk/walk.js";
import { chunked, collect } from "./chunks.js";
import { locate } from "../analysis/location.js";

const offset = (v: bigint): string => "0x" + v.toString(16);

/** One frame as a JSON value. */
export function frameJson(machine: Machine, modules: readonly Module[], frame: Frame): Record<string, unknown> {
  const a = (v: bigint): string => formatAddress(machine, v);
  const loc = locate(modules, frame);
  const registers: Record<string, string> = {};
  for (const [k, v] of Object.entries(frame.registers)) registers[k] = a(v);
  return {
    index: frame.index,
    addrPC: a(frame.addrPC),
    addrReturn: a(frame.addrReturn),
    addrFrame: a(frame.addrFrame),
    addrStack: a(frame.addrStack),
    addrBStore: a(frame.addrBStore),
    params: frame.params.map(a),
    far: frame.far,
    virtual: frame.virtual,
    funcTableEntry:
      frame.funcTableEntry === undefined
        ? null
        : { kind: frame.funcTableEntry.kind, beginRva: offset(frame.funcTableEntry.beginRva), endRva: offset(frame.funcTableEntry.endRva) },
    trust: frame.trust,
    rule: ruleText(frame.rule),
    registers,
    module: loc.module?.name ?? null,
    moduleOffset: loc.moduleOffset === undefined ? null : offset(loc.moduleOffset),
    function: loc.function ?? null,
    functionOffset: loc.functionOffset === undefined ? null : offset(loc.functionOffset),
  };
}

/**
 * The whole walk document. `notes` (a minidump's: what the reader passed over or repaired, each
 * naming the file offset) adds a `notes` array.
 */
export function walkJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], notes?: readonly string[]): Record<string, unknown> {
  return {
    machine,
    ...(notes === undefined ? {} : { notes: [...notes] }),
    threads: walks.map(({ thread, walk }) => {
      const stop: Record<string, unknown> = { reason: walk.stop.reason };
      if (walk.stop.address !== undefined) stop["address"] = formatAddress(machine, walk.stop.address);
      stop["detail"] = walk.stop.detail;
      return { id: thread.id, crashed: thread.crashed, frames: walk.frames.map((f) => frameJson(machine, modules, f)), stop };
    }),
  };
}

/** The walk document as text (two-space indented, newline-terminated). */
export function renderJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], notes?: readonly string[]): string {
  return collect((write) => writeJson(machine, modules, walks, write, notes));
}

/** Stands in for a list's items in a document laid out before them. */
const ITEMS = "\u0000items";
/** The line JSON.stringify gives {@link ITEMS} as an item of a list: its indent, then the quoted text. */
const ITEMS_LINE = /^( *)"\\u0000items"$/gm;

/**
 * `text` (JSON.stringify'd with a two-space indent) cut where its last list (the threads, the
 * frames) has {@link ITEMS} as its item: the text before the item, the item's indent, the text
 * after it. Last, because a list of notes before it could hold the same text.
 */
function around(text: string): { before: string; indent: string; after: string } {
  const m = [...text.matchAll(ITEMS_LINE)].at(-1)!;
  return { before: text.slice(0, m.index), indent: m[1]!, after: text.slice(m.index + m[0].length) };
}

/** `value` laid out by JSON.stringify with a two-space indent, every line starting at `indent`. */
function indented(value: unknown, indent: string): string {
  return indent + JSON.stringify(value, null, 2).replaceAll("\n", "\n" + indent);
}

/**
 * {@link renderJson}'s text, handed to `write` piece by piece as it is made: each frame is laid
 * out as JSON.stringify lays it out in the whole document, so the text is the same, but a walk of
 * 100,000 frames is never one object tree or one string.
 */
export function writeJson(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[], write: (text: string) => void, notes?: readonly string[]): void {
  const out = chunked(write);
  const pushThread = ({ thread, walk }: ThreadWalk, indent: string): void => {
    const stop: Record<string, unknown> = { reason: walk.stop.reason };
    if (walk.stop.address !== undefined) stop["address"] = formatAddress(machine, walk.stop.address);
    stop["detail"] = walk.stop.detail;
    const text = indented({ id: thread.id, crashed: thread.crashed, frames: walk.frames.length === 0 ? [] : [ITEMS], stop }, indent);
    if (walk.frames.length === 0) return out.push(text);
    const frames = around(text);
    out.push(frames.before);
    walk.frames.forEach((f, i) => out.push((i > 0 ? ",\n" : "") + indented(frameJson(machine, modules, f), frames.indent)));
    out.push(frames.after);
  };
  const doc = JSON.stringify({ machine, ...(notes === undefined ? {} : { notes: [...notes] }), threads: walks.length === 0 ? [] : [ITEMS] }, null, 2);
  if (walks.length === 0) out.push(doc);
  else {
    const threads = around(doc);
    out.push(threads.before);
    walks.forEach((w, i) => {
      if (i > 0) out.push(",\n");
      pushThread(w, threads.indent);
    });
    out.push(threads.after);
  }
  out.push("\n");
  out.end();
}
