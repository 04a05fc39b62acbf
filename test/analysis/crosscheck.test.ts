import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { captureVectors, captureX64Vectors } from "../../emulator/etw-capture.js";
import { REPO_ROOT, realProgramImage } from "../../emulator/real-programs.js";
import { loadModuleSymbols } from "../../emulator/symbols.js";
import { parsePe } from "../../src/formats/pe.js";
import { ALLOCA, MIXED_8, RECURSION_1000, STDCALL } from "../../emulator/programs/x86-corpus.js";
import type { X86ProgramSpec } from "../../emulator/programs/x86-chain.js";
import { crossCheck, crossCheckStack, threadEtw, type CrossCheckReport, type StackCrossCheck } from "../../src/analysis/crosscheck.js";
import { crossCheckText } from "../../src/render/crosscheck.js";
import { encodeDiskItems, encodeStackTrace } from "../../src/formats/etw/extended-data.js";
import { stitchStacks, type EtwStack } from "../../src/formats/etw/stitch.js";
import { parseVector, type Vector } from "../../src/formats/vector.js";
import { FRAME_FPO, FRAME_NONFPO, type FpoData } from "../../src/model/fpo-data.js";
import { moduleAt, type Module, type TruthFrame } from "../../src/model/snapshot.js";
import { compareWithTruth } from "../../src/walk/compare.js";
import type { WalkerName } from "../../src/walk/registry.js";
import { walkThread } from "../../src/walk/walk.js";
import { snapshotOf } from "../support/snapshots.js";
import { captureEtwCaller } from "../support/etw-x64-caller.js";
import { StackBuilder } from "../support/stack-builder.js";

/** Every committed vector that carries ETW items. */
function etwVectorFiles(dir = "vectors"): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...etwVectorFiles(path));
    else if (entry.name.endsWith(".json") && readFileSync(path, "utf8").includes('"etw":')) out.push(path);
  }
  return out;
}

const FILES = etwVectorFiles();
const vectors = new Map(FILES.map((f) => [f, parseVector(readFileSync(f, "utf8"), f)]));
const vector = (name: string): Vector => vectors.get(`vectors/x86/etw/${name}.json`)!;
const X86_FILES = FILES.filter((f) => vectors.get(f)!.machine === "x86");

function check(v: Vector, walker: WalkerName = "auto"): CrossCheckReport {
  const thread = v.threads[0]!;
  const { stacks, notes } = threadEtw(v, thread);
  const options = thread.truth === undefined ? { notes } : { notes, truth: thread.truth };
  return crossCheck(v, walkThread(v, thread, { walker }), stacks, options);
}

/** The logging prefix, worked out without the cross-check: the leading addresses in a module that is not the program's. */
function loggingPrefix(v: Vector, addresses: readonly bigint[]): number {
  const program = moduleAt(v.modules, v.threads[0]!.truth![0]!.pc)!;
  let n = 0;
  while (n < addresses.length && moduleAt(v.modules, addresses[n]! - 1n) !== program) n++;
  return n;
}

/** The return address of the 5-byte `call rel32` at `pc`, read from the snapshot's code. */
function afterCall(v: Vector, pc: bigint): bigint {
  expect(v.memory.read(pc, 1)?.[0]).toBe(0xe8);
  return pc + 5n;
}

/** The rows of one kind, as [walk or ETW index, cause]. */
const rowsOf = (c: StackCrossCheck, kind: "walk-only" | "etw-only"): [number, string][] =>
  c.rows.filter((r) => r.kind === kind).map((r) => [kind === "walk-only" ? r.walkIndex! : r.etwIndex!, r.diagnosis!.cause]);

describe("cross-check of the committed ETW vectors", () => {
  it("finds the vectors that carry ETW items", () => {
    expect(FILES).toEqual(
      expect.arrayContaining([
        "vectors/x86/etw/ebp-chain-etw.json",
        "vectors/x86/etw/fpo-leaf-etw.json",
        "vectors/x86/etw/fpo-usebp-etw-capture.json",
        "vectors/x86/etw/fpo-usebp-etw-capture_worker.json",
        "vectors/x86/etw/kernel-user.json",
      ]),
    );
  });

  it.each(FILES)("%s: no unexplained difference with any walker of its machine", (file) => {
    const v = vectors.get(file)!;
    for (const walker of v.machine === "x86" ? (["auto", "fpo", "frame-pointer"] as const) : (["auto", "unwind", "frame-pointer"] as const)) {
      const report = check(v, walker);
      expect(report.unexplained, `${walker}\n${crossCheckText(report, file)}`).toBe(0);
      expect(report.stacks.every((s) => s.comparable && s.method === (v.machine === "x86" ? "ebp-chain" : "addresses"))).toBe(true);
    }
  });

  it.each(FILES)("%s: the FPO-aware walk (x64: the unwind-table walk) equals the truth", (file) => {
    const v = vectors.get(file)!;
    const t = v.threads[0]!;
    expect(compareWithTruth(v.machine, walkThread(v, t, { walker: v.machine === "x86" ? "fpo" : "unwind" }), t.truth!).exact).toBe(true);
  });

  it.each(X86_FILES)("%s: the frame-pointer walk equals the ETW array after its logging prefix", (file) => {
    const v = vectors.get(file)!;
    const t = v.threads[0]!;
    const walk = walkThread(v, t, { walker: "frame-pointer" });
    for (const stack of threadEtw(v, t).stacks) {
      const p = loggingPrefix(v, stack.addresses);
      expect(stack.addresses[p]).toBe(afterCall(v, walk.frames[0]!.addrPC));
      expect(stack.addresses.slice(p + 1)).toEqual(walk.frames.slice(1).map((f) => f.addrPC));
    }
  });

  it("frame-pointer builds: the frame-pointer walk is also the truth, and ETW agrees with it", () => {
    for (const name of ["ebp-chain-etw", "kernel-user"]) {
      const v = vector(name);
      const t = v.threads[0]!;
      expect(compareWithTruth(v.machine, walkThread(v, t, { walker: "frame-pointer" }), t.truth!).exact).toBe(true);
      const report = check(v, "frame-pointer");
      expect(report.agrees).toBe(true);
      expect(report.stacks[0]!.matched).toBe(t.truth!.length);
    }
  });

  it("kernel-user: the kernel and user parts stitch by MatchId into one stack equal to the truth", () => {
    const v = vector("kernel-user");
    const t = v.threads[0]!;
    const { stacks } = threadEtw(v, t);
    expect(stacks).toHaveLength(1);
    const [stack] = stacks;
    expect(stack!.status).toBe("complete");
    expect(stack!.matchId).toBe(1n);
    expect(stack!.parts.map((p) => [p.role, p.start, p.count])).toEqual([
      ["kernel", 0, 3],
      ["user", 3, 4],
    ]);
    // The kernel part is above 0x80000000, the user part starts at the trap frame's Eip: the return from the system call.
    expect(stack!.addresses.slice(0, 3).every((a) => a >= 0x8000_0000n)).toBe(true);
    expect(stack!.addresses[3]).toBe(afterCall(v, t.truth![0]!.pc));
    expect(stack!.addresses.slice(4)).toEqual(t.truth!.slice(1).map((f) => f.pc));
    const c = check(v).stacks[0]!;
    expect([c.prefix, c.matched, c.etwOnly, c.walkOnly, c.unexplained, c.agrees]).toEqual([3, 4, 0, 0, 0, true]);
    expect(c.rows.slice(0, 3).every((r) => r.diagnosis?.cause === "kernel")).toBe(true);
  });

  it("ebp-chain-etw: every frame matches after the two logging frames", () => {
    const c = check(vector("ebp-chain-etw")).stacks[0]!;
    expect([c.prefix, c.matched, c.etwOnly, c.walkOnly, c.agrees]).toEqual([2, 6, 0, 0, true]);
    expect(c.rows.slice(0, 2).map((r) => [r.location, r.diagnosis!.cause])).toEqual([
      ["etwlog.dll!EtwpLogStack+0x28", "logging-path"],
      ["etwlog.dll!EtwEventWrite+0x8", "logging-path"],
    ]);
    expect(c.rows[2]!.diagnosis!.cause).toBe("capture-site");
  });

  it("fpo-leaf-etw: the caller of the FPO leaf is walk-only, explained by the leaf keeping its caller's EBP", () => {
    const v = vector("fpo-leaf-etw");
    const truth = v.threads[0]!.truth!;
    const c = check(v).stacks[0]!;
    expect([c.matched, c.etwOnly, c.walkOnly, c.unexplained, c.agrees]).toEqual([3, 0, 1, 0, false]);
    const row = c.rows.find((r) => r.kind === "walk-only")!;
    // The walk-only frame is truth frame 1, the return address into caller.
    expect([row.walkIndex, row.walk, truth[1]!.function]).toEqual([1, truth[1]!.pc, "caller"]);
    expect(row.diagnosis!.cause).toBe("fpo-skip");
    expect(row.diagnosis!.text).toBe(
      "0x00401053 (fpo-leaf-etw.exe!caller+0x23, the caller of leaf) missing from ETW: leaf does not set up EBP (FPO_DATA: frame pointer omitted, EBP left as its caller set it), " +
        "so EBP still held caller's frame pointer 0x0012ffd4 and the EBP-chain capture went from leaf straight to its caller's caller, main (x86-fpo.md §6, effect 1)",
    );
    expect(c.truncation).toBeUndefined();
  });

  it.each([
    ["fpo-usebp-etw-capture", 2, 1],
    ["fpo-usebp-etw-capture_worker", 1, 0],
  ] as const)("%s: ETW is truncated at worker, whose EBP is garbage", (name, matched, last) => {
    const v = vector(name);
    const truth = v.threads[0]!.truth!;
    const c = check(v).stacks[0]!;
    expect([c.matched, c.etwOnly, c.walkOnly, c.unexplained]).toEqual([matched, 0, truth.length - matched, 0]);
    // The walk-only frames are exactly the truth frames past worker.
    expect(c.rows.filter((r) => r.kind === "walk-only").map((r) => r.walk)).toEqual(truth.slice(last + 1).map((f) => f.pc));
    expect(rowsOf(c, "walk-only").every(([, cause]) => cause === "truncated")).toBe(true);
    expect(c.truncation).toMatchObject({ side: "etw", afterWalk: last, missing: truth.length - matched });
    expect(c.truncation!.diagnosis.text).toContain("worker uses EBP as a general register (FPO_DATA: frame pointer omitted, fUseBP)");
    expect(c.truncation!.diagnosis.text).toContain("0xbad002ef, is not a frame pointer: it is outside the stack");
    expect(c.truncation!.diagnosis.text).toContain("The walk goes on for 3 more frames: outer, main, RtlUserThreadStart");
  });
});

describe("cross-check of fresh emulator runs (ETW arrays made by the emulated CPU)", () => {
  const DEEP_EBP: X86ProgramSpec = {
    name: "deep-ebp",
    description: "250 EBP frames: more than an ETW array holds",
    functions: [
      { name: "main", frame: "ebp" },
      { name: "rec", frame: "ebp", params: 1, recursion: 250 },
      { name: "leaf", frame: "ebp" },
    ],
  };
  const SPECS: X86ProgramSpec[] = [
    { ...MIXED_8, name: "mixed-8-etw", etw: "user" },
    { ...STDCALL, name: "stdcall-etw", etw: "kernel-user" },
    { ...RECURSION_1000, name: "recursion-etw", etw: "user" },
    { ...ALLOCA, name: "alloca-etw", etw: "user" },
    { ...DEEP_EBP, etw: "user" },
  ];
  const runs = new Map<string, Vector[]>();
  beforeAll(async () => {
    for (const spec of SPECS) runs.set(spec.name, await captureVectors(spec));
  });

  it("explains every difference, with the FPO walk exact, for every capture and every walker", () => {
    for (const [name, vs] of runs) {
      for (const v of vs) {
        const t = v.threads[0]!;
        expect(compareWithTruth(v.machine, walkThread(v, t, { walker: "fpo" }), t.truth!).exact, name).toBe(true);
        for (const walker of ["fpo", "frame-pointer"] as const) {
          const report = check(v, walker);
          expect(report.unexplained, `${name} ${walker}\n${crossCheckText(report, name)}`).toBe(0);
        }
        // Against the exact walk: ETW invents nothing here, every truth frame is matched or
        // walk-only, and every match past the capture site is the truth's return address.
        const c = check(v, "fpo").stacks[0]!;
        expect(c.etwOnly).toBe(0);
        const seen = c.rows.filter((r) => r.kind === "matched" || r.kind === "walk-only").map((r) => r.walkIndex!);
        expect(seen, name).toEqual(t.truth!.map((_, i) => i));
        for (const r of c.rows) if (r.kind === "matched" && r.walkIndex! > 0) expect(r.etw).toBe(t.truth![r.walkIndex!]!.pc);
      }
    }
  });

  it("mixed-8: the garbage EBP of an fUseBP function two frames out truncates the array at the capture site", () => {
    const c = check(runs.get("mixed-8-etw")![0]!).stacks[0]!;
    expect([c.matched, c.walkOnly]).toEqual([1, 8]);
    expect(c.truncation!.diagnosis.text).toMatch(/eta does not set up EBP .*, and zeta uses EBP as a general register/);
  });

  it("stdcall: two FPO frames in a row are both skipped, in a kernel/user stitched stack", () => {
    const v = runs.get("stdcall-etw")![0]!;
    const c = check(v).stacks[0]!;
    expect(c.stack.parts.map((p) => p.role)).toEqual(["kernel", "user"]);
    expect(rowsOf(c, "walk-only")).toEqual([
      [1, "fpo-skip"],
      [2, "fpo-skip"],
    ]);
    expect(c.rows.find((r) => r.walkIndex === 1)!.diagnosis!.text).toContain("went from checksum straight to main");
  });

  it("a stack deeper than the array: the cap of 192 addresses, counted with the logging prefix", () => {
    const v = runs.get("deep-ebp")![0]!;
    const c = check(v, "frame-pointer").stacks[0]!;
    expect(c.stack.addresses).toHaveLength(192);
    expect([c.prefix, c.matched, c.unexplained]).toEqual([2, 190, 0]);
    expect(c.truncation!.diagnosis.cause).toBe("array-full");
    expect(rowsOf(c, "walk-only").every(([, cause]) => cause === "array-full")).toBe(true);
    expect(c.walkOnly).toBe(v.threads[0]!.truth!.length - 190);
  });
});

describe("hand-made x86 snapshot: an EBP used as a general register that points into the stack", () => {
  // thunk (FPO, EBP 0) -> main (EBP frame) -> worker (FPO, fUseBP): worker's EBP points at its own
  // locals, where local0 holds the address of main's frame link and local1 looks like code.
  const APP = 0x0040_0000n;
  const fpo = (start: number, size: number, f: Partial<FpoData>): FpoData => ({
    ulOffStart: start,
    cbProcSize: size,
    cdwLocals: 0,
    cdwParams: 0,
    cbProlog: 0,
    cbRegs: 0,
    fHasSEH: false,
    fUseBP: false,
    reserved: 0,
    cbFrame: FRAME_FPO,
    ...f,
  });
  const app: Module = {
    name: "app.exe",
    base: APP,
    size: 0x3000n,
    symbols: [
      { name: "thunk", rva: 0x1000n, size: 0x10n },
      { name: "main", rva: 0x1010n, size: 0x30n },
      { name: "worker", rva: 0x1040n, size: 0x40n },
    ],
    unwind: {
      fpo: [fpo(0x1000, 0x10, {}), fpo(0x1010, 0x30, { cbFrame: FRAME_NONFPO, cbProlog: 3 }), fpo(0x1040, 0x40, { cdwLocals: 2, cbRegs: 1, fUseBP: true, cbProlog: 9 })],
      frameData: [],
      origin: "test",
    },
  };
  const logger: Module = { name: "etwlog.dll", base: 0x7700_0000n, size: 0x1000n, symbols: [{ name: "EtwEventWrite", rva: 0n, size: 0x40n }] };
  const s = new StackBuilder(0x0012_fec0n);
  s.fill(16, 0)
    .mark("worker_esp")
    .u32(s.ref("main_link")) // local0: where the chain goes next
    .u32(0x0040_2234) // local1: a value that passes for a return address
    .u32(s.ref("main_link")) // worker's saved EBP (fUseBP)
    .u32(0x0040_1025) // return into main
    .mark("main_link")
    .u32(0) // main's saved EBP: the thunk keeps EBP 0
    .u32(0x0040_1006) // return into thunk
    .mark("thunk_ret")
    .u32(0) // the thread start: return address 0
    .fill(3, 0);
  const built = s.build();
  const esp = built.labels["worker_esp"]!;
  const truth: TruthFrame[] = [
    { pc: 0x0040_1060n, sp: esp, function: "worker" },
    { pc: 0x0040_1025n, sp: esp + 16n, function: "main" },
    { pc: 0x0040_1006n, sp: built.labels["main_link"]! + 8n, function: "thunk" },
  ];
  const snapshot = snapshotOf("x86", { eip: 0x0040_1060n, esp, ebp: esp }, [built], [app, logger], truth);
  // What the EBP-chain capture records: the logger's frame, the capture site, then [EBP+4] = local1,
  // then from [EBP] = main's link: the return into thunk; main's saved EBP 0 ends it.
  const etw: EtwStack[] = stitchStacks([{ trace: { matchId: 0n, addressSize: 4, addresses: [0x7700_0010n, 0x0040_1065n, 0x0040_2234n, 0x0040_1006n] }, source: "hand-made" }]);

  it("the walk is exact", () => {
    expect(compareWithTruth("x86", walkThread(snapshot, snapshot.threads[0]!, { walker: "fpo" }), truth).exact).toBe(true);
  });

  it("the address read through the garbage EBP is ETW-only, and the frame passed over is walk-only", () => {
    const report = crossCheck(snapshot, walkThread(snapshot, snapshot.threads[0]!, { walker: "fpo" }), etw, { truth });
    const c = report.stacks[0]!;
    expect(c.method).toBe("ebp-chain");
    expect(c.rows.map((r) => [r.kind, r.etwIndex ?? null, r.walkIndex ?? null])).toEqual([
      ["prefix", 0, null],
      ["matched", 1, 0],
      ["etw-only", 2, null],
      ["walk-only", null, 1],
      ["matched", 3, 2],
    ]);
    expect(rowsOf(c, "etw-only")).toEqual([[2, "garbage-ebp"]]);
    expect(rowsOf(c, "walk-only")).toEqual([[1, "rejoined"]]);
    const invented = c.rows[2]!.diagnosis!.text;
    expect(invented).toContain("0x00402234 (app.exe+0x2234) invented by ETW: worker uses EBP as a general register (FPO_DATA: frame pointer omitted, fUseBP)");
    expect(invented).toContain(`the EBP it held, 0x${esp.toString(16).padStart(8, "0")}, is not a saved frame pointer, yet it lies inside the stack`);
    expect(c.rows[3]!.diagnosis!.text).toContain("came back to the frame chain at main's saved EBP");
    expect(report.unexplained).toBe(0);
    expect(report.agrees).toBe(false);
  });

  it("a frame-pointer walk follows the same garbage: it agrees with ETW, and the truth shows both are wrong", () => {
    const walk = walkThread(snapshot, snapshot.threads[0]!, { walker: "frame-pointer" });
    const report = crossCheck(snapshot, walk, etw, { truth });
    expect(report.agrees).toBe(true);
    expect(report.truth!.exact).toBe(false);
  });

  it("an ETW address that neither the walk nor the re-run EBP chain has is unexplained", () => {
    const tampered = stitchStacks([{ trace: { matchId: 0n, addressSize: 4, addresses: [0x7700_0010n, 0x0040_1065n, 0x0040_2234n, 0x0040_1999n] }, source: "tampered" }]);
    const report = crossCheck(snapshot, walkThread(snapshot, snapshot.threads[0]!, { walker: "fpo" }), tampered, { truth });
    expect(report.unexplained).toBeGreaterThan(0);
    expect(report.stacks[0]!.model).toMatch(/gives 0x00401006 where ETW has 0x00401999/);
    const text = crossCheckText(report, "tampered");
    expect(text).toContain("UNEXPLAINED");
    expect(text).toContain("NOT all explained");
  });
});

describe("x64: ETW unwinds with the unwind tables (the arrays come from the emulated CPU's shadow stack)", () => {
  // main calls work, which calls etwlog64.dll!EtwEventWrite through a register. The image has no
  // .pdata, so an unwind-table walk takes work for a leaf and loses main: ETW, which the
  // emulator captures from the shadow stack, still has it, and the truth says who is right.
  let small: Vector;
  let labels: ReadonlyMap<string, bigint>;
  let sampled: Vector[];
  beforeAll(async () => {
    let vectors: Vector[];
    ({ vectors, labels } = await captureEtwCaller());
    small = vectors[0]!;
    const path = join(REPO_ROOT, realProgramImage("recursion-callbacks", "x64"));
    const pe = parsePe(readFileSync(path));
    sampled = await captureX64Vectors({ name: "recursion-callbacks.exe", image: pe, symbols: loadModuleSymbols(path, pe) }, { captures: ["combine"], sample: true });
  });

  it("skips the three logging frames and anchors on the capture site; the frame the walk lost is the walk's error", () => {
    const report = check(small, "unwind");
    const c = report.stacks[0]!;
    expect(c.rows.map((r) => [r.kind, r.diagnosis?.cause ?? null])).toEqual([
      ["prefix", "logging-path"],
      ["prefix", "logging-path"],
      ["prefix", "logging-path"],
      ["matched", "capture-site"],
      ["etw-only", "walk-wrong"],
    ]);
    expect(c.rows[0]!.location).toBe("etwlog64.dll!NtTraceEvent+0x5");
    expect(c.rows[3]!.etw).toBe(labels.get("work_back"));
    expect(c.rows[4]!.etw).toBe(labels.get("main_back"));
    expect(c.rows[4]!.diagnosis!.text).toContain("is truth frame 1: the walk missed it");
    expect(report.unexplained).toBe(0);
    expect(report.agrees).toBe(false);
  });

  it("a real program's profile samples: frame 0 is the interrupted IP, and the unwind walk agrees at every capture", () => {
    expect(sampled.length).toBeGreaterThan(1);
    for (const v of sampled) {
      const report = check(v, "unwind");
      expect(report.truth!.exact).toBe(true);
      expect(report.agrees, crossCheckText(report, "sample")).toBe(true);
      const c = report.stacks[0]!;
      expect([c.prefix, c.matched]).toEqual([0, v.threads[0]!.truth!.length]);
    }
  });

  it("the RBP chain is no frame chain on x64: the frames it misses are the walk's error, by the truth", () => {
    for (const v of sampled) {
      const report = check(v, "frame-pointer");
      expect(report.unexplained).toBe(0);
      const c = report.stacks[0]!;
      for (const r of c.rows) if (r.kind !== "matched") expect(r.diagnosis!.cause).toMatch(/^(walk-wrong|walk-stopped)$/);
    }
  });
});

describe("stacks with nothing to compare", () => {
  const v = vector("ebp-chain-etw");
  const walk = walkThread(v, v.threads[0]!, {});
  const stackOf = (addresses: bigint[], matchId = 0n): EtwStack => stitchStacks([{ trace: { matchId, addressSize: 4, addresses }, source: "test" }])[0]!;

  it("an empty address array is an empty stack with a note, not a difference", () => {
    const c = crossCheckStack(v, walk, stackOf([]));
    expect([c.comparable, c.agrees, c.rows.length]).toEqual([false, true, 0]);
    expect(c.notes.join("\n")).toMatch(/the address array is empty[\s\S]*returns 0 frames/);
  });

  it("a kernel half whose user part never came is listed, not compared", () => {
    const c = crossCheckStack(v, walk, stackOf([0x8040_108dn, 0x8040_1048n], 5n));
    expect([c.comparable, c.prefix, c.agrees]).toEqual([false, 2, true]);
    expect(c.stack.status).toBe("kernel-half");
    expect(c.notes.join("\n")).toMatch(/its user part never came/);
  });

  it("an array that shares no address with the walk is all differences, all unexplained without truth", () => {
    const c = crossCheckStack(v, walk, stackOf([0x0050_0000n, 0x0050_0010n]));
    expect(c.comparable).toBe(true);
    expect([c.matched, c.etwOnly, c.walkOnly]).toEqual([0, 2, walk.frames.length]);
    expect(c.unexplained).toBe(2 + walk.frames.length);
  });

  it("STACK_KEY items are noted, not compared", () => {
    const key = encodeDiskItems([{ extType: 0x12, linkage: false, reserved1: 0, reserved2: 0, data: new Uint8Array(16) }]);
    const trace = encodeDiskItems([encodeStackTrace({ matchId: 0n, addressSize: 4, addresses: [0x0040_10e2n] })]);
    const thread = { ...v.threads[0]!, etw: [{ items: key }, { items: trace }] };
    const { stacks, notes } = threadEtw(v, thread);
    expect(stacks).toHaveLength(1);
    expect(notes).toEqual([expect.stringMatching(/^event 0 item 0: STACK_KEY64 names a cached stack/)]);
  });
});
