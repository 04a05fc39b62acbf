/**
 * stackwalk-emu/testing: `toHaveStack` under Vitest's expect and Jest's (the `expect` package),
 * its failure message (every frame with its trust and rule, ✓/✗ per expected frame, what was
 * expected where it differs), patterns by name, qualified name, RegExp and fields, the exact and
 * thread options, walks of vectors; and the test examples of docs/library.md, which are these files.
 */
import { readFileSync } from "node:fs";
import { expect as jestExpect } from "expect";
import { beforeAll, describe, expect, it } from "vitest";
import { parseVector } from "../../src/formats/vector.js";
import { frameMatches, stackMatchers, walkDump, walkStacks, type StackMatchers, type WalkedStacks } from "../../src/testing/index.js";

declare module "vitest" {
  interface Assertion<T = any> extends StackMatchers<T> {}
}
declare module "expect" {
  interface Matchers<R extends void | Promise<void>, T = unknown> extends StackMatchers<R> {}
}
expect.extend(stackMatchers);
jestExpect.extend(stackMatchers);

const FIXTURES = "test/fixtures/breakpad";
const SYMBOLS = ["test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym", "kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym"].map((f) => readFileSync(`${FIXTURES}/symbols/${f}`));

const minidump2 = (): Promise<WalkedStacks> => walkDump(readFileSync(`${FIXTURES}/minidump2.dmp`), { symbols: SYMBOLS });

/** The message a failed assertion throws. */
function failure(assert: () => void): string {
  try {
    assert();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("the assertion passed");
}

describe("toHaveStack", () => {
  it("fails with every frame's trust and rule, the frames that match marked, and what was expected where one differs (Vitest and Jest alike)", async () => {
    const stacks = await minidump2();
    const vitest = failure(() => expect(stacks).toHaveStack(["CrashFunction", "WinMain", "__tmainCRTStartup"]));
    const jest = failure(() => jestExpect(stacks).toHaveStack(["CrashFunction", "WinMain", "__tmainCRTStartup"]));
    for (const message of [vitest, jest]) {
      const lines = message.split("\n");
      expect(lines[0]).toBe("expected thread 3060 (crashed) to have the stack [CrashFunction, WinMain, __tmainCRTStartup]; frame 1 differs:");
      expect(lines[1]).toMatch(/^ {6}frame +trust +rule$/);
      expect(lines[2]).toMatch(/^ {2}✓ {2}0 test_app\.exe!`anonymous namespace'::CrashFunction\+0xe \[c:\\test_app\.cc:58\] +context +context$/);
      expect(lines[3]).toMatch(/^ {2}✗ {2}1 test_app\.exe!main\+0x50 \[c:\\test_app\.cc:65\] +frame-data +frame-data rva=0x4290 .* {3}← expected WinMain$/);
      expect(lines[4]).toMatch(/^ {2}✓ {2}2 test_app\.exe!__tmainCRTStartup\+0x/);
      expect(lines[5]).toMatch(/^ {4} 3 kernel32\.dll!BaseProcessStart\+0x/);
      expect(lines[6]).toBe("  stop: end-of-stack: the return address is 0: this is the outermost frame");
    }
    const not = failure(() => jestExpect(stacks).not.toHaveStack(["CrashFunction"]));
    expect(not.split("\n")[0]).toBe("expected thread 3060 (crashed) not to have the stack [CrashFunction], but it does:");
  });

  it("with { exact: true } every frame must be expected, and a missing one is shown", async () => {
    const stacks = await minidump2();
    expect(stacks).toHaveStack(["CrashFunction", "main"]);
    const message = failure(() => expect(stacks).toHaveStack(["CrashFunction", "main"], { exact: true }));
    expect(message).toContain("frame 2 differs");
    expect(message).toMatch(/✗ {2}2 test_app\.exe!__tmainCRTStartup.*← not expected \(exact\)/);
    const longer = failure(() => expect(stacks).toHaveStack(["CrashFunction", "main", "__tmainCRTStartup", "BaseProcessStart", "RtlUserThreadStart"]));
    expect(longer).toMatch(/✗ {2}4 \(no frame\) +← expected RtlUserThreadStart/);
  });

  it("matches by name, qualified name, last :: part, RegExp and fields", async () => {
    const [f0, f1] = (await minidump2()).thread.frames;
    for (const p of ["CrashFunction", "`anonymous namespace'::CrashFunction", "test_app.exe!`anonymous namespace'::CrashFunction", /Crash/, { module: "test_app.exe", line: 58, trust: "context" as const }]) expect(frameMatches(f0!, p), String(p)).toBe(true);
    for (const p of ["crashfunction", "test_app.exe!CrashFunction", /^main$/, { line: 59 }, { file: /other\.cc/ }]) expect(frameMatches(f0!, p), String(p)).toBe(false);
    expect(frameMatches(f1!, { function: "main", trust: "frame-data", file: "c:\\test_app.cc", line: 65 })).toBe(true);
  });

  it("looks at another thread with { thread }, and says what is wrong with what it was given", async () => {
    const stacks = walkStacks(parseVector(readFileSync("vectors/x86/ebp-chain-4.json", "utf8")));
    expect(stacks).toHaveStack(["read_token", "parse_config", "main", "mainCRTStartup"], { exact: true });
    expect(stacks.thread).toHaveStack(["read_token"]);
    expect(failure(() => expect(stacks).toHaveStack([], { thread: 99 }))).toBe("no thread with id 99 (threads: 0)");
    expect(failure(() => expect(42).toHaveStack(["main"]))).toBe("expected the result of walkDump (or a thread of it), got 42");
  });

  it("walkDump refuses a symbol file of another module, naming its identity", async () => {
    const other = readFileSync("vectors/programs/c/build/x86-fpo/big-frames-varargs.pdb");
    await expect(walkDump(readFileSync(`${FIXTURES}/minidump2.dmp`), { symbols: [other] })).rejects.toThrow(/no module of the snapshot has it/);
  });
});

let minidump2Sync: WalkedStacks;

describe("the test examples of docs/library.md", () => {
  beforeAll(async () => {
    minidump2Sync = await minidump2();
  });
  const readme = readFileSync("docs/library.md", "utf8");
  const block = (first: string): string => {
    const m = [...readme.matchAll(/```(?:ts|js)\n(\/\/ [^\n]*\n[\s\S]*?)```/g)].find((b) => b[1]!.startsWith(`// ${first}`));
    if (m === undefined) throw new Error(`docs/library.md has no example starting "// ${first}"`);
    return m[1]!;
  };
  it("show the failure message toHaveStack gives", async () => {
    const shown = /```\n(expected thread 3060 \(crashed\) to have the stack \[CrashFunction, WinMain\][\s\S]*?)```/.exec(readme)![1]!;
    expect(shown).toBe(failure(() => jestExpect(minidump2Sync).toHaveStack(["CrashFunction", "WinMain"])) + "\n");
  });

  it("are test/testing/readme/stack.test.ts (Vitest) and stack.jest.test.mjs (Jest), which the suite runs", () => {
    expect(block("stack.test.ts")).toBe(readFileSync("test/testing/readme/stack.test.ts", "utf8"));
    expect(block("stack.jest.test.mjs")).toBe(readFileSync("test/testing/readme/stack.jest.test.mjs", "utf8"));
  });
});
