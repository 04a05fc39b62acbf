/** A dump of a sweep's deepest snapshot with its stack only: the module image left out, for tests that give the image back. */
import { readFileSync } from "node:fs";
import { minidumpBytes } from "../../src/formats/minidump-write.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import type { TruthFrame } from "../../src/model/snapshot.js";

/** The dump's bytes and the deepest snapshot's ground truth. */
export function stackOnlyDump(sweepFile: string): { bytes: Uint8Array; truth: TruthFrame[] } {
  const sweep = parseSweep(readFileSync(sweepFile, "utf8"));
  let bytes: Uint8Array = new Uint8Array(0);
  let truth: TruthFrame[] = [];
  // Replaying updates one memory in place: each snapshot is written while it is current.
  for (const v of replaySweep(sweep)) {
    if (v.threads[0]!.truth!.length <= truth.length) continue;
    const image = v.modules[0]!;
    const ranges = v.memory.regions
      .filter((r) => r.base + BigInt(r.bytes.length) <= image.base || r.base >= image.base + image.size)
      .map((r) => ({ start: r.base, size: BigInt(r.bytes.length) }));
    bytes = minidumpBytes(v, { ranges });
    truth = v.threads[0]!.truth!;
  }
  return { bytes, truth };
}
