/**
 * Time to resume: open the store, load the journal, replay a workflow to its resume point, for
 * sessions with 200 and 10,000 completed steps, beside the limit: opening the store and reading and
 * parsing the same journal. Target: resume within 2× that read.
 * Run alone: `node --import tsx bench/engine-resume.ts`.
 */
type StoreOptions = Omit<OpenStoreOptions, 'db'>;

import { join } from 'node:path';
import { Runner } from '../src/engine/runner.ts';
import { type Workflow, WorkflowRegistry } from '../src/engine/workflow.ts';
import { type OpenStoreOptions, openStore } from '../src/store/open-store.ts';
import { formatMs, inPostgresSchema, median, pgBenchUrl, printTable, tempFolder } from './bench-lib.ts';

const REPEATS = 7;

/** Steps 0…n-1 are journaled; step n is the resume point, whose work reports the time and stops. */
function replayWorkflow(onResumePoint: () => void): Workflow<{ steps: number }, void> {
  return {
    name: 'replay',
    version: 1,
    async run(ctx, input) {
      for (let index = 0; index < input.steps; index++) {
        await ctx.step(
          { key: `iteration-${Math.floor(index / 10)}/step-${index % 10}`, phase: index % 2 ? 'read' : 'search' },
          () => ({ note: `note ${index}`, url: `https://example.org/${index}` }),
        );
      }
      await ctx.step({ key: 'resume-point' }, () => {
        onResumePoint();
        throw new Error('stop here');
      });
    },
  };
}

async function prepare(location: string, options: StoreOptions, steps: number): Promise<string> {
  const store = await openStore({ db: location, ...options });
  try {
    const session = await store.createSession({
      ownerId: 'bench',
      title: 'resume',
      question: 'q',
      workflow: { name: 'replay', version: 1 },
      run: { kind: 'initial', input: { steps: steps - 1 } },
    });
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'bench', ttlMs: 600_000 });
    for (let index = 0; index < steps - 1; index++) {
      await store.recordStep(lease, {
        runId: session.currentRunId!,
        key: `iteration-${Math.floor(index / 10)}/step-${index % 10}`,
        phase: index % 2 ? 'read' : 'search',
        kind: 'task',
        output: { note: `note ${index}`, url: `https://example.org/${index}` },
      });
    }
    await store.release(lease, { status: 'interrupted' });
    return session.id;
  } finally {
    await store.close();
  }
}

async function timeResume(location: string, options: StoreOptions, sessionId: string): Promise<number> {
  const start = performance.now();
  let reached = 0;
  const store = await openStore({ db: location, ...options });
  try {
    const runner = new Runner({
      store,
      workflows: new WorkflowRegistry([replayWorkflow(() => (reached = performance.now()))]),
      log: () => undefined,
    });
    await runner.runSession(sessionId);
    return reached - start;
  } finally {
    await store.close();
  }
}

/** The limit beside it: open the store and read and parse the same journal, nothing else. */
async function timeRead(location: string, options: StoreOptions, sessionId: string): Promise<number> {
  const start = performance.now();
  const store = await openStore({ db: location, ...options });
  try {
    const session = await store.getSession(sessionId);
    await store.loadJournal(session.currentRunId!);
    return performance.now() - start;
  } finally {
    await store.close();
  }
}

async function measure(label: string, location: string, options: StoreOptions, rows: string[][]): Promise<void> {
  for (const steps of [200, 10_000]) {
    const sessionId = await prepare(location, options, steps);
    const times: number[] = [];
    const reads: number[] = [];
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      reads.push(await timeRead(location, options, sessionId));
      times.push(await timeResume(location, options, sessionId));
    }
    rows.push([
      label,
      steps.toLocaleString('en'),
      formatMs(median(times)),
      formatMs(Math.min(...times)),
      formatMs(median(reads)),
      `${(median(times) / median(reads)).toFixed(1)}×`,
    ]);
  }
}

export async function run(): Promise<void> {
  const rows: string[][] = [];
  const folder = tempFolder('resume');
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
    `Time to resume: open the store, claim, load the journal, replay to the resume point (median of ${REPEATS}), against opening the store and reading the same journal`,
    ['store', 'journaled steps', 'resume median', 'resume best', 'open + read median', 'resume / read'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
