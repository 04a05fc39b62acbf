/**
 * A module's x86 unwind records in vector JSON: `"fpo"` (FPO_DATA, x86-fpo.md §1.1) and
 * `"frameData"` (FrameData with its program string, §2.1), each field named as in the record.
 * Start and length are hex strings, the other sizes plain numbers in the record's own units
 * (FPO_DATA counts DWORDs and registers, FrameData bytes). Loading checks each record lies in
 * the module and that records of one kind nest or are disjoint (§2.2), so lookups are well
 * defined.
 */
import { hex, hexPadded } from "../hex.js";
import { InputError } from "../errors.js";
import type { FpoData } from "../model/fpo-data.js";
import { FRAME_DATA_HAS_EH, FRAME_DATA_HAS_SEH, FRAME_DATA_IS_FUNCTION_START, type FrameData } from "../model/frame-data.js";
import type { ModuleUnwind } from "../model/snapshot.js";
import type { JsonNode } from "./json-input.js";

const FPO_KEYS = ["ulOffStart", "cbProcSize", "cdwLocals", "cdwParams", "cbProlog", "cbRegs", "fHasSEH", "fUseBP", "cbFrame"];
const FRAME_DATA_KEYS = ["rvaStart", "codeSize", "localSize", "paramsSize", "maxStackSize", "prologSize", "savedRegsSize", "flags", "program"];

const hex32 = (n: number): string => JSON.stringify(hexPadded(n, 8));

/** Start and end of a record, with the JSON path for errors. */
interface Span {
  start: number;
  end: number;
  path: string;
}

/** Records of one kind must nest or be disjoint, and lie inside the module. */
function checkSpans(spans: Span[], moduleSize: bigint, what: string): void {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const open: Span[] = [];
  for (const s of sorted) {
    if (BigInt(s.end) > moduleSize) {
      throw new InputError("bad-value", `${what} record ${hex(s.start)}..${hex(s.end)} runs past the end of the module (size ${hex(moduleSize)})`, { path: s.path });
    }
    while (open.length > 0 && open[open.length - 1]!.end <= s.start) open.pop();
    const outer = open[open.length - 1];
    if (outer !== undefined && s.end > outer.end) {
      throw new InputError(
        "overlap",
        `${what} record ${hex(s.start)}..${hex(s.end)} partly overlaps ${hex(outer.start)}..${hex(outer.end)} (${outer.path}): records must nest or be disjoint`,
        { path: s.path },
      );
    }
    open.push(s);
  }
}

/** Parses a module's `fpo` and `frameData` lists; undefined when it has neither. */
export function parseModuleUnwind(node: JsonNode, moduleSize: bigint): ModuleUnwind | undefined {
  const fpoNode = node.opt("fpo");
  const fdNode = node.opt("frameData");
  if (fpoNode === undefined && fdNode === undefined) return undefined;
  const spans: Span[] = [];
  const fpo: FpoData[] = (fpoNode?.array() ?? []).map((r) => {
    r.onlyKeys(FPO_KEYS);
    const rec: FpoData = {
      ulOffStart: Number(r.get("ulOffStart").hex(32)),
      cbProcSize: Number(r.get("cbProcSize").hex(32)),
      cdwLocals: r.get("cdwLocals").integer(0, 0xffff_ffff),
      cdwParams: r.get("cdwParams").integer(0, 0xffff),
      cbProlog: r.get("cbProlog").integer(0, 0xff),
      cbRegs: r.get("cbRegs").integer(0, 7),
      fHasSEH: r.opt("fHasSEH")?.boolean() ?? false,
      fUseBP: r.opt("fUseBP")?.boolean() ?? false,
      reserved: 0,
      cbFrame: r.get("cbFrame").integer(0, 3),
    };
    spans.push({ start: rec.ulOffStart, end: rec.ulOffStart + rec.cbProcSize, path: r.path });
    return rec;
  });
  checkSpans(spans, moduleSize, "FPO_DATA");
  spans.length = 0;
  const frameData: FrameData[] = (fdNode?.array() ?? []).map((r) => {
    r.onlyKeys(FRAME_DATA_KEYS);
    const flags = r.opt("flags")?.integer(0, 0xffff_ffff) ?? 0;
    const rec: FrameData = {
      rvaStart: Number(r.get("rvaStart").hex(32)),
      codeSize: Number(r.get("codeSize").hex(32)),
      localSize: r.get("localSize").integer(0, 0xffff_ffff),
      paramsSize: r.get("paramsSize").integer(0, 0xffff_ffff),
      maxStackSize: r.opt("maxStackSize")?.integer(0, 0xffff_ffff) ?? 0,
      frameFunc: 0,
      prologSize: r.get("prologSize").integer(0, 0xffff),
      savedRegsSize: r.get("savedRegsSize").integer(0, 0xffff),
      flags,
      hasSEH: (flags & FRAME_DATA_HAS_SEH) !== 0,
      hasEH: (flags & FRAME_DATA_HAS_EH) !== 0,
      isFunctionStart: (flags & FRAME_DATA_IS_FUNCTION_START) !== 0,
    };
    const program = r.opt("program");
    if (program !== undefined) rec.program = program.string();
    spans.push({ start: rec.rvaStart, end: rec.rvaStart + rec.codeSize, path: r.path });
    return rec;
  });
  checkSpans(spans, moduleSize, "FrameData");
  fpo.sort((a, b) => a.ulOffStart - b.ulOffStart);
  frameData.sort((a, b) => a.rvaStart - b.rvaStart || b.codeSize - a.codeSize);
  return { fpo, frameData, origin: "vector" };
}

/** The `fpo` and `frameData` fields of a module as JSON text (each starting with ", "), or "" when there are none. */
export function formatModuleUnwind(unwind: ModuleUnwind | undefined): string {
  if (unwind === undefined) return "";
  let out = "";
  if (unwind.fpo.length > 0) {
    const rows = unwind.fpo.map(
      (r) =>
        `{ "ulOffStart": ${hex32(r.ulOffStart)}, "cbProcSize": ${hex32(r.cbProcSize)}, "cdwLocals": ${r.cdwLocals}, "cdwParams": ${r.cdwParams}, ` +
        `"cbProlog": ${r.cbProlog}, "cbRegs": ${r.cbRegs}, "fHasSEH": ${r.fHasSEH}, "fUseBP": ${r.fUseBP}, "cbFrame": ${r.cbFrame} }`,
    );
    out += `, "fpo": [\n        ${rows.join(",\n        ")}\n      ]`;
  }
  if (unwind.frameData.length > 0) {
    const rows = unwind.frameData.map(
      (r) =>
        `{ "rvaStart": ${hex32(r.rvaStart)}, "codeSize": ${hex32(r.codeSize)}, "localSize": ${r.localSize}, "paramsSize": ${r.paramsSize}, ` +
        `"maxStackSize": ${r.maxStackSize}, "prologSize": ${r.prologSize}, "savedRegsSize": ${r.savedRegsSize}, "flags": ${r.flags}` +
        `${r.program !== undefined ? `, "program": ${JSON.stringify(r.program)}` : ""} }`,
    );
    out += `, "frameData": [\n        ${rows.join(",\n        ")}\n      ]`;
  }
  return out;
}
