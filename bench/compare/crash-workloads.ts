/**
 * The same small job under three persistence approaches, for the crash benchmark: step A, then four
 * parallel steps B0-B3, then step C. Each step's work logs `start X` and `end X` to a file, so a
 * parent process can SIGKILL the worker mid-step and count what runs again on resume.
 */
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { Runner } from '../../src/engine/runner.ts';
import { type Workflow, WorkflowRegistry } from '../../src/engine/workflow.ts';
import { openStore } from '../../src/store/open-store.ts';

export const stepKeys = ['A', 'B0', 'B1', 'B2', 'B3', 'C'];

/** Work that logs its start and end; `slow` keys take long enough to be killed in the middle. */
export function makeWork(log: string, slow: Set<string>) {
  return async (key: string) => {
    appendFileSync(log, `start ${key}\n`);
    await new Promise((resolve) => setTimeout(resolve, slow.has(key) ? 60_000 : 20));
    appendFileSync(log, `end ${key}\n`);
    return `${key} done`;
  };
}

type Work = (key: string) => Promise<string>;

export async function runQuarry(location: string, work: Work): Promise<void> {
  const workflow: Workflow<unknown, string[]> = {
    name: 'crash-job',
    version: 1,
    async run(ctx) {
      const a = await ctx.step({ key: 'A' }, () => work('A'));
      const b = await Promise.all(['B0', 'B1', 'B2', 'B3'].map((key) => ctx.step({ key }, () => work(key))));
      const c = await ctx.step({ key: 'C' }, () => work('C'));
      return [a, ...b, c];
    },
  };
  const store = await openStore({ db: join(location, 'quarry.db') });
  try {
    const existing = await store.getSession('crash-session').catch(() => null);
    if (!existing)
      await store.createSession({
        id: 'crash-session',
        ownerId: 'bench',
        title: 'crash',
        question: 'q',
        workflow: { name: 'crash-job', version: 1 },
        run: { kind: 'initial' },
      });
    else await new Promise((resolve) => setTimeout(resolve, 1_100)); // the dead worker's lease (1 s) expires
    await new Runner({
      store,
      workflows: new WorkflowRegistry([workflow]),
      leaseTtlMs: 1_000,
      log: () => undefined,
    }).runSession('crash-session');
  } finally {
    await store.close();
  }
}

const JobState = Annotation.Root({
  done: Annotation<string[]>({ reducer: (current, update) => current.concat(update), default: () => [] }),
});

export async function runLangGraph(location: string, work: Work): Promise<void> {
  const saver = SqliteSaver.fromConnString(join(location, 'langgraph.db'));
  let graph = new StateGraph(JobState).addNode('A', async () => ({ done: [await work('A')] })) as unknown as StateGraph<
    typeof JobState.spec,
    any,
    any,
    string
  >;
  for (const key of ['B0', 'B1', 'B2', 'B3']) graph = graph.addNode(key, async () => ({ done: [await work(key)] }));
  graph = graph.addNode('C', async () => ({ done: [await work('C')] }));
  graph.addEdge(START, 'A');
  for (const key of ['B0', 'B1', 'B2', 'B3']) {
    graph.addEdge('A', key);
    graph.addEdge(key, 'C');
  }
  graph.addEdge('C', END);
  const app = graph.compile({ checkpointer: saver });
  const config = { configurable: { thread_id: 'crash-thread' } };
  const state = await app.getState(config);
  // A fresh thread starts from the input; an interrupted one continues from its last checkpoint.
  await app.invoke(state.next.length ? null : { done: [] }, config);
}

export async function runJsonFile(location: string, work: Work): Promise<void> {
  const path = join(location, 'session.json');
  const state = existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as { done: string[] })
    : { done: [] as string[] };
  const save = () => {
    writeFileSync(`${path}.tmp`, JSON.stringify(state));
    renameSync(`${path}.tmp`, path);
  };
  // The common hand-written loop: save after each stage of the job.
  if (!state.done.includes('A done')) {
    state.done.push(await work('A'));
    save();
  }
  if (!state.done.includes('B0 done')) {
    state.done.push(...(await Promise.all(['B0', 'B1', 'B2', 'B3'].map((key) => work(key)))));
    save();
  }
  if (!state.done.includes('C done')) {
    state.done.push(await work('C'));
    save();
  }
}

export const workloads = { quarry: runQuarry, langgraph: runLangGraph, json: runJsonFile };
