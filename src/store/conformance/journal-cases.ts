import { expect, it } from 'vitest';
import { createTestSession, type TestDatabase } from './harness.ts';
import { expectCode } from './session-cases.ts';

async function claimedSession(database: TestDatabase) {
  const session = await createTestSession(database.store);
  const lease = await database.store.claimSession({ sessionId: session.id, workerId: 'worker-1', ttlMs: 30_000 });
  return { session, lease, runId: session.currentRunId! };
}

export function journalCases(use: () => TestDatabase): void {
  it('records steps in first-recording order and counts attempts', async () => {
    const database = use();
    const { store } = database;
    const { lease, runId } = await claimedSession(database);
    await store.beginStep(lease, { runId, key: 'plan', phase: 'plan', kind: 'task', input: { question: 'q' } });
    await store.beginStep(lease, { runId, key: 'search-1', phase: 'search', kind: 'task' });
    await store.completeStep(lease, { runId, key: 'search-1', output: ['result'] });
    // The worker died during "plan"; the next attempt begins it again.
    const retried = await store.beginStep(lease, {
      runId,
      key: 'plan',
      phase: 'plan',
      kind: 'task',
      input: { question: 'q' },
    });
    expect(retried).toMatchObject({ seq: 1, attempts: 2, status: 'running' });
    await store.completeStep(lease, { runId, key: 'plan', output: { queries: ['a', 'b'] } });
    const journal = await store.loadJournal(runId);
    expect(journal.map((step) => [step.key, step.seq, step.status, step.attempts])).toEqual([
      ['plan', 1, 'completed', 2],
      ['search-1', 2, 'completed', 1],
    ]);
    expect(journal[0]!.input).toEqual({ question: 'q' });
    expect(journal[0]!.output).toEqual({ queries: ['a', 'b'] });
  });

  it('refuses to begin a completed step again and to complete a step never begun', async () => {
    const database = use();
    const { store } = database;
    const { lease, runId } = await claimedSession(database);
    await store.recordStep(lease, { runId, key: 'done', kind: 'task', output: 1 });
    await expectCode(store.beginStep(lease, { runId, key: 'done', kind: 'task' }), 'CONFLICT');
    await expectCode(store.completeStep(lease, { runId, key: 'never-begun', output: 1 }), 'STEP_NOT_FOUND');
    expect((await store.loadJournal(runId)).map((step) => step.key)).toEqual(['done']);
  });

  it('records a step whole in one call: input, output, usage, events and progress; or refuses it and writes nothing', async () => {
    const database = use();
    const { store } = database;
    const { session, lease, runId } = await claimedSession(database);
    const before = (await store.readEvents(session.id)).length;
    const long = 'a long input '.repeat(200);
    const recorded = await store.recordStep(lease, {
      runId,
      key: 'clock',
      phase: 'plan',
      kind: 'clock',
      input: { long },
      output: 1_700_000_000_000,
      usage: { inputTokens: 3, outputTokens: 4 },
      events: [{ type: 'step-end', data: { key: 'clock', phase: 'plan', kind: 'clock', status: 'completed' } }],
    });
    expect(recorded).toMatchObject({ key: 'clock', seq: 1, status: 'completed', attempts: 1, phase: 'plan' });
    expect(recorded.input).toEqual({ long });
    const [step] = await store.loadJournal(runId);
    expect(step).toMatchObject({ kind: 'clock', output: 1_700_000_000_000, input: { long } });
    expect((await store.getStep(runId, 'clock')).usage).toEqual({ inputTokens: 3, outputTokens: 4 });
    expect((await store.readEvents(session.id)).slice(before).map((event) => event.type)).toEqual(['step-end']);
    expect((await store.getSession(session.id)).progress).toMatchObject({ phase: 'plan', completedSteps: 1 });
    // A key already completed, and a run that is not there: refused, and nothing more is written.
    await expectCode(store.recordStep(lease, { runId, key: 'clock', kind: 'clock', output: 2 }), 'CONFLICT');
    await expectCode(
      store.recordStep(lease, { runId: 'no-such-run', key: 'x', kind: 'clock', output: 2 }),
      'RUN_NOT_FOUND',
    );
    expect((await store.loadJournal(runId)).map((step) => [step.key, step.output])).toEqual([
      ['clock', 1_700_000_000_000],
    ]);
    expect((await store.readEvents(session.id)).length).toBe(before + 1);
  });

  it('round-trips undefined, null and nested outputs exactly', async () => {
    const database = use();
    const { store } = database;
    const { lease, runId } = await claimedSession(database);
    await store.recordStep(lease, { runId, key: 'undefined', kind: 'task', output: undefined });
    await store.recordStep(lease, { runId, key: 'null', kind: 'task', output: null });
    await store.recordStep(lease, {
      runId,
      key: 'nested',
      kind: 'task',
      output: { a: [1, 'two', { three: true }], unicode: 'naïve – ✓' },
    });
    const [first, second, third] = await store.loadJournal(runId);
    expect(first!.output).toBeUndefined();
    expect(second!.output).toBeNull();
    expect(third!.output).toEqual({ a: [1, 'two', { three: true }], unicode: 'naïve – ✓' });
  });

  it('keeps the prompt, model and usage of an LLM step, loaded only on request', async () => {
    const database = use();
    const { store } = database;
    const { session, lease, runId } = await claimedSession(database);
    const usage = {
      model: 'fake:model',
      inputTokens: 120,
      outputTokens: 30,
      totalTokens: 150,
      costUsd: 0.0012,
      latencyMs: 850,
    };
    const prompt = { model: 'openai:gpt-test', system: 'You plan research.', user: 'Plan: q' };
    await store.beginStep(lease, { runId, key: 'plan', phase: 'plan', kind: 'llm', prompt });
    // The prompt is there while the step runs, not only once it completes.
    expect((await store.getStep(runId, 'plan')).prompt).toEqual(prompt);
    await store.completeStep(lease, { runId, key: 'plan', output: 'the plan', usage });
    const [journaled] = await store.loadJournal(runId);
    expect(journaled).toMatchObject({ kind: 'llm', usage, output: 'the plan' });
    expect(journaled).not.toHaveProperty('prompt');
    expect((await store.getStep(runId, 'plan')).prompt).toEqual(prompt);
    const [listed] = await store.listSteps(session.id, { includePrompts: true });
    expect(listed!.prompt).toEqual(prompt);
    const [withoutPrompt] = await store.listSteps(session.id, { phase: 'plan' });
    expect(withoutPrompt!.prompt).toBeNull();
  });

  it('stores a large payload once, however many steps and sessions refer to it', async () => {
    const database = use();
    const { store } = database;
    const { lease, runId } = await claimedSession(database);
    const page = 'A fetched page. '.repeat(700);
    await store.recordStep(lease, { runId, key: 'fetch-1', kind: 'task', output: page });
    await store.recordStep(lease, { runId, key: 'fetch-2', kind: 'task', output: page });
    const other = await claimedSession(database);
    await store.recordStep(other.lease, { runId: other.runId, key: 'fetch', kind: 'task', output: page });
    const blobs = await database.query<{ n: number; bytes: number }>(
      'SELECT COUNT(*) AS n, SUM(size) AS bytes FROM blobs',
    );
    expect(Number(blobs[0]!.n)).toBe(1);
    expect(Number(blobs[0]!.bytes)).toBe(JSON.stringify(page).length);
    expect((await store.loadJournal(runId)).map((step) => step.output)).toEqual([page, page]);
  });

  it('marks steps superseded on rewind: kept, not replayed, and the key can be recorded again', async () => {
    const database = use();
    const { store } = database;
    const { session, lease, runId } = await claimedSession(database);
    for (const [key, phase] of [
      ['plan', 'plan'],
      ['search', 'search'],
      ['write', 'write'],
    ] as const) {
      await store.recordStep(lease, { runId, key, phase, kind: 'task', output: key });
    }
    expect(await store.supersedeSteps(lease, { runId, fromSeq: 2 })).toBe(2);
    expect((await store.loadJournal(runId)).map((step) => step.key)).toEqual(['plan']);
    expect((await store.getSession(session.id)).progress).toEqual({
      phase: 'plan',
      completedSteps: 1,
      knownSteps: 1,
      nextStep: null,
    });
    const again = await store.recordStep(lease, {
      runId,
      key: 'search',
      phase: 'search',
      kind: 'task',
      output: 'search again',
    });
    expect(again.seq).toBe(4);
    const everything = await store.loadJournal(runId, { includeSuperseded: true });
    expect(everything.map((step) => [step.key, step.status])).toEqual([
      ['plan', 'completed'],
      ['search', 'superseded'],
      ['write', 'superseded'],
      ['search', 'completed'],
    ]);
  });

  it('lists what completed steps spent: rewound ones too, never a failed or running one', async () => {
    const database = use();
    const { store } = database;
    const { session, lease, runId } = await claimedSession(database);
    const usage = (inputTokens: number) => ({ inputTokens, outputTokens: 1, costUsd: 0.5 });
    await store.recordStep(lease, { runId, key: 'plan', kind: 'llm', output: 1 });
    await store.beginStep(lease, { runId, key: 'draft', kind: 'llm' });
    await store.completeStep(lease, { runId, key: 'draft', output: 'first', usage: usage(10) });
    await store.beginStep(lease, { runId, key: 'fetch', kind: 'task' });
    await store.failStep(lease, { runId, key: 'fetch', error: { code: 'STEP_FAILED', message: 'timeout' } });
    expect(await store.supersedeSteps(lease, { runId, fromSeq: 2 })).toBe(2);
    await store.beginStep(lease, { runId, key: 'draft', kind: 'llm' });
    await store.completeStep(lease, { runId, key: 'draft', output: 'again', usage: usage(20) });
    await store.beginStep(lease, { runId, key: 'still', kind: 'task' });
    expect(await store.listStepUsage(session.id)).toEqual([
      { key: 'plan', usage: null },
      { key: 'draft', usage: usage(10) },
      { key: 'draft', usage: usage(20) },
    ]);
    await expect(store.listStepUsage(session.id, { ownerId: 'someone-else' })).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
  });

  it('records failures with their error and keeps them as the next step', async () => {
    const database = use();
    const { store } = database;
    const { session, lease, runId } = await claimedSession(database);
    await store.beginStep(lease, { runId, key: 'fetch', phase: 'read', kind: 'task' });
    const failed = await store.failStep(lease, {
      runId,
      key: 'fetch',
      error: { code: 'STEP_FAILED', message: 'timeout' },
    });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'STEP_FAILED', message: 'timeout' } });
    expect((await store.getSession(session.id)).progress.nextStep).toBe('fetch');
    const retried = await store.beginStep(lease, { runId, key: 'fetch', phase: 'read', kind: 'task' });
    expect(retried).toMatchObject({ status: 'running', attempts: 2, error: null });
  });

  it('refuses a journal payload over the size limit without writing', async () => {
    const database = use();
    const { store } = database;
    const { lease, runId } = await claimedSession(database);
    await expectCode(
      store.recordStep(lease, { runId, key: 'huge', kind: 'task', output: 'x'.repeat(17 * 1024 * 1024) }),
      'PAYLOAD_TOO_LARGE',
      'output',
    );
    expect(await store.loadJournal(runId)).toEqual([]);
  });
  it('keeps the resume point and the counters right while a run begins and completes many steps at once', async () => {
    const database = use();
    const { store } = database;
    const { session, lease, runId } = await claimedSession(database);
    const keys = Array.from({ length: 24 }, (_, index) => `parallel-${index}`);
    // Begins and completes race: each write must see what the others committed before it, or the
    // resume point would name a completed step or miss one still running.
    await Promise.all(
      keys.map(async (key, index) => {
        await store.beginStep(lease, { runId, key, phase: 'search', kind: 'task', input: { index } });
        if (index % 3 !== 0) await store.completeStep(lease, { runId, key, output: index });
      }),
    );
    const journal = await store.loadJournal(runId);
    const open = journal.filter((step) => step.status !== 'completed').sort((a, b) => a.seq - b.seq);
    expect(journal.map((step) => step.seq).sort((a, b) => a - b)).toEqual(keys.map((_, index) => index + 1));
    const read = await store.getSession(session.id);
    expect(read.progress).toMatchObject({ completedSteps: 16, knownSteps: 24 });
    expect(read.progress.nextStep).toBe(open[0]!.key);
    await Promise.all(open.map((step) => store.completeStep(lease, { runId, key: step.key, output: 'late' })));
    expect((await store.getSession(session.id)).progress.nextStep).toBeNull();
  });

  it('writes no blob for a step write it refuses', async () => {
    const database = use();
    const { store } = database;
    const { session, lease, runId } = await claimedSession(database);
    await store.recordStep(lease, { runId, key: 'done', kind: 'task', output: 1 });
    const refs = async () =>
      (
        await database.query<{ n: number }>('SELECT COUNT(*) AS n FROM blob_refs WHERE session_id = ?', [session.id])
      )[0]!.n;
    const before = Number(await refs());
    const long = 'a long payload '.repeat(200);
    await expectCode(store.beginStep(lease, { runId, key: 'done', kind: 'task', input: { long } }), 'CONFLICT');
    await expectCode(store.completeStep(lease, { runId, key: 'never-begun', output: { long } }), 'STEP_NOT_FOUND');
    await expectCode(
      store.beginStep(lease, { runId: 'no-such-run', key: 'x', kind: 'llm', prompt: { system: long, user: long } }),
      'RUN_NOT_FOUND',
    );
    expect(Number(await refs())).toBe(before);
    expect((await store.getSession(session.id)).progress).toMatchObject({ completedSteps: 1, knownSteps: 1 });
  });
}
