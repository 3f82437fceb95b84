#!/usr/bin/env node
// The quarry command. It runs the compiled CLI in dist/cli (built by `npm ci`, `npm test` and
// `npm pack`); in a checkout whose TypeScript sources changed since that build, it runs the
// sources through tsx instead, so a developer never runs stale code.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'BUILT');
const sources = join(root, 'src');

/** The newest modification time of any file under `folder`, in ms. */
function newest(folder) {
  let latest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
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
