import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * bin/load-compiled.cjs, which runs the compiled CLI with V8's code cache: here on a small build of
 * three files that require each other, a Node module and a package, each run a process of its own.
 */
describe('bin/load-compiled.cjs', () => {
  let folder: string;
  let build: string;
  let cacheHome: string;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'quarry-load-compiled-'));
    build = join(folder, 'dist');
    cacheHome = join(folder, 'cache');
    mkdirSync(build);
    symlinkSync(join(root, 'node_modules'), join(folder, 'node_modules'));
    writeFileSync(
      join(build, 'main.cjs'),
      `const a = require('./chunk-a.cjs');
       const b = require('./chunk-b.cjs');
       exports.result = { a: a.value, b: b.value, loadsOfB: globalThis.loadsOfB, path: typeof require('node:path').join,
         fromNodeModules: typeof require('commander').Command, dirname: __dirname, self: module.filename,
         resolved: require.resolve('./chunk-a.cjs') };`,
    );
    writeFileSync(join(build, 'chunk-a.cjs'), "exports.value = 'a+' + require('./chunk-b.cjs').value;");
    writeFileSync(
      join(build, 'chunk-b.cjs'),
      "globalThis.loadsOfB = (globalThis.loadsOfB ?? 0) + 1; exports.value = 'b';",
    );
  });
  afterEach(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  /** Loads the build in a process of its own: what main.cjs exports, and what V8 did with each file. */
  const load = (buildId = 'build-1', env: NodeJS.ProcessEnv = {}) => {
    const script = `const { basename } = require('node:path');
      const { loadCompiled } = require(${JSON.stringify(join(root, 'bin', 'load-compiled.cjs'))});
      const outcomes = {};
      const onCompile = (file, outcome) => (outcomes[basename(file)] = outcome);
      const { result } = loadCompiled({ folder: ${JSON.stringify(build)}, entry: 'main.cjs', buildId: process.argv[1], onCompile });
      console.log(JSON.stringify({ result, outcomes }));`;
    const result = spawnSync(process.execPath, ['-e', script, buildId], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, XDG_CACHE_HOME: cacheHome, ...env },
    });
    expect(result.status, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as { result: unknown; outcomes: Record<string, string> };
  };
  const run = (buildId?: string, env?: NodeJS.ProcessEnv) => load(buildId, env).result;
  const all = (outcome: string) => ({ 'main.cjs': outcome, 'chunk-a.cjs': outcome, 'chunk-b.cjs': outcome });
  const expected = () => ({
    a: 'a+b',
    b: 'b',
    loadsOfB: 1,
    path: 'function',
    fromNodeModules: 'function',
    dirname: build,
    self: join(build, 'main.cjs'),
    resolved: join(build, 'chunk-a.cjs'),
  });
  const cacheOf = (buildId: string) =>
    join(cacheHome, 'quarry', 'compiled', `${process.versions.v8}-${process.arch}`, buildId);
  const stamp = (file: string) => {
    const { ino, mtimeMs } = statSync(file);
    return { ino, mtimeMs };
  };

  it('loads each file of the build once, through each other, with Node modules and packages beside them', () => {
    expect(run()).toEqual(expected());
  });

  it('keeps the compiled code of a build and uses it on the next run, in a folder only its user can read', () => {
    expect(load().outcomes).toEqual(all('compiled'));
    const cache = cacheOf('build-1');
    expect(readdirSync(cache).sort()).toEqual(['chunk-a.cjs', 'chunk-b.cjs', 'main.cjs']);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    expect(statSync(join(cache, 'main.cjs')).mode & 0o777).toBe(0o600);
    const before = readdirSync(cache).map((name) => stamp(join(cache, name)));
    expect(load()).toEqual({ result: expected(), outcomes: all('cached') });
    expect(readdirSync(cache).map((name) => stamp(join(cache, name)))).toEqual(before);
  });

  it('replaces a cache file V8 rejects (garbage, cut short) with one it accepts, and runs as without it', () => {
    run();
    const file = join(cacheOf('build-1'), 'chunk-b.cjs');
    const good = readFileSync(file);
    for (const bad of [Buffer.from('not a code cache at all'.repeat(10)), good.subarray(0, good.length >> 1)]) {
      writeFileSync(file, bad);
      expect(load()).toEqual({ result: expected(), outcomes: { ...all('cached'), 'chunk-b.cjs': 'rejected' } });
      expect(readFileSync(file).equals(bad)).toBe(false);
      expect(load().outcomes).toEqual(all('cached'));
    }
  });

  it('gives each build its own cache and keeps only the newest four', () => {
    for (const id of ['b1', 'b2', 'b3', 'b4', 'b5', 'b6']) run(id);
    const builds = readdirSync(join(cacheOf('b1'), '..')).sort();
    expect(builds).toHaveLength(4);
    expect(builds).toContain('b6');
    expect(builds).not.toContain('b1');
  });

  it('runs without a cache when NODE_DISABLE_COMPILE_CACHE=1, when none can be written, and with no home', () => {
    expect(load('build-1', { NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual({
      result: expected(),
      outcomes: all('compiled'),
    });
    expect(existsSync(join(cacheHome, 'quarry'))).toBe(false);
    writeFileSync(cacheHome, 'a file where the cache folder would be');
    expect(run()).toEqual(expected());
    expect(run('build-1', { XDG_CACHE_HOME: '', HOME: '' })).toEqual(expected());
  });

  it('fails the load with the error a module throws', () => {
    writeFileSync(join(build, 'chunk-b.cjs'), "throw new Error('broken chunk');");
    const script = `const { loadCompiled } = require(${JSON.stringify(join(root, 'bin', 'load-compiled.cjs'))});
      try { loadCompiled({ folder: ${JSON.stringify(build)}, entry: 'main.cjs', buildId: 'x' }); } catch (error) { console.log(error.message); }`;
    const result = spawnSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, XDG_CACHE_HOME: cacheHome },
    });
    expect(result.stdout.trim()).toBe('broken chunk');
  });
});
