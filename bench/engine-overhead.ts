/**
 * Engine overhead per step: a workflow of N trivial `ctx.step` calls run by the Runner, against the
 * same N journal writes made directly on the store (`recordStep`), against a bare single-row insert.
 * Run alone: `node --import tsx bench/engine-overhead.ts`.
 */
type StoreOptions = Omit<OpenStoreOptions, 'db'>;

import { join } from 'node:path';
import { Runner } from '../src/engine/runner.ts';
import { type Workflow, WorkflowRegistry } from '../src/engine/workflow.ts';
import { type OpenStoreOptions, openDriver, openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import { formatMs, inPostgresSchema, median, pgBenchUrl, printTable, tempFolder, timeMs } from './bench-lib.ts';

const STEPS = 400;
const ROUNDS = 3;

const manySteps: Workflow<{ steps: number }, number> = {
  name: 'many-steps',
  version: 1,
  async run(ctx, input) {
    let total = 0;
    for (let index = 0; index < input.steps; index++)
      total += await ctx.step({ key: `step-${index}`, phase: 'work' }, () => index);
    return total;
  },
};

async function newSession(store: Store) {
  return store.createSession({
    ownerId: 'bench',
    title: 'overhead',
    question: 'q',
    workflow: { name: 'many-steps', version: 1 },
    run: { kind: 'initial', input: { steps: STEPS } },
  });
}

async function perStepEngine(store: Store): Promise<number> {
  const runner = new Runner({ store, workflows: new WorkflowRegistry([manySteps]), leaseTtlMs: 600_000 });
  const session = await newSession(store);
  return (await timeMs(() => runner.runSession(session.id))) / STEPS;
}

async function perStepStore(store: Store): Promise<number> {
  const session = await newSession(store);
  const lease = await store.claimSession({ sessionId: session.id, workerId: 'bench', ttlMs: 600_000 });
  return (
    (await timeMs(async () => {
      for (let index = 0; index < STEPS; index++)
        await store.recordStep(lease, {
          runId: session.currentRunId!,
          key: `step-${index}`,
          phase: 'work',
          kind: 'task',
          output: index,
        });
    })) / STEPS
  );
}

async function perInsertBare(location: string, options: StoreOptions): Promise<number> {
  const driver = await openDriver(location, options);
  try {
    await driver.query('CREATE TABLE IF NOT EXISTS bench_bare (id TEXT PRIMARY KEY, payload TEXT NOT NULL)');
    const prefix = Math.random().toString(36).slice(2);
    return (
      (await timeMs(async () => {
        for (let index = 0; index < STEPS; index++)
          await driver.transaction((tx) =>
            tx.query('INSERT INTO bench_bare (id, payload) VALUES (?, ?)', [`${prefix}-${index}`, String(index)]),
          );
      })) / STEPS
    );
  } finally {
    await driver.close();
  }
}

async function measure(label: string, location: string, options: StoreOptions, rows: string[][]): Promise<void> {
  const store = await openStore({ db: location, ...options });
  const engine: number[] = [];
  const direct: number[] = [];
  const bare: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      engine.push(await perStepEngine(store));
      direct.push(await perStepStore(store));
      bare.push(await perInsertBare(location, options));
    }
  } finally {
    await store.close();
  }
  rows.push([
    label,
    formatMs(median(engine)),
    formatMs(median(direct)),
    formatMs(median(bare)),
    `${(median(engine) / median(direct)).toFixed(2)}×`,
    `${(median(engine) / median(bare)).toFixed(1)}×`,
  ]);
}

export async function run(): Promise<void> {
  const rows: string[][] = [];
  const folder = tempFolder('engine');
  try {
    await measure('SQLite', join(folder.path, 'quarry.db'), {}, rows);
  } finally {
    folder.remove();
  }
  await inPostgresSchema(
    (schema) => measure('PostgreSQL', pgBenchUrl, { schema }, rows),
    (reason) => rows.push(['PostgreSQL', reason, '-', '-', '-', '-']),
  );
  printTable(
    `Engine overhead per step (${STEPS} trivial steps, median of ${ROUNDS} rounds)`,
    ['store', 'ctx.step via Runner', 'store.recordStep', 'bare insert', 'engine / store write', 'engine / bare insert'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
