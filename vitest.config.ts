import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// CI runs the whole suite on two cores, maybe beside other work; tests that spawn the CLI, drive
// Chromium or read every prefix of a file take a few seconds on a quiet machine and ten times as
// long on a loaded one. No test is judged by its time: the limits below only catch a hang, far
// above any honest run (5 minutes per test or hook; the fuzz run and the package's install set
// their own), and .ci/run stops the whole run after 80 minutes.
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
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
