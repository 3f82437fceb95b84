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
    const shared = new Set<string>();
    for (const path of readdirSync(web, { recursive: true }) as string[]) {
      if (!/\.tsx?$/.test(path)) continue;
      const file = join(web, path);
      for (const imported of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        const target = resolve(dirname(file), imported.fileName);
        if (imported.fileName.startsWith('.') && target.startsWith(src)) shared.add(relative(src, target));
      }
    }
    expect([...shared].sort()).toEqual([
      'research/clarify.ts',
      'research/mark-claims.ts',
      'research/research-types.ts',
      'research/step-keys.ts',
      'server/wire.ts',
      'shared/events.ts',
      'shared/streamed-text.ts',
    ]);
  });
});
