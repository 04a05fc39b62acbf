import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// CI runs the whole suite on two cores; tests that spawn the CLI, drive Chromium or read every
// prefix of a file take a few seconds there. A hang is still caught: 30 s per test, and .ci/run
// stops the whole run after 40 minutes.
export default defineConfig({
  // The README's test examples (test/testing/readme) import the testing entry by its package
  // name; the Jest one gets Jest's expect with Vitest's test as "@jest/globals".
  resolve: {
    alias: {
      "stackwalk-emu/testing": fileURLToPath(new URL("./src/testing/index.ts", import.meta.url)),
      "@jest/globals": fileURLToPath(new URL("./test/support/jest-globals.ts", import.meta.url)),
    },
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
