/**
 * `@jest/globals` for the Jest example of docs/library.md run inside this Vitest suite: Jest's own `expect`
 * (the `expect` package, which Jest's global is) with Vitest's `test` as the runner.
 */
export { expect } from "expect";
export { test } from "vitest";
