#!/usr/bin/env node
/** The `stackwalk` command (the package's bin): runs the command line and sets the exit code. */
import { setFlagsFromString } from "node:v8";
import { run } from "./main.js";
import { BIN_V8_FLAGS } from "./v8-flags.js";

// A larger interrupt budget for V8's optimising compiler: why, in v8-flags.ts.
setFlagsFromString(BIN_V8_FLAGS);

void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
