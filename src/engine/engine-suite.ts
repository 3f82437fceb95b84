import { spawn } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { within } from '../../test/support/bounds.ts';
import { childEnv } from '../../test/support/child-env.ts';
import { testConfig } from '../../test/support/test-config.ts';
import { localServiceContext } from '../service/local-context.ts';
import { answerInput, forkSession, resumeSession, stopSession } from '../service/session-control.ts';
import { ManualClock } from '../shared/clock.ts';
import { QuarryError } from '../shared/errors.ts';
import { eventually, type StoreHarness, sleep, type TestDatabase } from '../store/conformance/harness.ts';
import type { Store } from '../store/store.ts';
import { Runner, type RunnerOptions } from './runner.ts';
import { type DurabilityOutput, durabilityWorkflow, probedKeys } from './testing/durability-workflow.ts';
import { Probe, readProbeLog } from './testing/probe.ts';
import { type Workflow, WorkflowRegistry } from './workflow.ts';

const TOPIC = 'tidal power';
const REFERENCE_REPORT = `Report on ${TOPIC}: 3 results about ${TOPIC}. Reviewer said: looks good.`;
const projectRoot = new URL('../../', import.meta.url).pathname;

function newDurabilitySession(store: Store, version = 1) {
  return store.createSession({
    ownerId: 'local',
    title: 'Durability',
    question: `Tell me about ${TOPIC}`,
    workflow: { name: 'durability-test', version },
    run: { kind: 'initial', input: { topic: TOPIC } },
  });
}

/** A session of a test's own one-step workflow, queued for its first run. */
function newSession(store: Store, workflow: string) {
  return store.createSession({
    ownerId: 'local',
    title: 't',
    question: 'q',
    workflow: { name: workflow, version: 1 },
    run: { kind: 'initial' },
  });
}

function makeRunner(
  store: Store,
  probe: Probe,
  options: Partial<RunnerOptions> = {},
  workflows?: WorkflowRegistry,
): Runner {
  return new Runner({
    store,
    workflows: workflows ?? new WorkflowRegistry([durabilityWorkflow(probe)]),
    leaseTtlMs: 5_000,
    log: () => undefined,
    ...options,
  });
}

/** Runs until completed, answering the review the first time it is asked. */
/** A local service context running the durability workflow (of a given version) with this probe. */
function durabilityContext(store: Store, probe: Probe, runner?: Runner, version?: number) {
  return localServiceContext(store, testConfig(), {
    runner,
    workflows: new WorkflowRegistry([durabilityWorkflow(probe, version)]),
  });
}

async function runToCompletion(runner: Runner, store: Store, sessionId: string) {
  for (let activation = 0; activation < 5; activation++) {
    const result = await runner.runSession(sessionId);
    if (result.status === 'completed') return result;
    expect(result.status).toBe('waiting');
    await store.deliverInput({
      sessionId,
      runId: (await store.getSession(sessionId)).currentRunId!,
      requestKey: 'review',
      value: 'looks good',
    });
  }
  throw new Error('did not complete');
}

/** Spawns a worker process for the session; resolves with the child and a promise of its exit. */
const WORKER_LEASE_TTL_MS = within(600);

function spawnWorker(database: TestDatabase, sessionId: string, logFile: string, holdAt?: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/engine/testing/durability-child.ts'], {
    cwd: projectRoot,
    env: {
      ...childEnv(),
      QUARRY_DB: database.location,
      SESSION_ID: sessionId,
      PROBE_LOG: logFile,
      // Short, so a killed worker's lease is soon over, but a lease a loaded machine can keep: seven
      // workers starting at once on two cores may not heartbeat for a second or more.
      LEASE_TTL_MS: String(WORKER_LEASE_TTL_MS),
      ...(holdAt === undefined ? {} : { HOLD_AT: String(holdAt) }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exited };
}

export function describeEngine(harness: StoreHarness, skipReason: string | null): void {
  const title = skipReason ? `engine on ${harness.name} (skipped: ${skipReason})` : `engine on ${harness.name}`;
  describe.skipIf(skipReason !== null)(title, () => {
    let database: TestDatabase;
    let folder: string;
    beforeEach(async () => {
      database = await harness.create();
      folder = mkdtempSync(join(tmpdir(), 'quarry-engine-'));
    });
    afterEach(async () => {
      await database.destroy();
      rmSync(folder, { recursive: true, force: true });
    });

    it('runs to the end, waits once for input, and journals every state change as an event', async () => {
      const { store } = database;
      const probe = new Probe();
      const runner = makeRunner(store, probe);
      const session = await newDurabilitySession(store);
      const first = await runner.runSession(session.id);
      expect(first).toMatchObject({ status: 'waiting', waitingFor: 'review' });
      expect((await store.getSession(session.id)).status).toBe('waiting');
      await store.deliverInput({
        sessionId: session.id,
        runId: session.currentRunId!,
        requestKey: 'review',
        value: 'looks good',
      });
      const second = await runner.runSession(session.id);
      expect(second.status).toBe('completed');
      expect((second.output as DurabilityOutput).report).toBe(REFERENCE_REPORT);
      for (const key of probedKeys) expect(probe.count(key), key).toBe(1);
      const types = (await store.readEvents(session.id)).map((event) => event.type);
      expect(types.slice(0, 4)).toEqual(['session-create', 'run-start', 'phase-start', 'step-start']);
      for (const type of ['phase-start', 'input-request', 'input-receive', 'run-end']) expect(types).toContain(type);
      expect(types.at(-1)).toBe('run-end');
      const [summarize] = await store.listSteps(session.id, { phase: 'analyze', includePrompts: true });
      expect(summarize).toMatchObject({
        kind: 'llm',
        usage: { model: 'fake:model', inputTokens: 42, outputTokens: 7 },
        prompt: { system: 'Summarize the results.' },
      });
      expect(summarize!.usage!.latencyMs).toBeGreaterThanOrEqual(0);
      const final = await store.getSession(session.id);
      expect(final).toMatchObject({ status: 'completed', progress: { phase: 'write', nextStep: null } });
    });

    it('resumes at the first incomplete step after an in-process interrupt at every step boundary', async () => {
      const { store } = database;
      for (let boundary = 0; boundary < probedKeys.length; boundary++) {
        const probe = new Probe();
        const runner = makeRunner(store, probe);
        const session = await newDurabilitySession(store);
        probe.hook = (_key, index) => {
          if (index !== boundary) return;
          runner.stopSession(session.id, 'test interrupt');
          return new Promise<void>(() => undefined);
        };
        let interrupted = await runner.runSession(session.id);
        if (interrupted.status === 'waiting') {
          // The last boundary lies after the review: answer it, then the interrupt comes.
          await store.deliverInput({
            sessionId: session.id,
            runId: session.currentRunId!,
            requestKey: 'review',
            value: 'looks good',
          });
          interrupted = await runner.runSession(session.id);
        }
        expect(interrupted.status, `boundary ${boundary}`).toBe('interrupted');
        const snapshot = await store.loadJournal(session.currentRunId!);
        const completedBefore = snapshot.filter((step) => step.status === 'completed').map((step) => step.key);
        probe.hook = null;
        const result = await runToCompletion(runner, store, session.id);
        expect((result.output as DurabilityOutput).report).toBe(REFERENCE_REPORT);
        for (const key of completedBefore)
          if (probe.calls.has(key)) expect(probe.count(key), `${key} at boundary ${boundary}`).toBe(1);
        const journal = await store.loadJournal(session.currentRunId!);
        expect(journal.every((step) => step.status === 'completed')).toBe(true);
        // Clock and randomness were recorded once and replayed, never drawn again.
        const recorded = Object.fromEntries(journal.map((step) => [step.key, step.output]));
        expect((result.output as DurabilityOutput).pick).toBe(recorded.pick);
        expect((result.output as DurabilityOutput).startedAt).toBe(recorded['started-at']);
      }
    });

    it('resumes after SIGKILL of a worker process at every step boundary, repeating no completed step', async () => {
      const { store } = database;
      // One worker process per boundary, all at once (each on its own session).
      const killAt = async (boundary: number) => {
        const session = await newDurabilitySession(store);
        // Answered before it is asked, so the worker runs straight through to every boundary.
        await store.deliverInput({
          sessionId: session.id,
          runId: session.currentRunId!,
          requestKey: 'review',
          value: 'looks good',
        });
        const logFile = join(folder, `probe-${boundary}.log`);
        const { child, exited } = spawnWorker(database, session.id, logFile, boundary);
        // A worker that ends before it holds (a crash, a run that never reaches the boundary) fails
        // the test at once, saying what it printed, instead of leaving the wait to time out.
        let ended: string | null = null;
        void exited.then((early) => {
          ended = `worker ended (code ${early.code}, signal ${early.signal}) before holding at ${boundary}: ${early.stdout}${early.stderr}`;
        });
        await eventually(() => {
          if (readProbeLog(logFile).lines.some((line) => line.startsWith('held'))) return true;
          if (ended?.includes('signal null')) throw new Error(ended);
          return false;
        }, 20_000);
        child.kill('SIGKILL');
        const exit = await exited;
        expect(exit.signal, exit.stderr).toBe('SIGKILL');
        const snapshot = await store.loadJournal(session.currentRunId!);
        const completedBefore = snapshot.filter((step) => step.status === 'completed').map((step) => step.key);
        // The dead worker's lease runs out (its TTL is within(600); the bound leaves a second more).
        await eventually(async () => (await store.getSession(session.id)).status === 'interrupted', 1_600);
        const probe = new Probe(logFile);
        const result = await runToCompletion(makeRunner(store, probe), store, session.id);
        expect((result.output as DurabilityOutput).report).toBe(REFERENCE_REPORT);
        const { starts } = readProbeLog(logFile);
        for (const key of completedBefore)
          if (starts.has(key)) expect(starts.get(key), `${key} at boundary ${boundary}`).toBe(1);
        // Parallel steps reach the probe in whichever order their transactions commit: read which one was held.
        const heldKey = readProbeLog(logFile)
          .lines.find((line) => line.startsWith('held '))!
          .slice(5);
        expect(starts.get(heldKey), `the killed step ${heldKey} ran again`).toBe(2);
        const journal = await store.loadJournal(session.currentRunId!);
        expect(journal.find((step) => step.key === heldKey)!.attempts).toBe(2);
      };
      await Promise.all(probedKeys.map((_, boundary) => killAt(boundary)));
    });

    it('fails the run, naming the step, when a step keeps crashing past its attempt limit', async () => {
      const { store } = database;
      const session = await newDurabilitySession(store);
      for (let crash = 0; crash < 3; crash++) {
        const lease = await store.claimSession({ sessionId: session.id, workerId: `doomed-${crash}`, ttlMs: 30 });
        if (crash === 0)
          await store.recordStep(lease, { runId: session.currentRunId!, key: 'started-at', kind: 'clock', output: 1 });
        await store.beginStep(lease, { runId: session.currentRunId!, key: 'plan', phase: 'plan', kind: 'task' });
        await sleep(50);
      }
      const probe = new Probe();
      const result = await makeRunner(store, probe).runSession(session.id);
      expect(result).toMatchObject({ status: 'failed', error: { code: 'STEP_ATTEMPTS_EXCEEDED' } });
      expect(result.error!.message).toContain('"plan"');
      expect(probe.count('plan')).toBe(0);
      const failed = await store.getSession(session.id);
      expect(failed).toMatchObject({ status: 'failed', error: { code: 'STEP_ATTEMPTS_EXCEEDED' } });
      // Resuming a failed session retries its failed step.
      const retried = await runToCompletion(makeRunner(store, probe), store, session.id);
      expect((retried.output as DurabilityOutput).report).toBe(REFERENCE_REPORT);
      expect(probe.count('plan')).toBe(1);
    });

    it('pauses a step through a provider outage of any length, never failing the run (issue 36)', async () => {
      let calls = 0;
      const outage: Workflow<unknown, string> = {
        name: 'outage',
        version: 1,
        run: (ctx) =>
          ctx.step({ key: 'ask-the-model' }, () => {
            calls += 1;
            // Forty refusals: more than any fixed number of tries, and hours of back-off in real time.
            if (calls <= 40)
              throw new QuarryError('STEP_FAILED', 'the model server answers 503', { isRetryable: true });
            return 'answered';
          }),
      };
      const clock = new ManualClock();
      const runner = new Runner({
        store: database.store,
        workflows: new WorkflowRegistry([outage]),
        log: () => undefined,
        retryClock: clock,
      });
      const session = await newSession(database.store, 'outage');
      const result = await runner.runSession(session.id);
      expect(result).toMatchObject({ status: 'completed', output: 'answered' });
      const retries = (await database.store.readEvents(session.id, { limit: 500 })).filter(
        (event) => event.type === 'step-retry',
      );
      expect(retries).toHaveLength(40);
      // Back-offs double to a minute and stay there.
      expect(Math.max(...clock.waits)).toBe(60_000);
      expect(clock.waits.reduce((total, wait) => total + wait, 0)).toBeGreaterThan(30 * 60_000);
    });

    it('lets exactly one of two racing runners run a session, in 100 trials', async () => {
      const another = await database.openAnother();
      let runs = 0;
      const quick: Workflow<unknown, string> = {
        name: 'quick',
        version: 1,
        run: (ctx) => ctx.step({ key: 'only' }, () => `ran ${++runs}`),
      };
      const registry = new WorkflowRegistry([quick]);
      const first = new Runner({ store: database.store, workflows: registry, log: () => undefined });
      const second = new Runner({ store: another, workflows: registry, log: () => undefined });
      for (let trial = 0; trial < 100; trial++) {
        const session = await newSession(database.store, 'quick');
        const before = runs;
        const results = await Promise.allSettled([first.runSession(session.id), second.runSession(session.id)]);
        expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
        const rejected = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
        expect(['SESSION_ALREADY_RUNNING', 'SESSION_COMPLETED']).toContain(rejected.reason.code);
        expect(runs - before).toBe(1);
      }
    });

    it('stops writing when its lease is taken away: the late write is refused', async () => {
      const { store } = database;
      const probe = new Probe();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      probe.hook = (key) => (key === 'plan' ? held : undefined);
      // Heartbeats far apart, so the lease lapses while the step is held.
      const runner = makeRunner(store, probe, { leaseTtlMs: 200, heartbeatMs: 60_000 });
      const session = await newDurabilitySession(store);
      const running = runner.runSession(session.id);
      await eventually(() => probe.count('plan') === 1);
      await sleep(300);
      const thief = await store.claimSession({ sessionId: session.id, workerId: 'thief', ttlMs: 30_000 });
      release();
      expect((await running).status).toBe('lease-lost');
      const journal = await store.loadJournal(session.currentRunId!);
      expect(journal.find((step) => step.key === 'plan')).toMatchObject({ status: 'running', attempts: 1 });
      expect(probe.count('search-0')).toBe(0);
      expect((await store.getSession(session.id)).lease).toMatchObject({ workerId: 'thief', epoch: thief.epoch });
    });

    it('keeps a wait for input across a process restart and applies an answer delivered twice once', async () => {
      const { store } = database;
      const session = await newDurabilitySession(store);
      const logFile = join(folder, 'probe.log');
      const { exited } = spawnWorker(database, session.id, logFile);
      const exit = await exited;
      expect(exit.code, exit.stderr).toBe(0);
      expect(JSON.parse(exit.stdout)).toMatchObject({ status: 'waiting', waitingFor: 'review' });
      const context = durabilityContext(store, new Probe());
      const first = await answerInput(context, { sessionId: session.id, value: 'looks good' });
      const again = await answerInput(context, { sessionId: session.id, value: 'rewrite everything' });
      expect(first).toMatchObject({ accepted: true, queued: true });
      expect(again).toMatchObject({ accepted: false, value: 'looks good' });
      const probe = new Probe(logFile);
      const result = await makeRunner(store, probe).runSession(session.id);
      expect((result.output as DurabilityOutput).report).toBe(REFERENCE_REPORT);
      for (const [key, starts] of readProbeLog(logFile).starts) expect(starts, key).toBe(1);
    });

    it('rewinds in place from a phase: later steps superseded and run again under the same id', async () => {
      const { store } = database;
      const probe = new Probe();
      const runner = makeRunner(store, probe);
      const workflows = new WorkflowRegistry([durabilityWorkflow(probe)]);
      const context = localServiceContext(store, testConfig(), { runner, workflows });
      const session = await newDurabilitySession(store);
      await runToCompletion(runner, store, session.id);
      const result = await resumeSession(context, { sessionId: session.id, from: 'search' });
      expect(result.sessionId).toBe(session.id);
      expect(result.status).toBe('waiting'); // the rewind went back past the review: it is asked again
      const final = await runToCompletion(runner, store, session.id);
      expect((final.output as DurabilityOutput).report).toBe(REFERENCE_REPORT);
      expect(probe.count('plan')).toBe(1);
      expect(probe.count('search-0')).toBe(2);
      expect(probe.count('summarize')).toBe(2);
      const all = await store.loadJournal(session.currentRunId!, { includeSuperseded: true });
      // Parallel steps record in whichever order their transactions commit: compare as sets.
      expect(
        all
          .filter((step) => step.status === 'superseded')
          .map((step) => step.key)
          .sort(),
      ).toEqual(['pick', 'review', 'search-0', 'search-1', 'search-2', 'summarize', 'write']);
      expect((await store.listSessions()).sessions).toHaveLength(1);
    });

    it('refuses to resume a completed session without from unless forced', async () => {
      const { store } = database;
      const probe = new Probe();
      const runner = makeRunner(store, probe);
      const context = durabilityContext(store, probe, runner);
      const session = await newDurabilitySession(store);
      await runToCompletion(runner, store, session.id);
      await expect(resumeSession(context, { sessionId: session.id })).rejects.toMatchObject({
        code: 'SESSION_COMPLETED',
      });
      // Forced: the research runs again as a new run, so the old output stays as a version.
      const forced = await resumeSession(context, { sessionId: session.id, force: true });
      expect(forced.status).toBe('waiting');
      await runToCompletion(runner, store, session.id);
      const runs = await store.listRuns(session.id);
      expect(runs.map((run) => [run.number, run.kind, run.status])).toEqual([
        [1, 'initial', 'completed'],
        [2, 'rerun', 'completed'],
      ]);
      for (const key of probedKeys) expect(probe.count(key), key).toBe(2);
    });

    it('forks before a step into a new session and leaves the original untouched', async () => {
      const { store } = database;
      const probe = new Probe();
      const runner = makeRunner(store, probe);
      const context = durabilityContext(store, probe, runner);
      const session = await newDurabilitySession(store);
      await runToCompletion(runner, store, session.id);
      const original = await store.loadJournal(session.currentRunId!);
      const fork = await forkSession(context, { sessionId: session.id, from: 'summarize' });
      expect(fork.id).not.toBe(session.id);
      expect((await store.loadJournal(fork.currentRunId!)).map((step) => step.key).sort()).toEqual([
        'plan',
        'search-0',
        'search-1',
        'search-2',
        'started-at',
      ]);
      const result = await runToCompletion(runner, store, fork.id);
      expect((result.output as DurabilityOutput).report).toBe(REFERENCE_REPORT);
      expect(probe.count('plan')).toBe(1);
      expect(probe.count('summarize')).toBe(2);
      expect(await store.loadJournal(session.currentRunId!)).toEqual(original);
    });

    it('refuses a session made by another workflow version, offering a fork', async () => {
      const { store } = database;
      const probe = new Probe();
      const runner = makeRunner(store, probe);
      const context = durabilityContext(store, probe, runner, 2);
      const session = await newDurabilitySession(store, 1);
      await expect(resumeSession(context, { sessionId: session.id })).rejects.toMatchObject({
        code: 'WORKFLOW_VERSION_MISMATCH',
        message: expect.stringContaining('quarry fork'),
      });
      const direct = await new Runner({ store, workflows: context.workflows, log: () => undefined }).runSession(
        session.id,
      );
      expect(direct).toMatchObject({ status: 'failed', error: { code: 'WORKFLOW_VERSION_MISMATCH' } });
      expect(probe.calls.size).toBe(0);
    });

    it('interrupts a run when another process asks it to stop', async () => {
      const another = await database.openAnother();
      const probe = new Probe();
      probe.hook = (key) => (key === 'search-1' ? new Promise<void>(() => undefined) : undefined);
      const runner = makeRunner(database.store, probe, { leaseTtlMs: 3_000, heartbeatMs: 100 });
      const session = await newDurabilitySession(database.store);
      const running = runner.runSession(session.id);
      await eventually(() => probe.count('search-1') === 1);
      expect(await stopSession(durabilityContext(another, probe), { sessionId: session.id })).toBe('requested');
      expect((await running).status).toBe('interrupted');
      const stopped = await database.store.getSession(session.id);
      expect(stopped).toMatchObject({ status: 'interrupted', lease: null });
      const search = (await database.store.loadJournal(session.currentRunId!)).find((step) => step.key === 'search-1');
      expect(search).toMatchObject({ status: 'failed', error: { code: 'INTERRUPTED' } });
    });

    it('claims and runs queued sessions as a worker loop, within its concurrency', async () => {
      const { store } = database;
      let running = 0;
      let most = 0;
      const slow: Workflow<unknown, string> = {
        name: 'slow',
        version: 1,
        run: (ctx) =>
          ctx.step({ key: 'work' }, async () => {
            most = Math.max(most, ++running);
            await sleep(50);
            running--;
            return 'done';
          }),
      };
      const runner = new Runner({
        store,
        workflows: new WorkflowRegistry([slow]),
        concurrency: 2,
        pollMs: 200,
        log: () => undefined,
      });
      for (let index = 0; index < 5; index++) await newSession(store, 'slow');
      runner.start();
      try {
        await eventually(
          async () => (await store.listSessions({ status: ['completed'] })).sessions.length === 5,
          15_000,
        );
      } finally {
        await runner.shutdown();
      }
      expect(most).toBeLessThanOrEqual(2);
    });

    it('hands sessions back to the queue on a graceful shutdown', async () => {
      const { store } = database;
      const probe = new Probe();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      probe.hook = (key) => (key === 'plan' ? held : undefined);
      const runner = makeRunner(store, probe, { pollMs: 100 });
      const session = await newDurabilitySession(store);
      runner.start();
      await eventually(() => probe.count('plan') === 1);
      const shutdown = runner.shutdown({ handoff: true, graceMs: 2_000 });
      release();
      await shutdown;
      const handed = await store.getSession(session.id);
      expect(handed).toMatchObject({ status: 'queued', lease: null });
      const journal = await store.loadJournal(session.currentRunId!);
      expect(journal.find((step) => step.key === 'plan')?.status).toBe('completed');
      expect(journal.find((step) => step.key === 'search-0')).toBeUndefined();
    });

    it('leaves no abort listener behind: a hundred steps, twelve at a time, end with none left', async () => {
      const { store } = database;
      let left = -1;
      const busy: Workflow<unknown, void> = {
        name: 'busy',
        version: 1,
        async run(ctx) {
          for (let round = 0; round < 9; round++)
            await Promise.all(
              Array.from({ length: 12 }, (_, index) =>
                ctx.step({ key: `step-${round}-${index}` }, async (signal) => {
                  await sleep(2);
                  return signal.aborted;
                }),
              ),
            );
          left = getEventListeners(ctx.signal, 'abort').length;
        },
      };
      const session = await newSession(store, 'busy');
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.name);
      process.on('warning', onWarning);
      try {
        const result = await new Runner({
          store,
          workflows: new WorkflowRegistry([busy]),
          log: () => undefined,
        }).runSession(session.id);
        expect(result.status).toBe('completed');
      } finally {
        process.off('warning', onWarning);
      }
      expect(left).toBe(0);
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    });

    it('lets the process serve its clients between steps, even when every step computes and the store answers at once', async () => {
      const { store } = database;
      let stepsDone = 0;
      let doneWhenIoRan = -1;
      const computing: Workflow<unknown, void> = {
        name: 'computing',
        version: 1,
        async run(ctx) {
          // Stands for a socket write waiting to go out (an SSE event to a browser).
          setImmediate(() => {
            doneWhenIoRan = stepsDone;
          });
          for (let index = 0; index < 20; index++) {
            await ctx.step({ key: `compute-${index}` }, () => index);
            stepsDone++;
          }
        },
      };
      const session = await newSession(store, 'computing');
      const result = await new Runner({
        store,
        workflows: new WorkflowRegistry([computing]),
        log: () => undefined,
      }).runSession(session.id);
      expect(result.status).toBe('completed');
      expect(doneWhenIoRan).toBeGreaterThanOrEqual(0);
      expect(doneWhenIoRan).toBeLessThanOrEqual(1);
    });

    it('fails a run that uses one step key twice', async () => {
      const { store } = database;
      const twice: Workflow<unknown, void> = {
        name: 'twice',
        version: 1,
        async run(ctx) {
          await ctx.step({ key: 'same' }, () => 1);
          await ctx.step({ key: 'same' }, () => 2);
        },
      };
      const session = await newSession(store, 'twice');
      const result = await new Runner({
        store,
        workflows: new WorkflowRegistry([twice]),
        log: () => undefined,
      }).runSession(session.id);
      expect(result).toMatchObject({ status: 'failed', error: { code: 'DUPLICATE_STEP_KEY' } });
    });
  });
}
