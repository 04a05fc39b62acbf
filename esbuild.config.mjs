// The `stackwalk` bin, bundled from tsc's output (npm run build runs this after tsc): a command
// line that loads a hundred small modules spends more time finding and compiling them than
// walking a dump, so the dispatcher (dist/bin/stackwalk.cjs) is one file, walk, the command run
// most, one more (walk.cjs, the least code to compile; with minidump-stackwalk, which is walk in Breakpad's dress), the other commands that read snapshots
// another (commands.cjs), and emulate and compare, which need the emulator and its optional
// native packages, a fourth (emulator-commands.cjs). The dispatcher loads a command's file only
// when the command runs. The bundles are CommonJS, which Node loads synchronously and
// sooner than ES modules; `import.meta.url` becomes the file's URL. Packages stay external
// (koffi, capstone-js and keystone-js are loaded by the emulator's commands alone).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("dist/src/cli/", import.meta.url));
const GROUPS = {
  walk: ["walk", "minidump-stackwalk"],
  commands: ["check", "roles", "crosscheck", "etw", "explain", "render", "view"],
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
      contents: GROUPS[args.path].map((c) => `export * from ${JSON.stringify(`${cli}${c}.js`)};`).join("\n"),
      resolveDir: cli,
    }));
  },
};

await build({
  // walk-worker.cjs: a worker thread of a walk over many dumps (src/cli/batch-worker.ts).
  entryPoints: { stackwalk: `${cli}stackwalk.js`, "walk-worker": `${cli}batch-worker.js`, ...Object.fromEntries(Object.keys(GROUPS).map((g) => [g, `group:${g}`])) },
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
