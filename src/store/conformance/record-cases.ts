import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { event, type QuarryEvent } from '../../shared/events.ts';
import { createTestSession, eventually, sleep, type TestDatabase } from './harness.ts';
import { expectCode } from './session-cases.ts';

export function eventCases(use: () => TestDatabase): void {
  it('appends events with offsets that increase by one and reads after an offset', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    for (const phase of ['plan', 'search', 'read'])
      await store.appendEvent({ sessionId: session.id, event: event('phase-start', { phase }) });
    const events = await store.readEvents(session.id);
    expect(events.map((event) => [event.offset, event.type])).toEqual([
      [1, 'session-create'],
      [2, 'phase-start'],
      [3, 'phase-start'],
      [4, 'phase-start'],
    ]);
    expect((await store.readEvents(session.id, { after: 2 })).map((event) => event.offset)).toEqual([3, 4]);
    expect((await store.readEvents(session.id, { after: 1, limit: 1 })).map((event) => event.offset)).toEqual([2]);
    const unknown = { type: 'Not An Event', data: {} } as unknown as QuarryEvent;
    await expectCode(store.appendEvent({ sessionId: session.id, event: unknown }), 'INVALID_INPUT', 'event.type');
  });

  it('keeps offsets gapless under concurrent appends from two connections', async () => {
    const database = use();
    const another = await database.openAnother();
    const session = await createTestSession(database.store);
    await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        (index % 2 === 0 ? database.store : another).appendEvent({
          sessionId: session.id,
          event: event('phase-start', { phase: `phase-${index}` }),
        }),
      ),
    );
    const offsets = (await database.store.readEvents(session.id)).map((event) => event.offset);
    expect(offsets).toEqual(Array.from({ length: 61 }, (_, index) => index + 1));
  });

  it('wakes subscribers in this process and in another connection', async () => {
    const database = use();
    const another = await database.openAnother();
    const session = await createTestSession(database.store);
    const here: number[] = [];
    const there: number[] = [];
    const all: string[] = [];
    const stopHere = database.store.subscribe(session.id, (_id, offset) => here.push(offset));
    const stopThere = another.subscribe(session.id, (_id, offset) => there.push(offset));
    const stopAll = another.subscribe('*', (id) => all.push(id));
    await sleep(200); // let LISTEN connections settle
    await database.store.appendEvent({ sessionId: session.id, event: event('phase-start', { phase: 'plan' }) });
    await eventually(() => here.includes(2) && there.some((offset) => offset >= 2) && all.includes(session.id));
    stopHere();
    stopThere();
    stopAll();
  });
}

export function inboxCases(use: () => TestDatabase): void {
  it('records an answer once, however many times it is delivered, and queues a waiting session', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
    await store.release(lease, { status: 'waiting' });
    const first = await store.deliverInput({
      sessionId: session.id,
      runId: session.currentRunId!,
      requestKey: 'outline-review',
      value: 'approve',
    });
    expect(first).toEqual({ accepted: true, value: 'approve', queued: true });
    const second = await store.deliverInput({
      sessionId: session.id,
      runId: session.currentRunId!,
      requestKey: 'outline-review',
      value: 'change everything',
    });
    expect(second).toEqual({ accepted: false, value: 'approve', queued: false });
    expect(await store.readInput(session.currentRunId!, 'outline-review')).toEqual({ value: 'approve' });
    expect(await store.readInput(session.currentRunId!, 'other')).toBeUndefined();
    expect((await store.getSession(session.id)).status).toBe('queued');
    const receipts = (await store.readEvents(session.id)).filter((event) => event.type === 'input-receive');
    expect(receipts).toHaveLength(1);
  });
}

export function earlyAnswerCase(use: () => TestDatabase): void {
  it('forgets the answer to an input step that a rewind supersedes', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const runId = session.currentRunId!;
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
    await store.recordStep(lease, { runId, key: 'outline', kind: 'task', output: 'outline v1' });
    await store.beginStep(lease, { runId, key: 'outline-review', kind: 'input' });
    await store.deliverInput({ sessionId: session.id, runId, requestKey: 'outline-review', value: 'approve' });
    await store.supersedeSteps(lease, { runId, fromSeq: 1 });
    expect(await store.readInput(runId, 'outline-review')).toBeUndefined();
  });

  it('releases a waiting session as queued when its answer arrived before the release', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
    const early = await store.deliverInput({
      sessionId: session.id,
      runId: session.currentRunId!,
      requestKey: 'outline-review',
      value: 'ok',
    });
    expect(early).toEqual({ accepted: true, value: 'ok', queued: false });
    const released = await store.release(lease, { status: 'waiting', waitingFor: 'outline-review' });
    expect(released.status).toBe('queued');
    const other = await createTestSession(store);
    const otherLease = await store.claimSession({ sessionId: other.id, workerId: 'w1', ttlMs: 10_000 });
    expect((await store.release(otherLease, { status: 'waiting', waitingFor: 'outline-review' })).status).toBe(
      'waiting',
    );
  });
}

export function userCases(use: () => TestDatabase): void {
  it('keeps users with hashed tokens and finds a user by token hash', async () => {
    const { store } = use();
    const hash = createHash('sha256').update('secret-token').digest('hex');
    expect(await store.hasUsers()).toBe(false);
    const user = await store.createUser({ name: 'ada' });
    expect(await store.hasUsers()).toBe(true);
    const token = await store.addApiToken({ userId: user.id, tokenHash: hash, label: 'laptop' });
    expect(await store.findToken(hash)).toEqual({ user, token });
    expect(token.parentId).toBeNull();
    expect(await store.findToken('0'.repeat(64))).toBeNull();
    await expectCode(store.createUser({ name: 'ada' }), 'CONFLICT');
    await expectCode(store.addApiToken({ userId: 'nobody', tokenHash: hash }), 'USER_NOT_FOUND');
    await expectCode(store.addApiToken({ userId: user.id, tokenHash: 'plain-token' }), 'INVALID_INPUT', 'tokenHash');
    expect((await store.listUsers()).map((each) => each.name)).toEqual(['ada']);
    await store.deleteUser(user.id);
    expect(await store.findToken(hash)).toBeNull();
    expect(await store.hasUsers()).toBe(false);
    await expectCode(store.deleteUser(user.id), 'USER_NOT_FOUND');
  });

  it('keeps tokens as a tree: a minted token answers to its root, never outlives it, and goes with it', async () => {
    const { store } = use();
    const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');
    const ada = await store.createUser({ name: 'ada' });
    const bob = await store.createUser({ name: 'bob' });
    const expiresAt = Date.now() + 60_000;
    const root = await store.addApiToken({ userId: ada.id, tokenHash: hashOf('root'), expiresAt });
    const child = await store.addApiToken({
      userId: ada.id,
      tokenHash: hashOf('child'),
      expiresAt: expiresAt + 3_600_000,
      parentId: root.id,
    });
    expect(child).toMatchObject({ parentId: root.id, expiresAt });
    // Only from a root token of the same user.
    await expectCode(
      store.addApiToken({ userId: ada.id, tokenHash: hashOf('grandchild'), parentId: child.id }),
      'TOKEN_NOT_FOUND',
    );
    await expectCode(
      store.addApiToken({ userId: bob.id, tokenHash: hashOf('theft'), parentId: root.id }),
      'TOKEN_NOT_FOUND',
    );
    const other = await store.addApiToken({ userId: ada.id, tokenHash: hashOf('other') });
    await store.deleteApiToken(root.id);
    expect(await store.findToken(hashOf('child'))).toBeNull();
    expect((await store.listApiTokens(ada.id)).map((token) => token.id)).toEqual([other.id]);
  });

  it('hands the local user’s sessions to a user, all at once, keeping those whose external id they use and LangGraph threads (issues 45, 46)', async () => {
    const { store } = use();
    const ada = await store.createUser({ name: 'ada' });
    const plain = await createTestSession(store, { ownerId: 'local' });
    const tagged = await createTestSession(store, { ownerId: 'local', externalId: 'chat:1' });
    const clash = await createTestSession(store, { ownerId: 'local', externalId: 'chat:2' });
    await createTestSession(store, { ownerId: ada.id, externalId: 'chat:2' });
    const bobs = await createTestSession(store, { ownerId: 'bob' });
    // A LangGraph thread stays: the app's QuarrySaver finds its threads as the local user's.
    const langgraph = { name: 'langgraph', version: 1 };
    const thread = await createTestSession(store, { ownerId: 'local', externalId: 'langgraph:t', workflow: langgraph });
    const kept = { kept: 2, threads: 1 };
    expect(await store.adoptSessions({ fromOwnerId: 'local', toUserId: ada.id })).toEqual({ adopted: 2, ...kept });
    for (const session of [plain, tagged]) expect((await store.getSession(session.id)).ownerId).toBe(ada.id);
    for (const session of [clash, thread]) expect((await store.getSession(session.id)).ownerId).toBe('local');
    expect((await store.getSession(bobs.id)).ownerId).toBe('bob');
    expect(await store.adoptSessions({ fromOwnerId: 'local', toUserId: ada.id })).toEqual({ adopted: 0, ...kept });
    await expectCode(store.adoptSessions({ fromOwnerId: 'local', toUserId: 'nobody' }), 'USER_NOT_FOUND');
  });

  it('ends the share links of a user who is removed (issue 44)', async () => {
    const { store } = use();
    const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');
    const ada = await store.createUser({ name: 'ada' });
    const session = await createTestSession(store, { ownerId: ada.id });
    await store.setShareLink(session.id, hashOf('link'));
    expect(await store.findSharedSession(hashOf('link'))).toMatchObject({ sessionId: session.id });
    await store.deleteUser(ada.id);
    expect(await store.findSharedSession(hashOf('link'))).toBeNull();
  });

  it('leaves no sign-in minted while its token is being revoked (issue 44)', async () => {
    const { store } = use();
    const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');
    const ada = await store.createUser({ name: 'ada' });
    for (let round = 0; round < 10; round++) {
      const root = await store.addApiToken({ userId: ada.id, tokenHash: hashOf(`root-${round}`) });
      // Sign-ins and the revocation race; each sign-in either comes first (and goes with its root)
      // or finds no root to mint from.
      await Promise.all([
        ...Array.from({ length: 4 }, (_, index) =>
          store
            .addApiToken({ userId: ada.id, tokenHash: hashOf(`child-${round}-${index}`), parentId: root.id })
            .catch((error: unknown) => {
              if (!(error instanceof Error) || !('code' in error) || error.code !== 'TOKEN_NOT_FOUND') throw error;
            }),
        ),
        store.deleteApiToken(root.id),
      ]);
      const left = (await store.listApiTokens(ada.id)).filter((token) => token.parentId === root.id);
      expect(left, `round ${round}`).toEqual([]);
      for (let index = 0; index < 4; index++)
        expect(await store.findToken(hashOf(`child-${round}-${index}`))).toBeNull();
    }
  });
}

export function sourceAndBlobCases(use: () => TestDatabase): void {
  it('keeps one source per URL with counters and a stable citation number', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    await store.upsertSource({ sessionId: session.id, url: 'https://b.example/', title: 'B', considered: 1 });
    await store.upsertSource({
      sessionId: session.id,
      url: 'https://a.example/',
      title: 'A',
      considered: 1,
      selected: 1,
    });
    await store.upsertSource({
      sessionId: session.id,
      url: 'https://a.example/',
      considered: 1,
      citation: 1,
      contentHash: 'abc',
    });
    const sources = await store.listSources(session.id);
    expect(
      sources.map((source) => [
        source.url,
        source.title,
        source.citation,
        source.timesConsidered,
        source.timesSelected,
        source.contentHash,
      ]),
    ).toEqual([
      ['https://a.example/', 'A', 1, 2, 1, 'abc'],
      ['https://b.example/', 'B', null, 1, 0, null],
    ]);
  });

  it('stores blobs by content hash and returns null for unknown hashes', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const hash = await store.putBlob(session.id, Buffer.from('hello'));
    expect(hash).toBe(createHash('sha256').update('hello').digest('hex'));
    expect(await store.putBlob(session.id, Buffer.from('hello'))).toBe(hash);
    expect((await store.getBlob(hash))?.toString()).toBe('hello');
    expect(await store.getBlob('f'.repeat(64))).toBeNull();
    await expectCode(store.getBlob('not-a-hash'), 'INVALID_INPUT');
  });
}

export function forkAndRetentionCases(use: () => TestDatabase): void {
  it('branches after a turn: runs up to it copied whole, later turns left out and left alone', async () => {
    const { store } = use();
    const session = await createTestSession(store);
    const turn = async (runId: string, answer: string) => {
      const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
      await store.recordStep(lease, { runId, key: 'answer', kind: 'task', output: answer });
      await store.appendMessage({ sessionId: session.id, role: 'assistant', content: answer, runId, fence: lease });
      await store.release(lease, { status: 'completed', runOutput: answer });
    };
    await turn(session.currentRunId!, 'first answer');
    const { run: second } = await store.startRun({
      sessionId: session.id,
      kind: 'follow-up',
      message: { role: 'user', content: 'second question' },
    });
    await turn(second.id, 'second answer');

    const branch = await store.forkSession({ sessionId: session.id, throughRun: 1, title: 'Branch' });
    expect(branch).toMatchObject({ status: 'completed', title: 'Branch', forkedFrom: session.id });
    expect((await store.listMessages(branch.id)).map((message) => message.content)).toEqual([
      'What is being tested?',
      'first answer',
    ]);
    expect((await store.listRuns(branch.id)).map((run) => [run.number, run.status])).toEqual([[1, 'completed']]);
    expect((await store.loadJournal(branch.currentRunId!)).map((step) => step.output)).toEqual(['first answer']);
    // The branch takes its own next turn; the original keeps its second.
    await store.startRun({
      sessionId: branch.id,
      kind: 'follow-up',
      message: { role: 'user', content: 'other question' },
    });
    expect((await store.listMessages(session.id)).map((message) => message.content)).toEqual([
      'What is being tested?',
      'first answer',
      'second question',
      'second answer',
    ]);
    await expectCode(store.forkSession({ sessionId: session.id, throughRun: 3 }), 'RUN_NOT_FOUND');
    // Cut inside an earlier turn: that run up to the step, nothing after it.
    const earlier = await store.forkSession({ sessionId: session.id, throughRun: 1, beforeStep: 'answer' });
    expect(earlier.status).toBe('interrupted');
    expect((await store.listRuns(earlier.id)).map((run) => [run.number, run.status])).toEqual([[1, 'open']]);
    expect(await store.loadJournal(earlier.currentRunId!)).toEqual([]);
    // Messages of the cut run are kept up to the step's start, to the millisecond: the answer,
    // appended in the same millisecond as its step here, may be kept with it; the question always is.
    expect((await store.listMessages(earlier.id))[0]?.content).toBe('What is being tested?');
    expect((await store.listMessages(earlier.id)).map((message) => message.content)).not.toContain('second question');
    await expectCode(
      store.forkSession({ sessionId: session.id, throughRun: 1, beforeStep: 'no-such-step' }),
      'STEP_NOT_FOUND',
    );
  });

  it('forks the journal before a step into a new session, sharing blobs and leaving the original alone', async () => {
    const database = use();
    const { store } = database;
    const session = await createTestSession(store);
    const runId = session.currentRunId!;
    const lease = await store.claimSession({ sessionId: session.id, workerId: 'w1', ttlMs: 10_000 });
    const page = 'long page text '.repeat(200);
    for (const key of ['plan', 'search', 'read', 'write'])
      await store.recordStep(lease, { runId, key, phase: key, kind: 'task', output: `${key}: ${page}` });
    await store.upsertSource({ sessionId: session.id, url: 'https://example.org/', runId, fence: lease });
    await store.release(lease, { status: 'completed', runOutput: 'report' });
    const blobsBefore = await database.query<{ n: number }>('SELECT COUNT(*) AS n FROM blobs');

    const fork = await store.forkSession({ sessionId: session.id, beforeStep: 'read' });
    expect(fork.id).not.toBe(session.id);
    expect(fork).toMatchObject({
      status: 'interrupted',
      title: 'A test session (fork)',
      progress: { completedSteps: 2, knownSteps: 2, phase: 'search' },
    });
    const forkJournal = await store.loadJournal(fork.currentRunId!);
    expect(forkJournal.map((step) => [step.key, step.output])).toEqual([
      ['plan', `plan: ${page}`],
      ['search', `search: ${page}`],
    ]);
    expect((await store.listMessages(fork.id)).map((message) => message.content)).toEqual(['What is being tested?']);
    expect((await store.getRun(fork.currentRunId!)).status).toBe('open');
    const blobsAfter = await database.query<{ n: number }>('SELECT COUNT(*) AS n FROM blobs');
    expect(Number(blobsAfter[0]!.n)).toBe(Number(blobsBefore[0]!.n));
    expect((await store.loadJournal(runId)).map((step) => step.key)).toEqual(['plan', 'search', 'read', 'write']);
    expect((await store.getSession(session.id)).status).toBe('completed');
    // The fork can be claimed and continued; its journal continues after the copied steps.
    const forkLease = await store.claimSession({ sessionId: fork.id, workerId: 'w2', ttlMs: 10_000 });
    expect(
      (await store.recordStep(forkLease, { runId: fork.currentRunId!, key: 'read', kind: 'task', output: 'new read' }))
        .seq,
    ).toBe(5);
    await store.deleteSession(session.id);
    expect((await store.loadJournal(fork.currentRunId!))[0]!.output).toBe(`plan: ${page}`);
    await expectCode(store.forkSession({ sessionId: fork.id, beforeStep: 'no-such-step' }), 'STEP_NOT_FOUND');
  });

  it('deletes only finished sessions past the age, in batches', async () => {
    const { store } = use();
    const finished = [];
    for (let index = 0; index < 5; index++) {
      const session = await createTestSession(store);
      const lease = await store.claimSession({ sessionId: session.id, workerId: 'w', ttlMs: 10_000 });
      await store.release(lease, { status: index % 2 ? 'completed' : 'failed' });
      finished.push(session.id);
    }
    const queued = await createTestSession(store);
    const running = await createTestSession(store);
    await store.claimSession({ sessionId: running.id, workerId: 'w', ttlMs: 60_000 });
    const waiting = await createTestSession(store);
    await store.release(await store.claimSession({ sessionId: waiting.id, workerId: 'w', ttlMs: 60_000 }), {
      status: 'waiting',
    });
    const interrupted = await createTestSession(store);
    await store.release(await store.claimSession({ sessionId: interrupted.id, workerId: 'w', ttlMs: 60_000 }), {
      status: 'interrupted',
    });
    const others = await createTestSession(store, { ownerId: 'someone-else' });
    await store.release(await store.claimSession({ sessionId: others.id, workerId: 'w', ttlMs: 60_000 }), {
      status: 'completed',
    });
    await sleep(30);
    expect(await store.deleteFinishedSessions({ olderThanMs: 60_000 })).toEqual({ deleted: 0 });
    expect(await store.deleteFinishedSessions({ olderThanMs: 10, ownerId: 'local', dryRun: true })).toEqual({
      deleted: 5,
    });
    expect(await store.deleteFinishedSessions({ olderThanMs: 10, ownerId: 'local', batchSize: 2 })).toEqual({
      deleted: 5,
    });
    const left = (await store.listSessions()).sessions.map((session) => session.id).sort();
    // Interrupted sessions can be resumed: kept unless asked for; another owner's are not touched.
    expect(left).toEqual([queued.id, running.id, waiting.id, interrupted.id, others.id].sort());
    expect(await store.deleteFinishedSessions({ olderThanMs: 10, statuses: ['interrupted'] })).toEqual({ deleted: 1 });
  });
}
