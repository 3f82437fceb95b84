import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { within } from './test/support/bounds.ts';

/**
 * The tests' own home: the leak check (test/support/hermetic.ts) watches its `.quarry`, so a test
 * that forgets QUARRY_HOME still fails, while someone using Quarry on this machine during a run
 * (their `~/.quarry`) no longer fails the test running at that moment. npm keeps its usual cache.
 */
const testHome = mkdtempSync(join(tmpdir(), 'quarry-vitest-home-'));
process.once('exit', () => rmSync(testHome, { recursive: true, force: true }));

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.{ts,tsx}'],
    globalSetup: ['test/support/build-once.ts'],
    // Each test file: a test that leaks environment or files fails (test/support/hermetic.ts).
    setupFiles: ['test/support/hermetic.ts'],
    env: { HOME: testHome, npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm') },
    // Bounds, never expectations: a test that needs more than this on a quiet machine is broken;
    // on a loaded one the bound scales (test/support/bounds.ts).
    testTimeout: within(30_000),
    hookTimeout: within(30_000),
    teardownTimeout: within(10_000),
    pool: 'forks',
    // A worker keeps the modules it loaded from one test file to the next. Loading them again for each
    // file took 94–102 s (vitest's sum over files) of a test:local of 174–199 s on 2 cores; kept, 22–34 s
    // of 112–152 s (2026-12-02). The setup file above still runs for each file, and a test that leaves
    // state in a module is as wrong as one that leaves it in the environment: a server holds many
    // sessions in one process.
    isolate: false,
    // Every core: test files run side by side (vitest's default leaves one core idle).
    maxWorkers: availableParallelism(),
  },
});
