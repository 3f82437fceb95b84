import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | null = null;

/**
 * The folder Quarry is installed in (where its package.json is): the same from the TypeScript
 * sources and from the compiled CLI in dist/cli, whose files sit at different depths.
 */
export function packageRoot(): string {
  if (root) return root;
  for (let folder = dirname(fileURLToPath(import.meta.url)); ; folder = dirname(folder)) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'quarry') {
      root = folder;
      return root;
    }
    if (dirname(folder) === folder) throw new Error('Quarry cannot find its own package.json.');
  }
}
