import { Command } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';
import { migrateStore } from '../../src/service/migrate-store.ts';
import { openStore } from '../../src/store/open-store.ts';
import { postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { saverLocation } from './saver-initializer.ts';
import { tidesGraph } from './tides-graph.ts';

const skip = postgresSkipReason();

const graph = tidesGraph;

describe.skipIf(skip !== null)(`a LangGraph thread moved by migrate-store${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('keeps its checkpoints: on PostgreSQL its graph carries on where it waited on SQLite', async () => {
    const sqlite = saverLocation('sqlite');
    const postgres = saverLocation('postgres');
    cleanups.push(sqlite.drop, postgres.drop);
    const config = { configurable: { thread_id: 'tides-11' } };
    const saver = await QuarrySaver.open(sqlite.location);
    await graph(saver).invoke({}, config);
    const before = await graph(saver).getState(config);
    await saver.close();

    const source = await openStore({ db: sqlite.location });
    const target = await openStore({ db: postgres.location });
    const result = await migrateStore(source, target);
    await source.close();
    await target.close();
    expect(result.sessions.map((session) => session.status)).toEqual(['copied']);

    const moved = await QuarrySaver.open(postgres.location);
    cleanups.push(() => moved.close());
    const after = await graph(moved).getState(config);
    expect(after.values).toEqual(before.values);
    expect(after.next).toEqual(['ask']);
    await graph(moved).invoke(new Command({ resume: 2 }), config);
    expect((await graph(moved).getState(config)).values).toEqual({ asked: 'How many tides a day?', count: 2 });
  });
});
