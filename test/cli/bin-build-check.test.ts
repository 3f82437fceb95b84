import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * bin/quarry.mjs runs dist/cli while none of the sources it was built from changed, and the sources
 * through tsx otherwise. Here in a small checkout of its own: a "build" and "sources" that say which
 * one ran, and a BUILT file as scripts/build-cli.mjs writes it.
 */
describe('bin/quarry.mjs: the build or the sources', () => {
  let checkout: string;
  const builtAt = new Date('2026-01-02T00:00:00Z');
  const before = new Date('2026-01-01T00:00:00Z');
  const after = new Date('2026-01-03T00:00:00Z');

  const write = (path: string, text: string, time = before) => {
    mkdirSync(join(checkout, path, '..'), { recursive: true });
    writeFileSync(join(checkout, path), text);
    utimesSync(join(checkout, path), time, time);
  };
  const writeBuilt = (text: string) => write('dist/cli/BUILT', text, builtAt);
  const ran = () => {
    const result = spawnSync(process.execPath, [join(checkout, 'bin', 'quarry.mjs')], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    return result.stdout.trim();
  };

  beforeEach(() => {
    checkout = mkdtempSync(join(tmpdir(), 'quarry-bin-'));
    cpSync(join(root, 'bin', 'quarry.mjs'), join(checkout, 'bin', 'quarry.mjs'));
    symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'));
    write('package.json', JSON.stringify({ type: 'module' }));
    write('dist/cli/main.js', "console.log('build');", builtAt);
    write('src/cli/main.ts', "import { word } from './word.ts';\nconsole.log(word);");
    write('src/cli/word.ts', "export const word: string = 'sources';");
    write('src/cli/word.test.ts', '// a test: not built into the CLI');
    writeBuilt(JSON.stringify({ builtAt: builtAt.toISOString(), inputs: ['src/cli/main.ts', 'src/cli/word.ts'] }));
  });
  afterEach(() => {
    rmSync(checkout, { recursive: true, force: true });
  });

  it('runs the build while its sources are older, whatever else changed', () => {
    expect(ran()).toBe('build');
    write('src/cli/word.test.ts', '// edited', after);
    write('src/cli/new-file.ts', 'export {};', after);
    expect(ran()).toBe('build');
  });

  it('runs the sources once one the build was made from is edited or removed', () => {
    write('src/cli/word.ts', "export const word: string = 'sources';", after);
    expect(ran()).toBe('sources');
    write('src/cli/word.ts', "export const word: string = 'sources';");
    expect(ran()).toBe('build');
    rmSync(join(checkout, 'src', 'cli', 'word.ts'));
    write('src/cli/main.ts', "console.log('sources');");
    expect(ran()).toBe('sources');
  });

  it('runs the sources when the build record is unreadable or missing, and the build when there are no sources', () => {
    writeBuilt('2026-01-02T00:00:00.000Z\n');
    expect(ran()).toBe('sources');
    rmSync(join(checkout, 'dist', 'cli', 'BUILT'));
    expect(ran()).toBe('sources');
    writeBuilt(JSON.stringify({ builtAt: builtAt.toISOString(), inputs: ['src/cli/main.ts'] }));
    rmSync(join(checkout, 'src'), { recursive: true });
    expect(ran()).toBe('build');
  });
});
