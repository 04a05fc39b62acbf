import { mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { spawnStackwalk } from "../support/spawn-cli.js";
import { parseWalkJson } from "../support/walk-schema.js";
import { fixtureFile } from "../support/fixtures.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const X86 = "vectors/x86/ebp-chain-4.json";

describe("stackwalk walk", () => {
  it("prints JSON that follows the contract", async () => {
    const { code, out } = await cli("walk", X86, "--format", "json");
    expect(code).toBe(0);
    const doc = parseWalkJson(out);
    expect(Object.keys(doc)).toEqual([
      "machine", "status", "pid", "process_uptime", "crash_info", "system_info", "linux_memory_map_count", "thread_count", "threads", "crashing_thread",
      "main_module", "modules_contains_cert_info", "modules", "unloaded_modules", "handles", "lsb_release", "mac_crash_info", "mac_boot_args", "soft_errors", "proc_limits",
    ]);
    expect(doc.machine).toBe("x86");
    const t = doc.threads[0];
    expect(Object.keys(t)).toEqual(["thread_id", "thread_name", "last_error_value", "frame_count", "frames", "crashed", "stop"]);
    expect(t.crashed).toBe(true);
    expect(Object.keys(t.frames[0])).toEqual([
      "frame", "trust", "registers", "offset", "module", "module_offset", "unloaded_modules", "function", "function_offset", "file", "line",
      "missing_symbols", "inlines", "addrPC", "addrReturn", "addrFrame", "addrStack", "addrBStore", "params", "far", "virtual", "funcTableEntry", "foundBy", "rule",
    ]);
    expect(t.frames[0]).toMatchObject({
      frame: 0, addrPC: "0x004010cd", addrReturn: "0x00401097", addrFrame: "0x0012fe08", addrStack: "0x0012fe00",
      addrBStore: "0x00000000", params: ["0x00000007", "0x0012fe20", "0x00000010", "0xcccccccc"], far: false, virtual: false,
      funcTableEntry: null, trust: "context", foundBy: "context", rule: "context", offset: "0x004010cd", module: "demo.exe", module_offset: "0x000010cd",
      function: "read_token", function_offset: "0x0000000d",
    });
    // A caller's offset is its return address − 1, inside the call.
    expect(t.frames[1]).toMatchObject({ addrPC: "0x00401097", offset: "0x00401096", trust: "frame_pointer", foundBy: "frame-pointer" });
    expect(doc.crashing_thread).toMatchObject({ threads_index: 0, thread_id: t.thread_id, frame_count: t.frame_count });
    expect(doc.crashing_thread.frames).toEqual(t.frames);
    expect(t.frames[0].registers.eip).toBe("0x004010cd");
    expect(t.frames.map((f: { function: string }) => f.function)).toEqual(["read_token", "parse_config", "main", "mainCRTStartup"]);
    expect(t.stop.reason).toBe("end-of-stack");
    for (const f of t.frames) for (const k of ["addrPC", "addrReturn", "addrFrame", "addrStack"]) expect(f[k]).toMatch(/^0x[0-9a-f]{8}$/);
  });

  it("states a dump's crash first, and prints params only where arguments are passed on the stack (x86)", async () => {
    const dump = await cli("walk", fixtureFile("breakpad/minidump2.dmp"), "--thread", "crashed");
    // Breakpad's report of the dump says the same: EXCEPTION_ACCESS_VIOLATION_WRITE, 0x45, thread 3060 (0xbf4).
    expect(dump.out.split("\n")[1]).toBe("crash: EXCEPTION_ACCESS_VIOLATION_WRITE at 0x00000045 in thread 3060");
    expect(dump.out).toContain("     params: 0x008727b8 0x7c9131dc 0x00000000 0x00874c00");
    const x86 = await cli("walk", X86);
    expect(x86.out).not.toContain("crash:");
    expect(x86.out).toContain("params:");
    for (const vector of ["vectors/x64/rbp-chain-3.json", "vectors/arm64/synthetic/arm64-machine-frame-handler.json", "vectors/ia64/synthetic/before-alloc.json"]) expect((await cli("walk", vector)).out).not.toContain("params:");
  });

  it("pads x64 addresses to 16 digits", async () => {
    const { out } = await cli("walk", "vectors/x64/rbp-chain-3.json", "--format", "json");
    expect(parseWalkJson(out).threads[0].frames[1].addrPC).toBe("0x000000014000106c");
  });

  it("prints WinDbg kb-style output with kv FPO notes on x86", async () => {
    const { code, out } = await cli("walk", X86, "--format", "windbg");
    expect(code).toBe(0);
    expect(out.split("\n").slice(0, 3)).toEqual([
      "ChildEBP RetAddr  Args to Child              ",
      "0012fe08 00401097 00000007 0012fe20 00000010 demo!read_token+0xd (FPO: [Non-Fpo])",
      "0012fe28 00401061 0012fe38 00000000 6f632e61 demo!parse_config+0x17 (FPO: [Non-Fpo])",
    ]);
    const x64 = await cli("walk", "vectors/x64/rbp-chain-3.json", "--format", "windbg");
    expect(x64.out.split("\n")[1]).toBe("00000000`0014fd00 00000001`4000106c app!tick+0xb");
  });

  it("prints text with the roles, the trust and the rule of each frame", async () => {
    const { out } = await cli("walk", X86, "--roles");
    expect(out).toContain("Register roles on x86 (I386):");
    expect(out).toMatch(/AddrFrame\s+EBP/);
    expect(out).toMatch(/1 {2}0x00401097 {2}0x00401061 {2}0x0012fe28 {2}0x0012fe10 {2}frame-pointer {2}demo\.exe!parse_config\+0x17/);
    expect(out).toContain("rule: ebp-chain ebp=0x0012fe08");
    expect(out).toContain("stop: end-of-stack");
  });

  it("caps frames with --max-frames and picks a thread", async () => {
    const { out } = await cli("walk", X86, "--format", "json", "--max-frames", "2", "--thread", "0");
    const t = parseWalkJson(out).threads[0];
    expect(t.frames).toHaveLength(2);
    expect(t.stop.reason).toBe("max-frames");
    expect((await cli("walk", X86, "--thread", "7")).code).toBe(2);
  });

  it.each([
    [["walk", "missing.json"], /missing\.json: cannot read: no such file/],
    [["walk", X86, "--format", "xml"], /--format must be one of text, json, jsonl, summary, windbg/],
    [["walk", X86, "--walker", "magic"], /--walker must be one of/],
    [["walk", X86, "--walker", "unwind"], /walker 'unwind' is not available for x86/],
    [["walk", X86, "--max-frames", "0"], /--max-frames takes a whole number/],
    [["walk", X86, "--bogus"], /^stackwalk walk: unknown option "--bogus"$/],
    [["walk", X86, "--max-frames", "-1"], /^stackwalk walk: --max-frames takes a whole number ≥ 1, not "-1"$/],
    [["walk", X86, "--max-frames"], /^stackwalk walk: --max-frames needs a value$/],
    [["walk", X86, "--walker", "--thread", "0"], /^stackwalk walk: --walker needs a value$/],
    [["walk", X86, "--roles=yes"], /^stackwalk walk: --roles takes no value$/],
    [["walk", X86, "-x"], /^stackwalk walk: unknown option "-x"$/],
    [["walk"], /walk takes an input file \(or several, or a folder\)/],
    [["walk", "package.json"], /package\.json: \$\.format: missing required field "format"/],
    [["walk", "src/cli/stackwalk.ts"], /stackwalk\.ts: offset 0x0: not a stackwalk-vector\/1 or stackwalk-sweep\/1 JSON file/],
    [["frobnicate"], /unknown command "frobnicate"/],
  ])("exits 2 with one clear line for %j", async (argv, message) => {
    const { code, err } = await cli(...argv);
    expect(code).toBe(2);
    expect(err.split("\n")[0]).toMatch(message);
    expect(err.endsWith("\n") && err.indexOf("\n") === err.length - 1, "one line").toBe(true);
    expect(err).not.toMatch(/at .*\.ts:\d+/);
  });

  it("has --help on every command", async () => {
    for (const c of ["walk", "check", "roles", "emulate"]) {
      const { code, out } = await cli(c, "--help");
      expect(code).toBe(0);
      expect(out).toMatch(new RegExp(`^usage: stackwalk ${c}`));
    }
    expect((await cli("--help")).out).toMatch(/^usage: stackwalk <command>/);
  });
});

describe("stackwalk check", () => {
  it("checks a directory and prints the closing line", async () => {
    const { code, out } = await cli("check", "vectors/x86/ebp-chain-4.json", "vectors/x86/thread-start.json", "--walker", "frame-pointer");
    expect(code).toBe(0);
    expect(out).toMatch(/^ok {4}vectors\/x86\/ebp-chain-4\.json: exact, 4 frames$/m);
    expect(out.trimEnd().split("\n").at(-1)).toBe("2 passed, 0 failed");
  });

  it("reports the first differing frame with both values and exits 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-check-"));
    const v = JSON.parse((await import("node:fs")).readFileSync(X86, "utf8"));
    v.truth[2].pc = "0x00401062";
    writeFileSync(join(dir, "wrong.json"), JSON.stringify(v));
    const { code, out } = await cli("check", dir);
    expect(code).toBe(1);
    expect(out).toContain("FAIL  " + join(dir, "wrong.json") + ": frame 2 (main): addrPC 0x00401061, truth pc 0x00401062 (found by frame-pointer)");
    expect(out.trimEnd().split("\n").at(-1)).toBe("0 passed, 1 failed");
    const json = JSON.parse((await cli("check", dir, "--json")).out);
    expect(json).toMatchObject({ passed: 0, failed: 1, results: [{ status: "differs", comparison: { difference: { frame: 2, kind: "pc" } } }] });
  });

  it("reports extra and missing frames", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-check-"));
    const v = JSON.parse((await import("node:fs")).readFileSync(X86, "utf8"));
    writeFileSync(join(dir, "short.json"), JSON.stringify({ ...v, truth: v.truth.slice(0, 2) }));
    writeFileSync(join(dir, "long.json"), JSON.stringify({ ...v, truth: [...v.truth, { pc: "0x7c816fd7", sp: "0x0012fff0" }] }));
    const { out } = await cli("check", dir);
    expect(out).toContain("long.json: frame 4: missing, truth pc 0x7c816fd7; the walk stopped: end-of-stack");
    expect(out).toContain("short.json: frame 2: extra frame at 0x00401061 (found by frame-pointer); the truth has 2 frames");
  });

  it("counts unusable vectors as failed and exits 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-check-"));
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "broken.json"), "{");
    const v = JSON.parse((await import("node:fs")).readFileSync(X86, "utf8"));
    delete v.truth;
    writeFileSync(join(dir, "notruth.json"), JSON.stringify(v));
    const { code, out, err } = await cli("check", dir);
    expect(code).toBe(2);
    // Bad inputs go to stderr, one line each, naming the file and the place; stdout keeps the tally.
    expect(err).toMatch(/^stackwalk check: .*notruth\.json: \$\.truth: no ground truth to check against$/m);
    expect(err).toMatch(/^stackwalk check: .*broken\.json: \$: not valid JSON: line 1, column 2: expected a member name in double quotes or "}", found the end of the input$/m);
    expect(err.trimEnd().split("\n")).toHaveLength(2);
    expect(out).not.toMatch(/ERROR/);
    expect(out.trimEnd().split("\n").at(-1)).toBe("0 passed, 2 failed");
  });
});

describe("stackwalk roles", () => {
  it("lists x86, x64, ia64, arm64 and arm roles as JSON", async () => {
    const { code, out } = await cli("roles", "--json");
    expect(code).toBe(0);
    const doc = JSON.parse(out);
    const role = (m: string, r: string) => doc.find((d: { machine: string }) => d.machine === m).roles.find((x: { role: string }) => x.role === r);
    expect(doc.map((d: { machine: string }) => d.machine)).toEqual(["x86", "x64", "ia64", "arm64", "arm"]);
    expect([role("x86", "AddrPC").register, role("x86", "AddrFrame").register, role("x86", "AddrStack").register]).toEqual(["eip", "ebp", "esp"]);
    expect([role("x64", "AddrPC").register, role("x64", "AddrFrame").register, role("x64", "AddrStack").register]).toEqual(["rip", "rbp", "rsp"]);
    expect(role("x64", "AddrFrame").explanation).toMatch(/not always used/);
    expect([role("ia64", "AddrPC").register, role("ia64", "AddrFrame").register, role("ia64", "AddrStack").register, role("ia64", "AddrBStore").register]).toEqual([
      "stiip", null, "intsp", "rsbsp",
    ]);
    expect([role("arm64", "AddrPC").register, role("arm64", "AddrReturn").register, role("arm64", "AddrFrame").register, role("arm64", "AddrStack").register]).toEqual(["pc", "lr", "fp", "sp"]);
    expect([role("arm", "AddrPC").register, role("arm", "AddrReturn").register, role("arm", "AddrFrame").register, role("arm", "AddrStack").register]).toEqual(["pc", "lr", "r11", "sp"]);
    for (const d of doc) for (const r of d.roles) expect(r.explanation.length).toBeGreaterThan(10);
  });

  it("prints the machines side by side", async () => {
    const { out } = await cli("roles");
    expect(out.split("\n")[0]).toMatch(/^role\s+x86 \(I386\)\s+x64 \(AMD64\)\s+Itanium \(IA64\)\s+ARM64 \(AArch64\)\s+ARM \(ARMNT, Thumb-2\)$/);
    expect(out).toMatch(/AddrBStore\s+-\s+-\s+RsBSP\s+-\s+-/);
  });
});

describe("the installed bin", () => {
  it("runs as a process from its sources (src/cli/stackwalk.ts through tsx)", () => {
    const r = spawnStackwalk(["check", "vectors/x64/rbp-chain-3.json"]);
    expect(r.status).toBe(0);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("1 passed, 0 failed");
    const bad = spawnStackwalk(["walk", "nope.json"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe("stackwalk walk: nope.json: cannot read: no such file\n");
  });
});
