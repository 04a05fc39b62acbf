/**
 * JSON syntax errors name the JSON path being read, the line and the column, in one line that
 * never quotes the input; JSON.parse decides what is valid, the scan only says where it breaks.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { JsonNode } from "../../src/formats/json-input.js";

function syntaxError(text: string): InputError {
  try {
    JsonNode.parse(text);
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error("parsed");
}

describe("JSON syntax errors", () => {
  it.each([
    ['{"a": [1, 2, }', "$.a[2]", 'line 1, column 14: expected a value, found "}"'],
    ['{"a": {"b": tru}}', "$.a.b", 'line 1, column 13: expected a value, found "t"'],
    ['{"a": 1,\n "b": 2\n "c": 3}', "$.b", 'line 3, column 2: expected "," or "}" after the member\'s value, found "\\""'],
    ['[1, 2] x', "$", 'line 1, column 8: expected the end of the input after the JSON value, found "x"'],
    ['{"a": "x\ny"}', "$.a", "line 1, column 9: expected a closing quote (a control character or a bad escape ends the string), found character U+000A"],
    ["", "$", "line 1, column 1: expected a value, found the end of the input"],
    ['{"a": 01}', "$.a", 'line 1, column 8: expected "," or "}" after the member\'s value, found "1"'],
  ])("%j: %s, %s", (text, path, where) => {
    const e = syntaxError(text);
    expect(e.code).toBe("bad-json");
    expect(e.path).toBe(path);
    expect(e.message).toBe(`${path}: not valid JSON: ${where}`);
  });

  it("any depth: a broken value 100,000 arrays deep is named with the middle of its path left out", () => {
    const e = syntaxError("[".repeat(100_000) + "?");
    expect(e.message).toBe(`$[0][0][0][0]…(99990 levels)…[0][0][0][0][0][0]: not valid JSON: line 1, column 100001: expected a value, found "?"`);
  });

  it("whatever the text, a rejected one gives one line with a path and never the input's text", () => {
    fc.assert(
      fc.property(fc.json(), fc.nat(), fc.string({ minLength: 1, maxLength: 3 }), (json, at, junk) => {
        const cut = at % (json.length + 1);
        const text = json.slice(0, cut) + junk + json.slice(cut);
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        if (valid) return;
        const e = syntaxError(text);
        expect(e.path).toMatch(/^\$/);
        expect(e.message).not.toContain("\n");
        expect(e.message).toMatch(/not valid JSON: line \d+, column \d+: expected /);
      }),
      { numRuns: 2000 },
    );
  });
});
