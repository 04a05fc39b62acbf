// stack.test.ts (Vitest)
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { stackMatchers, walkDump, type StackMatchers } from "stackwalk-emu/testing";

declare module "vitest" {
  interface Assertion<T = any> extends StackMatchers<T> {}
}
expect.extend(stackMatchers);

const fixtures = "test/fixtures/breakpad";
const dump = readFileSync(`${fixtures}/minidump2.dmp`);
const symbols = [
  "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym",
  "kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym",
].map((f) => readFileSync(`${fixtures}/symbols/${f}`));

it("crashes in CrashFunction, called from main", async () => {
  expect(await walkDump(dump, { symbols })).toHaveStack(["CrashFunction", "main"]);
  expect(await walkDump(dump, { symbols })).toHaveStack(
    ["CrashFunction", "main", "__tmainCRTStartup", "kernel32.dll!BaseProcessStart"],
    { exact: true },
  );
});

it("matches frames by fields too, and says which frame differs", async () => {
  const stacks = await walkDump(dump, { symbols });
  expect(stacks).toHaveStack([{ function: /CrashFunction/, line: 58 }, { function: "main", trust: "frame-data" }]);
  expect(stacks).not.toHaveStack(["CrashFunction", "WinMain"]);
  expect(() => expect(stacks).toHaveStack(["CrashFunction", "WinMain"])).toThrow(/frame 1 differs/);
});
