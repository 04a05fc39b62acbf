/**
 * The JSON document of `walk --format json` checked against its published schema
 * (src/render/walk.schema.json) with Ajv, a JSON Schema validator (draft 2020-12).
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";

const SCHEMA = JSON.parse(readFileSync(new URL("../../src/render/walk.schema.json", import.meta.url), "utf8")) as object;
const validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(SCHEMA);

/** Throws, naming every violation by its JSON path, unless `doc` is a valid walk document (or JSON Lines error record). */
export function assertWalkDocument(doc: unknown): void {
  if (validate(doc)) return;
  const problems = (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
  throw new Error(`not a valid walk document:\n  ${problems.join("\n  ")}`);
}

/** Parses `walk --format json` output and checks it against the schema. */
export function parseWalkJson(text: string): any {
  const doc: unknown = JSON.parse(text);
  assertWalkDocument(doc);
  return doc;
}
