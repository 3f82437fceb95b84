import { Annotation, Command, END, interrupt, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { type BaseCheckpointSaver, emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';
import { openStore } from '../../src/store/open-store.ts';
import { PostgresDriver } from '../../src/store/postgres/postgres-driver.ts';
import { postgresSkipReason, postgresTestUrl } from '../../src/store/postgres/postgres-harness.ts';
import { within } from '../support/bounds.ts';
import { saverLocation } from './saver-initializer.ts';

const State = Annotation.Root({
  log: Annotation<{ step: number; text: string }[]>({
    reducer: (current, update) => current.concat(update),
    default: () => [],
  }),
  count: Annotation<number>({ reducer: (_current, update) => update, default: () => 0 }),
  target: Annotation<number>({ reducer: (_current, update) => update, default: () => 0 }),
});

/** ~10 KB of text that does not compress to nothing, different for every step. */
const page = (step: number) =>
  Array.from(
    { length: 160 },
    (_, index) => `${step}-${index}-${((step * 7919 + index * 104729) % 1_000_003).toString(36)}`,
  )
    .join(' ')
    .padEnd(10_000, '.');

function graph() {
  return new StateGraph(State)
    .addNode('work', (state) => ({ log: [{ step: state.count, text: page(state.count) }], count: state.count + 1 }))
    .addEdge(START, 'work')
    .addConditionalEdges('work', (state) => (state.count < state.target ? 'work' : END));
}

for (const backend of ['sqlite', 'postgres'] as const) {
  const skip = backend === 'postgres' ? postgresSkipReason() : null;
  describe.skipIf(skip !== null)(`QuarrySaver on ${backend}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    const open = async () => {
      const { location, drop } = saverLocation(backend);
      const saver = await QuarrySaver.open(location);
      cleanups.push(drop, () => saver.close());
      return { saver, location };
    };

    it('stores 200 appending steps of ~10 KB in at most 1.5× their size, and reads the state back whole', {
      timeout: within(120_000),
    }, async () => {
      const { saver, location } = await open();
      const app = graph().compile({ checkpointer: saver });
      const config = { configurable: { thread_id: 'research-1' }, recursionLimit: 500 };
      await app.invoke({ target: 200 }, config);
      const payload = Array.from(
        { length: 200 },
        (_, step) => JSON.stringify({ step, text: page(step) }).length,
      ).reduce((sum, size) => sum + size);
      // What the store holds for the thread: its blobs (checkpoints, channel versions, writes).
      const store = await openStore({ db: location });
      cleanups.push(() => store.close());
      const [session] = (await store.listSessions({ ownerId: 'local' })).sessions;
      expect(session?.title).toBe('LangGraph thread research-1');
      const stored = await saver.getTuple({ configurable: { thread_id: 'research-1' } });
      const log = stored?.checkpoint.channel_values.log as { step: number; text: string }[];
      expect(log).toHaveLength(200);
      expect(log.map((entry) => entry.step)).toEqual(Array.from({ length: 200 }, (_, step) => step));
      expect(log[123]?.text).toBe(page(123));
      const bytes = await scalar(location, 'SELECT COALESCE(SUM(size), 0) AS n FROM blobs');
      expect(bytes / payload).toBeLessThanOrEqual(1.5);
      // The log grew by appending: every version after the first is stored as its new item only.
      expect(
        await scalar(
          location,
          "SELECT COUNT(*) AS n FROM lg_channel_values WHERE channel = 'log' AND base_version IS NOT NULL",
        ),
      ).toBe(199);
      // And the state LangGraph itself reads back is the same.
      expect(((await app.getState(config)).values.log as unknown[]).length).toBe(200);
    });

    it('forks from an earlier checkpoint exactly as LangGraph’s in-memory saver does', {
      timeout: within(60_000),
    }, async () => {
      const { saver } = await open();
      const fork = async (checkpointer: BaseCheckpointSaver) => {
        const app = graph().compile({ checkpointer });
        const config = { configurable: { thread_id: 'forked' }, recursionLimit: 100 };
        await app.invoke({ target: 10 }, config);
        const history = [];
        for await (const state of app.getStateHistory(config)) history.push(state);
        const early = history.find((state) => state.values.count === 4)!;
        // Continue from step 4 toward another target: a new branch of the same thread.
        await app.invoke(null, { ...(await app.updateState(early.config, { target: 6 })), recursionLimit: 100 });
        const end = history.find((state) => state.values.count === 10)!;
        const branches = [];
        for await (const state of app.getStateHistory(config)) branches.push(state.values);
        return { latest: (await app.getState(config)).values, end: (await app.getState(end.config)).values, branches };
      };
      const expected = await fork(new MemorySaver());
      const actual = await fork(saver);
      expect(actual.latest).toEqual(expected.latest);
      expect(actual.end).toEqual(expected.end);
      expect(actual.branches).toEqual(expected.branches);
      expect((actual.end.log as unknown[]).length).toBe(10);
    });

    it('stores each checkpoint’s list as it was put, even when the same array grows in place', async () => {
      const { saver } = await open();
      const log = ['first'];
      const put = (id: string, version: number, parent?: string) =>
        saver.put(
          { configurable: { thread_id: 'in-place', checkpoint_ns: '', checkpoint_id: parent } },
          { ...emptyCheckpoint(), id, channel_values: { log }, channel_versions: { log: version } },
          { source: 'loop', step: version, parents: {} },
          { log: version },
        );
      const first = put('1ef00000-0000-6000-8000-000000000001', 1);
      // The caller goes on changing its array while the first put is in flight, then puts it again.
      log.push('second');
      await first;
      await put('1ef00000-0000-6000-8000-000000000002', 2, '1ef00000-0000-6000-8000-000000000001');
      const read = async (id: string) =>
        (await saver.getTuple({ configurable: { thread_id: 'in-place', checkpoint_ns: '', checkpoint_id: id } }))
          ?.checkpoint.channel_values.log;
      expect(await read('1ef00000-0000-6000-8000-000000000001')).toEqual(['first']);
      expect(await read('1ef00000-0000-6000-8000-000000000002')).toEqual(['first', 'second']);
    });

    it('writes to a thread another saver made, without reading it first, into that thread’s one session', async () => {
      const { saver, location } = await open();
      const put = (on: QuarrySaver, id: string, count: number, parent?: string) =>
        on.put(
          { configurable: { thread_id: 'shared', checkpoint_ns: '', checkpoint_id: parent } },
          { ...emptyCheckpoint(), id, channel_values: { count }, channel_versions: { count } },
          { source: 'loop', step: count, parents: {} },
          { count },
        );
      await put(saver, '1ef00000-0000-6000-8000-000000000001', 1);
      // A saver that never read the thread: its first write makes the session, finds it taken, uses it.
      const other = await QuarrySaver.open(location);
      cleanups.push(() => other.close());
      await put(other, '1ef00000-0000-6000-8000-000000000002', 2, '1ef00000-0000-6000-8000-000000000001');
      await other.putWrites(
        {
          configurable: {
            thread_id: 'shared',
            checkpoint_ns: '',
            checkpoint_id: '1ef00000-0000-6000-8000-000000000002',
          },
        },
        [['count', 3]],
        'task-1',
      );
      const store = await openStore({ db: location });
      cleanups.push(() => store.close());
      expect((await store.listSessions({ ownerId: 'local' })).sessions).toHaveLength(1);
      const latest = await saver.getTuple({ configurable: { thread_id: 'shared' } });
      expect(latest?.checkpoint.channel_values).toEqual({ count: 2 });
      expect(latest?.parentConfig?.configurable?.checkpoint_id).toBe('1ef00000-0000-6000-8000-000000000001');
      expect(latest?.pendingWrites).toEqual([['task-1', 'count', 3]]);
    });

    it('is a Quarry session: listed with the local user’s sessions, removed by deleteThread', async () => {
      const { saver, location } = await open();
      await graph()
        .compile({ checkpointer: saver })
        .invoke({ target: 3 }, { configurable: { thread_id: 'listed' } });
      const store = await openStore({ db: location });
      cleanups.push(() => store.close());
      const [session] = (await store.listSessions({ ownerId: 'local' })).sessions;
      expect(session).toMatchObject({ title: 'LangGraph thread listed', workflow: { name: 'langgraph' } });
      await saver.deleteThread('listed');
      expect((await store.listSessions({ ownerId: 'local' })).sessions).toEqual([]);
      expect(await scalar(location, 'SELECT COUNT(*) AS n FROM blobs')).toBe(0);
      expect(await saver.getTuple({ configurable: { thread_id: 'listed' } })).toBeUndefined();
    });

    it('keeps its threads where it finds them: a user’s when opened as that user, the local user’s through an adoption (issue 45)', {
      timeout: within(60_000),
    }, async () => {
      const { saver, location } = await open();
      const store = await openStore({ db: location });
      cleanups.push(() => store.close());
      const ada = await store.createUser({ name: 'ada' });
      const asking = (checkpointer: BaseCheckpointSaver) =>
        new StateGraph(State)
          .addNode('ask', () => ({ count: Number(interrupt('How many?')) }))
          .addEdge(START, 'ask')
          .addEdge('ask', END)
          .compile({ checkpointer });
      const thread = { configurable: { thread_id: 'paused' } };

      // The local user's thread, waiting at an interrupt, stays theirs when their sessions go to ada.
      await asking(saver).invoke({ target: 1 }, thread);
      expect(await store.adoptSessions({ fromOwnerId: 'local', toUserId: ada.id })).toMatchObject({ threads: 1 });
      const reopened = await QuarrySaver.open(location);
      cleanups.push(() => reopened.close());
      expect((await asking(reopened).getState(thread)).next).toEqual(['ask']);

      // Opened as ada: her threads, apart from the local user's (the same thread id is another thread).
      const adas = await QuarrySaver.open(location, { user: 'ada' });
      cleanups.push(() => adas.close());
      expect(await adas.getTuple(thread)).toBeUndefined();
      await asking(adas).invoke({ target: 1 }, thread);
      await asking(adas).invoke(new Command({ resume: 7 }), thread);
      expect((await asking(adas).getState(thread)).values.count).toBe(7);
      const session = await store.findSessionByExternalId('langgraph:paused', { ownerId: ada.id });
      expect(session).toMatchObject({ ownerId: ada.id, status: 'completed' });
      expect((await asking(reopened).getState(thread)).next).toEqual(['ask']);
      // Listed without a thread, a saver lists its owner's threads only (both have a thread "paused").
      let adaCheckpoints = 0;
      for await (const _tuple of adas.list({})) adaCheckpoints += 1;
      let adaThreadCheckpoints = 0;
      for await (const _tuple of adas.list(thread)) adaThreadCheckpoints += 1;
      expect(adaCheckpoints).toBe(adaThreadCheckpoints);

      await expect(QuarrySaver.open(location, { user: 'nobody' })).rejects.toMatchObject({
        code: 'USER_NOT_FOUND',
        message: expect.stringContaining('quarry users add nobody'),
      });
    });

    it('keeps a thread’s status as its checkpoints say: waiting at an interrupt, completed, stopped, failed (issue 45)', {
      timeout: within(60_000),
    }, async () => {
      const { saver, location } = await open();
      const store = await openStore({ db: location });
      cleanups.push(() => store.close());
      const statusOf = async (thread: string) =>
        (await store.findSessionByExternalId(`langgraph:${thread}`, { ownerId: 'local' }))?.status;
      const asking = new StateGraph(State)
        .addNode('ask', () => ({ count: Number(interrupt('How many?')) }))
        .addNode('fail', (state) => {
          if (state.target < 0) throw new Error('a node that fails');
          return { target: state.target };
        })
        .addEdge(START, 'ask')
        .addEdge('ask', 'fail')
        .addEdge('fail', END)
        .compile({ checkpointer: saver });
      const waiting = { configurable: { thread_id: 'asks' } };
      await asking.invoke({ target: 1 }, waiting);
      expect((await asking.getState(waiting)).next).toEqual(['ask']);
      expect(await statusOf('asks')).toBe('waiting');
      await asking.invoke(new Command({ resume: 2 }), waiting);
      expect((await asking.getState(waiting)).next).toEqual([]);
      expect(await statusOf('asks')).toBe('completed');

      const failing = { configurable: { thread_id: 'fails' } };
      await asking.invoke({ target: -1 }, failing);
      await expect(asking.invoke(new Command({ resume: 1 }), failing)).rejects.toThrow('a node that fails');
      expect(await statusOf('fails')).toBe('failed');

      // Stopped before a node (as a crash between steps leaves it): interrupted until invoked again.
      const stopping = graph().compile({ checkpointer: saver, interruptBefore: ['work'] });
      const stopped = { configurable: { thread_id: 'stops' } };
      await stopping.invoke({ target: 2 }, stopped);
      expect((await stopping.getState(stopped)).next).toEqual(['work']);
      expect(await statusOf('stops')).toBe('interrupted');
      await graph().compile({ checkpointer: saver }).invoke(null, stopped);
      expect(await statusOf('stops')).toBe('completed');
    });
  });
}

/** One number from the store behind a saver, read on a connection of its own. */
async function scalar(location: string, sql: string): Promise<number> {
  if (!location.startsWith('postgres')) {
    const database = new Database(location, { readonly: true });
    try {
      return Number((database.prepare(sql).get() as { n: number }).n);
    } finally {
      database.close();
    }
  }
  const url = new URL(location);
  const raw = new PostgresDriver(postgresTestUrl!, { schema: url.searchParams.get('schema')! });
  try {
    return Number((await raw.query<{ n: number }>(sql))[0]?.n ?? 0);
  } finally {
    await raw.close();
  }
}
