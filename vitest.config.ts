import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { within } from './test/support/bounds.ts';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.{ts,tsx}'],
    globalSetup: ['test/support/build-once.ts'],
    // Each test file: a test that leaks environment or files fails (test/support/hermetic.ts).
    setupFiles: ['test/support/hermetic.ts'],
    // Bounds, never expectations: a test that needs more than this on a quiet machine is broken;
    // on a loaded one the bound scales (test/support/bounds.ts).
    testTimeout: within(30_000),
    hookTimeout: within(30_000),
    teardownTimeout: within(10_000),
    pool: 'forks',
    // Every core: test files run side by side (vitest's default leaves one core idle).
    maxWorkers: availableParallelism(),
  },
});
