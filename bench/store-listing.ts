/**
 * Listing: the first page of 50 sessions out of 1,000 and 100,000, on SQLite (and PostgreSQL).
 * Run alone: `node --import tsx bench/store-listing.ts`.
 */
import { join } from 'node:path';
import { openDriver, openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import { formatMs, median, percentile, pgBenchUrl, printTable, tempFolder, timeMs } from './bench-lib.ts';

const statuses = ['completed', 'completed', 'completed', 'failed', 'interrupted', 'waiting'];

/** Inserts `count` session rows directly (creating them one by one would only time the insert path). */
async function fillSessions(location: string, schema: string | undefined, count: number): Promise<void> {
  const driver = await openDriver(location, { schema });
  try {
    const batch = 1000;
    for (let start = 0; start < count; start += batch) {
      await driver.transaction(async (tx) => {
        for (let index = start; index < Math.min(count, start + batch); index++) {
          await tx.query(
            `INSERT INTO sessions (id, owner_id, title, question, status, settings, workflow_name, workflow_version, completed_steps, known_steps, progress_phase, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, '{}', 'research', 1, 40, 40, 'verify', ?, ?)`,
            [
              `session-${index.toString().padStart(7, '0')}`,
              index % 10 === 0 ? 'someone-else' : 'local',
              `Research question number ${index} about batteries`,
              `What do we know about topic ${index}? A longer question text that a user typed into the box.`,
              statuses[index % statuses.length],
              1_700_000_000_000 + index * 1000,
              1_700_000_000_000 + index * 1000,
            ],
          );
        }
      });
    }
    // Statistics, as autovacuum would have gathered on a real database by now.
    await driver.query('ANALYZE');
  } finally {
    await driver.close();
  }
}

async function timeListing(store: Store, options: Parameters<Store['listSessions']>[0], runs = 200): Promise<number[]> {
  for (let warm = 0; warm < 10; warm++) await store.listSessions(options);
  const times: number[] = [];
  for (let index = 0; index < runs; index++) times.push(await timeMs(() => store.listSessions(options)));
  return times;
}

async function measure(
  label: string,
  location: string,
  schema: string | undefined,
  count: number,
  rows: string[][],
): Promise<void> {
  const store = await openStore({ db: location, schema });
  try {
    await fillSessions(location, schema, count);
    const cases: [string, Parameters<Store['listSessions']>[0]][] = [
      ['first page', { limit: 50, ownerId: 'local' }],
      [
        'second page',
        {
          limit: 50,
          ownerId: 'local',
          cursor: (await store.listSessions({ limit: 50, ownerId: 'local' })).nextCursor!,
        },
      ],
      ['status = completed', { limit: 50, ownerId: 'local', status: ['completed'] }],
      ['text search', { limit: 50, ownerId: 'local', search: 'number 4242' }],
    ];
    for (const [name, options] of cases) {
      const times = await timeListing(store, options, name === 'text search' ? 20 : 200);
      rows.push([label, count.toLocaleString('en'), name, formatMs(median(times)), formatMs(percentile(times, 95))]);
    }
  } finally {
    await store.close();
  }
}

export async function run(): Promise<void> {
  const rows: string[][] = [];
  for (const count of [1_000, 100_000]) {
    const folder = tempFolder('listing');
    try {
      await measure('SQLite', join(folder.path, 'quarry.db'), undefined, count, rows);
    } finally {
      folder.remove();
    }
  }
  for (const count of [1_000, 100_000]) {
    const schema = `quarry_bench_${Math.random().toString(36).slice(2, 8)}`;
    try {
      await measure('PostgreSQL', pgBenchUrl, schema, count, rows);
    } catch (error) {
      rows.push(['PostgreSQL', count.toLocaleString('en'), `skipped: ${(error as Error).message}`, '-', '-']);
    } finally {
      const driver = await openDriver(pgBenchUrl, { schema }).catch(() => null);
      await driver?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await driver?.close();
    }
  }
  printTable(
    'Listing sessions, pages of 50 (target: first page under 10 ms with 100,000 on SQLite)',
    ['store', 'sessions', 'query', 'median', 'p95'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
