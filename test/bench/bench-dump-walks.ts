/**
 * How walks of the emulator's break dumps fare against its truth (test/support/break-dumps.ts), for
 * `npm run bench`: x64 dumps without images or symbols (the exact-stack and exact-frame rates of
 * `auto` beside the frame-pointer walker's) and x86 FPO dumps without the symbol store (the
 * exact-stack rate of `auto` beside the frame-pointer walker's and Breakpad's walker's), and the
 * truth table of `auto` beside `--walker breakpad` on every class of dump.
 */
import { scoreDumps, truthTable, x64DumpHits, x86FpoDumpHits, type DumpScore } from "../support/break-dumps.js";

const pct = (n: number, total: number): string => `${((100 * n) / total).toFixed(1)}%`;
const stacks = (s: DumpScore, n: number): string => `${s.stacks}/${n} stacks (${pct(s.stacks, n)})`;
const frames = (s: DumpScore): string => `${s.frames}/${s.totalFrames} frames (${pct(s.frames, s.totalFrames)})`;

/** The bench lines. */
export function formatDumpWalkBench(): string {
  const x64 = x64DumpHits();
  const bare = { withholdImages: true, symbols: false };
  const auto64 = scoreDumps(x64, bare, { walker: "auto" });
  const fp64 = scoreDumps(x64, bare, { walker: "frame-pointer" });
  const cfi64 = scoreDumps(x64, { withholdImages: true, symbols: true }, { walker: "auto" });
  const x86 = x86FpoDumpHits();
  const noSym = { withholdImages: false, symbols: false };
  const auto86 = scoreDumps(x86, noSym, { walker: "auto" });
  const fp86 = scoreDumps(x86, noSym, { walker: "frame-pointer" });
  const bp86 = scoreDumps(x86, noSym, { walker: "breakpad" });
  return [
    `x64 dumps, STACK CFI:           auto ${stacks(cfi64, x64.length)} exact`,
    `x64 dumps, no symbols, auto:    ${stacks(auto64, x64.length)} exact, ${frames(auto64)}`,
    `x64 dumps, no symbols, fp:      ${stacks(fp64, x64.length)} exact, ${frames(fp64)} (frame-pointer walker)`,
    `x86 FPO dumps, no .sym store:   auto ${stacks(auto86, x86.length)} exact; frame-pointer ${stacks(fp86, x86.length)}; Breakpad's walker ${stacks(bp86, x86.length)}`,
    "auto beside Breakpad's walker (exact stacks; the README's table):",
    ...truthTable().map((r) => `  ${r.name.padEnd(44)} auto ${stacks(r.auto, r.total)}, breakpad ${stacks(r.breakpad, r.total)}`),
  ].join("\n") + "\n";
}
