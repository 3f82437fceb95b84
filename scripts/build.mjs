// Builds what the package ships: dist/cli (the quarry command and the indexer's worker thread),
// dist/langgraph (`quarry/langgraph`) and dist/types (its type declarations). Run by `npm ci`
// (prepare), `npm test` and `npm pack`; the tests run it again with `--no-types` (vitest's global
// setup), so the command they spawn is always built from the sources they test.
//
// Each entry is an ES module bundle of Quarry's own code, split where the code imports a part of
// itself dynamically (the database drivers, the server, each command's services). The library
// (`quarry/langgraph`) keeps every package external: an application brings its own. The command
// carries zod and the packages that take zod schemas from Quarry's code (Hono's OpenAPI routes, the
// AI SDK, the MCP SDK), with what they import that Quarry does not: loaded as one bundle, zod starts
// in half the time its hundred files take, and they must share one copy of it (a schema made by one
// copy has no `.openapi()` that another copy's plug-in added). It also carries commander and the
// OpenTelemetry API, which every command loads; the API's state lives in a process-wide registry
// that every copy of its version shares, so the SDK, loaded from node_modules, meets this copy
// there. pg, which a command on PostgreSQL loads, goes with them: the command's code alone uses it.
// Every other dependency is external, one copy shared by everything that imports it. The check at
// the end fails the build when it imports a package that an install would not have.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const installed = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies ?? {})]);

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: false,
  logLevel: 'warning',
  metafile: true,
};

/** The dependencies the command carries in its bundle (see the top of this file). */
const bundledInCommand = new Set([
  'commander',
  '@opentelemetry/api',
  'zod',
  '@hono/zod-openapi',
  'ai',
  '@ai-sdk/anthropic',
  '@ai-sdk/openai',
  '@ai-sdk/openai-compatible',
  '@modelcontextprotocol/sdk',
  'pg',
]);

/** Optional packages a bundled one asks for only when told to: pg's native bindings (`pg.native`). */
const optionalAbsent = new Set(['pg-native']);

/**
 * Quarry's own dependencies are bundled when `bundled` names them and external otherwise (one copy,
 * shared); a package that is none of them is reached only through a bundled one, and goes with it.
 */
const bundling = (bundled) => ({
  name: 'bundle-only',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || builtinModules.includes(args.path)) return { external: true };
      const name = packageOf(args.path);
      if (optionalAbsent.has(name)) return { path: args.path, external: true };
      return installed.has(name) && !bundled.has(name) ? { path: args.path, external: true } : undefined;
    });
  },
});

/**
 * pg asks whether it runs on Cloudflare Workers when it is loaded: without a global `navigator`
 * (Node 20 has none) it constructs a `Response`, which loads Node's fetch implementation, about
 * 25 ms of every PostgreSQL command's start (`quarry ls` 3.10× a bare node against 2.73× on SQLite,
 * `bench/cli-start.ts`). The command runs on Node only, so its bundled pg is told so; the build
 * fails if pg's check is no longer where this expects it.
 */
const pgOnNode = {
  name: 'pg-on-node',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const check = 'if (isCloudflareRuntime()) {';
      if (!text.includes(check))
        throw new Error(`${args.path} no longer has "${check}": see pgOnNode in scripts/build.mjs`);
      return { contents: text.replace(check, 'if (false) {'), loader: 'js' };
    });
  },
};

/** The package a bare import names (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Every package the build imports, statically or with import(), is a dependency or a peer and
 * resolves from the package root: a missing one would fail only when a user reaches that code.
 */
function checkImports(metafile) {
  const require = createRequire(`${process.cwd()}/package.json`);
  const problems = [];
  for (const [output, { imports }] of Object.entries(metafile.outputs)) {
    for (const { path, external } of imports) {
      if (!external || path.startsWith('node:') || builtinModules.includes(path)) continue;
      const name = packageOf(path);
      if (optionalAbsent.has(name)) continue;
      if (!installed.has(name)) problems.push(`${output} imports ${path}, which is not a dependency`);
      else if (!manifest.peerDependencies?.[name]) {
        try {
          require.resolve(path);
        } catch {
          // ES-only packages have no require condition; their package.json still resolves.
          try {
            require.resolve(`${name}/package.json`);
          } catch {
            problems.push(`${output} imports ${path}, which does not resolve`);
          }
        }
      }
    }
  }
  if (problems.length > 0) throw new Error(`The build imports what an install would not have:\n${problems.join('\n')}`);
}

/**
 * Declarations keep the sources' `./file.ts` imports (tsc rewrites them only in JavaScript); an
 * application's compiler looks for `./file.js` beside the `.d.ts`.
 */
function rewriteDeclarationImports(folder) {
  for (const entry of readdirSync(folder, { recursive: true })) {
    if (!entry.endsWith('.d.ts')) continue;
    const file = join(folder, entry);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(/((?:from |import\()\s*'\.{1,2}\/[^']*)\.ts'/g, "$1.js'"));
  }
}

const started = performance.now();
for (const folder of ['dist/cli', 'dist/langgraph']) rmSync(folder, { recursive: true, force: true });
const results = await Promise.all([
  build({
    ...common,
    packages: undefined,
    plugins: [bundling(bundledInCommand), pgOnNode],
    // Bundled CommonJS (commander, ajv) requires Node's built-ins: an ES module has no require of its own.
    banner: {
      js: "import { createRequire as quarryCreateRequire } from 'node:module'; const require = quarryCreateRequire(import.meta.url);",
    },
    entryPoints: {
      main: 'src/cli/main.ts',
      // Started as worker threads by the indexer's extract pool, which finds it beside itself.
      'extract-worker': 'src/providers/search/local-corpus/extract-worker.ts',
    },
    outdir: 'dist/cli',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
  }),
  build({ ...common, entryPoints: { index: 'src/langgraph/index.ts' }, outdir: 'dist/langgraph' }),
]);
for (const { metafile } of results) checkImports(metafile);
if (!process.argv.includes('--no-types')) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.types.json'], {
    stdio: 'inherit',
  });
  rewriteDeclarationImports('dist/types');
}
console.error(`Built dist/ in ${Math.round(performance.now() - started)} ms`);
