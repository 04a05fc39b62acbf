import { readFileSync } from "node:fs";
import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/corpus.js";
import { learnPictures } from "../support/learn-pictures.js";

describe("the Learn pictures of docs/learn.md", () => {
  it("are committed as drawn from the chain on the five targets (npm run pictures redraws them)", async () => {
    const pictures = await learnPictures();
    expect(pictures.map((p) => p.file.split("/").pop())).toEqual([
      "config-parser-x86-fp.svg", "config-parser-x86-fpo.svg", "config-parser-x64.svg", "config-parser-arm64.svg", "config-parser-ia64.svg",
    ]);
    const learn = readFileSync(`${ROOT}docs/learn.md`, "utf8");
    for (const p of pictures) {
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
