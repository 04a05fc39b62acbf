// The `stackwalk` bin, bundled from tsc's output (npm run build runs this after tsc): a command
// line that loads a hundred small modules spends more time finding and compiling them than
// walking a dump (measured: about 80 ms more per start), so the bin is bundled. The dispatcher
// (dist/bin/stackwalk.cjs) is one file; every command that reads snapshots is in a second
// (commands.cjs, loaded when such a command runs); emulate and compare, which need the emulator
// and its optional native packages, in a third (emulator-commands.cjs), so that the others never
// load them. A worker thread of a walk over many dumps (walk-worker.cjs) is a few lines that take
// the worker's loop from commands.cjs, not a second copy of the walker. The one copy left is the
// core code both command files hold (measured and justified in docs/architecture.md). The
// bundles are CommonJS, which Node loads synchronously and sooner than ES modules (the only
// format esbuild splits into shared chunks); `import.meta.url` becomes the file's URL. Packages
// stay external (koffi, capstone-js and keystone-js are loaded by the emulator's commands alone).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("dist/src/cli/", import.meta.url));
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
      return group === undefined ? undefined : { path: `./${group}.cjs`, external: true };
    });
    b.onResolve({ filter: /^group:/ }, (args) => ({ path: args.path.slice(6), namespace: "group" }));
    b.onLoad({ filter: /.*/, namespace: "group" }, (args) => ({
      contents: [...GROUPS[args.path].map((c) => `export * from ${JSON.stringify(`${cli}${c}.js`)};`), ...(args.path === "commands" ? [`export { serveBatch } from ${JSON.stringify(`${cli}batch-serve.js`)};`] : [])].join("\n"),
      resolveDir: cli,
    }));
    // walk-worker.cjs: the batch's worker loop, from commands.cjs.
    b.onResolve({ filter: /^worker:$/ }, () => ({ path: "worker", namespace: "worker" }));
    b.onResolve({ filter: /^\.\/commands\.cjs$/, namespace: "worker" }, () => ({ path: "./commands.cjs", external: true }));
    b.onLoad({ filter: /.*/, namespace: "worker" }, () => ({ contents: 'require("./commands.cjs").serveBatch();', loader: "js" }));
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
  outdir: fileURLToPath(new URL("dist/bin/", import.meta.url)),
  outExtension: { ".js": ".cjs" },
  plugins: [groups],
  logLevel: "warning",
});
