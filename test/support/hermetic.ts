import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach } from 'vitest';

/**
 * Every test file runs with this setup (vitest `setupFiles`): a test that changes the process's
 * environment, leaves files at the repository's root, or writes to the user's own Quarry home
 * (`~/.quarry`) fails, so no test can depend on what another left behind.
 */

// From the module's own path as a string: a browser-like environment's URL class is not Node's.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** What the build and the browser tests write at the root on purpose. */
const expectedAtRoot = new Set(['dist', 'test-artifacts', 'node_modules', '.scratch']);

const environment = { ...process.env };
const rootEntries = new Set(readdirSync(root));
// The tests' own home (vitest.config.ts), never the user's: what a user does meanwhile is no leak.
if (!/quarry-vitest-home-/.test(homedir()))
  throw new Error(`Tests run with a home of their own (vitest.config.ts), not ${homedir()}.`);
const userHome = join(homedir(), '.quarry');
const userHomeState = () => (existsSync(userHome) ? statSync(userHome).mtimeMs : null);
const userHomeBefore = userHomeState();

afterEach(() => {
  const changed = [...new Set([...Object.keys(environment), ...Object.keys(process.env)])].filter(
    (name) => environment[name] !== process.env[name],
  );
  if (changed.length === 0) return;
  // Put it back first, so the next test starts clean whatever this one did.
  for (const name of changed) {
    if (environment[name] === undefined) delete process.env[name];
    else process.env[name] = environment[name];
  }
  throw new Error(`The test changed the environment (${changed.join(', ')}): pass a child process its own instead.`);
});

afterAll(() => {
  const added = readdirSync(root).filter((entry) => !rootEntries.has(entry) && !expectedAtRoot.has(entry));
  if (added.length > 0)
    throw new Error(`The tests of this file left files at the repository's root: ${added.join(', ')}`);
  if (userHomeState() !== userHomeBefore)
    throw new Error(`The tests of this file wrote to ${userHome}: give Quarry a QUARRY_HOME of the test's own.`);
});
