// stack.jest.test.mjs (Jest, with NODE_OPTIONS=--experimental-vm-modules for ES modules)
import { readFileSync } from "node:fs";
import { expect, test } from "@jest/globals";
import { stackMatchers, walkDump } from "stackwalk-emu/testing";

expect.extend(stackMatchers);

const fixtures = "test/fixtures/breakpad";

test("walks the dump with its symbols", async () => {
  const stacks = await walkDump(readFileSync(`${fixtures}/minidump2.dmp`), {
    symbols: [readFileSync(`${fixtures}/symbols/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym`)],
  });
  expect(stacks).toHaveStack(["CrashFunction", "main", "__tmainCRTStartup"]);
  expect(stacks.thread.frames[0]).toMatchObject({ file: "c:\\test_app.cc", line: 58, trust: "context" });
});
