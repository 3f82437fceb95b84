#!/usr/bin/env node
// The quarry command. It runs the compiled CLI in dist/cli (built by `npm ci`, `npm test` and
// `npm pack`); in a checkout whose TypeScript sources changed since that build, it runs the
// sources through tsx instead, so a developer never runs stale code.
import { existsSync, readdirSync, statSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

// On Node 22.1 and later, V8 keeps the CLI's compiled code on disk between commands (in the system's
// temporary folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off). Node 20 has no such cache.
module.enableCompileCache?.();

const built = new URL('../dist/cli/BUILT', import.meta.url);
const sources = fileURLToPath(new URL('../src', import.meta.url));

/**
 * The newest modification time of any file under `folder`, in ms. Runs before every command in a
 * checkout, so it joins paths itself: path.join, still cold in a fresh process, made it take twice as long.
 */
function newest(folder) {
  let latest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = `${folder}/${entry.name}`;
    const modified = entry.isDirectory() ? newest(path) : statSync(path).mtimeMs;
    if (modified > latest) latest = modified;
  }
  return latest;
}

const fresh = existsSync(built) && (!existsSync(sources) || newest(sources) <= statSync(built).mtimeMs);
if (fresh) {
  await import('../dist/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
