import { expect, it } from 'vitest';
import { event } from '../../shared/events.ts';
import { createTestSession, eventually, sleep, type TestDatabase } from './harness.ts';
import { expectCode } from './session-cases.ts';

export function leaseCases(use: () => TestDatabase): void {
  it('claims a session with a new epoch and refuses a second live claim', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
    expect(lease).toMatchObject({ sessionId: session.id, workerId: 'w1', epoch: 1 });
    const claimed = await store.getSession(session.id);
    expect(claimed).toMatchObject({ status: 'running', lease: { workerId: 'w1', epoch: 1 }, claimCount: 1 });
    expect(lease.expiresAt - claimed.updatedAt).toBeGreaterThan(9_000);
    await expectCode(
      store.claimSession({ sessionId: session.id, workerId: 'w2', ttlMs: 10_000 }),
      'SESSION_ALREADY_RUNNING',
    );
  });

  it('lets exactly one of two racing claims win, every time', async () => {
    const database = use();
    const another = await database.openAnother();
    for (let trial = 0; trial < 20; trial++) {
      const session = await createTestSession(database.store);
      const results = await Promise.allSettled([
        database.store.claimSession({ sessionId: session.id, workerId: 'a', ttlMs: 10_000 }),
        another.claimSession({ sessionId: session.id, workerId: 'b', ttlMs: 10_000 }),
      ]);
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
      expect(rejected.reason).toMatchObject({ code: 'SESSION_ALREADY_RUNNING' });
    }
  });

  it('refuses every write under a stale epoch, and writes nothing', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const runId = session.currentRunId!;
    const old = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 50 });
    await sleep(80);
    expect((await store.getSession(session.id)).status).toBe('interrupted');
    const current = await store.claimSession({ sessionId: session.id, workerId: 'w2', ttlMs: 10_000 });
    expect(current.epoch).toBe(old.epoch + 1);
    await expectCode(store.beginStep(old, { runId, key: 'late', kind: 'task' }), 'LEASE_LOST');
    await expectCode(store.recordStep(old, { runId, key: 'late', kind: 'task', output: 1 }), 'LEASE_LOST');
    await expectCode(
      store.appendEvent({ sessionId: session.id, fence: old, event: event('phase-start', { phase: 'late' }) }),
      'LEASE_LOST',
    );
    await expectCode(
      store.appendMessage({ sessionId: session.id, role: 'assistant', content: 'late', fence: old }),
      'LEASE_LOST',
    );
    await expectCode(store.updateSession(session.id, { title: 'Renamed late', fence: old }), 'LEASE_LOST');
    await expectCode(
      store.upsertSource({ sessionId: session.id, url: 'https://late.example/', fence: old }),
      'LEASE_LOST',
    );
    await expectCode(store.heartbeat(old, 10_000), 'LEASE_LOST');
    await expectCode(store.release(old, { status: 'completed' }), 'LEASE_LOST');
    expect(await store.loadJournal(runId)).toEqual([]);
    expect((await store.getSession(session.id)).title).toBe(session.title);
    expect(await store.listSources(session.id)).toEqual([]);
    // The current holder's fenced rename lands.
    expect((await store.updateSession(session.id, { title: 'Renamed', fence: current })).title).toBe('Renamed');
    expect((await store.getSession(session.id)).lease?.workerId).toBe('w2');
  });

  it('claims the next runnable session: queued, or running with an expired lease', async () => {
    const { store } = use();
    expect(await store.claimNext({ workerId: 'w1', ttlMs: 10_000 })).toBeNull();
    const first = await createTestSession(store);
    const second = await createTestSession(store);
    const a = await store.claimNext({ workerId: 'w1', ttlMs: 50 });
    const b = await store.claimNext({ workerId: 'w1', ttlMs: 10_000 });
    expect([a?.sessionId, b?.sessionId].sort()).toEqual([first.id, second.id].sort());
    expect(a?.tookOver).toBe(false);
    expect(await store.claimNext({ workerId: 'w2', ttlMs: 10_000 })).toBeNull();
    await sleep(80);
    const reclaimed = await store.claimNext({ workerId: 'w2', ttlMs: 10_000 });
    // A lapsed lease taken over says so (an operator's takeover count).
    expect(reclaimed).toMatchObject({ sessionId: a!.sessionId, workerId: 'w2', epoch: 2, tookOver: true });
  });

  it("counts every user's sessions by status as listings show them: a lapsed lease is interrupted", async () => {
    const { store } = use();
    await createTestSession(store);
    const live = await createTestSession(store);
    const lapsed = await createTestSession(store);
    await store.claimSession({ sessionId: live.id, workerId: 'w1', ttlMs: 60_000 });
    await store.claimSession({ sessionId: lapsed.id, workerId: 'w1', ttlMs: 30 });
    await eventually(async () => (await store.getSession(lapsed.id)).status === 'interrupted');
    expect(await store.countSessionsByStatus()).toEqual({
      queued: 1,
      running: 1,
      waiting: 0,
      completed: 0,
      failed: 0,
      interrupted: 1,
    });
  });

  it("claims a dead worker's session before the queue, however long the queue (issue 36)", async () => {
    const { store } = use();
    for (let index = 0; index < 5; index++) await createTestSession(store);
    const orphan = await createTestSession(store);
    await store.claimSession({ sessionId: orphan.id, workerId: 'dead', ttlMs: 30 });
    await eventually(async () => (await store.getSession(orphan.id)).status === 'interrupted');
    // Younger than the whole queue, and still first.
    expect(await store.claimNext({ workerId: 'alive', ttlMs: 10_000 })).toMatchObject({ sessionId: orphan.id });
  });

  it('never hands one session to two concurrent claimNext callers', async () => {
    const database = use();
    const another = await database.openAnother();
    const ids = new Set<string>();
    for (let index = 0; index < 12; index++) ids.add((await createTestSession(database.store)).id);
    const claim = async (store: typeof another, worker: string) => {
      const won: string[] = [];
      for (;;) {
        const lease = await store.claimNext({ workerId: worker, ttlMs: 60_000 });
        if (!lease) return won;
        won.push(lease.sessionId);
      }
    };
    const [mine, theirs] = await Promise.all([claim(database.store, 'a'), claim(another, 'b')]);
    expect([...mine, ...theirs].sort()).toEqual([...ids].sort());
  });

  it('parks a session that keeps crashing its workers as failed instead of claiming it again', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    for (let claim = 0; claim < 3; claim++) {
      expect(await store.claimNext({ workerId: `w${claim}`, ttlMs: 20, maxClaims: 3 })).not.toBeNull();
      await sleep(40);
    }
    expect(await store.claimNext({ workerId: 'w9', ttlMs: 20, maxClaims: 3 })).toBeNull();
    const parked = await store.getSession(session.id);
    expect(parked).toMatchObject({ status: 'failed', error: { code: 'CLAIM_LIMIT' }, lease: null });
  });

  it('extends a lease by heartbeat and reports a stop request', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 1_000 });
    const beat = await store.heartbeat(lease, 60_000);
    expect(beat.expiresAt).toBeGreaterThan(lease.expiresAt);
    expect(beat.stopRequested).toBe(false);
    expect(await store.requestStop(session.id, { reason: 'the session is being deleted' })).toBe('requested');
    expect(await store.heartbeat(lease, 60_000)).toMatchObject({
      stopRequested: true,
      stopReason: 'the session is being deleted',
    });
    await store.release(lease, { status: 'interrupted' });
    const again = await store.claimSession({ sessionId: session.id, workerId: 'w2', ttlMs: 1_000 });
    expect(await store.heartbeat(again, 60_000)).toMatchObject({ stopRequested: false, stopReason: null });
  });

  it('releases with a status, resets the claim count and closes the run', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
    const released = await store.release(lease, {
      status: 'completed',
      runOutput: { report: 'done' },
      events: [{ type: 'run-end', data: { status: 'completed' } }],
    });
    expect(released).toMatchObject({ status: 'completed', lease: null, claimCount: 0 });
    expect(await store.getRun(session.currentRunId!)).toMatchObject({
      status: 'completed',
      output: { report: 'done' },
    });
    expect((await store.readEvents(session.id)).map((event) => event.type)).toEqual(['session-create', 'run-end']);
    await expectCode(store.claimSession({ sessionId: session.id, workerId: 'w2', ttlMs: 10_000 }), 'SESSION_COMPLETED');
    const forced = await store.claimSession({
      sessionId: session.id,
      workerId: 'w2',
      ttlMs: 10_000,
      fromStatuses: ['completed'],
    });
    expect(forced.epoch).toBe(2);
  });

  it('stops a queued session at once', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    expect(await store.requestStop(session.id)).toBe('interrupted');
    expect((await store.getSession(session.id)).status).toBe('interrupted');
    expect(await store.claimNext({ workerId: 'w1', ttlMs: 10_000 })).toBeNull();
    expect(await store.requestStop(session.id)).toBe('not-running');
  });
}
