#!/usr/bin/env node
/** The `stackwalk` command (the package's bin): runs the command line and sets the exit code. */
import { run } from "./main.js";

void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
