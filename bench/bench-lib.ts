import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Deterministic pseudo-random numbers (mulberry32), so every run measures the same data. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words =
  'research source evidence claim analysis solar battery storage grid policy market cost energy efficiency panel wind turbine capacity demand supply forecast model data survey study result method sample error trend region country city household industry transport emission carbon climate'.split(
    ' ',
  );

/** About `bytes` of prose-like text made of random words: a fetched page or a note. */
export function pageText(random: () => number, bytes: number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < bytes) {
    const word = words[Math.floor(random() * words.length)]!;
    const number = random() < 0.1 ? ` ${Math.floor(random() * 100_000)}` : '';
    parts.push(word + number);
    length += word.length + number.length + 1;
  }
  return parts.join(' ').slice(0, bytes);
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
}

/** Milliseconds taken by `work`, measured with the high-resolution clock. */
export async function timeMs(work: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export function tempFolder(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `quarry-bench-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Bytes of every file in a folder (a SQLite database with its WAL and shared memory files). */
export function folderBytes(path: string): number {
  return readdirSync(path).reduce((total, name) => total + statSync(join(path, name)).size, 0);
}

export function formatMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
}

/** Prints a Markdown table (so results paste straight into bench/README.md). */
export function printTable(title: string, header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, index) => Math.max(...cells.map((row) => row[index]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, index) => cell.padEnd(widths[index]!)).join(' | ')} |`;
  console.log(`\n### ${title}\n`);
  console.log(line(cells[0]!));
  console.log(`| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`);
  for (const row of cells.slice(1)) console.log(line(row));
}

/**
 * A whole-number setting from the environment (`BENCH_RUNS=5`), or `fallback` when it is unset; any
 * other value stops the benchmark with its name, never a run measured with NaN.
 */
export function envInteger(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min)
    throw new Error(`${name} must be a whole number of at least ${min}, not "${raw}".`);
  return value;
}

export const pgBenchUrl =
  process.env.QUARRY_BENCH_PG_URL ?? process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Runs PostgreSQL measurements in a throwaway schema, dropped afterwards; when the server cannot be
 * reached, `onSkip` gets the reason so the table says so instead of the run failing.
 */
export async function inPostgresSchema(
  work: (schema: string) => Promise<void>,
  onSkip: (reason: string) => void,
): Promise<void> {
  const { openDriver } = await import('../src/store/open-store.ts');
  const schema = `quarry_bench_${Math.random().toString(36).slice(2, 8)}`;
  try {
    await work(schema);
  } catch (error) {
    onSkip(`skipped: ${(error as Error).message}`);
  } finally {
    const driver = await openDriver(pgBenchUrl, { schema }).catch(() => null);
    await driver?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await driver?.close();
  }
}
