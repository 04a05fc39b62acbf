/**
 * stackwalk-emu/dbghelp: the StackWalk64 facade (`stackWalk64`, `stackWalk64Detailed`, `stackWalk` and
 * the 32-bit forms), called frame by frame like dbghelp's, and the byte-exact records it works on:
 * STACKFRAME64/STACKFRAME_EX/STACKFRAME, KDHELP, ADDRESS64, the CONTEXT layouts of each machine,
 * FPO_DATA.
 * Like the root entry it runs in a browser (no Node built-ins). Re-exports only.
 */
export * from "../walk/stackwalk64.js";
export * from "../walk/stackwalk64-inline.js";
export * from "../model/stackframe.js";
export * from "../model/address.js";
export * from "../model/context.js";
export * from "../model/fpo-data.js";
export type { FieldKind, FieldSpec, RecordLayout } from "../model/record.js";
