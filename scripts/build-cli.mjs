// Compiles the command line into dist/cli/ (ES modules, one chunk per lazily loaded part), so the
// executable starts without compiling TypeScript. Run by `npm ci` (prepare), `npm test` and
// `npm pack`; bin/quarry.mjs uses the build while no source it was built from changed.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * Zod's namespace carries every language's error messages (two thirds of its 750 KB); Quarry's
 * messages are English, so only that locale is bundled.
 */
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(context) {
    const english = createRequire(import.meta.url).resolve('zod/v4/locales/en.js');
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

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const started = performance.now();
rmSync('dist/cli', { recursive: true, force: true });
const { metafile } = await build({
  metafile: true,
  entryPoints: {
    main: 'src/cli/main.ts',
    // Started as worker threads by the extract pool, which finds it beside itself.
    'extract-worker': 'src/providers/search/local-corpus/extract-worker.ts',
    // `quarry/langgraph`: the checkpoint saver, importing the application's own LangGraph packages.
    langgraph: 'src/langgraph/index.ts',
  },
  outdir: 'dist/cli',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  logLevel: 'warning',
  // The runtime dependencies (native modules, and packages that load files of their own at run
  // time) stay in node_modules; everything else is bundled, so they are all an install needs. pg is
  // plain JavaScript and bundled (a dev dependency): Node resolving and reading its 20-odd files one
  // by one cost every PostgreSQL command about 4 ms. Its optional native and Cloudflare bindings,
  // which it loads only when asked, stay outside.
  external: [
    ...Object.keys(manifest.dependencies),
    ...Object.keys(manifest.peerDependencies ?? {}),
    'pg-native',
    'pg-cloudflare',
  ],
  plugins: [englishOnlyZod, separateZodMini, lazyChildProcessInCommander],
  // Bundled CommonJS dependencies call require(); ES modules have none of their own.
  banner: {
    js: "import { createRequire as __quarryRequire } from 'node:module'; const require = __quarryRequire(import.meta.url);",
  },
});
// When it was built, and from which sources: bin/quarry.mjs runs the build only while none of them
// changed since (tests and files no command imports do not count).
// (zod-mini.ts is an input in its own namespace: `zod-mini:/absolute/path`.)
const inputs = Object.keys(metafile.inputs)
  .map((path) => (path.startsWith('zod-mini:') ? relative(process.cwd(), path.slice('zod-mini:'.length)) : path))
  .filter((path) => path.startsWith('src/'));
writeFileSync('dist/cli/BUILT', `${JSON.stringify({ builtAt: new Date().toISOString(), inputs })}\n`);
console.error(`Built dist/cli in ${Math.round(performance.now() - started)} ms`);
