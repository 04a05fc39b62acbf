/**
 * stackwalk-emu/etw: ETW stacks: the extended data items (STACK_TRACE32/64, STACK_KEY), their
 * stitching by MatchId, the .etl reader (XPRESS buffers, zip archives), the EBP-chain capture ETW
 * follows on x86, and the cross-check of a walk against ETW's addresses with its renderers.
 * Like the root entry it runs in a browser (no Node built-ins). Re-exports only.
 */
export * from "../formats/etw.js";
export * from "../analysis/ebp-chain.js";
export * from "../analysis/crosscheck.js";
export { commonSubsequence } from "../analysis/crosscheck-align.js";
export { crossCheckJson, crossCheckText } from "../render/crosscheck.js";
