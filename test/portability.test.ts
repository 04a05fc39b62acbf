import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Type-checks `entry` with the core's compiler settings (src/tsconfig.json: no Node types, only portable globals). */
function coreDiagnostics(entry: string): ts.Diagnostic[] {
  const config = ts.getParsedCommandLineOfConfigFile(resolve("src/tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const program = ts.createProgram({ rootNames: [entry, resolve("src/portable-globals.d.ts")], options: config.options });
  return [...ts.getPreEmitDiagnostics(program)];
}

describe("the walker core runs in a browser", () => {
  it("compiles without Node's types, every browser entry (root, formats, dbghelp, arch, etw, render, testing): only a Node import added on top of them fails (src/tsconfig.json, run by npm run build)", () => {
    const dir = mkdtempSync(join(tmpdir(), "core-check-"));
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
    const probe = join(dir, "probe.ts");
    const entries = ["src/index.js", ...["formats", "dbghelp", "arch", "etw", "render"].map((e) => `src/entry/${e}.js`), "src/testing/index.js"];
    writeFileSync(probe, `${entries.map((e, i) => `export * as e${i} from ${JSON.stringify(resolve(e))};`).join("\n")}\nimport { readFileSync } from "node:fs";\nexport const read = readFileSync;\n`);
    const errors = coreDiagnostics(probe).map((d) => `${d.file === undefined ? "" : d.file.fileName === probe ? "probe.ts" : d.file.fileName}: TS${d.code}`);
    expect(errors).toEqual(["probe.ts: TS2307"]);
  }, 120_000);

  it("uses no Node-only API outside src/cli and src/node (a quick textual check besides the compiler's)", () => {
    const offenders: string[] = [];
    for (const file of files("src")) {
      if (file.startsWith(join("src", "cli")) || file.startsWith(join("src", "node"))) continue;
      const text = readFileSync(file, "utf8");
      if (/from\s+"node:|require\(|\bBuffer\b|\bprocess\.(env|argv|exit|stdout|stderr|cwd)/.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
