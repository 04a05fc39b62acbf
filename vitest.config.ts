import { defineConfig } from "vitest/config";

// CI runs the whole suite on two cores; tests that spawn the CLI, drive Chromium or read every
// prefix of a file take a few seconds there. A hang is still caught: 30 s per test, and .ci/run
// stops the whole run after 40 minutes.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
