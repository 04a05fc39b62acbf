/**
 * `stackwalk compare` output: one call chain on several targets side by side — which register
 * plays each STACKFRAME role, where each frame's return address and saved registers live, which
 * walkers find which frames (checked against each target's ground truth), and what ETW recorded —
 * from a comparison gathered by src/analysis/compare-chain.ts.
 */
import type { ComparedTarget, Comparison } from "../analysis/compare-chain.js";
import type { ExplainedRead } from "../analysis/explain-model.js";
import { locateAddress } from "../analysis/location.js";
import { formatAddress, machineInfo, type Machine } from "../model/machine.js";
import type { Snapshot, TruthFrame } from "../model/snapshot.js";
import { ruleText } from "../arch/rule-text.js";
import type { Walk } from "../walk/frame.js";

const TARGET_TITLES: Record<string, string> = {
  "x86-fp": "x86, frame pointers",
  "x86-fpo": "x86, frame-pointer omission",
  x64: "x64",
  ia64: "IA-64",
};

function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c + " ".repeat(widths[i]! - [...c].length))).join("  ").trimEnd());
}

/** Whether a walk has a frame equal to truth frame `t` (PC, SP and, on IA-64, BSP). */
function found(walk: Walk, t: TruthFrame): boolean {
  return walk.frames.some((f) => f.addrPC === t.pc && f.addrStack === t.sp && (t.bsp === undefined || f.addrBStore === t.bsp));
}

/** The function a return address is in (looked up at ra − 1), else its module's name. */
function functionAt(snapshot: Snapshot, address: bigint): string | undefined {
  const loc = locateAddress(snapshot.modules, address, true);
  return loc.function ?? loc.module?.name;
}

/** Where a read lives, for the frames table: `EBP+4 0x0012ff4c`. */
function place(machine: Machine, r: ExplainedRead): string {
  const at = formatAddress(machine, r.address);
  return `${r.relative !== undefined ? `${r.relative} ` : ""}${at}${r.area === "backing-store" ? " (backing store)" : ""}`;
}

/** The comparison as text. */
export function renderCompare(comparison: Comparison): string {
  const input = comparison.input;
  const out: string[] = [`compare ${input.name}: ${input.description}`, `call chain, outermost first: ${input.chain.join(" → ")}`, ""];
  // Roles side by side.
  const machines = input.targets.map((t) => t.snapshot.machine);
  const roleNames = machineInfo(machines[0]!).roles.map((r) => r.role);
  const roleRows: string[][] = [["STACKFRAME64", ...input.targets.map((t) => TARGET_TITLES[t.target] ?? t.target)]];
  for (const role of roleNames) roleRows.push([role, ...machines.map((m) => machineInfo(m).roles.find((r) => r.role === role)?.display ?? "-")]);
  out.push("Which register plays each STACKFRAME role:", ...table(roleRows).map((l) => `  ${l}`));
  for (const t of comparison.targets) {
    out.push("", ...targetBlock(t));
  }
  out.push("", "Legend: ✓ the walker (or ETW) has the frame with the ground truth's PC and SP; ✗ it does not.");
  return out.join("\n") + "\n";
}

function targetBlock(compared: ComparedTarget): string[] {
  const t = compared.input;
  const machine = t.snapshot.machine;
  const a = (v: bigint): string => formatAddress(machine, v);
  const { truth, explained } = compared;
  const bsp = machineInfo(machine).bstore !== null;
  const out = [`${TARGET_TITLES[t.target] ?? t.target} (${machineInfo(machine).title}): ${t.build}`];
  // Frames: where each return address and saved register was found.
  const header = ["#", "function", "PC", "SP", ...(bsp ? ["BSP"] : []), "PC read from", "registers recovered from"];
  const rows: string[][] = [header];
  truth.forEach((tf, i) => {
    const e = explained.frames[i];
    const reads = e?.reads ?? [];
    const ra = reads.find((r) => r.role === "return-address");
    const saved = reads.filter((r) => r.role === "saved-frame-pointer" || r.role === "saved-register").map((r) => `${r.register}@${place(machine, r)}`);
    rows.push([
      String(i), tf.function ?? functionAt(t.snapshot, tf.pc) ?? "?", a(tf.pc), a(tf.sp), ...(bsp ? [tf.bsp !== undefined ? a(tf.bsp) : "-"] : []),
      i === 0 ? "(the context)" : ra !== undefined ? place(machine, ra) : e !== undefined ? `(${e.frame.trust}: ${ruleText(e.frame.rule)})` : "(not found)",
      saved.length > 0 ? saved.join(", ") : "-",
    ]);
  });
  out.push(...table(rows).map((l) => `  ${l}`));
  // Walkers against the truth.
  const walkerRows: string[][] = [["walker", ...truth.map((_, i) => String(i)), "result"]];
  for (const { walker, walk, comparison: c } of compared.walkers) {
    const marks = truth.map((tf) => (found(walk, tf) ? "✓" : "✗"));
    const result = c.exact ? `exact (${c.walkedFrames} frames)` : `${marks.filter((m) => m === "✓").length}/${truth.length}: ${c.difference?.text ?? ""}`;
    walkerRows.push([walker, ...marks, result]);
  }
  out.push("  Walkers against the ground truth (frame numbers as above):", ...table(walkerRows).map((l) => `    ${l}`));
  out.push(...etwLines(compared).map((l) => `  ${l}`));
  return out;
}

/** What the ETW stack in the snapshot holds, frame by frame of the truth. */
function etwLines(compared: ComparedTarget): string[] {
  const { input: t, truth } = compared;
  const stack = compared.etw.stacks[0];
  if (stack === undefined) return [`ETW: ${t.etwSource}.`];
  const addresses = stack.addresses;
  const names = addresses.map((x) => functionAt(t.snapshot, x) ?? formatAddress(t.snapshot.machine, x));
  // Frame 0's PC is where the snapshot was taken, not an address ETW logs: its function must appear.
  const inner = truth[0]?.function;
  const marks = truth.map((tf, i) => (i === 0 ? (inner !== undefined && names.includes(inner) ? "✓" : "✗") : addresses.includes(tf.pc) ? "✓" : "✗"));
  const missing = truth.filter((_, i) => marks[i] === "✗").map((tf) => tf.function ?? formatAddress(t.snapshot.machine, tf.pc));
  return [
    `ETW (${t.etwSource}): ${names.join(" ← ")}`,
    `  against the ground truth: ${marks.join("")}${missing.length > 0 ? ` — missing: ${missing.join(", ")}` : " — every frame recorded"}`,
  ];
}
