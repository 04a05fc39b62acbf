/**
 * `stackwalk roles --machine arm64` explains AddrReturn with a picture of the link register and
 * the frame record (docs/learn.md shows it as the command prints it: test/docs/transcripts.test.ts).
 */
import { describe, expect, it } from "vitest";
import { rolesCommand } from "../../../src/cli/roles.js";

function roles(...argv: string[]): string {
  let out = "";
  rolesCommand(argv, { out: (t) => (out += t), err: () => undefined });
  return out;
}

describe("roles for ARM64", () => {
  it("prints the ARM64 role table and the link-register picture", () => {
    const out = roles("--machine", "arm64");
    expect(out).toMatch(/AddrReturn\s+Lr \/ unwound Pc/);
    expect(out).toContain("lr = return address into f = AddrReturn #0");
    expect(out).toContain("x29 (fp) = AddrFrame #0: still f's record");
  });

  it("keeps the side-by-side table of every machine, ARM64 included, without the picture", () => {
    const all = roles();
    expect(all).toMatch(/^role\s+x86 \(I386\)\s+x64 \(AMD64\)\s+Itanium \(IA64\)\s+ARM64 \(AArch64\)/);
    expect(all).not.toContain("the return address starts in a register");
  });
});
