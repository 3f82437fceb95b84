#!/usr/bin/env node
// The quarry command. It runs the compiled CLI in dist/cli (built by `npm ci`, `npm test` and
// `npm pack`); in a checkout where a TypeScript source that build was made from changed since, it
// runs the sources through tsx instead, so a developer never runs stale code.
import { existsSync, readFileSync, statSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

// On Node 22.1 and later, V8 keeps the CLI's compiled code on disk between commands (in the system's
// temporary folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off). Node 20 has no such cache.
module.enableCompileCache?.();

const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * Whether dist/cli is the build of the sources here. Its BUILT file lists the sources it was built
 * from (scripts/build-cli.mjs); an installed package has no sources, a checkout is checked file by
 * file (stat only: this runs before every command). A BUILT the bin cannot read counts as stale.
 */
function buildIsFresh() {
  const built = `${root}dist/cli/BUILT`;
  if (!existsSync(built)) return false;
  if (!existsSync(`${root}src`)) return true;
  try {
    const { inputs } = JSON.parse(readFileSync(built, 'utf8'));
    const builtAt = statSync(built).mtimeMs;
    return inputs.every((path) => (statSync(root + path, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) <= builtAt);
  } catch {
    return false;
  }
}

if (buildIsFresh()) {
  await import('../dist/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
