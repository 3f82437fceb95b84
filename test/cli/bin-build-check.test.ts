import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * bin/quarry runs dist/cli while none of the sources it was built from changed, and the sources
 * through tsx otherwise. Here in a small checkout of its own: a "build" and "sources" whose runCli
 * says which one ran, and a BUILT file as scripts/build-cli.mjs writes it.
 */
describe('bin/quarry: the build or the sources', () => {
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
  const built = (inputs: string[]) => JSON.stringify({ builtAt: builtAt.toISOString(), id: 'test-build', inputs });
  const ran = () => {
    const result = spawnSync(process.execPath, [join(checkout, 'bin', 'quarry'), 'ls'], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: join(checkout, 'cache') },
    });
    expect(result.status, result.stderr).toBe(0);
    return result.stdout.trim();
  };

  beforeEach(() => {
    checkout = mkdtempSync(join(tmpdir(), 'quarry-bin-'));
    cpSync(join(root, 'bin'), join(checkout, 'bin'), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'));
    write('package.json', JSON.stringify({ type: 'module' }));
    write(
      'dist/cli/main.cjs',
      "exports.runCli = async (argv) => console.log('build', argv.slice(2).join(' '));",
      builtAt,
    );
    write(
      'src/cli/main.ts',
      "import { word } from './word.ts';\nexport async function runCli(argv: string[]) { console.log(word, argv.slice(2).join(' ')); }",
    );
    write('src/cli/word.ts', "export const word: string = 'sources';");
    write('src/cli/word.test.ts', '// a test: not built into the CLI');
    writeBuilt(built(['src/cli/main.ts', 'src/cli/word.ts']));
  });
  afterEach(() => {
    rmSync(checkout, { recursive: true, force: true });
  });

  it('runs the build while its sources are older, whatever else changed', () => {
    expect(ran()).toBe('build ls');
    write('src/cli/word.test.ts', '// edited', after);
    write('src/cli/new-file.ts', 'export {};', after);
    expect(ran()).toBe('build ls');
  });

  it('runs the sources once one the build was made from is edited or removed', () => {
    write('src/cli/word.ts', "export const word: string = 'sources';", after);
    expect(ran()).toBe('sources ls');
    write('src/cli/word.ts', "export const word: string = 'sources';");
    expect(ran()).toBe('build ls');
    rmSync(join(checkout, 'src', 'cli', 'word.ts'));
    write('src/cli/main.ts', "export async function runCli() { console.log('sources'); }");
    expect(ran()).toBe('sources');
  });

  it('runs the sources when the build record is unreadable, missing or has no id, and the build when there are no sources', () => {
    writeBuilt('2026-01-02T00:00:00.000Z\n');
    expect(ran()).toBe('sources ls');
    writeBuilt(JSON.stringify({ builtAt: builtAt.toISOString(), inputs: ['src/cli/main.ts'] }));
    expect(ran()).toBe('sources ls');
    rmSync(join(checkout, 'dist', 'cli', 'BUILT'));
    expect(ran()).toBe('sources ls');
    writeBuilt(built(['src/cli/main.ts']));
    rmSync(join(checkout, 'src'), { recursive: true });
    expect(ran()).toBe('build ls');
  });
});
