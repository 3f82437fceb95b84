import { Annotation, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import type { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';

const State = Annotation.Root({
  asked: Annotation<string>({ reducer: (_current, update) => update, default: () => '' }),
  count: Annotation<number>({ reducer: (_current, update) => update, default: () => 0 }),
});

/** A two-node graph on `saver` that asks "How many tides a day?" at an interrupt and keeps the answer. */
export function tidesGraph(saver: QuarrySaver) {
  return new StateGraph(State)
    .addNode('greet', () => ({ asked: 'How many tides a day?' }))
    .addNode('ask', (state) => ({ count: Number(interrupt(state.asked)) }))
    .addEdge(START, 'greet')
    .addEdge('greet', 'ask')
    .addEdge('ask', END)
    .compile({ checkpointer: saver });
}
