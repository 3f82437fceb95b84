/**
 * The worker of the saver crash benchmark: `saver-crash-child.ts <quarry|postgres> <schema> <thread> <log> [warm]`.
 * Runs (or continues) a LangGraph thread of ROUNDS rounds of WIDTH parallel nodes on the named
 * checkpointer in that PostgreSQL schema, logging `start <round>:<node>` and `end …` as nodes run.
 * `warm`: first runs another thread to its end (unlogged), so the measured one meets connections
 * that have already run every statement, as in a process that has been up for a while. Each node's
 * writes, once stored, are logged too (`saved …`).
 */
import { appendFileSync } from 'node:fs';
import { Annotation, type BaseCheckpointSaver, END, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';
import { pgBenchUrl } from '../bench-lib.ts';

export const ROUNDS = 8;
export const WIDTH = 4;
/** How long each node works, in ms. */
const WORK_MS = 40;

const State = Annotation.Root({
  round: Annotation<number>({ reducer: (_current, update) => update, default: () => 0 }),
  done: Annotation<string[]>({ reducer: (current, update) => current.concat(update), default: () => [] }),
});

export async function openSaver(kind: 'quarry' | 'postgres', schema: string): Promise<BaseCheckpointSaver> {
  if (kind === 'quarry') {
    const url = new URL(pgBenchUrl);
    url.searchParams.set('schema', schema);
    return QuarrySaver.open(url.toString());
  }
  const saver = PostgresSaver.fromConnString(pgBenchUrl, { schema });
  await saver.setup();
  return saver;
}

export async function closeSaver(saver: BaseCheckpointSaver): Promise<void> {
  if (saver instanceof QuarrySaver) await saver.close();
  if (saver instanceof PostgresSaver) await saver.end();
}

/**
 * Runs the thread to its end, from where its checkpoints left it; `resume`: only if it has not
 * ended (a thread killed after its end has nothing to resume, and must not be run again).
 */
export async function runThread(
  saver: BaseCheckpointSaver,
  thread: string,
  log: string,
  resume = false,
  /** Where each `start …` and `end …` line goes: appended to `log` unless given. */
  record: (line: string) => void = (line) => appendFileSync(log, `${line}\n`),
): Promise<void> {
  const graph = new StateGraph(State)
    .addNode('plan', (state) => ({ round: state.round + 1 }))
    .addNode('join', () => ({}));
  const nodes = Array.from({ length: WIDTH }, (_, index) => `n${index}`);
  for (const name of nodes)
    graph.addNode(name, async (state) => {
      record(`start ${state.round}:${name}`);
      await new Promise((resolve) => setTimeout(resolve, WORK_MS));
      record(`end ${state.round}:${name}`);
      return { done: [`${state.round}:${name}`] };
    });
  const wired = graph as unknown as StateGraph<typeof State.spec, typeof State.State, typeof State.Update, string>;
  wired.addEdge(START, 'plan');
  for (const name of nodes) {
    wired.addEdge('plan', name);
    wired.addEdge(name, 'join');
  }
  wired.addConditionalEdges('join', (state) => (state.round < ROUNDS ? 'plan' : END));
  const app = wired.compile({ checkpointer: saver });
  const config = { configurable: { thread_id: thread }, recursionLimit: ROUNDS * 4 + 10 };
  const state = await app.getState(config);
  if (resume && state.next.length === 0 && state.values.round > 0) return;
  await app.invoke(state.next.length ? null : {}, config);
}

/**
 * Logs `saved <round>:<node>` once the saver has stored a node's writes (its `putWrites` resolved).
 * A node that ran again after a kill although its writes were stored lost them with the checkpoint
 * they belong to: LangGraph runs a step's nodes while that step's checkpoint is still being put, so
 * writes can be stored before their checkpoint is (or a saver lost what it had stored).
 */
export function logStoredWrites(
  saver: BaseCheckpointSaver,
  log: () => string | null,
  /** Where each `saved …` line goes: appended to the file `log()` names unless given. */
  record: (target: string, line: string) => void = (target, line) => appendFileSync(target, `${line}\n`),
): void {
  const putWrites = saver.putWrites.bind(saver);
  saver.putWrites = async (config, writes, taskId, ...rest) => {
    await putWrites(config, writes, taskId, ...rest);
    const target = log();
    if (!target) return;
    for (const [channel, value] of writes) if (channel === 'done') record(target, `saved ${String(value)}`);
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [kind, schema, thread, log, warm] = process.argv.slice(2) as [
    'quarry' | 'postgres',
    string,
    string,
    string,
    string?,
  ];
  const saver = await openSaver(kind, schema);
  let measured: string | null = null;
  logStoredWrites(saver, () => measured);
  if (warm === 'warm') await runThread(saver, `${thread}-warm-up`, `${log}.warm-up`);
  measured = log;
  await runThread(saver, thread, log);
  await closeSaver(saver);
}
