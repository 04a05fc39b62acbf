/**
 * `walk --format json` against its published schema (src/render/walk.schema.json, checked by
 * Ajv), and its crash, system, module and source-line facts against Breakpad's own reports of the
 * same dumps (minidump_stackwalk -m output in test/fixtures): minidump2.dmp with its
 * symbols, the 19 dumps of Breakpad's corpus, and the repository's vectors of every machine. The
 * crash reason is rust-minidump's wording of what Breakpad reports (the two agree on minidump2).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { parseJsonInput } from "../../src/formats/input.js";
import { replaySweep } from "../../src/formats/sweep.js";
import type { Vector } from "../../src/formats/vector.js";
import { MACHINES } from "../../src/model/machine.js";
import { renderJson, walkJson, writeJson } from "../../src/render/json.js";
import { walkSnapshot } from "../../src/walk/walk.js";
import { assertWalkDocument, parseWalkJson } from "../support/walk-schema.js";

const FIXTURES = "test/fixtures/breakpad";
const CORPUS = "test/fixtures/breakpad-corpus";

/** The lines of a Breakpad `-m` report that start with `kind|`, split on `|`. */
function machineLines(text: string, kind: string): string[][] {
  return text.split("\n").filter((l) => l.startsWith(`${kind}|`)).map((l) => l.split("|").slice(1));
}

const fileName = (path: string): string => path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);

describe("walk --format json of minidump2.dmp with its symbols", () => {
  it("is valid, and says what Breakpad says of the crash, the system, the modules and the crashed thread's source lines", async () => {
    const r = await cli("walk", join(FIXTURES, "minidump2.dmp"), "--symbols", join(FIXTURES, "symbols"), "--format", "json");
    expect(r.code).toBe(0);
    const doc = parseWalkJson(r.out);
    const m = readFileSync(join(FIXTURES, "minidump2.stackwalk.machine_readable.out"), "utf8");
    const [os] = machineLines(m, "OS");
    const [cpu] = machineLines(m, "CPU");
    const [crash] = machineLines(m, "Crash");
    expect(doc.system_info).toEqual({ os: os![0], os_ver: os![1], cpu_arch: cpu![0], cpu_info: cpu![1], cpu_count: Number(cpu![2]), cpu_microcode_version: null });
    expect(doc.crash_info.type).toBe(crash![0]);
    expect(BigInt(doc.crash_info.address)).toBe(BigInt(crash![1]!));
    expect(doc.threads[doc.crash_info.crashing_thread].crashed).toBe(true);
    expect(doc.crashing_thread.threads_index).toBe(doc.crash_info.crashing_thread);
    expect(doc.crash_info.assertion).toBeNull();
    // Every module: file name, version, debug file and id, base and (inclusive) end.
    const modules = machineLines(m, "Module");
    expect(doc.modules).toHaveLength(modules.length);
    for (const [name, version, debugFile, debugId, base, end] of modules) {
      const mod = doc.modules.find((x: { filename: string }) => x.filename === name);
      expect(mod, name).toBeDefined();
      expect([mod.version ?? "", mod.debug_file, mod.debug_id, BigInt(mod.base_addr), BigInt(mod.end_addr) - 1n]).toEqual([version, debugFile, debugId, BigInt(base!), BigInt(end!)]);
    }
    expect(doc.modules[doc.main_module].filename).toBe("test_app.exe");
    const withSymbols = doc.modules.filter((x: { loaded_symbols: boolean }) => x.loaded_symbols).map((x: { filename: string; symbolFile: string }) => [x.filename, fileName(x.symbolFile)]);
    expect(withSymbols).toEqual([["test_app.exe", "test_app.sym"], ["kernel32.dll", "kernel32.sym"]]);
    // The crashed thread's frames: module, function, source file and line, as Breakpad's -m gives them.
    const frames = m.split("\n").filter((l) => l.startsWith("0|")).map((l) => l.split("|"));
    const thread = doc.threads[0];
    expect(thread.frame_count).toBe(frames.length);
    thread.frames.forEach((f: Record<string, unknown>, i: number) => {
      const [, , module, fn, file, line] = frames[i]!;
      expect([f["module"], f["function"], f["file"] ?? "", f["line"] === null ? "" : String(f["line"])]).toEqual([module, fn, file, line]);
      // The offsets are the call's: a caller's return address − 1.
      const instruction = BigInt(f["addrPC"] as string) - (i === 0 ? 0n : 1n);
      const base = BigInt(doc.modules.find((x: { filename: string }) => x.filename === module).base_addr);
      expect([f["frame"], BigInt(f["offset"] as string), BigInt(f["module_offset"] as string), f["missing_symbols"]]).toEqual([i, instruction, instruction - base, false]);
    });
  });

  it("gives the text format the same source lines", async () => {
    const r = await cli("walk", join(FIXTURES, "minidump2.dmp"), "--symbols", join(FIXTURES, "symbols"), "--thread", "crashed");
    expect(r.out).toContain("test_app.exe!`anonymous namespace'::CrashFunction+0xe [c:\\test_app.cc:58]");
    expect(r.out).toContain("test_app.exe!main+0x50 [c:\\test_app.cc:65]");
    expect(r.out).toMatch(/thread 3060 \(crashed\): 4 frames/);
    expect(r.out).not.toContain("thread 4544");
  });
});

/**
 * The corpus's crash reasons as Breakpad words them (its -m reports) and as rust-minidump's
 * `crash_info.type` writes the same records: a signal sent with si_code SI_USER (0) by its name
 * alone, a __fastfail after EXCEPTION_STACK_BUFFER_OVERRUN, Crashpad's uncaught-NSException
 * code ('CPnx'), which is no Mach exception rust-minidump knows, as unknown code / flags.
 */
const RUST_MINIDUMP_TYPE: Readonly<Record<string, string>> = {
  "SIGSEGV /0x00000000": "SIGSEGV",
  "SIGFPE / 0x00000000": "SIGFPE",
  "FAST_FAIL_FATAL_APP_EXIT": "EXCEPTION_STACK_BUFFER_OVERRUN / FAST_FAIL_FATAL_APP_EXIT",
  "Uncaught NSException": "unknown 0x43506e78 / 0x00000000",
};

describe("walk --format json of Breakpad's corpus", () => {
  const dumps = readdirSync(CORPUS).filter((f) => f.endsWith(".dmp")).sort();

  it("has 19 dumps", () => expect(dumps).toHaveLength(19));

  it.each(dumps)("%s: valid, with Breakpad's OS, CPU and crash address, and the crash in rust-minidump's words", async (name) => {
    const r = await cli("walk", join(CORPUS, name), "--format", "json");
    expect(r.code).toBe(0);
    const doc = parseWalkJson(r.out);
    const m = readFileSync(join(CORPUS, name.replace(/\.dmp$/, ".stackwalk.machine_readable.out")), "utf8");
    const [os] = machineLines(m, "OS");
    const [cpu] = machineLines(m, "CPU");
    const [crash] = machineLines(m, "Crash");
    expect([doc.system_info.os, doc.system_info.os_ver, doc.system_info.cpu_arch, doc.system_info.cpu_info ?? "", String(doc.system_info.cpu_count)]).toEqual([...os!, ...cpu!]);
    if (crash![1] !== "") {
      expect(doc.crash_info.type).toBe(RUST_MINIDUMP_TYPE[crash![0]!] ?? crash![0]);
      expect(BigInt(doc.crash_info.address)).toBe(BigInt(crash![1]!));
    } else expect(doc.crash_info.type).toBeNull();
    expect(doc.modules.map((x: { filename: string }) => x.filename).sort()).toEqual(machineLines(m, "Module").map((l) => l[0]).sort());
  });
});

describe("walk --format json of vectors", () => {
  const files = ["vectors/x86", "vectors/x64", "vectors/ia64/synthetic", "vectors/x86/synthetic", "vectors/x64/synthetic", "vectors/x86/etw", "vectors/arm64/synthetic", "vectors/arm/synthetic"].flatMap((d) =>
    readdirSync(d).filter((f) => f.endsWith(".json")).map((f) => join(d, f)),
  );
  /** A vector file, or a sweep's snapshot halfway through. */
  const snapshotOf = (file: string): Vector => {
    const input = parseJsonInput(readFileSync(file, "utf8"), file);
    if (input.kind === "vector") return input.vector;
    const steps = [...replaySweep(input.sweep)];
    return steps[steps.length >> 1]!;
  };

  it("names every machine the walker models, and nothing else", () => {
    const schema = JSON.parse(readFileSync("src/render/walk.schema.json", "utf8")) as { $defs: { document: { properties: { machine: { enum: string[] } } } } };
    expect(schema.$defs.document.properties.machine.enum).toEqual([...MACHINES]);
  });

  it("is valid for every hand-made and synthetic vector (and a snapshot of each synthetic sweep) of every machine, on one line too", () => {
    expect(files.length).toBeGreaterThan(40);
    const machines = new Set<string>();
    for (const file of files) {
      const v = snapshotOf(file);
      machines.add(v.machine);
      const walks = walkSnapshot(v);
      const doc = JSON.parse(renderJson(v.machine, v.modules, walks, { os: v.os }));
      assertWalkDocument(doc);
      expect(doc.crash_info.type).toBeNull();
      expect(doc.system_info.cpu_arch).toBe({ x86: "x86", x64: "amd64", ia64: "ia64", arm64: "arm64", arm: "arm" }[v.machine]);
      let line = "";
      writeJson(v.machine, v.modules, walks, (t) => (line += t), { os: v.os, file }, { indent: false });
      expect(line.endsWith("\n") && !line.slice(0, -1).includes("\n")).toBe(true);
      expect(JSON.parse(line)).toEqual({ file, ...(walkJson(v.machine, v.modules, walks, { os: v.os }) as object) });
    }
    expect([...machines].sort()).toEqual([...MACHINES].sort());
  });
});

describe("the JSON example of docs/json.md", () => {
  it("is a valid document, and is what walk prints for minidump2.dmp (its first module and frame)", async () => {
    const section = readFileSync("docs/json.md", "utf8");
    const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!);
    assertWalkDocument(example);
    const r = await cli("walk", join(FIXTURES, "minidump2.dmp"), "--symbols", join(FIXTURES, "symbols"), "--format", "json");
    const doc = parseWalkJson(r.out);
    expect(Object.keys(example)).toEqual(Object.keys(doc));
    for (const key of ["machine", "notes", "status", "pid", "process_uptime", "crash_info", "system_info", "linux_memory_map_count", "thread_count", "main_module"]) {
      expect(example[key], key).toEqual(doc[key]);
    }
    for (const key of ["modules_contains_cert_info", "unloaded_modules", "handles", "lsb_release", "mac_crash_info", "mac_boot_args", "soft_errors", "proc_limits"]) {
      expect(example[key], key).toEqual(doc[key]);
    }
    expect({ ...example.modules[0], symbolFile: fileName(example.modules[0].symbolFile) }).toEqual({ ...doc.modules[0], symbolFile: fileName(doc.modules[0].symbolFile) });
    const { frames, ...thread } = example.threads[0];
    const { frames: docFrames, ...docThread } = doc.threads[0];
    expect(thread).toEqual(docThread);
    // The example's frames are some of the thread's, whole.
    for (const f of frames) expect(f).toEqual(docFrames[f.frame]);
    expect({ ...example.crashing_thread, frames: [] }).toEqual({ ...doc.crashing_thread, frames: [] });
  });
});
