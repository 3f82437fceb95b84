import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(root, 'dist', 'cli');

/** dist/cli as scripts/build-cli.mjs leaves it (npm test builds it before the tests run). */
describe('the compiled CLI', () => {
  const files = readdirSync(dist).filter((name) => name.endsWith('.cjs'));

  it('is CommonJS files, strict as the ES modules they were, that load no ES module', () => {
    expect(files).toContain('main.cjs');
    expect(files).toContain('extract-worker.cjs');
    for (const name of files) {
      const code = readFileSync(join(dist, name), 'utf8');
      expect(code.startsWith("'use strict';"), name).toBe(true);
      expect(code, name).not.toMatch(/^\s*(import|export)\s[\w{*]/m);
      expect(code, name).not.toMatch(/\bimport\s*\(\s*["'`]/);
    }
  });

  it('records a build id that changes with its files, which keys their compile cache', () => {
    const { id } = JSON.parse(readFileSync(join(dist, 'BUILT'), 'utf8')) as { id: string };
    const hash = createHash('sha256');
    for (const name of [...files].sort()) hash.update(name).update(readFileSync(join(dist, name)));
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(id).toBe(hash.digest('hex').slice(0, 16));
  });
});
