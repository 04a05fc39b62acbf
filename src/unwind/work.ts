/**
 * The work the walks do, counted in units as they go (issue 33): one per postfix token evaluated
 * (STACK CFI rules, STACK WIN and FrameData programs), per STACK CFI row applied to work a rule
 * out, per stack word scanned and per instruction decoded. A walk reads the counter before and
 * after each unwind step and stops with `work-budget` when its snapshot's walks have spent their
 * shared work budget (walk.ts), so a hostile rule or dump ends in bounded time however few frames
 * it makes. Walks are synchronous, so one counter serves every walk of the process; the code that
 * does the work only adds to it (an integer add, nothing allocated).
 */
export const work = { units: 0 };
