import { expect, it } from 'vitest';
import type { Store } from '../store.ts';
import { createTestSession, sleep, type TestDatabase, testWorkflow } from './harness.ts';

async function expectCode(promise: Promise<unknown>, code: string, field?: string): Promise<void> {
  await expect(promise).rejects.toMatchObject(field ? { code, details: { field } } : { code });
}

export { expectCode };

export function sessionCases(use: () => TestDatabase): void {
  it('creates a session with its first message and run in one call', async () => {
    const { store } = use();
    const session = await createTestSession(store, {
      title: 'Solar panels',
      question: 'How efficient are solar panels?',
    });
    expect(session).toMatchObject({
      title: 'Solar panels',
      status: 'queued',
      ownerId: 'local',
      workflow: testWorkflow,
      lastEventOffset: 1,
    });
    expect(session.currentRunId).toBeTruthy();
    const messages = await store.listMessages(session.id);
    expect(messages).toMatchObject([
      { seq: 1, role: 'user', content: 'How efficient are solar panels?', runId: session.currentRunId },
    ]);
    const runs = await store.listRuns(session.id);
    expect(runs).toMatchObject([{ id: session.currentRunId, number: 1, kind: 'initial', status: 'open' }]);
  });

  it('throws SESSION_NOT_FOUND for an unknown id, everywhere', async () => {
    const { store } = use();
    await expectCode(store.getSession('no-such-session'), 'SESSION_NOT_FOUND');
    await expectCode(store.updateSession('no-such-session', { title: 'x' }), 'SESSION_NOT_FOUND');
    await expectCode(store.deleteSession('no-such-session'), 'SESSION_NOT_FOUND');
    await expectCode(store.listMessages('no-such-session'), 'SESSION_NOT_FOUND');
    await expectCode(store.readEvents('no-such-session'), 'SESSION_NOT_FOUND');
    await expectCode(
      store.appendMessage({ sessionId: 'no-such-session', role: 'user', content: 'hi' }),
      'SESSION_NOT_FOUND',
    );
  });

  it("hides another owner's sessions as not found", async () => {
    const { store } = use();
    const alice = await createTestSession(store, { ownerId: 'alice' });
    await createTestSession(store, { ownerId: 'bob' });
    await expectCode(store.getSession(alice.id, { ownerId: 'bob' }), 'SESSION_NOT_FOUND');
    await expectCode(store.updateSession(alice.id, { title: 'mine now' }, { ownerId: 'bob' }), 'SESSION_NOT_FOUND');
    await expectCode(store.deleteSession(alice.id, { ownerId: 'bob' }), 'SESSION_NOT_FOUND');
    await expectCode(store.listMessages(alice.id, { ownerId: 'bob' }), 'SESSION_NOT_FOUND');
    await expectCode(store.readEvents(alice.id, { ownerId: 'bob' }), 'SESSION_NOT_FOUND');
    await expectCode(
      store.claimSession({ sessionId: alice.id, workerId: 'w', ttlMs: 10_000, ownerId: 'bob' }),
      'SESSION_NOT_FOUND',
    );
    const bobs = await store.listSessions({ ownerId: 'bob' });
    expect(bobs.sessions.map((session) => session.ownerId)).toEqual(['bob']);
    expect((await store.getSession(alice.id, { ownerId: 'alice' })).title).toBe('A test session');
  });

  it('refuses a taken id or an external id the owner already uses, naming the session, and stores nothing', async () => {
    const { store } = use();
    const first = await createTestSession(store, { externalId: 'chat:taken' });
    const before = (await store.listSessions({ limit: 100 })).sessions.length;
    await expect(createTestSession(store, { externalId: 'chat:taken' })).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { field: 'externalId', sessionId: first.id },
    });
    await expect(
      store.createSession({ id: first.id, ownerId: 'local', title: 't', question: 'q', workflow: testWorkflow }),
    ).rejects.toMatchObject({ code: 'CONFLICT', details: { sessionId: first.id } });
    // A session with no run or message (a LangGraph thread's) is made another way: the same refusal.
    const plain = {
      ownerId: 'local',
      title: 'plain',
      question: 'q',
      workflow: testWorkflow,
      status: 'interrupted' as const,
    };
    await expect(store.createSession({ ...plain, externalId: 'chat:taken' })).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { field: 'externalId', sessionId: first.id },
    });
    const made = await store.createSession({ ...plain, externalId: 'langgraph:free' });
    expect(made).toMatchObject({ title: 'plain', status: 'interrupted', lastEventOffset: 1, currentRunId: null });
    expect(await store.getSession(made.id)).toEqual(made);
    expect((await store.readEvents(made.id)).map((stored) => [stored.offset, stored.type])).toEqual([
      [1, 'session-create'],
    ]);
    await store.deleteSession(made.id);
    expect((await store.listSessions({ limit: 100 })).sessions.length).toBe(before);
    // Another owner may use the same external id; sessions without one never clash.
    const theirs = await createTestSession(store, { ownerId: 'bob', externalId: 'chat:taken' });
    expect(theirs.lastEventOffset).toBe(1);
    await createTestSession(store);
    await createTestSession(store);
    expect((await store.listSessions({ limit: 100 })).sessions.length).toBe(before + 3);
  });

  it('lists newest update first, filtered by owner, status and text', async () => {
    const { store } = use();
    const first = await createTestSession(store, {
      title: 'Ocean currents',
      question: 'Why does the Gulf Stream flow north?',
    });
    await sleep(5);
    const second = await createTestSession(store, { title: 'Volcanoes', question: 'How do calderas form?' });
    await sleep(5);
    const third = await createTestSession(store, { title: 'Tides', question: 'What drives ocean TIDES?' });
    await sleep(5);
    await store.updateSession(first.id, { title: 'Ocean currents, revised' });
    const all = await store.listSessions();
    expect(all.sessions.map((session) => session.id)).toEqual([first.id, third.id, second.id]);
    const ocean = await store.listSessions({ search: 'OCEAN' });
    expect(ocean.sessions.map((session) => session.id)).toEqual([first.id, third.id]);
    const literal = await store.listSessions({ search: '100%_' });
    expect(literal.sessions).toEqual([]);
    // What the research wrote is searched too (a report or an answer), never another user's.
    await store.appendMessage({
      sessionId: second.id,
      role: 'assistant',
      content: '## Calderas\n\nMagma chambers EMPTY out.',
    });
    await store.appendMessage({ sessionId: third.id, role: 'user', content: 'and magma chambers?' });
    expect((await store.listSessions({ search: 'magma chambers' })).sessions.map((session) => session.id)).toEqual([
      second.id,
    ]);
    expect((await store.listSessions({ search: 'magma chambers', ownerId: 'someone-else' })).sessions).toEqual([]);
    await store.updateSession(second.id, { status: 'completed' });
    const completed = await store.listSessions({ status: ['completed'] });
    expect(completed.sessions.map((session) => session.id)).toEqual([second.id]);
  });

  it('paginates with a cursor that neither repeats nor skips rows while others change', async () => {
    const { store } = use();
    const ids: string[] = [];
    for (let index = 0; index < 25; index++)
      ids.push((await createTestSession(store, { title: `Session ${index}` })).id);
    const seen: string[] = [];
    let page = await store.listSessions({ limit: 10 });
    seen.push(...page.sessions.map((session) => session.id));
    // Rows added and rows bumped to the top between pages do not disturb the rest of the walk.
    await createTestSession(store, { title: 'Arrived late' });
    await store.updateSession(seen[0]!, { title: 'Edited while paging' });
    while (page.nextCursor) {
      page = await store.listSessions({ limit: 10, cursor: page.nextCursor });
      seen.push(...page.sessions.map((session) => session.id));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...ids].sort());
    await expectCode(store.listSessions({ cursor: 'not-a-cursor' }), 'INVALID_INPUT', 'cursor');
    // Forged cursors (issue 44): numbers the store never holds are refused, never a database error.
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const time of ['1e999', '-1e999', '1e20', '1.5', '1e308', '-1'])
      await expectCode(
        store.listSessions({ cursor: Buffer.from(`[${time},"x"]`).toString('base64url') }),
        'INVALID_INPUT',
        'cursor',
      );
    await expectCode(store.listSessions({ cursor: forged([1, 'x'.repeat(500)]) }), 'INVALID_INPUT', 'cursor');
    expect((await store.listSessions({ cursor: forged([Number.MAX_SAFE_INTEGER, 'x']) })).sessions).toBeDefined();
  });

  it('reads events after any offset a client may send, up to 2^53 (issue 44)', async () => {
    const { store } = use();
    const session = await store.createSession({
      ownerId: 'local',
      title: 'Offsets',
      question: 'Offsets?',
      workflow: testWorkflow,
    });
    for (const after of [2 ** 31, 2 ** 32 + 7, Number.MAX_SAFE_INTEGER])
      expect(await store.readEvents(session.id, { after })).toEqual([]);
  });

  it('reports journal progress from the session row in listings', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
    const runId = session.currentRunId!;
    await store.recordStep(lease, { runId, key: 'plan', phase: 'plan', kind: 'task', output: { queries: ['a'] } });
    await store.beginStep(lease, { runId, key: 'search-0', phase: 'search', kind: 'task' });
    const [listed] = (await store.listSessions()).sessions;
    expect(listed!.progress).toEqual({ phase: 'plan', completedSteps: 1, knownSteps: 2, nextStep: 'search-0' });
    expect(listed!.status).toBe('running');
  });

  it('updates title, settings and status, and refuses a status change under a live lease', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const updated = await store.updateSession(session.id, { title: '  Renamed  ', settings: { iterations: 3 } });
    expect(updated).toMatchObject({ title: 'Renamed', settings: { iterations: 3 } });
    expect(updated.updatedAt).toBeGreaterThanOrEqual(session.updatedAt);
    await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
    await expectCode(store.updateSession(session.id, { status: 'completed' }), 'SESSION_ALREADY_RUNNING');
    expect((await store.getSession(session.id)).status).toBe('running');
  });

  it('rejects invalid fields naming them, and a rejected call changes nothing', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const before = await store.listMessages(session.id);
    await expectCode(
      store.appendMessage({ sessionId: session.id, role: 'tool' as never, content: 'x' }),
      'INVALID_INPUT',
      'role',
    );
    await expectCode(store.updateSession(session.id, { title: '   ' }), 'INVALID_INPUT', 'title');
    await expectCode(
      store.createSession({ ownerId: 'local', title: 'x', question: '', workflow: testWorkflow }),
      'INVALID_INPUT',
      'question',
    );
    await expectCode(
      store.appendMessage({ sessionId: session.id, role: 'user', content: 'x'.repeat(1_000_001) }),
      'PAYLOAD_TOO_LARGE',
      'content',
    );
    await expectCode(store.listSessions({ limit: 0 }), 'INVALID_INPUT', 'limit');
    expect(await store.listMessages(session.id)).toEqual(before);
    expect((await store.getSession(session.id)).title).toBe('A test session');
  });

  it('deletes a session and everything that belongs to it, leaving no orphans', async () => {
    const database = use();
    const { store } = database;
    const doomed = await createTestSession(store);
    const kept = await createTestSession(store);
    const shared = Buffer.from('shared page text');
    const only = Buffer.from('only the doomed session has this');
    await store.putBlob(doomed.id, shared);
    await store.putBlob(kept.id, shared);
    const onlyHash = await store.putBlob(doomed.id, only);
    const lease = await store.claimSession({ sessionId: doomed.id, workerId: 'w1', ttlMs: 10_000 });
    await store.recordStep(lease, { runId: doomed.currentRunId!, key: 'big', kind: 'task', output: 'y'.repeat(5000) });
    await store.upsertSource({ sessionId: doomed.id, url: 'https://example.org/a' });
    await store.deliverInput({ sessionId: doomed.id, runId: doomed.currentRunId!, requestKey: 'review', value: 'ok' });
    await store.deleteSession(doomed.id);
    await expectCode(store.getSession(doomed.id), 'SESSION_NOT_FOUND');
    for (const table of ['runs', 'messages', 'steps', 'events', 'sources', 'inbox', 'blob_refs']) {
      const rows = await database.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE session_id = ?`, [
        doomed.id,
      ]);
      expect(Number(rows[0]!.n), table).toBe(0);
    }
    expect(await store.getBlob(onlyHash)).toBeNull();
    const orphans = await database.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.hash = b.hash)',
    );
    expect(Number(orphans[0]!.n)).toBe(0);
    expect((await store.getBlob((await import('../sql/codec.ts')).sha256(shared)))?.toString()).toBe(
      'shared page text',
    );
    expect((await store.getSession(kept.id)).id).toBe(kept.id);
  });

  it('finds ids by prefix for short ids', async () => {
    const { store } = use();
    const session = await store.createSession({
      id: 'abc123-session',
      ownerId: 'local',
      title: 't',
      question: 'q',
      workflow: testWorkflow,
    });
    await store.createSession({
      id: 'abd999-session',
      ownerId: 'local',
      title: 't',
      question: 'q',
      workflow: testWorkflow,
    });
    expect(await store.findSessionIds('abc')).toEqual([session.id]);
    expect(await store.findSessionIds('ab')).toHaveLength(2);
    expect(await store.findSessionIds('ab', { ownerId: 'someone-else' })).toEqual([]);
    expect(await store.countSessions()).toBe(2);
    expect(await store.countSessions({ ownerId: 'local' })).toBe(2);
    expect(await store.countSessions({ ownerId: 'someone-else' })).toBe(0);
  });

  it('keeps messages in order and filters them by run and phase', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const runId = session.currentRunId!;
    await store.appendMessage({ sessionId: session.id, role: 'system', content: 'context', runId, phase: 'plan' });
    await store.appendMessage({ sessionId: session.id, role: 'assistant', content: 'report', runId, phase: 'write' });
    const { run: followUp } = await store.startRun({
      sessionId: session.id,
      kind: 'follow-up',
      message: { role: 'user', content: 'and more?' },
    });
    const all = await store.listMessages(session.id);
    expect(all.map((message) => [message.seq, message.role])).toEqual([
      [1, 'user'],
      [2, 'system'],
      [3, 'assistant'],
      [4, 'user'],
    ]);
    expect((await store.listMessages(session.id, { phase: 'write' })).map((message) => message.content)).toEqual([
      'report',
    ]);
    expect((await store.listMessages(session.id, { runId: followUp.id })).map((message) => message.content)).toEqual([
      'and more?',
    ]);
    expect((await store.getSession(session.id)).currentRunId).toBe(followUp.id);
  });

  it('keeps one share link per session, owner-scoped, gone with the session', async () => {
    const { store } = use();
    const session = await createTestSession(store, { ownerId: 'alice' });
    const hash = (char: string) => char.repeat(64);
    expect(await store.shareLinkOf(session.id, { ownerId: 'alice' })).toBeNull();
    await expectCode(store.setShareLink(session.id, hash('a'), { ownerId: 'bob' }), 'SESSION_NOT_FOUND');
    await expectCode(store.shareLinkOf(session.id, { ownerId: 'bob' }), 'SESSION_NOT_FOUND');
    await expectCode(store.setShareLink(session.id, 'not a hash'), 'INVALID_INPUT');
    const sharedAt = await store.setShareLink(session.id, hash('a'), { ownerId: 'alice' });
    expect(sharedAt).toBeGreaterThan(0);
    expect(await store.shareLinkOf(session.id)).toBe(sharedAt);
    expect(await store.findSharedSession(hash('a'))).toEqual({ sessionId: session.id, ownerId: 'alice' });
    // A new link replaces the old one.
    await store.setShareLink(session.id, hash('b'));
    expect(await store.findSharedSession(hash('a'))).toBeNull();
    expect(await store.findSharedSession(hash('b'))).toEqual({ sessionId: session.id, ownerId: 'alice' });
    expect(await store.setShareLink(session.id, null)).toBeNull();
    expect(await store.findSharedSession(hash('b'))).toBeNull();
    await store.setShareLink(session.id, hash('c'));
    await store.deleteSession(session.id);
    expect(await store.findSharedSession(hash('c'))).toBeNull();
  });
}

export type { Store };
