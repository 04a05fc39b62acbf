#!/usr/bin/env node
// The `stackwalk` command: runs the TypeScript CLI through tsx's loader.
import { register } from "tsx/esm/api";

register();
const { run } = await import("./main.ts");
process.exitCode = await run(process.argv.slice(2));
