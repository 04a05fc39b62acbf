/** Recognises a JSON input by its `format` field: a single-snapshot vector or a sweep of many. */
import { InputError, readingFile } from "../errors.js";
import { JsonNode } from "./json-input.js";
import { SWEEP_FORMAT, sweepFromJson, type Sweep } from "./sweep.js";
import { VECTOR_FORMAT, vectorFromJson, type Vector } from "./vector.js";

/** A parsed JSON input. */
export type JsonInput = { kind: "vector"; vector: Vector } | { kind: "sweep"; sweep: Sweep };

/** Parses a vector or a sweep; errors name the JSON path (and `file`, when given). */
export function parseJsonInput(text: string, file?: string): JsonInput {
  return readingFile(file, () => {
    const root = JsonNode.parse(text);
    const format = root.get("format").string();
    if (format === VECTOR_FORMAT) return { kind: "vector", vector: vectorFromJson(root) };
    if (format === SWEEP_FORMAT) return { kind: "sweep", sweep: sweepFromJson(root) };
    throw new InputError("bad-value", `unknown format "${format}" (expected "${VECTOR_FORMAT}" or "${SWEEP_FORMAT}")`, { path: "$.format" });
  });
}
