/**
 * The source of the hand-made vectors in vectors/x86 and vectors/x64: stacks laid out with
 * labels, and ground truth written from the same layout (what the calls pushed), not from any
 * walker. `npx tsx test/support/hand-vectors.ts --write` rewrites the committed files; a test
 * checks that they match this source.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { formatVector, type Vector } from "../../src/formats/vector.js";
import { codeAddress, moduleWith, snapshotOf } from "./snapshots.js";
import { StackBuilder } from "./stack-builder.js";

/** A hand-made vector and where it is committed. */
export interface HandVector {
  file: string;
  vector: Vector;
}

/**
 * x86, four frames: mainCRTStartup -> main -> parse_config -> read_token, every function with a
 * `push ebp; mov ebp, esp` frame; the outermost frame's saved EBP and return address are 0.
 */
function ebpChain(): HandVector {
  const demo = moduleWith("demo.exe", 0x00400000n, ["mainCRTStartup", "main", "parse_config", "read_token"]);
  const retParse = codeAddress(demo, "parse_config", 0x17);
  const retMain = codeAddress(demo, "main", 0x21);
  const retCrt = codeAddress(demo, "mainCRTStartup", 0x12);
  const s = new StackBuilder(0x0012fe00n);
  s.mark("esp0").fill(2) // read_token's locals
    .mark("ebp0").ptr(s.ref("ebp1")).ptr(retParse) // read_token: saved EBP, return into parse_config
    .mark("sp1").ptr(7).ptr(s.ref("buf")).ptr(0x10) // read_token(7, buf, 16)
    .fill(1) // parse_config's local
    .mark("buf").u32(0x6c6c6568).u32(0x0000006f)
    .mark("ebp1").ptr(s.ref("ebp2")).ptr(retMain) // parse_config: saved EBP, return into main
    .mark("sp2").ptr(s.ref("path")).ptr(0)
    .mark("path").u32(0x6f632e61).u32(0x0000666e)
    .mark("ebp2").ptr(s.ref("ebp3")).ptr(retCrt) // main: saved EBP, return into mainCRTStartup
    .mark("sp3").ptr(1).ptr(s.ref("argv")).ptr(0)
    .mark("argv").ptr(s.ref("path")).ptr(0)
    .mark("ebp3").ptr(0).ptr(0) // mainCRTStartup: the chain ends (saved EBP 0, return 0)
    .fill(4, 0);
  const stack = s.build();
  const L = stack.labels;
  const v = snapshotOf(
    "x86",
    { eip: codeAddress(demo, "read_token", 0x0d), esp: L["esp0"]!, ebp: L["ebp0"]!, eax: 7n, ebx: 0x7ffdf000n, ecx: 0n, edx: 0x10n, esi: 0n, edi: 0n, eflags: 0x246n },
    [stack],
    [demo],
    [
      { pc: codeAddress(demo, "read_token", 0x0d), sp: L["esp0"]!, function: "read_token" },
      { pc: retParse, sp: L["sp1"]!, function: "parse_config" },
      { pc: retMain, sp: L["sp2"]!, function: "main" },
      { pc: retCrt, sp: L["sp3"]!, function: "mainCRTStartup" },
    ],
  );
  v.description = "EBP chain, 4 frames: mainCRTStartup -> main -> parse_config -> read_token; the outermost saved EBP and return address are 0";
  v.provenance = "hand-made (test/support/hand-vectors.ts)";
  return { file: "vectors/x86/ebp-chain-4.json", vector: v };
}

/**
 * x86 thread start: BaseThreadStart (frameless, EBP = 0) calls worker, which calls step. The
 * chain's last saved EBP is 0 but its return address is real, so one more frame is found.
 */
function threadStart(): HandVector {
  const app = moduleWith("app.exe", 0x00400000n, ["worker", "step"]);
  const k32 = moduleWith("kernel32.dll", 0x7c800000n, ["BaseThreadInitThunk", "BaseThreadStart"], 0x80n);
  const retWorker = codeAddress(app, "worker", 0x1e);
  const retStart = codeAddress(k32, "BaseThreadStart", 0x37);
  const s = new StackBuilder(0x0052ff40n);
  s.mark("esp0").fill(3)
    .mark("ebp0").ptr(s.ref("ebp1")).ptr(retWorker)
    .mark("sp1").ptr(0x2a).fill(2)
    .mark("ebp1").ptr(0).ptr(retStart) // worker was called by BaseThreadStart, which had EBP = 0
    .mark("sp2").ptr(0x00401000).ptr(0) // BaseThreadStart's arguments: start address, parameter
    .fill(2, 0);
  const stack = s.build();
  const L = stack.labels;
  const v = snapshotOf(
    "x86",
    { eip: codeAddress(app, "step", 0x08), esp: L["esp0"]!, ebp: L["ebp0"]! },
    [stack],
    [app, k32],
    [
      { pc: codeAddress(app, "step", 0x08), sp: L["esp0"]!, function: "step" },
      { pc: retWorker, sp: L["sp1"]!, function: "worker" },
      { pc: retStart, sp: L["sp2"]!, function: "BaseThreadStart" },
    ],
  );
  v.description = "thread start: BaseThreadStart (EBP = 0) -> worker -> step; the last saved EBP is 0 but its return address is real";
  v.provenance = "hand-made (test/support/hand-vectors.ts)";
  return { file: "vectors/x86/thread-start.json", vector: v };
}

/** x64, three frames built with `push rbp; mov rbp, rsp`; the outermost saved RBP and return address are 0. */
function rbpChain(): HandVector {
  const app = moduleWith("app.exe", 0x140000000n, ["wmain", "run", "tick"]);
  const retRun = codeAddress(app, "run", 0x2c);
  const retMain = codeAddress(app, "wmain", 0x19);
  const s = new StackBuilder(0x000000000014fd00n, 8);
  s.mark("rsp0").fill(4, 0) // tick's locals
    .mark("rbp0").ptr(s.ref("rbp1")).ptr(retRun)
    .mark("sp1").fill(4, 0) // home space
    .mark("rbp1").ptr(s.ref("rbp2")).ptr(retMain)
    .mark("sp2").fill(4, 0)
    .mark("rbp2").ptr(0).ptr(0)
    .fill(2, 0);
  const stack = s.build();
  const L = stack.labels;
  const v = snapshotOf(
    "x64",
    { rip: codeAddress(app, "tick", 0x0b), rsp: L["rsp0"]!, rbp: L["rbp0"]! },
    [stack],
    [app],
    [
      { pc: codeAddress(app, "tick", 0x0b), sp: L["rsp0"]!, function: "tick" },
      { pc: retRun, sp: L["sp1"]!, function: "run" },
      { pc: retMain, sp: L["sp2"]!, function: "wmain" },
    ],
  );
  v.description = "RBP chain, 3 frames: wmain -> run -> tick, built with frame pointers";
  v.provenance = "hand-made (test/support/hand-vectors.ts)";
  return { file: "vectors/x64/rbp-chain-3.json", vector: v };
}

/** Every hand-made vector. */
export function handVectors(): HandVector[] {
  return [ebpChain(), threadStart(), rbpChain()];
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) {
  for (const { file, vector } of handVectors()) {
    writeFileSync(file, formatVector(vector));
    process.stdout.write(`wrote ${file}\n`);
  }
}
