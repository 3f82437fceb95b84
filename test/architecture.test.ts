import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));

/** Test files and the helpers only tests load (suites, harnesses, child processes). */
const testOnly = (path: string) => /\.test\.ts$|-suite\.ts$|-harness\.ts$|\/testing\/|\/conformance\//.test(path);

/** Every production module under src/ with the modules it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const files = (readdirSync(src, { recursive: true }) as string[])
    .filter((path) => path.endsWith('.ts') && !testOnly(`/${path}`))
    .map((path) => join(src, path));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    graph.set(
      file,
      importedFiles
        .map((imported) => imported.fileName)
        .filter((name) => name.startsWith('.'))
        .map((name) => resolve(dirname(file), name))
        .filter((path) => path.endsWith('.ts')),
    );
  }
  return graph;
}

/** The import cycles of a graph: its strongly connected components of more than one module. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component = stack.splice(stack.indexOf(node));
      if (component.length > 1) found.push(component.map((path) => relative(src, path)));
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/**
 * What loading `file` loads: the modules and packages it imports with a value (never `import type`,
 * never `import()`, which loads only when it runs), and theirs, transitively.
 */
function loadedAtStart(file: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (path: string) => {
    if (modules.has(path)) return;
    modules.add(path);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const specifier =
        ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly
          ? statement.moduleSpecifier
          : ts.isExportDeclaration(statement) && !statement.isTypeOnly
            ? statement.moduleSpecifier
            : undefined;
      if (!specifier || !ts.isStringLiteral(specifier)) continue;
      // `import { type A, type B } from …` loads nothing either.
      const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : undefined;
      const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
      if (
        clause &&
        !clause.name &&
        bindings &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((element) => element.isTypeOnly)
      )
        continue;
      const name = specifier.text;
      if (name.startsWith('.')) visit(resolve(dirname(path), name));
      else if (!name.startsWith('node:')) packages.add(name);
    }
  };
  visit(file);
  return { modules, packages };
}

describe('source architecture', () => {
  const graph = importGraph();

  it('has no import cycles between modules', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('runs one way: each layer imports its own and those below, never one above', () => {
    // Lowest first (docs/ARCHITECTURE.md, "Layers"); the interfaces share the top.
    const layers = [
      ['shared'],
      ['config'],
      ['store'],
      ['engine'],
      ['providers'],
      ['research'],
      ['service'],
      ['server', 'cli', 'langgraph'],
    ];
    const layerOf = (path: string) => {
      const top = relative(src, path).split('/')[0]!;
      return layers.findIndex((names) => names.includes(top));
    };
    const wrong: string[] = [];
    for (const [file, imports] of graph) {
      const layer = layerOf(file);
      if (layer < 0) wrong.push(`${relative(src, file)} is in no layer`);
      for (const imported of imports)
        if (layerOf(imported) > layer) wrong.push(`${relative(src, file)} → ${relative(src, imported)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('shares only pure contract modules with the web UI', () => {
    const web = fileURLToPath(new URL('../web/src/', import.meta.url));
    /** Each shared module, and whether the UI imports only its types (erased from the bundle). */
    const shared = new Map<string, boolean>();
    for (const path of readdirSync(web, { recursive: true }) as string[]) {
      if (!/\.tsx?$/.test(path)) continue;
      const file = join(web, path);
      const text = readFileSync(file, 'utf8');
      for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
        const target = resolve(dirname(file), imported.fileName);
        if (!imported.fileName.startsWith('.') || !target.startsWith(src)) continue;
        const typesOnly = new RegExp(
          `import type [^;]*from '${imported.fileName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`,
        );
        const module = relative(src, target);
        shared.set(module, (shared.get(module) ?? true) && typesOnly.test(text));
      }
    }
    // The server's app is shared for its route types only (`hc<QuarryApp>`): none of its code ships.
    expect([...shared].map(([module, types]) => (types ? `${module} (types)` : module)).sort()).toEqual([
      'research/clarify.ts',
      'research/mark-claims.ts',
      'research/research-types.ts (types)',
      'research/step-keys.ts',
      'server/app.ts (types)',
      'server/wire.ts (types)',
      'shared/events.ts',
      'shared/streamed-text.ts',
    ]);
  });

  it('starts the command with commander alone: what a command runs loads when it runs', () => {
    // `quarry --help` and a mistyped command read no configuration, open no store and load no
    // schemas; `quarry ls` loads the store and its service, never the research workflow or the
    // indexer (bench/cli-start.ts). A command reaches its work through import() in its action.
    const { modules, packages } = loadedAtStart(join(src, 'cli/main.ts'));
    expect([...packages].sort()).toEqual(['commander']);
    const outside = [...modules].map((path) => relative(src, path)).filter((path) => !path.startsWith('cli/'));
    expect(outside.sort()).toEqual([
      '../package.json',
      'config/version.ts',
      'shared/errors.ts',
      'shared/step-kinds.ts',
      'store/store-entities.ts',
    ]);
  });

  it('keeps production files within 400 lines, but for the named exceptions (none may grow past its mark)', () => {
    /**
     * Files over the bar, each with the most lines it may have and why it is one file: a new file over
     * 400 lines, or one of these past its mark, fails here; splitting one takes it off the list.
     */
    const exceptions: Record<string, { lines: number; why: string }> = {
      'src/engine/engine-suite.ts': { lines: 620, why: 'the engine conformance suite, run against both stores' },
      'src/engine/run-context.ts': {
        lines: 540,
        why: 'ctx.step/llm/waitForInput: the journaled run, one fenced lease',
      },
      'web/src/components/SessionPage.tsx': {
        lines: 520,
        why: 'the session page and its state; its parts are components already',
      },
      'src/store/postgres/postgres-driver.ts': {
        lines: 480,
        why: 'the PostgreSQL driver: pool, retries, LISTEN, outage mapping',
      },
      'src/server/wire.ts': { lines: 500, why: 'every wire schema the API and the web UI share' },
      'src/server/routes/session-routes.ts': { lines: 450, why: 'the session routes, declared with their OpenAPI' },
      'src/config/quarry-config.ts': { lines: 420, why: 'every setting: file schema, environment, defaults' },
      'src/store/conformance/record-cases.ts': { lines: 410, why: 'store conformance cases for records' },
    };
    const root = fileURLToPath(new URL('../', import.meta.url));
    const over: string[] = [];
    for (const folder of ['src', 'web/src'])
      for (const path of readdirSync(join(root, folder), { recursive: true }) as string[]) {
        if (!/\.tsx?$/.test(path) || /\.test\.tsx?$/.test(path)) continue;
        const name = `${folder}/${path}`;
        const lines = readFileSync(join(root, name), 'utf8').split('\n').length - 1;
        const allowed = exceptions[name]?.lines ?? 400;
        if (lines > allowed) over.push(`${name}: ${lines} lines (at most ${allowed})`);
      }
    expect(over).toEqual([]);
  });
});
