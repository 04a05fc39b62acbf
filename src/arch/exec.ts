/**
 * Running a rule: the one `exec`, and the only place stack memory is read (framehop's split
 * between working a rule out and running it). Each kind of rule has one interpreter; this
 * dispatches on the kind, so a new kind that is not run here is a compile error.
 */
import type { MemoryReader } from "../memory/reader.js";
import type { Registers } from "../model/snapshot.js";
import type { ExecContext, UnwindResult } from "./step.js";
import { execArm64Unwind } from "./arm64/exec.js";
import { execArmUnwind } from "./arm/exec.js";
import { execArmBreakpadFramePointer, execArmLinkRegister } from "./arm/frame-pointer.js";
import { execBreakpadFramePointer, execLinkRegister } from "./arm64/frame-pointer.js";
import { execCfi } from "./cfi.js";
import { execFramePointer } from "./frame-chain.js";
import { execIa64 } from "./ia64/exec.js";
import type { UnwindRule } from "./rule.js";
import { execScan } from "./scan.js";
import { execStop } from "./stop.js";
import { execCheckedX64Chain } from "./x64/frame-pointer.js";
import { execUnwindInfo } from "./x64/unwind.js";
import { execFpo } from "./x86/fpo.js";
import { execFrameData, execRecordAtReturn } from "./x86/frame-data.js";
import { execCheckedX86Chain } from "./x86/frame-pointer.js";
import { execX86Epilog } from "./x86/site.js";
import { execBreakpadWin, execBreakpadX86FramePointer } from "./x86/breakpad.js";

/** Runs `rule` on a frame's registers, reading the stack through `memory`: the caller's registers and how they were found, or why not. */
export function execRule(rule: UnwindRule, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  switch (rule.kind) {
    case "frame-pointer":
      return execFramePointer(rule, registers, memory, ctx);
    case "x86-checked-chain":
      return execCheckedX86Chain(rule, registers, memory, ctx);
    case "x64-checked-chain":
      return execCheckedX64Chain(registers, memory);
    case "fpo":
      return execFpo(rule, registers, memory, ctx);
    case "frame-data":
      return execFrameData(rule, registers, memory, ctx);
    case "record-at-return":
      return execRecordAtReturn(rule, registers, memory, ctx);
    case "x86-epilog":
      // Code that does not reach a return leaves the frame to the record's own rule.
      return execX86Epilog(rule, registers, memory, ctx) ?? execRule(rule.fallback!, registers, memory, ctx);
    case "x86-breakpad-win":
      return execBreakpadWin(rule, registers, memory, ctx);
    case "x86-breakpad-fp":
      return execBreakpadX86FramePointer(rule, registers, memory, ctx);
    case "unwind-info":
      return execUnwindInfo(rule, registers, memory, ctx);
    case "arm64-unwind":
      return execArm64Unwind(rule, registers, memory, ctx);
    case "arm-unwind":
      return execArmUnwind(rule, registers, memory, ctx);
    case "arm-link":
      return execArmLinkRegister(rule, registers, memory, ctx);
    case "arm-breakpad-fp":
      return execArmBreakpadFramePointer(registers, memory, ctx);
    case "arm64-link":
      return execLinkRegister(rule, registers, memory, ctx);
    case "arm64-breakpad-fp":
      return execBreakpadFramePointer(rule, registers, memory, ctx);
    case "cfi":
      return execCfi(rule, registers, memory, ctx);
    case "scan":
    case "leaf":
      return execScan(rule, registers, memory, ctx);
    case "ia64":
      return execIa64(rule, registers, memory, ctx);
    case "stop":
      return execStop(rule);
    case "custom":
      return rule.exec(registers, memory, ctx);
  }
}
