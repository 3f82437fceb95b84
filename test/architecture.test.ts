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

  it('runs one way: interfaces → service → research → engine → store, never back', () => {
    // What each folder may not import from (interfaces: cli, server; the LangGraph entry is an interface too).
    const above: Record<string, string[]> = {
      store: ['engine', 'research', 'providers', 'service', 'server', 'cli', 'langgraph'],
      engine: ['research', 'providers', 'service', 'server', 'cli', 'langgraph'],
      providers: ['engine', 'research', 'service', 'server', 'cli', 'langgraph'],
      research: ['service', 'server', 'cli', 'langgraph'],
      service: ['server', 'cli', 'langgraph'],
      server: ['cli'],
    };
    const wrong: string[] = [];
    for (const [file, imports] of graph) {
      const layer = relative(src, file).split('/')[0]!;
      for (const imported of imports) {
        const target = relative(src, imported).split('/')[0]!;
        if (above[layer]?.includes(target)) wrong.push(`${relative(src, file)} → ${relative(src, imported)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
