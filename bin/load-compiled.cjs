'use strict';
/**
 * Loads the compiled command line (dist/cli, CommonJS files that require each other as
 * `./name.cjs`) with V8's compiled code kept on disk between commands: a command deserializes the
 * functions an earlier run compiled instead of parsing and compiling them again, and finds the
 * build's files by name instead of through Node's module resolution (which stats and resolves real
 * paths for every file). bench/cli-start: `quarry ls` 51 ms without the cache, 41 ms with it. Node
 * 22.1 and later have a compile cache of their own (`module.enableCompileCache`); Node 20 has none,
 * and none at all for ES modules, which is why the compiled CLI is CommonJS (scripts/build-cli.mjs).
 *
 * The cache lives in the user's cache folder, one folder per V8 version and build, written when the
 * first command that runs a file exits. It is keyed by the build's id (a hash of its files), so the
 * files of dist/cli are never edited by hand. Whatever goes wrong with it (no home folder, a
 * read-only disk, a file V8 rejects), the command runs as it would without it;
 * NODE_DISABLE_COMPILE_CACHE=1, Node's own switch, turns it off.
 */
const { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { basename, dirname, join } = require('node:path');
const { Script } = require('node:vm');

/** Builds kept per V8 version: enough for a few checkouts, while every rebuild leaves one behind. */
const KEPT_BUILDS = 4;
/** A request for another file of the build: `./name.cjs`, as esbuild writes them. */
const BUILD_FILE = /^\.\/[\w.-]+\.cjs$/;

/** Quarry's folder in the user's cache folder, or null when the environment names none. */
function cacheRoot(env) {
  const base = env.XDG_CACHE_HOME || env.LOCALAPPDATA || (env.HOME && join(env.HOME, '.cache'));
  return base ? join(base, 'quarry', 'compiled') : null;
}

/**
 * Writes each new cache file whole (a rename), so a command running beside this one never reads half
 * of one, and removes the oldest builds' caches beyond `KEPT_BUILDS`.
 */
function saveCache(folder, scripts) {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  for (const [file, script] of scripts) {
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
    renameSync(partial, file);
  }
  const builds = dirname(folder);
  const others = readdirSync(builds)
    .filter((name) => name !== basename(folder))
    .map((name) => ({ path: join(builds, name), time: statSync(join(builds, name)).mtimeMs }))
    .sort((a, b) => b.time - a.time);
  for (const old of others.slice(KEPT_BUILDS - 1)) rmSync(old.path, { recursive: true, force: true });
}

/**
 * Runs `entry` of the build in `folder` (the build `buildId` of bin/quarry's BUILT) and returns its
 * exports. The build's files load each other through this loader, with the cache; everything else
 * they require (Node's modules, node_modules) loads as usual, from the folder. Files V8 had no usable
 * cache for get one when the process exits.
 *
 * `onCompile` hears, for each file, whether V8 took its cached code (`cached`), had none (`compiled`)
 * or refused it (`rejected`, which a new one replaces).
 *
 * @param {{ folder: string, entry: string, buildId: string, env?: NodeJS.ProcessEnv,
 *   onCompile?: (file: string, outcome: 'cached' | 'compiled' | 'rejected') => void }} options
 * @returns {unknown}
 */
function loadCompiled({ folder, entry, buildId, env = process.env, onCompile }) {
  const root = env.NODE_DISABLE_COMPILE_CACHE === '1' ? null : cacheRoot(env);
  const cache = root && join(root, `${process.versions.v8}-${process.arch}`, buildId);
  /** Cache files to write at exit, and the scripts whose code goes into them. */
  const pending = new Map();
  /** The build's modules by file name, as Node's own require cache keeps them. */
  const modules = new Map();
  const requireOutside = Module.createRequire(join(folder, entry));

  function compile(filename) {
    const file = cache && join(cache, basename(filename));
    let cachedData;
    try {
      if (file) cachedData = readFileSync(file);
    } catch {
      // Not cached yet.
    }
    const script = new Script(Module.wrap(readFileSync(filename, 'utf8')), { filename, cachedData });
    // V8 says false only when it took the cache it was given.
    const outcome = cachedData === undefined ? 'compiled' : script.cachedDataRejected === false ? 'cached' : 'rejected';
    if (file && outcome !== 'cached') pending.set(file, script);
    onCompile?.(filename, outcome);
    return script.runInThisContext({ displayErrors: true });
  }

  function load(name) {
    const filename = join(folder, name);
    const known = modules.get(filename);
    if (known) return known.exports;
    const module = { id: filename, filename, exports: {}, loaded: false };
    modules.set(filename, module);
    try {
      compile(filename).call(module.exports, module.exports, requireInBuild, module, filename, folder);
    } catch (error) {
      modules.delete(filename);
      throw error;
    }
    module.loaded = true;
    return module.exports;
  }

  function requireInBuild(request) {
    return BUILD_FILE.test(request) ? load(request.slice(2)) : requireOutside(request);
  }
  // What else a module may ask of its require (no bundled code does today).
  requireInBuild.resolve = requireOutside.resolve;
  requireInBuild.cache = requireOutside.cache;

  if (cache) {
    process.once('exit', () => {
      if (pending.size === 0) return;
      try {
        saveCache(cache, pending);
      } catch {
        // A cache that cannot be written only means the next command compiles again.
      }
    });
  }
  return load(entry);
}

module.exports = { loadCompiled };
