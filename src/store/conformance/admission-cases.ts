import { expect, it } from 'vitest';
import type { SessionSnapshot, Store } from '../store.ts';
import { createTestSession, type TestDatabase, testWorkflow } from './harness.ts';

/** How many of the settled writes were admitted; every refusal must be `RATE_LIMITED`. */
function admitted(outcomes: PromiseSettledResult<unknown>[]): number {
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ code: 'RATE_LIMITED' });
  }
  return outcomes.filter((outcome) => outcome.status === 'fulfilled').length;
}

/** Sessions of `ownerId` that are finished (interrupted), ready to be made runnable again. */
async function parkedSessions(store: Store, ownerId: string, count: number) {
  return Promise.all(
    Array.from({ length: count }, (_, index) =>
      store.createSession({
        ownerId,
        title: `Parked ${index}`,
        question: 'Parked?',
        workflow: testWorkflow,
        status: 'interrupted',
        run: { kind: 'initial' },
      }),
    ),
  );
}

/**
 * Per-owner limits hold under concurrency (issue 34): the count and the write are one transaction
 * under the owner's lock, so racing writes never exceed a limit, from one connection pool or two.
 */
export function admissionCases(use: () => TestDatabase): void {
  const RACERS = 24;

  async function race(
    write: (store: Store, index: number) => Promise<unknown>,
  ): Promise<PromiseSettledResult<unknown>[]> {
    const database = use();
    const other = await database.openAnother();
    try {
      return await Promise.allSettled(
        Array.from({ length: RACERS }, (_, index) => write(index % 2 === 0 ? database.store : other, index)),
      );
    } finally {
      await other.close();
    }
  }

  it('admits at most the active-runs limit of racing creates, and counts only that owner', async () => {
    const { store } = use();
    await createTestSession(store, { ownerId: 'someone-else' });
    const outcomes = await race((each, index) =>
      each.createSession({
        ownerId: 'ada',
        title: `Race ${index}`,
        question: 'Who wins?',
        workflow: testWorkflow,
        run: { kind: 'initial' },
        admission: { activeRuns: 4, sessions: 100 },
      }),
    );
    expect(admitted(outcomes)).toBe(4);
    expect((await store.listSessions({ ownerId: 'ada' })).sessions).toHaveLength(4);
    // A parked session is not a run: the sessions limit alone applies to it.
    await store.createSession({
      ownerId: 'ada',
      title: 'Parked',
      question: 'Later?',
      workflow: testWorkflow,
      status: 'interrupted',
      admission: { activeRuns: 4, sessions: 100 },
    });
  });

  it('admits at most the sessions limit of racing creates, forks and imports', async () => {
    const { store } = use();
    const original = await createTestSession(store, { ownerId: 'ada' });
    const snapshot: SessionSnapshot = {
      session: {
        id: 'to-import',
        title: 'Imported',
        question: 'Imported?',
        status: 'interrupted',
        settings: {},
        workflow: testWorkflow,
        error: null,
        createdAt: 1,
        updatedAt: 1,
      },
      messages: [],
      runs: [],
      steps: [],
      sources: [],
    };
    const outcomes = await race((each, index) => {
      const admission = { sessions: 6 };
      if (index % 3 === 0)
        return each.createSession({
          ownerId: 'ada',
          title: `Race ${index}`,
          question: 'Who wins?',
          workflow: testWorkflow,
          status: 'interrupted',
          admission,
        });
      if (index % 3 === 1) return each.forkSession({ sessionId: original.id, ownerId: 'ada', admission });
      return each.importSession(
        { ...snapshot, session: { ...snapshot.session, id: `imported-${index}` } },
        { ownerId: 'ada', admission },
      );
    });
    expect(admitted(outcomes)).toBe(5);
    expect(await store.countSessions({ ownerId: 'ada' })).toBe(6);
  });

  it('refuses a run parked for its starter when the active-runs limit is reached, adding no run', async () => {
    const { store } = use();
    const [busy, done] = await parkedSessions(store, 'ada', 2);
    await store.claimSession({ sessionId: busy!.id, workerId: 'w', ttlMs: 60_000 });
    const before = await store.listRuns(done!.id);
    await expect(
      store.startRun({
        sessionId: done!.id,
        kind: 'rerun',
        status: 'interrupted',
        ownerId: 'ada',
        admission: { activeRuns: 1 },
      }),
    ).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(await store.listRuns(done!.id)).toEqual(before);
  });

  it('admits at most the active-runs limit of racing follow-ups and claims', async () => {
    const { store } = use();
    const parked = await parkedSessions(store, 'ada', RACERS);
    const outcomes = await race((each, index) => {
      const session = parked[index]!;
      const admission = { activeRuns: 3 };
      return index % 2 === 0
        ? each.startRun({ sessionId: session.id, kind: 'follow-up', ownerId: 'ada', admission })
        : each.claimSession({ sessionId: session.id, workerId: `resume-${index}`, ttlMs: 60_000, admission });
    });
    expect(admitted(outcomes)).toBe(3);
    expect((await store.listSessions({ ownerId: 'ada', status: ['queued', 'running'] })).sessions).toHaveLength(3);
    // A session already counted does not count against itself.
    const active = (await store.listSessions({ ownerId: 'ada', status: ['queued'] })).sessions[0];
    if (active)
      await store.claimSession({
        sessionId: active.id,
        workerId: 'again',
        ttlMs: 60_000,
        admission: { activeRuns: 3 },
      });
  });
}
