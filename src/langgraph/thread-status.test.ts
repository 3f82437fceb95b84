import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import { QuarrySaver } from './quarry-saver.ts';
import { nextNodes } from './thread-status.ts';

const State = Annotation.Root({
  round: Annotation<number>({ reducer: (_current, update) => update, default: () => 0 }),
  done: Annotation<string[]>({ reducer: (current, update) => current.concat(update), default: () => [] }),
});

/** Rounds of two parallel nodes and a join, as the saver crash benchmark runs them. */
function graph(saver: QuarrySaver) {
  const built = new StateGraph(State)
    .addNode('plan', (state) => ({ round: state.round + 1 }))
    .addNode('a', (state) => ({ done: [`${state.round}:a`] }))
    .addNode('b', (state) => ({ done: [`${state.round}:b`] }))
    .addNode('join', () => ({}))
    .addEdge(START, 'plan')
    .addEdge('plan', 'a')
    .addEdge('plan', 'b')
    .addEdge('a', 'join')
    .addEdge('b', 'join')
    .addConditionalEdges('join', (state) => (state.round < 3 ? 'plan' : END));
  return built.compile({ checkpointer: saver });
}

describe('a LangGraph thread’s status from its checkpoints (issue 45)', () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  it('names the next nodes as LangGraph does at every checkpoint, the input’s `__start__` too', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'quarry-thread-status-'));
    folders.push(folder);
    const saver = await QuarrySaver.open(join(folder, 'quarry.db'));
    try {
      const store = (saver as unknown as { store: { updateSession: (...args: unknown[]) => Promise<unknown> } }).store;
      const statuses: unknown[] = [];
      const update = store.updateSession.bind(store);
      store.updateSession = (id, patch) => {
        statuses.push((patch as { status?: unknown }).status);
        return update(id, patch);
      };
      const app = graph(saver);
      const config = { configurable: { thread_id: 'rounds' } };
      await app.invoke({ round: 0 }, config);
      const history = [];
      for await (const snapshot of app.getStateHistory(config)) history.push(snapshot);
      expect(history.length).toBeGreaterThan(8);
      for (const snapshot of history) {
        const tuple = await saver.getTuple(snapshot.config);
        expect(nextNodes(tuple!.checkpoint), `step ${snapshot.metadata?.step}`).toEqual([...snapshot.next].sort());
      }
      // Made `interrupted` (LangGraph drives it), then one write when it ends: never `completed`
      // at its input's checkpoint and `interrupted` again after.
      expect(statuses).toEqual(['completed']);
    } finally {
      await saver.close();
    }
  });
});
