// The `stackwalk` bin, bundled from tsc's output (npm run build runs this after tsc): a command
// line that loads a hundred small modules spends more time finding and compiling them than
// walking a dump (measured: about 80 ms more per start), so the bin is bundled. The dispatcher
// (dist/bin/stackwalk.cjs) is one file; every command that reads snapshots is in a second
// (commands.cjs, loaded when such a command runs); emulate and compare, which need the emulator
// and its optional native packages, in a third (emulator-commands.cjs), so that the others never
// load them. A worker thread of a walk over many dumps (walk-worker.cjs) is the command files'
// loader and one call that takes the worker's loop from commands.cjs, not a second copy of the walker. The one copy left is the
// core code both command files hold (measured and justified in docs/architecture.md). The
// bundles are CommonJS, which Node loads synchronously and sooner than ES modules (the only
// format esbuild splits into shared chunks); `import.meta.url` becomes the file's URL. Packages
// stay external (koffi, capstone-js and keystone-js are loaded by the emulator's commands alone).
// The dispatcher and the worker load a command file through src/cli/bundle-loader.ts, with the V8
// code cache this script writes beside it once the bundles are built (see writeCodeCaches).
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("dist/src/cli/", import.meta.url));
const bin = fileURLToPath(new URL("dist/bin/", import.meta.url));
/** A command file, loaded by the bundle-loader with its code cache (as `require` would load it, without one). */
const commandFile = (name) => `require(${JSON.stringify(`${cli}bundle-loader.js`)}).commandFile(__bundleUrl, ${JSON.stringify(name)})`;
const GROUPS = {
  commands: ["walk", "minidump-stackwalk", "check", "roles", "crosscheck", "etw", "explain", "render", "view"],
  "emulator-commands": ["emulate", "compare"],
};

/** Each command module the dispatcher imports becomes its group's file; each group re-exports its commands. */
const groups = {
  name: "command-groups",
  setup(b) {
    b.onResolve({ filter: /^\.\/[a-z-]+\.js$/, namespace: "file" }, (args) => {
      if (args.importer !== `${cli}main.js`) return undefined;
      const command = args.path.slice(2, -3);
      const group = Object.keys(GROUPS).find((g) => GROUPS[g].includes(command));
      return group === undefined ? undefined : { path: `${group}.cjs`, namespace: "command-file" };
    });
    b.onLoad({ filter: /.*/, namespace: "command-file" }, (args) => ({ contents: `module.exports = ${commandFile(args.path)};`, loader: "js", resolveDir: cli }));
    b.onResolve({ filter: /^group:/ }, (args) => ({ path: args.path.slice(6), namespace: "group" }));
    b.onLoad({ filter: /.*/, namespace: "group" }, (args) => ({
      contents: [...GROUPS[args.path].map((c) => `export * from ${JSON.stringify(`${cli}${c}.js`)};`), ...(args.path === "commands" ? [`export { serveBatch } from ${JSON.stringify(`${cli}batch-serve.js`)};`] : [])].join("\n"),
      resolveDir: cli,
    }));
    // walk-worker.cjs: the batch's worker loop, from commands.cjs.
    b.onResolve({ filter: /^worker:$/ }, () => ({ path: "worker", namespace: "worker" }));
    b.onLoad({ filter: /.*/, namespace: "worker" }, () => ({ contents: `void ${commandFile("commands.cjs")}.serveBatch();`, loader: "js", resolveDir: cli }));
  },
};

await build({
  entryPoints: { stackwalk: `${cli}stackwalk.js`, "walk-worker": "worker:", ...Object.fromEntries(Object.keys(GROUPS).map((g) => [g, `group:${g}`])) },
  bundle: true,
  minify: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  packages: "external",
  // import() of another bundle becomes require(); import.meta.url the bundle's own URL.
  supported: { "dynamic-import": false },
  define: { "import.meta.url": "__bundleUrl" },
  banner: { js: '"use strict";\nvar __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  outdir: bin,
  outExtension: { ".js": ".cjs" },
  plugins: [groups],
  logLevel: "warning",
});

/**
 * Writes each command file's V8 code cache (`<file>.cache`, read by src/cli/bundle-loader.ts) from
 * a Node process that sets the bin's V8 flags (a cache made under other flags is refused) and
 * loads the file as the bin does; for commands.cjs it first walks minidump2.dmp with its .sym
 * files and a JSON vector, when the clone has them, so that the cache holds the bytecode of what
 * a walk runs. Without them, or should this fail, the bin works as well, a little slower.
 */
function writeCodeCaches() {
  const root = fileURLToPath(new URL(".", import.meta.url));
  const md2 = "test/fixtures/breakpad";
  const warm = [
    [`${md2}/minidump2.dmp`, "--symbols", `${md2}/symbols`, "--format", "breakpad"],
    ["vectors/x86/ebp-chain-4.json"],
  ].filter((argv) => existsSync(`${root}${argv[0]}`) && (argv[2] === undefined || existsSync(`${root}${argv[2]}`)));
  for (const [name, runs] of [["commands.cjs", warm], ["emulator-commands.cjs", []]]) {
    const file = `${bin}${name}`;
    rmSync(`${file}.cache`, { force: true });
    const script = `
      import { setFlagsFromString } from "node:v8";
      import { writeFileSync } from "node:fs";
      import { BIN_V8_FLAGS } from ${JSON.stringify(`${cli}v8-flags.js`)};
      import { loadBundle } from ${JSON.stringify(`${cli}bundle-loader.js`)};
      setFlagsFromString(BIN_V8_FLAGS);
      const file = ${JSON.stringify(file)};
      const { exports, script } = loadBundle(file);
      const quiet = { out: () => {}, err: () => {}, errIsTty: false };
      for (const argv of ${JSON.stringify(runs)}) if ((await exports.walkCommand(argv, quiet)) !== 0) throw new Error("walk " + argv.join(" ") + " failed");
      writeFileSync(file + ".cache", script.createCachedData());`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    if (r.status !== 0) console.warn(`esbuild.config.mjs: no code cache for ${name} (${r.stderr.trim().split("\n")[0]})`);
  }
}

writeCodeCaches();
