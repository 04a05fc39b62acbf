/**
 * stackwalk-emu/emulator: the emulated CPU that gives walks their ground truth. Unicorn 2 through
 * koffi (Debian's libunicorn2), Keystone and Capstone (WebAssembly) to assemble and disassemble,
 * a PE loader, the shadow-stack trace, the runner that writes vectors and sweeps, call-chain
 * program builders, ETW capture, the IA-64 model executor, and the runs of the real programs built
 * for ARM64 and ARM (Thumb-2). Needs the optional packages koffi, @alexaltea/keystone-js and
 * @alexaltea/capstone-js; nothing else in the package does.
 */
export * from "./unicorn.js";
export * from "./assemble.js";
export * from "./disassemble.js";
export * from "./trace.js";
export * from "./pe-loader.js";
export * from "./image-writer.js";
export * from "./run.js";
export * from "./symbols.js";
export * from "./etw-capture.js";
export * from "./etw-modules.js";
export * from "./compare.js";
export * from "./programs/index.js";
export * from "./programs/program-file.js";
export { runChain, layoutFunction, type Ia64ChainSpec, type Ia64FunctionSpec, type ChainRun, type FunctionLayout } from "./ia64/executor.js";
export { runArm64Program, runArm64Programs, runArm64Synthetic, arm64CorpusFiles, ARM64_PROGRAMS, ARM64_TARGETS, type Arm64Program, type Arm64Target } from "./arm64-programs.js";
export { runArmProgram, runArmPrograms, armProgramSweeps, ARM_PROGRAMS, type ArmProgram } from "./arm/programs.js";
