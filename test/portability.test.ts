import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("the walker core runs in a browser", () => {
  it("uses no Node-only API outside src/cli and src/node", () => {
    const offenders: string[] = [];
    for (const file of files("src")) {
      if (file.startsWith(join("src", "cli")) || file.startsWith(join("src", "node"))) continue;
      const text = readFileSync(file, "utf8");
      if (/from\s+"node:|require\(|\bBuffer\b|\bprocess\.(env|argv|exit|stdout|stderr|cwd)/.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
