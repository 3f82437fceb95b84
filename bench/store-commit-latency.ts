/**
 * Step commit latency: begin + complete of one journaled step, against the limits measured beside it
 * on the same database, timed in turn with each step: one single-row INSERT on its own (one round
 * trip, autocommit) and the same INSERT inside BEGIN/COMMIT. Begin and complete are each one script
 * of the journal's statements (sql/journal-writes.ts), the same on both databases: one round trip
 * on PostgreSQL, a transaction in-process on SQLite. Each step is timed bare and as the engine
 * writes it, with its `step-start` and `step-end` events. Medians and p99.
 * Run alone: `node --import tsx bench/store-commit-latency.ts`.
 */
type StoreOptions = Omit<OpenStoreOptions, 'db'>;

import { join } from 'node:path';
import { type OpenStoreOptions, openDriver, openStore } from '../src/store/open-store.ts';
import {
  formatMs,
  inPostgresSchema,
  median,
  percentile,
  pgBenchUrl,
  printTable,
  tempFolder,
  timeMs,
} from './bench-lib.ts';

const STEPS = 500;

interface Latencies {
  steps: number[];
  /** The same steps with the events the engine writes with them. */
  withEvents: number[];
  alone: number[];
  inTransaction: number[];
}

/**
 * Each step is timed beside its limits, in turn (a step, one INSERT, one INSERT in a transaction),
 * so a noisy moment on the machine weighs on all three alike.
 */
async function latencies(location: string, options: StoreOptions): Promise<Latencies> {
  const store = await openStore({ db: location, ...options });
  const driver = await openDriver(location, options);
  try {
    const session = await store.createSession({
      ownerId: 'bench',
      title: 'Latency',
      question: 'q',
      workflow: { name: 'bench', version: 1 },
      run: { kind: 'initial' },
    });
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'bench', ttlMs: 600_000 });
    const runId = session.currentRunId!;
    await driver.query('CREATE TABLE IF NOT EXISTS bench_bare (id TEXT PRIMARY KEY, payload TEXT NOT NULL)');
    const payload = (step: number) => JSON.stringify({ results: [`https://example.org/${step}`] });
    const result: Latencies = { steps: [], withEvents: [], alone: [], inTransaction: [] };
    for (let step = 0; step < STEPS; step++) {
      const key = `evented-${step}`;
      result.withEvents.push(
        await timeMs(async () => {
          await store.beginStep(lease, {
            runId,
            key,
            phase: 'search',
            kind: 'task',
            input: { query: `query ${step}` },
            events: [{ type: 'step-start', data: { key, phase: 'search', kind: 'task', attempt: 1 } }],
          });
          await store.completeStep(lease, {
            runId,
            key,
            output: { results: [`https://example.org/${step}`], count: 1 },
            events: [
              {
                type: 'step-end',
                data: { key, phase: 'search', kind: 'task', status: 'completed', durationMs: 1, usage: null },
              },
            ],
          });
        }),
      );
      result.steps.push(
        await timeMs(async () => {
          await store.beginStep(lease, {
            runId,
            key: `step-${step}`,
            phase: 'search',
            kind: 'task',
            input: { query: `query ${step}` },
          });
          await store.completeStep(lease, {
            runId,
            key: `step-${step}`,
            output: { results: [`https://example.org/${step}`], count: 1 },
          });
        }),
      );
      result.alone.push(
        await timeMs(() =>
          driver.query('INSERT INTO bench_bare (id, payload) VALUES (?, ?)', [`a-${step}`, payload(step)]),
        ),
      );
      result.inTransaction.push(
        await timeMs(() =>
          driver.transaction((tx) =>
            tx.query('INSERT INTO bench_bare (id, payload) VALUES (?, ?)', [`t-${step}`, payload(step)]),
          ),
        ),
      );
    }
    return result;
  } finally {
    await driver.close();
    await store.close();
  }
}

async function measure(label: string, location: string, options: StoreOptions, rows: string[][]): Promise<void> {
  const { steps, withEvents, alone, inTransaction } = await latencies(location, options);
  rows.push([
    label,
    formatMs(median(steps)),
    formatMs(percentile(steps, 99)),
    formatMs(median(withEvents)),
    formatMs(median(alone)),
    formatMs(percentile(alone, 99)),
    formatMs(median(inTransaction)),
    `${(median(steps) / median(alone)).toFixed(1)}×`,
    `${(median(withEvents) / median(alone)).toFixed(1)}×`,
  ]);
}

export async function run(): Promise<void> {
  const rows: string[][] = [];
  for (const synchronous of ['NORMAL', 'FULL'] as const) {
    const folder = tempFolder('latency');
    try {
      await measure(`SQLite synchronous=${synchronous}`, join(folder.path, 'quarry.db'), { synchronous }, rows);
    } finally {
      folder.remove();
    }
  }
  await inPostgresSchema(
    (schema) => measure('PostgreSQL', pgBenchUrl, { schema }, rows),
    (reason) => rows.push(['PostgreSQL', reason, '-', '-', '-', '-', '-', '-', '-']),
  );
  printTable(
    `Step commit latency, begin + complete (${STEPS} steps, ~60-byte payloads) against one single-row INSERT on the same database, timed in turn`,
    [
      'store',
      'step median',
      'step p99',
      'step with its events, median',
      'one INSERT median',
      'one INSERT p99',
      'INSERT in BEGIN/COMMIT median',
      'step / one INSERT',
      'with events / one INSERT',
    ],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
