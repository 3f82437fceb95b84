import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localServiceContext } from '../../src/service/local-context.ts';
import { startResearch } from '../../src/service/start-research.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { tallyPrompts } from '../support/model-calls.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'corpus');

const skip = postgresSkipReason();

describe.skipIf(skip !== null)(`many workers on PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let database: TestDatabase;
  let fake: FakeOpenAiServer;
  let docs: string;
  const workers: ChildProcess[] = [];

  function startWorker(name: string, env: NodeJS.ProcessEnv, leaseTtlSeconds: number): ChildProcess {
    const child = spawn(
      process.execPath,
      [
        join(root, 'bin', 'quarry'),
        'worker',
        '--id',
        name,
        '--concurrency',
        '3',
        '--lease-ttl',
        String(leaseTtlSeconds),
        '--grace',
        '5',
      ],
      { env, stdio: 'ignore' },
    );
    workers.push(child);
    return child;
  }

  async function createSessions(env: Record<string, string>, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      // Distinct questions make distinct prompts, so the fake's log tells each session's calls apart.
      const { session } = await startResearch(localServiceContext(database.store, testConfig(env)), {
        question: `How does tidal power work? (case ${index})`,
        docs: [docs],
        settings: { model: 'openai-compatible:fake', maxIterations: 1, queriesPerIteration: 2 },
      });
      ids.push(session.id);
    }
    return ids;
  }

  /**
   * Every prompt of a completed model step reached the model at most as often as steps sending it were
   * begun, and exactly once per step where each was begun once.
   */
  async function expectNoCompletedCallRepeated(ids: string[]): Promise<void> {
    for (const id of ids) {
      const steps = await database.store.listSteps(id, { includePrompts: true });
      for (const tally of tallyPrompts(steps, fake.calls)) {
        if (tally.completed === 0) continue;
        // A call that crashed with its worker was never recorded; only such calls may be sent again.
        expect(tally.sent, `${id} ${tally.keys.join(', ')}`).toBeLessThanOrEqual(tally.attempts);
        if (tally.completed === tally.steps && tally.attempts === tally.steps)
          expect(tally.sent, `${id} ${tally.keys.join(', ')}`).toBe(tally.steps);
      }
    }
  }

  beforeEach(async () => {
    database = await postgresHarness.create();
    fake = await new FakeOpenAiServer(schemaFakeModel(), { delayMs: 50 }).start();
    docs = mkdtempSync(join(tmpdir(), 'quarry-workers-'));
    cpSync(fixtures, docs, { recursive: true });
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) worker.kill('SIGKILL');
    await fake.stop();
    await database.destroy();
    rmSync(docs, { recursive: true, force: true });
  });

  it('completes every session when one of three workers is killed mid-run, repeating no completed call', {
    timeout: within(180_000),
  }, async () => {
    const env = {
      ...childEnv(),
      QUARRY_DB: database.location,
      QUARRY_LLM_BASE_URL: fake.baseUrl,
      QUARRY_LLM_API_KEY: 'k',
    };
    const ids = await createSessions(env, 20);
    const victim = startWorker('w1', env, 2);
    startWorker('w2', env, 2);
    startWorker('w3', env, 2);
    await eventually(
      async () =>
        (await database.store.listSessions({ status: ['running'] })).sessions.some(
          (session) => session.lease?.workerId === 'w1',
        ),
      30_000,
    );
    // Every worker waits on the model while the victim is chosen and killed: none finishes a session meanwhile.
    fake.holdAfter(0);
    await fake.waitUntilHeld();
    const held = (await database.store.listSessions({ status: ['running'], limit: 50 })).sessions
      .filter((session) => session.lease?.workerId === 'w1')
      .map((session) => session.id);
    victim.kill('SIGKILL');
    fake.release();
    await eventually(
      async () => (await database.store.listSessions({ status: ['completed'], limit: 50 })).sessions.length === 20,
      120_000,
    );
    await expectNoCompletedCallRepeated(ids);
    // The killed worker's sessions were finished by the others.
    for (const id of held) {
      const events = await database.store.readEvents(id);
      const workersSeen = events
        .filter((event) => event.type === 'run-start')
        .map((event) => (event.data as { workerId: string }).workerId);
      // (w1 may have died between its claim and its first event.)
      expect(workersSeen.at(-1)).not.toBe('w1');
    }
  });

  it('hands sessions over on SIGTERM at once, without waiting for lease expiry', {
    timeout: within(180_000),
  }, async () => {
    const env = {
      ...childEnv(),
      QUARRY_DB: database.location,
      QUARRY_LLM_BASE_URL: fake.baseUrl,
      QUARRY_LLM_API_KEY: 'k',
    };
    const ids = await createSessions(env, 6);
    // Leases of ten minutes: only a handoff lets another worker continue within the test's time.
    const leaving = startWorker('leaving', env, 600);
    await eventually(
      async () =>
        (await database.store.listSessions({ status: ['running'] })).sessions.some(
          (session) => session.lease?.workerId === 'leaving',
        ),
      30_000,
    );
    startWorker('staying', env, 600);
    const exited = new Promise((resolve) => leaving.on('exit', resolve));
    leaving.kill('SIGTERM');
    await exited;
    await eventually(
      async () =>
        (await database.store.listSessions({ status: ['completed'], limit: 50 })).sessions.length === ids.length,
      60_000,
    ).catch(async (error: Error) => {
      const state = (await database.store.listSessions({ limit: 50 })).sessions.map(
        (session) =>
          `${session.id.slice(0, 6)} ${session.storedStatus}/${session.status} ${session.lease?.workerId ?? '-'} ${JSON.stringify(session.error)}`,
      );
      throw new Error(`${error.message}\n${state.join('\n')}`);
    });
    await expectNoCompletedCallRepeated(ids);
  });
});
