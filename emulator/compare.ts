/**
 * `stackwalk compare`: one call chain, described once, built for six targets and run on the
 * emulator — x86 with frame pointers, x86 with frame-pointer omission (both logging an ETW
 * stack through RtlWalkFrameChain executed on the emulated CPU), x64 (with a profile sample
 * standing in for ETW, whose x64 stacks are unwound with the tables), ARM64 (frame records and
 * .xdata on Unicorn's AArch64 CPU; the innermost function is a leaf whose return address stays
 * in the link register), ARM (Thumb-2 on Unicorn's 32-bit ARM CPU: packed .pdata words and the
 * r11 frame chain, the innermost function again a leaf keeping its return address in lr) and
 * IA-64 (the register stack engine model; Unicorn has no IA-64 and ETW records nothing there).
 * Each target gives a vector with its ground truth; src/render/compare.ts walks and compares them.
 */
import { InputError, type Vector } from "../src/index.js";
import { JsonNode } from "../src/entry/formats.js";
import { captureVectors, captureX64Vectors } from "./etw-capture.js";
import { runChain, type Ia64FunctionSpec } from "./ia64/executor.js";
import { buildSpec } from "./programs/program-file.js";
import type { X64FunctionSpec, X64NonvolatileRegister } from "./programs/x64-chain.js";
import type { X86FunctionSpec, X86SavedRegister } from "./programs/x86-chain.js";
import { buildArm64Program, type Arm64FunctionSpec } from "./programs/arm64-chain.js";
import { ARM64_CODE } from "./programs/arm64-unwind-encode.js";
import { buildArmProgram, type ArmChainFunction } from "./programs/arm-chain.js";
import { runImage, vectorsOf } from "./run.js";

/** The `format` of a call-chain spec file. */
export const CHAIN_FORMAT = "stackwalk-chain/1";

/** One function of a chain, in terms every target can build. */
export interface ChainFunction {
  /** A C identifier, unique in the chain. */
  name: string;
  /** Bytes of fixed locals (a multiple of 4, below 4 KiB). */
  locals: number;
  /** Arguments its caller passes (0 for the first function, which is the entry point). */
  params: number;
  /** Callee-saved registers it saves (0..3: EBX, ESI, EDI on x86; RBX, RSI, RDI on x64). */
  saved: number;
}

/** A call chain: the outermost function (the entry point) first; each calls the next. */
export interface ChainSpec {
  name: string;
  description: string;
  functions: ChainFunction[];
}

/** The six targets, in the order they are shown. */
export const COMPARE_TARGETS = ["x86-fp", "x86-fpo", "x64", "arm64", "arm", "ia64"] as const;
export type CompareTarget = (typeof COMPARE_TARGETS)[number];

/** One target's run: its snapshot with truth, and what stands for its ETW stack. */
export interface TargetRun {
  target: CompareTarget;
  /** How the target builds the chain, in one line. */
  build: string;
  vector: Vector;
  /** How the ETW stack was captured (or why there is none). */
  etwSource: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses a `stackwalk-chain/1` file; errors name the JSON path. */
export function parseChainSpec(text: string, file: string): ChainSpec {
  try {
    const root = JsonNode.parse(text);
    root.onlyKeys(["format", "name", "description", "functions"]);
    if (root.get("format").string() !== CHAIN_FORMAT) throw new InputError("bad-value", `expected "${CHAIN_FORMAT}"`, { path: "$.format" });
    const name = root.get("name").string();
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) throw new InputError("bad-value", `the name must be kebab-case, not "${name}"`, { path: "$.name" });
    const description = root.get("description").string();
    const list = root.get("functions").array();
    if (list.length < 2 || list.length > 16) throw new InputError("bad-value", `a chain has 2 to 16 functions, not ${list.length}`, { path: "$.functions" });
    const seen = new Set<string>();
    const functions = list.map((node, i): ChainFunction => {
      node.onlyKeys(["name", "locals", "params", "saved"]);
      const fname = node.get("name").string();
      if (!IDENTIFIER.test(fname) || seen.has(fname)) throw new InputError("bad-value", `"${fname}" is not a new C identifier`, { path: node.get("name").path });
      seen.add(fname);
      const int = (key: string, max: number, step = 1): number => {
        const n = node.opt(key);
        if (n === undefined) return 0;
        const v = n.integer(0, max);
        if (v % step !== 0) throw new InputError("bad-value", `${key} must be a multiple of ${step}, not ${v}`, { path: n.path });
        return v;
      };
      const f = { name: fname, locals: int("locals", 1024, 4), params: int("params", 8), saved: int("saved", 3) };
      if (i === 0 && f.params !== 0) throw new InputError("bad-value", "the first function is the entry point: it takes no parameters", { path: `${node.path}.params` });
      return f;
    });
    return { name, description, functions };
  } catch (e) {
    if (e instanceof InputError) throw e.inFile(file);
    throw e;
  }
}

const X86_SAVED: readonly X86SavedRegister[] = ["ebx", "esi", "edi"];
const X64_SAVED: readonly X64NonvolatileRegister[] = ["rbx", "rsi", "rdi"];

function x86Functions(spec: ChainSpec, frame: "ebp" | "fpo"): X86FunctionSpec[] {
  return spec.functions.map((f) => ({ name: f.name, frame, locals: f.locals / 4, saved: X86_SAVED.slice(0, f.saved), params: f.params }));
}

/** x64: pushes of the saved registers, then an allocation holding the locals and the 32-byte home area, RSP 16-aligned at calls. */
function x64Functions(spec: ChainSpec): X64FunctionSpec[] {
  return spec.functions.map((f, i) => {
    const calls = i < spec.functions.length - 1;
    let alloc = Math.ceil(f.locals / 8) * 8 + (calls ? 32 : 0);
    // At entry RSP ≡ 8 (mod 16): pushes and the allocation must bring it to 0 before a call.
    if ((8 + 8 * f.saved + alloc) % 16 !== 0) alloc += 8;
    return { name: f.name, pushes: X64_SAVED.slice(0, f.saved), alloc };
  });
}

/**
 * ARM64 (arm64.md Part 6, clang's shapes): a caller saves its registers (x19, x20, x21) at the
 * top of its frame, then the frame record `stp x29, lr, [sp, #-16]!; mov x29, sp`, then its locals;
 * the epilog undoes them from `mov sp, x29`. The innermost function makes no call, so like a clang
 * leaf it never saves lr: its return address stays in the link register, and only its saved
 * registers and locals are described. Every function has an `.xdata` record (E = 1).
 */
function arm64Functions(spec: ChainSpec): Arm64FunctionSpec[] {
  return spec.functions.map((f, i) => {
    const last = i === spec.functions.length - 1;
    const locals = Math.ceil(f.locals / 16) * 16;
    const pairs = Math.ceil(f.saved / 2) * 16;
    const prolog: string[] = [];
    const epilog: string[] = [];
    const codes: number[][] = [];
    if (f.saved === 1) {
      prolog.push("str x19, [sp, #-16]!");
      epilog.unshift("ldr x19, [sp], #16");
      codes.push(ARM64_CODE.save_reg_x(19, 16));
    } else if (f.saved >= 2) {
      prolog.push(`stp x19, x20, [sp, #-${pairs}]!`);
      epilog.unshift(`ldp x19, x20, [sp], #${pairs}`);
      codes.push(ARM64_CODE.save_regp_x(19, pairs));
      if (f.saved === 3) {
        prolog.push("str x21, [sp, #16]");
        epilog.unshift("ldr x21, [sp, #16]");
        codes.push(ARM64_CODE.save_reg(21, 16));
      }
    }
    if (!last) {
      prolog.push("stp x29, x30, [sp, #-16]!", "mov x29, sp");
      epilog.unshift("ldp x29, x30, [sp], #16");
      codes.push(ARM64_CODE.save_fplr_x(16), ARM64_CODE.set_fp());
    }
    if (locals > 0) {
      prolog.push(`sub sp, sp, #${locals}`);
      epilog.unshift(last ? `add sp, sp, #${locals}` : "mov sp, x29");
      codes.push(locals < 512 ? ARM64_CODE.alloc_s(locals) : ARM64_CODE.alloc_m(locals));
    }
    const stored = codes.reverse();
    const body = last ? ["capture:", "mov x0, #0"] : [...Array.from({ length: Math.min(f.params, 8) }, (_, k) => `mov x${k}, #${k + 1}`), `bl ${spec.functions[i + 1]!.name}`];
    if (stored.length === 0) return { name: f.name, lines: [...body, "ret"], unwind: { kind: "none" as const } };
    // The epilog's codes are the prolog's, from the first one an epilog instruction undoes:
    // `mov sp, x29` undoes set_fp and the allocation both, so the allocation's code is skipped.
    // Without locals there is no `mov sp, x29`: the epilog starts at the frame record's code.
    const index = last ? 0 : locals > 0 ? stored[0]!.length : 1;
    return {
      name: f.name,
      lines: [...prolog, ...body, `${f.name}_epilog:`, ...epilog, "ret"],
      unwind: { kind: "xdata" as const, prolog: stored, epilogs: [{ at: `${f.name}_epilog`, index }], single: true },
    };
  });
}

/**
 * ARM (Thumb-2, Windows ARMNT; the canonical packed prolog and epilog of Microsoft's "ARM
 * exception handling"): a caller pushes its saved registers (r4, r5, r6) with the frame chain's
 * r11 and lr, `push {r4-rN, r11, lr}`, points r11 at the saved r11 (`add r11, sp, #n`, so r11
 * and lr make a frame record), then allocates its locals (sp 8-byte aligned at calls); its
 * epilog is `add sp, sp, #n; pop {r4-rN, r11, pc}`. The innermost function is a leaf: it pushes
 * only its saved registers, keeps its return address in lr and returns with `bx lr`. Every
 * function that saves or allocates anything has a packed `.pdata` word (Flag 1); a leaf that
 * does neither has no entry.
 */
export function armChainFunctions(spec: ChainSpec): ArmChainFunction[] {
  return spec.functions.map((f, i) => {
    const last = i === spec.functions.length - 1;
    const saved = Array.from({ length: f.saved }, (_, k) => `r${4 + k}`);
    const pushed = last ? saved : [...saved, "r11", "lr"];
    let alloc = Math.ceil(f.locals / 4) * 4;
    if ((4 * pushed.length + alloc) % 8 !== 0) alloc += 4;
    const prolog: string[] = [];
    const epilog: string[] = [];
    if (pushed.length > 0) {
      prolog.push(`push {${pushed.join(", ")}}`);
      epilog.unshift(`pop {${(last ? saved : [...saved, "r11", "pc"]).join(", ")}}`);
    }
    if (!last) prolog.push(`add.w r11, sp, #${4 * f.saved}`);
    if (alloc > 0) {
      prolog.push(`sub sp, sp, #${alloc}`);
      epilog.unshift(`add sp, sp, #${alloc}`);
    }
    const body = last ? ["capture:", "movs r0, #0"] : [...Array.from({ length: Math.min(f.params, 4) }, (_, k) => `movs r${k}, #${k + 1}`), `bl ${spec.functions[i + 1]!.name}`];
    const lines = [...prolog, ...body, ...epilog, ...(last ? ["bx lr"] : [])];
    if (pushed.length === 0 && alloc === 0) return { name: f.name, lines, unwind: { kind: "none" as const } };
    const unwind = { kind: "packed" as const, ret: last ? (1 as const) : (0 as const), h: false, reg: f.saved > 0 ? f.saved - 1 : 7, r: f.saved === 0, l: !last, c: !last, stackAdjust: alloc / 4 };
    return { name: f.name, lines, unwind };
  });
}

/** IA-64: inputs are the parameters; locals keep ar.pfs and rp (and the saved registers); outputs feed the callee. */
function ia64Functions(spec: ChainSpec): Ia64FunctionSpec[] {
  return spec.functions.map((f, i) => {
    const next = spec.functions[i + 1];
    const ins = f.params;
    return {
      name: f.name,
      ins,
      locals: 2 + f.saved,
      outs: next?.params ?? 0,
      frameBytes: Math.ceil(f.locals / 16) * 16,
      pfs: { gr: 32 + ins },
      rp: { gr: 33 + ins },
      ...(next === undefined ? { leaf: true } : {}),
    };
  });
}

/** Builds and runs the chain on every target. */
export async function runCompareTargets(spec: ChainSpec): Promise<TargetRun[]> {
  const description = spec.description;
  const x86 = async (frame: "ebp" | "fpo"): Promise<Vector> => {
    const vectors = await captureVectors({ name: `${spec.name}-${frame === "ebp" ? "fp" : "fpo"}`, description, functions: x86Functions(spec, frame), etw: "user" });
    return vectors[0]!;
  };
  const x64Program = await buildSpec({ machine: "x64", spec: { name: spec.name, description, functions: x64Functions(spec) } });
  const [x64] = await captureX64Vectors(
    { name: `${x64Program.name}.exe`, image: x64Program.image, symbols: x64Program.symbols },
    // The capture labels by address: the image's symbols name functions, not labels.
    { captures: x64Program.captures.map((l) => `0x${x64Program.labels.get(l)!.toString(16)}`), sample: true, provenance: `emulator: stackwalk compare ${spec.name} (x64)` },
  );
  const ia64 = runChain({ name: spec.name, description, functions: ia64Functions(spec), stop: { step: "restore-rp" } }).vector;
  const arm64Program = await buildArm64Program({ name: spec.name, description, functions: arm64Functions(spec) });
  const arm64Run = await runImage(
    { name: `${arm64Program.name}.exe`, image: arm64Program.image, symbols: arm64Program.symbols },
    { breaks: ["capture"], labels: arm64Program.labels, provenance: `emulator: stackwalk compare ${spec.name} (arm64)` },
  );
  const arm64 = vectorsOf(arm64Run)[0]!;
  const armProgram = await buildArmProgram({ name: spec.name, description, functions: armChainFunctions(spec) });
  const armRun = await runImage(
    { name: `${armProgram.name}.exe`, image: armProgram.image, symbols: armProgram.symbols },
    { breaks: ["capture"], labels: armProgram.labels, provenance: `emulator: stackwalk compare ${spec.name} (arm)` },
  );
  const arm = vectorsOf(armRun)[0]!;
  return [
    { target: "x86-fp", build: "every function begins push ebp; mov ebp, esp (FRAME_NONFPO records)", vector: await x86("ebp"), etwSource: "RtlWalkFrameChain run on the emulated CPU: the EBP chain" },
    { target: "x86-fpo", build: "frame-pointer omission: ESP-relative frames, FPO_DATA records in the image", vector: await x86("fpo"), etwSource: "RtlWalkFrameChain run on the emulated CPU: the EBP chain" },
    { target: "x64", build: "pushes and an allocation described by UNWIND_INFO in .pdata/.xdata", vector: x64!, etwSource: "a profile sample: the kernel unwinds x64 stacks with the tables, so the emulator's call stack stands for it" },
    {
      target: "arm64",
      build: "frame records (stp x29, lr; mov x29, sp) and .xdata unwind codes; the innermost leaf keeps its return address in lr",
      vector: arm64,
      etwSource: "none: ETW stack capture is not modelled on ARM64",
    },
    {
      target: "arm",
      build: "Thumb-2: push {r4-rN, r11, lr}; add r11, sp, #n (the r11 frame chain) and packed .pdata words; the innermost leaf keeps its return address in lr",
      vector: arm,
      etwSource: "none: ETW stack capture is not modelled on ARM",
    },
    { target: "ia64", build: "alloc'd register frames; rp and ar.pfs in stacked registers, described by unwind descriptors", vector: ia64, etwSource: "none: ETW stack capture is not modelled on IA-64" },
  ];
}
