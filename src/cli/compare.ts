/** `stackwalk compare <chain.json>`: one call chain built for x86 (frame pointers and FPO), x64, ARM64, ARM and IA-64, walked and compared side by side. */
import { COMPARE_TARGETS, parseChainSpec, runCompareTargets } from "../../emulator/compare.js";
import { compareChain } from "../analysis/compare-chain.js";
import { renderCompare } from "../render/compare.js";
import { EXIT, parseOptions, readInputFile, UsageError, type Io } from "./common.js";

/** Usage text of `compare`. */
export const COMPARE_USAGE = `usage: stackwalk compare <chain.json>

Builds one call chain for each target and runs each on the emulator: x86 with frame pointers,
x86 with frame-pointer omission, x64, ARM64 (frame records and .xdata; the innermost leaf keeps
its return address in the link register), ARM (Thumb-2: the r11 frame chain and packed .pdata
words; again a leaf keeping lr) and IA-64 (the register stack engine model). Prints, side by side, which register plays each STACKFRAME role; per target, where each frame's return
address and saved registers were read from; which walkers find which frames, checked against
the ground truth; and what ETW recorded (x86: the EBP chain RtlWalkFrameChain follows).
Targets: ${COMPARE_TARGETS.join(", ")}.

The chain file (format "stackwalk-chain/1"):
  { "format": "stackwalk-chain/1", "name": "config-parser", "description": "...",
    "functions": [ { "name": "main", "locals": 16 },
                   { "name": "parse_config", "locals": 32, "params": 2, "saved": 2 },
                   { "name": "read_token", "locals": 8, "params": 1 } ] }
  outermost first, each function calls the next; locals in bytes (multiple of 4), params the
  arguments its caller passes, saved the callee-saved registers it keeps (0..3).
Examples: vectors/programs/chains/*.json
`;

/** Runs `compare`. */
export async function compareCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(argv, { help: { type: "boolean", short: "h" } });
  if (values.help) {
    io.out(COMPARE_USAGE);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError(`compare takes exactly one chain file (got ${positionals.length})`);
  const file = positionals[0]!;
  const spec = parseChainSpec(new TextDecoder().decode(readInputFile(file)), file);
  const runs = await runCompareTargets(spec);
  io.out(
    renderCompare(
      compareChain({
        name: spec.name,
        description: spec.description,
        chain: spec.functions.map((f) => f.name),
        targets: runs.map((r) => ({ target: r.target, build: r.build, snapshot: r.vector, etwSource: r.etwSource })),
      }),
    ),
  );
  return EXIT.ok;
}
