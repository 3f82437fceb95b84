// Compiles the command line into dist/cli/ and `quarry/langgraph` into dist/langgraph/, so neither
// compiles TypeScript at run time. Run by `npm ci` (prepare), `npm test` and `npm pack`; bin/quarry
// runs dist/cli while no source it was built from changed.
//
// dist/cli is CommonJS, one file per lazily loaded part: esbuild splits the program as ES modules
// (it splits no other format), then each file is turned into CommonJS. A CommonJS program starts
// without Node's ES module loader (about 4 ms of every command) and its compiled code can be kept
// between commands on Node 20, which has no compile cache for ES modules (bin/load-compiled.cjs).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, relative, resolve } from 'node:path';
import { build, transform } from 'esbuild';

const require = createRequire(import.meta.url);

/**
 * Zod's namespace carries every language's error messages (two thirds of its 750 KB); Quarry's
 * messages are English, so only that locale is bundled.
 */
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(context) {
    const english = require.resolve('zod/v4/locales/en.js');
    context.onResolve({ filter: /locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${'/'}zod${'/'}`) ? { path: 'zod-english-locale', namespace: 'quarry' } : undefined,
    );
    context.onLoad({ filter: /^zod-english-locale$/, namespace: 'quarry' }, () => ({
      contents: `export { default as en } from ${JSON.stringify(english)};`,
      loader: 'js',
      resolveDir: process.cwd(),
    }));
  },
};

/**
 * src/shared/zod-mini.ts is bundled on its own first (zod inlined, only the functions it exports), so
 * the command path that validates with it shares no chunk with zod's classic build: esbuild would put
 * all of zod's core, which the classic build uses whole, into that shared chunk.
 */
const separateZodMini = {
  name: 'separate-zod-mini',
  setup(context) {
    const source = resolve('src/shared/zod-mini.ts');
    context.onResolve({ filter: /zod-mini\.ts$/ }, (args) =>
      resolve(args.resolveDir, args.path) === source ? { path: source, namespace: 'zod-mini' } : undefined,
    );
    context.onLoad({ filter: /.*/, namespace: 'zod-mini' }, async () => {
      const bundled = await build({
        entryPoints: [source],
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        logLevel: 'warning',
      });
      return { contents: bundled.outputFiles[0].text, loader: 'js', resolveDir: dirname(source) };
    });
  },
};

/**
 * Commander requires node:child_process as it loads, for executable subcommands (a command run as a
 * program of its own), which Quarry does not have. That module brings Node's networking modules with
 * it, about 2.4 ms of every command's start; commander's copy loads it only if it ever spawns.
 */
const lazyChildProcessInCommander = {
  name: 'lazy-child-process-in-commander',
  setup(context) {
    context.onResolve({ filter: /^node:child_process$/ }, (args) =>
      args.importer.includes(`${'/'}commander${'/'}`) ? { path: 'lazy-child-process', namespace: 'quarry' } : undefined,
    );
    context.onLoad({ filter: /^lazy-child-process$/, namespace: 'quarry' }, () => ({
      contents: "module.exports = { spawn: (...args) => require('node:child_process').spawn(...args) };",
      loader: 'js',
    }));
  },
};

/**
 * pg, as it loads, looks for `navigator.userAgent` to detect Cloudflare Workers; Node 20 has no
 * `navigator`, so pg builds a fetch `Response` instead, which loads Node's whole fetch stack (undici,
 * 16 ms of every PostgreSQL command). Node 21 and later answer with a `navigator` of their own; the
 * bundled pg gets the same answer on Node 20 for the moment it loads.
 */
const pgWithoutFetchProbe = {
  name: 'pg-without-fetch-probe',
  setup(context) {
    const pg = require.resolve('pg');
    context.onResolve({ filter: /^pg$/ }, (args) =>
      args.importer.startsWith(resolve('src')) ? { path: 'pg-without-fetch-probe', namespace: 'quarry' } : undefined,
    );
    context.onLoad({ filter: /^pg-without-fetch-probe$/, namespace: 'quarry' }, () => ({
      contents: `
        const lent = !('navigator' in globalThis);
        if (lent) Object.defineProperty(globalThis, 'navigator', {
          value: { userAgent: 'Node.js/' + process.versions.node.split('.')[0] },
          configurable: true,
        });
        try { module.exports = require(${JSON.stringify(pg)}); }
        finally { if (lent) delete globalThis.navigator; }`,
      loader: 'js',
      resolveDir: dirname(pg),
    }));
  },
};

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const shared = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  logLevel: 'warning',
  metafile: true,
  // The runtime dependencies stay in node_modules; everything else is bundled, so they are all an
  // install needs. Bundled from a dependency: better-sqlite3's JavaScript (its compiled addon, which
  // the SQLite driver loads by path, stays where npm built it). Bundled from dev dependencies: pg,
  // whose 20-odd files Node resolved and read one by one (about 4 ms of every PostgreSQL command);
  // its optional native and Cloudflare bindings, loaded only when asked for, stay outside.
  external: [
    ...Object.keys(manifest.dependencies).filter((name) => name !== 'better-sqlite3'),
    ...Object.keys(manifest.peerDependencies ?? {}),
    '*.node',
    'pg-native',
    'pg-cloudflare',
  ],
  plugins: [englishOnlyZod, separateZodMini, lazyChildProcessInCommander, pgWithoutFetchProbe],
};

/** The command line: split as ES modules, named .cjs already, then each file turned into CommonJS. */
async function buildCli() {
  const { metafile, outputFiles } = await build({
    ...shared,
    entryPoints: {
      main: 'src/cli/main.ts',
      // Started as worker threads by the extract pool, which finds it beside itself.
      'extract-worker': 'src/providers/search/local-corpus/extract-worker.ts',
    },
    outdir: 'dist/cli',
    outExtension: { '.js': '.cjs' },
    splitting: true,
    format: 'esm',
    write: false,
  });
  const written = [];
  for (const file of outputFiles) {
    const { code } = await transform(file.text, {
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
      // import() of a part of the program becomes require(): no ES module loader at all.
      supported: { 'dynamic-import': false },
      // import.meta, for the few modules that ask: its URL made only when asked (0.25 ms).
      define: { 'import.meta': '__quarryImportMeta' },
      // Strict, as the ES modules it was (CommonJS is not, unless it says so).
      banner: `'use strict';${
        file.text.includes('import.meta')
          ? '\nconst __quarryImportMeta = { dirname: __dirname, filename: __filename, get url() { return require("node:url").pathToFileURL(__filename).href; } };'
          : ''
      }`,
    });
    writeFileSync(file.path, code);
    written.push({ name: basename(file.path), code });
  }
  // The build id: a hash of its files by name (test/cli/build-output.test.ts makes it again).
  const hash = createHash('sha256');
  for (const { name, code } of written.sort((a, b) => (a.name < b.name ? -1 : 1))) hash.update(name).update(code);
  return { metafile, id: hash.digest('hex').slice(0, 16) };
}

/** `quarry/langgraph` for applications, as ES modules importing their own LangGraph packages. */
async function buildLanggraph() {
  const { metafile } = await build({
    ...shared,
    entryPoints: { index: 'src/langgraph/index.ts' },
    outdir: 'dist/langgraph',
    splitting: true,
    format: 'esm',
    // Bundled CommonJS dependencies call require(); ES modules have none of their own.
    banner: {
      js: "import { createRequire as __quarryRequire } from 'node:module'; const require = __quarryRequire(import.meta.url);",
    },
  });
  return { metafile };
}

const started = performance.now();
for (const folder of ['dist/cli', 'dist/langgraph']) rmSync(folder, { recursive: true, force: true });
mkdirSync('dist/cli', { recursive: true });
const [cli, langgraph] = await Promise.all([buildCli(), buildLanggraph()]);
// Which sources the builds were made from (bin/quarry runs the build only while none of them changed
// since; tests and files no command imports do not count), and the command line's build id (its
// compiled code is cached under it).
// (zod-mini.ts is an input in its own namespace: `zod-mini:/absolute/path`.)
const inputs = [...new Set([...Object.keys(cli.metafile.inputs), ...Object.keys(langgraph.metafile.inputs)])]
  .map((path) => (path.startsWith('zod-mini:') ? relative(process.cwd(), path.slice('zod-mini:'.length)) : path))
  .filter((path) => path.startsWith('src/'))
  .sort();
writeFileSync('dist/cli/BUILT', `${JSON.stringify({ builtAt: new Date().toISOString(), id: cli.id, inputs })}\n`);
console.error(`Built dist/cli and dist/langgraph in ${Math.round(performance.now() - started)} ms`);
