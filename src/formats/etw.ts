/**
 * ETW stacks on bytes (etw.md): the extended data items (STACK_TRACE32/64, STACK_KEY) in their
 * on-disk and API forms, read and written (etw/extended-data.ts); their stitching by MatchId
 * (etw/stitch.ts); and the stack-only `.etl` reader, also for a trace inside a zip archive
 * (etw/etl.ts).
 */
export * from "./etw/extended-data.js";
export * from "./etw/stitch.js";
export * from "./etw/etl.js";
