/**
 * The ways to persist an agent session that the comparison benchmarks measure side by side, each
 * doing the same research-like work: every step appends a fetched page and a note (~10 KB).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Runner } from '../../src/engine/runner.ts';
import { type Workflow, WorkflowRegistry } from '../../src/engine/workflow.ts';
import { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';
import { openStore } from '../../src/store/open-store.ts';
import { folderBytes, pageText, seededRandom } from '../bench-lib.ts';

export interface StepPayload {
  page: string;
  note: string;
}

export function payloads(count: number, seed = 3): StepPayload[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => ({ page: pageText(random, 9_500), note: pageText(random, 500) }));
}

/** One persistence approach. `location` is a fresh folder (SQLite, files) or a connection string. */
export interface Contender {
  name: string;
  /** Runs a session of `steps` steps; returns each step's latency in ms (work start to next work start). */
  run(location: string, session: string, steps: StepPayload[]): Promise<number[]>;
  /** Bytes the store occupies after the run. */
  bytes(location: string): Promise<number>;
  /** Time to open the store and reach the point where the next step can run, in ms. */
  resume(location: string, session: string, steps: number): Promise<number>;
}

function gaps(starts: number[], end: number): number[] {
  return starts.map((start, index) => (starts[index + 1] ?? end) - start);
}

// Quarry ---------------------------------------------------------------------------------------

function quarryWorkflow(steps: StepPayload[], starts: number[], stopAt?: number): Workflow<{ steps: number }, number> {
  return {
    name: 'bench-steps',
    version: 1,
    async run(ctx, input) {
      const total = stopAt === undefined ? input.steps : stopAt + 1;
      for (let index = 0; index < total; index++) {
        await ctx.step({ key: `iteration-${Math.floor(index / 4)}/read-${index % 4}`, phase: 'read' }, () => {
          starts.push(performance.now());
          if (index === stopAt) throw new Error('resume point reached');
          return steps[index] ?? { page: '', note: '' };
        });
      }
      return input.steps;
    },
  };
}

export function quarry(backend: 'sqlite' | 'postgres'): Contender {
  const db = (location: string) => (backend === 'sqlite' ? join(location, 'quarry.db') : location);
  return {
    name: `Quarry (${backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'})`,
    async run(location, session, steps) {
      const store = await openStore({ db: db(location) });
      const starts: number[] = [];
      try {
        await store.createSession({
          id: session,
          ownerId: 'bench',
          title: session,
          question: 'q',
          workflow: { name: 'bench-steps', version: 1 },
          run: { kind: 'initial', input: { steps: steps.length } },
        });
        await new Runner({
          store,
          workflows: new WorkflowRegistry([quarryWorkflow(steps, starts)]),
          leaseTtlMs: 600_000,
        }).runSession(session);
        return gaps(starts, performance.now());
      } finally {
        await store.close();
      }
    },
    async bytes(location) {
      if (backend === 'sqlite') {
        const database = new Database(db(location));
        database.pragma('wal_checkpoint(TRUNCATE)');
        database.close();
        return folderBytes(location);
      }
      return postgresSchemaBytes(location);
    },
    async resume(location, session, steps) {
      const started = performance.now();
      const starts: number[] = [];
      const store = await openStore({ db: db(location) });
      try {
        // Replays the journaled steps, then starts step `steps`: the point where work continues.
        await new Runner({
          store,
          workflows: new WorkflowRegistry([quarryWorkflow([], starts, steps)]),
          log: () => undefined,
        }).runSession(session, { fromStatuses: ['completed', 'failed', 'interrupted'] });
        return starts.at(-1)! - started;
      } finally {
        await store.close();
      }
    },
  };
}

// LangGraph --------------------------------------------------------------------------------------

const GraphState = Annotation.Root({
  pages: Annotation<StepPayload[]>({ reducer: (current, update) => current.concat(update), default: () => [] }),
  count: Annotation<number>({ reducer: (_current, update) => update, default: () => 0 }),
  target: Annotation<number>({ reducer: (_current, update) => update, default: () => 0 }),
});

export function langGraph(steps: StepPayload[], starts: number[]) {
  return new StateGraph(GraphState)
    .addNode('work', (state) => {
      starts.push(performance.now());
      return { pages: [steps[state.count]!], count: state.count + 1 };
    })
    .addEdge(START, 'work')
    .addConditionalEdges('work', (state) => (state.count < state.target ? 'work' : END));
}

/**
 * The same LangGraph graph on a checkpointer: LangGraph's own (SqliteSaver, PostgresSaver), or
 * Quarry's store through `quarry/langgraph` (`QuarrySaver`).
 */
export function langGraphContender(
  backend: 'sqlite' | 'postgres',
  saverKind: 'langgraph' | 'quarry' = 'langgraph',
): Contender {
  const saverFor = async (location: string) => {
    if (saverKind === 'quarry')
      return QuarrySaver.open(backend === 'sqlite' ? join(location, 'quarry-saver.db') : location);
    if (backend === 'sqlite') return SqliteSaver.fromConnString(join(location, 'langgraph.db'));
    const saver = PostgresSaver.fromConnString(withoutSchema(location), { schema: schemaOf(location) });
    await saver.setup();
    return saver;
  };
  const closeSaver = async (saver: unknown) => {
    if (saver instanceof PostgresSaver) await saver.end();
    if (saver instanceof QuarrySaver) await saver.close();
  };
  return {
    name:
      saverKind === 'quarry'
        ? `LangGraph on QuarrySaver (${backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'})`
        : `LangGraph ${backend === 'sqlite' ? 'SqliteSaver' : 'PostgresSaver'}`,
    async run(location, session, steps) {
      const saver = await saverFor(location);
      const starts: number[] = [];
      try {
        await langGraph(steps, starts)
          .compile({ checkpointer: saver })
          .invoke(
            { target: steps.length },
            { configurable: { thread_id: session }, recursionLimit: steps.length * 2 + 10 },
          );
        return gaps(starts, performance.now());
      } finally {
        await closeSaver(saver);
      }
    },
    async bytes(location) {
      if (backend === 'postgres') return postgresSchemaBytes(location);
      // The same measure for every SQLite store: its pages after the write-ahead log is folded in.
      const file = join(location, saverKind === 'quarry' ? 'quarry-saver.db' : 'langgraph.db');
      const database = new Database(file);
      database.pragma('wal_checkpoint(TRUNCATE)');
      database.close();
      return folderBytes(location);
    },
    async resume(location, session) {
      const started = performance.now();
      const saver = await saverFor(location);
      try {
        // The latest checkpoint holds the whole state: loading it is what a resume must do first.
        await langGraph([], [])
          .compile({ checkpointer: saver })
          .getState({ configurable: { thread_id: session } });
        return performance.now() - started;
      } finally {
        await closeSaver(saver);
      }
    },
  };
}

// One JSON file per session -------------------------------------------------------------------------

export const jsonFile: Contender = {
  name: 'JSON file per session',
  async run(location, session, steps) {
    const path = join(location, `${session}.json`);
    const state = {
      id: session,
      title: session,
      status: 'running',
      updatedAt: 0,
      steps: [] as { key: string; output: StepPayload }[],
    };
    const starts: number[] = [];
    for (const [index, payload] of steps.entries()) {
      starts.push(performance.now());
      state.steps.push({ key: `step-${index}`, output: payload });
      state.updatedAt = Date.now();
      // The usual hand-written durability: write everything to a temporary file, rename over the old one.
      writeFileSync(`${path}.tmp`, JSON.stringify(state));
      renameSync(`${path}.tmp`, path);
    }
    return gaps(starts, performance.now());
  },
  async bytes(location) {
    return folderBytes(location);
  },
  async resume(location, session) {
    const started = performance.now();
    const state = JSON.parse(readFileSync(join(location, `${session}.json`), 'utf8')) as { steps: unknown[] };
    void state.steps.length;
    return performance.now() - started;
  },
};

// The bare database: one row per step -----------------------------------------------------------------

export const bareSqlite: Contender = {
  name: 'bare SQLite insert (floor)',
  async run(location, session, steps) {
    const database = new Database(join(location, 'bare.db'));
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.exec(
      'CREATE TABLE IF NOT EXISTS steps (session TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (session, seq))',
    );
    const insert = database.prepare('INSERT INTO steps (session, seq, payload) VALUES (?, ?, ?)');
    const starts: number[] = [];
    for (const [index, payload] of steps.entries()) {
      starts.push(performance.now());
      insert.run(session, index, JSON.stringify(payload));
    }
    const end = performance.now();
    database.pragma('wal_checkpoint(TRUNCATE)');
    database.close();
    return gaps(starts, end);
  },
  async bytes(location) {
    return folderBytes(location);
  },
  async resume(location, session) {
    const started = performance.now();
    const database = new Database(join(location, 'bare.db'));
    const rows = database.prepare('SELECT payload FROM steps WHERE session = ? ORDER BY seq').all(session) as {
      payload: string;
    }[];
    for (const row of rows) JSON.parse(row.payload);
    database.close();
    return performance.now() - started;
  },
};

// PostgreSQL helpers --------------------------------------------------------------------------------

export function schemaOf(location: string): string {
  return new URL(location).searchParams.get('schema') ?? 'public';
}

export function withoutSchema(location: string): string {
  const url = new URL(location);
  url.searchParams.delete('schema');
  return url.toString();
}

export async function postgresSchemaBytes(location: string): Promise<number> {
  const client = new pg.Client({ connectionString: withoutSchema(location) });
  await client.connect();
  try {
    await client.query('VACUUM');
    const result = await client.query(
      "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
      [schemaOf(location)],
    );
    return Number(result.rows[0].bytes);
  } finally {
    await client.end();
  }
}

export async function dropSchema(location: string): Promise<void> {
  const client = new pg.Client({ connectionString: withoutSchema(location) });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schemaOf(location)} CASCADE`);
  } finally {
    await client.end();
  }
}
