import { readFileSync } from "node:fs";
import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/corpus.js";
import { learnPictures } from "../support/learn-pictures.js";

describe("the Learn pictures of docs/learn.md", () => {
  it("are committed as drawn from the chain on the six targets, with the snapshots they are drawn from (npm run pictures redraws them)", async () => {
    const files = await learnPictures();
    expect(files.map((p) => p.file.split("/").pop())).toEqual([
      "config-parser-x86-fp.svg", "config-parser-x86-fpo.svg", "config-parser-x64.svg", "config-parser-arm64.svg", "config-parser-arm.svg", "config-parser-ia64.svg",
      "config-parser-x86-fp.json", "config-parser-x86-fpo.json", "config-parser-x64.json", "config-parser-arm64.json", "config-parser-arm.json", "config-parser-ia64.json",
      "config-parser.json",
    ]);
    for (const p of files.filter((f) => f.file.endsWith(".json"))) expect(readFileSync(`${ROOT}${p.file}`, "utf8"), `${p.file} is stale: run npm run pictures`).toBe(p.text);
    const learn = readFileSync(`${ROOT}docs/learn.md`, "utf8");
    for (const p of files.filter((f) => f.file.endsWith(".svg"))) {
      expect(readFileSync(`${ROOT}${p.file}`, "utf8"), `${p.file} is stale: run npm run pictures`).toBe(p.text);
      expect(learn).toContain(`(../${p.file})`);
      // Well-formed XML.
      const parser = new SaxesParser({ xmlns: true });
      let error: Error | undefined;
      parser.on("error", (e) => (error ??= e));
      parser.write(p.text).close();
      expect(error).toBeUndefined();
    }
  });
});
