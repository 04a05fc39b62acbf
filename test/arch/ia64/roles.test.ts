/** `stackwalk roles --machine ia64` explains AddrBStore with a picture of the two stacks. */
import { describe, expect, it } from "vitest";
import { rolesCommand } from "../../../src/cli/roles.js";

function roles(...argv: string[]): string {
  let out = "";
  rolesCommand(argv, { out: (t) => (out += t), err: () => undefined });
  return out;
}

describe("roles for Itanium", () => {
  it("draws the memory stack and the backing store, with AddrStack and AddrBStore in each", () => {
    const out = roles("--machine", "ia64");
    expect(out).toMatch(/memory stack \(r12 = sp\)\s+register backing store \(ar\.bsp\)/);
    expect(out).toMatch(/grows DOWN\s+grows UP/);
    expect(out).toContain("<- AddrBStore #0 = RsBSP");
    expect(out).toContain("= AddrStack #0");
    expect(out).toContain("[A]");
    expect(out).toContain("[M]");
  });

  it("keeps the side-by-side table of every machine without the picture", () => {
    expect(roles()).not.toContain("grows UP");
    expect(roles("--machine", "x64")).not.toContain("backing store (ar.bsp)");
  });
});
