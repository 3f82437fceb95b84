/**
 * Parallel LangGraph nodes on PostgreSQL: a planner fans out to 16 nodes that each write the same
 * two new values (half of them in the other key order), a join, 20 rounds. Wall time and the
 * deadlocks PostgreSQL counted, QuarrySaver beside LangGraph's PostgresSaver.
 * Run alone: `node --import tsx bench/compare/compare-fanout.ts`.
 */
import { Annotation, type BaseCheckpointSaver, END, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';
import { inPostgresSchema, median, pgBenchUrl, printTable } from '../bench-lib.ts';

const WIDTH = 16;
const ROUNDS = 20;
const REPEATS = 3;

const State = Annotation.Root({
  results: Annotation<string[]>({ reducer: (current, update) => current.concat(update), default: () => [] }),
  status: Annotation<string>({ reducer: (_current, update) => update, default: () => '' }),
  round: Annotation<number>({ reducer: (_current, update) => update, default: () => 0 }),
});

function fanOut() {
  const graph = new StateGraph(State)
    .addNode('plan', (state) => ({ round: state.round + 1 }))
    .addNode('join', () => ({}));
  const workers = Array.from({ length: WIDTH }, (_, index) => `worker${index}`);
  for (const [index, name] of workers.entries()) {
    graph.addNode(name, (state) => {
      const results = [`findings of round ${state.round}`];
      const status = `round ${state.round} done`;
      return index % 2 ? { results, status } : { status, results };
    });
  }
  // Node names made in a loop: LangGraph's types track literal names, so the graph is widened to `string`.
  const wired = graph as unknown as StateGraph<typeof State.spec, typeof State.State, typeof State.Update, string>;
  wired.addEdge(START, 'plan');
  for (const name of workers) {
    wired.addEdge('plan', name);
    wired.addEdge(name, 'join');
  }
  wired.addConditionalEdges('join', (state) => (state.round < ROUNDS ? 'plan' : END));
  return wired;
}

async function deadlocks(): Promise<number> {
  const client = new pg.Client({ connectionString: pgBenchUrl });
  await client.connect();
  try {
    // Backends report their counters when they end; give the saver's closed connections a moment.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await client.query('SELECT pg_stat_clear_snapshot()');
    const result = await client.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()');
    return Number(result.rows[0].deadlocks);
  } finally {
    await client.end();
  }
}

async function once(kind: 'quarry' | 'langgraph', schema: string, round: number): Promise<[number, number]> {
  const url = new URL(pgBenchUrl);
  url.searchParams.set('schema', schema);
  let saver: BaseCheckpointSaver;
  if (kind === 'quarry') saver = await QuarrySaver.open(url.toString());
  else {
    const postgres = PostgresSaver.fromConnString(pgBenchUrl, { schema });
    await postgres.setup();
    saver = postgres;
  }
  const before = await deadlocks();
  const started = performance.now();
  await fanOut()
    .compile({ checkpointer: saver })
    .invoke({}, { configurable: { thread_id: `fan-out-${round}` }, recursionLimit: ROUNDS * 4 + 10 });
  const ms = performance.now() - started;
  if (saver instanceof QuarrySaver) await saver.close();
  if (saver instanceof PostgresSaver) await saver.end();
  return [ms, (await deadlocks()) - before];
}

export async function run(): Promise<void> {
  console.log(`\nInputs: ${WIDTH} parallel nodes × ${ROUNDS} rounds, ${REPEATS} runs each, median.`);
  const rows: (string | number)[][] = [];
  for (const [label, kind] of [
    ['LangGraph PostgresSaver', 'langgraph'],
    ['LangGraph on QuarrySaver (PostgreSQL)', 'quarry'],
  ] as const) {
    await inPostgresSchema(
      async (schema) => {
        const times: number[] = [];
        let total = 0;
        for (let round = 0; round < REPEATS; round++) {
          const [ms, counted] = await once(kind, schema, round);
          times.push(ms);
          total += counted;
        }
        rows.push([label, `${Math.round(median(times))} ms`, total]);
      },
      (reason) => rows.push([label, reason, '']),
    );
  }
  printTable(
    'Parallel nodes writing equal values (PostgreSQL)',
    ['checkpointer', 'run, median', 'deadlocks, all runs'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
