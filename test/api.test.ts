/**
 * The public surface is deliberate: the root entry holds what a user needs to load inputs, walk,
 * symbolise and render (at most 80 names), the rest is in named entries, and every entry's
 * names and signatures are in the checked-in API report (api/report.api.txt), so a change to
 * the surface shows in review. `npm run api` rewrites the report after a deliberate change.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { apiReport, exportCounts } from "./support/api-report.js";

const ROOT = new URL("../", import.meta.url).pathname;

describe("the public API", () => {
  const report = apiReport(ROOT);

  it("is the checked-in report, name for name and signature for signature (npm run api updates it)", () => {
    const committed = readFileSync(`${ROOT}api/report.api.txt`, "utf8");
    expect(report, "the public API changed: run `npm run api` and commit api/report.api.txt with the change").toBe(committed);
  });

  it("keeps the root entry small: at most 80 names", () => {
    const counts = exportCounts(report);
    expect(counts["stackwalk-emu"]).toBeLessThanOrEqual(80);
    expect(Object.keys(counts)).toEqual(["stackwalk-emu", ...["formats", "dbghelp", "arch", "etw", "render", "node", "testing", "emulator"].map((e) => `stackwalk-emu/${e}`)]);
  });
});
