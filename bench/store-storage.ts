/**
 * Storage stays linear: bytes on disk after N steps that each output ~10 KB of text, against the
 * payload bytes themselves. Run alone: `node --import tsx bench/store-storage.ts`.
 */
import { join } from 'node:path';
import { openStore } from '../src/store/open-store.ts';
import { PostgresDriver } from '../src/store/postgres/postgres-driver.ts';
import { SqliteDriver } from '../src/store/sqlite/sqlite-driver.ts';
import type { Store } from '../src/store/store.ts';
import { folderBytes, formatBytes, pageText, pgBenchUrl, printTable, seededRandom, tempFolder } from './bench-lib.ts';

export const STEP_OUTPUT_BYTES = 10 * 1024;

/** Records `steps` completed steps with ~10 KB outputs; returns the payload bytes written. */
export async function writeSteps(store: Store, steps: number, seed = 1): Promise<number> {
  const random = seededRandom(seed);
  const session = await store.createSession({
    ownerId: 'bench',
    title: 'Storage benchmark',
    question: 'How does storage grow?',
    workflow: { name: 'bench', version: 1 },
    run: { kind: 'initial' },
  });
  const lease = await store.claimSession({ sessionId: session.id, workerId: 'bench', ttlMs: 600_000 });
  let payload = 0;
  for (let step = 0; step < steps; step++) {
    const output = { page: pageText(random, STEP_OUTPUT_BYTES - 500), note: pageText(random, 400) };
    payload += JSON.stringify(output).length;
    await store.beginStep(lease, {
      runId: session.currentRunId!,
      key: `iteration-${step}/read`,
      phase: 'read',
      kind: 'task',
      input: { url: `https://example.org/${step}` },
    });
    await store.completeStep(lease, { runId: session.currentRunId!, key: `iteration-${step}/read`, output });
  }
  return payload;
}

async function sqliteBytes(steps: number): Promise<[number, number]> {
  const folder = tempFolder('storage');
  try {
    const path = join(folder.path, 'quarry.db');
    const store = await openStore({ db: path });
    const payload = await writeSteps(store, steps);
    await store.close();
    const driver = new SqliteDriver(path);
    await driver.query('PRAGMA wal_checkpoint(TRUNCATE)');
    await driver.close();
    return [folderBytes(folder.path), payload];
  } finally {
    folder.remove();
  }
}

async function postgresBytes(steps: number): Promise<[number, number] | null> {
  const schema = `quarry_bench_${Math.random().toString(36).slice(2, 8)}`;
  let store: Store;
  try {
    store = await openStore({ db: pgBenchUrl, schema });
  } catch {
    return null;
  }
  const payload = await writeSteps(store, steps);
  await store.close();
  const driver = new PostgresDriver(pgBenchUrl, { schema });
  try {
    await driver.query('VACUUM');
    const rows = await driver.query<{ bytes: number }>(
      "SELECT SUM(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind = 'r'",
      [schema],
    );
    return [Number(rows[0]!.bytes), payload];
  } finally {
    await driver.query(`DROP SCHEMA ${schema} CASCADE`);
    await driver.close();
  }
}

export async function run(): Promise<void> {
  const rows: (string | number)[][] = [];
  for (const steps of [50, 100, 200]) {
    const [bytes, payload] = await sqliteBytes(steps);
    rows.push(['SQLite', steps, formatBytes(payload), formatBytes(bytes), `${(bytes / payload).toFixed(2)}×`]);
  }
  for (const steps of [50, 100, 200]) {
    const measured = await postgresBytes(steps);
    if (measured)
      rows.push([
        'PostgreSQL',
        steps,
        formatBytes(measured[1]),
        formatBytes(measured[0]),
        `${(measured[0] / measured[1]).toFixed(2)}×`,
      ]);
  }
  printTable(
    'Storage after N steps of ~10 KB output (target: at most 1.5× the payload)',
    ['store', 'steps', 'payload', 'on disk', 'ratio'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
