// node:fs with globSync for Node 20 (see node20-fs-glob.mjs): `**/<name>` and `<name>` only.
import fs from 'node:fs';
import { basename, join } from 'node:path';

export * from 'node:fs';
export default fs;

export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const name = pattern.replace(/^\*\*\//, '');
  if (name.includes('*')) throw new Error(`globSync shim: unsupported pattern ${pattern}`);
  const all = pattern.startsWith('**/') ? fs.readdirSync(cwd, { recursive: true }).map(String) : [name];
  return all.filter((path) => basename(path) === name && fs.existsSync(join(cwd, path)));
}
