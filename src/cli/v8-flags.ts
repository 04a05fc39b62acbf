/**
 * The V8 flags the `stackwalk` bin sets for itself (src/cli/stackwalk.ts), and which the bench
 * sets for a parse it times "as the command line does" (test/bench/bench-package.ts).
 *
 * A command usually lives a tenth of a second. V8 compiles a function with its optimising
 * compiler once the function has run for a while (its interrupt budget, 132 KiB of bytecode by
 * default); in so short a process that costs more memory (compilation zones, optimised code)
 * than it saves time. A budget eight times larger leaves the start-up and a one-dump walk to the
 * interpreter and the baseline compiler, while a long walk or a check over thousands of vectors
 * still reaches optimised code within milliseconds.
 *
 * The young generation keeps its first size (`--semi-space-growth-factor=1`): a walk's garbage
 * dies young, and a young generation grown to 16 MiB holds it longer than it needs, so the peak
 * RSS is 5 MB lower for a real dump's walk (25 MB lower for a 100,000-frame one) for the same CPU
 * time (measured with npm run bench).
 */
export const BIN_V8_FLAGS = "--interrupt-budget=1081344 --semi-space-growth-factor=1";
