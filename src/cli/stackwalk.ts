#!/usr/bin/env node
/** The `stackwalk` command (the package's bin): runs the command line and sets the exit code. */
import { setFlagsFromString } from "node:v8";
import { run } from "./main.js";

// A command usually lives a tenth of a second. V8 compiles a function with its optimising
// compiler once the function has run for a while (its interrupt budget, 132 KiB of bytecode by
// default); in so short a process that costs more memory (compilation zones, optimised code)
// than it saves time. A budget eight times larger leaves the start-up and a one-dump walk to the
// interpreter and the baseline compiler, while a long walk or a check over thousands of vectors
// still reaches optimised code within milliseconds.
setFlagsFromString("--interrupt-budget=1081344");

void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
