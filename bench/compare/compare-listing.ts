/**
 * Listing sessions: the first page of 50, newest first, with 1,000 and 100,000 sessions.
 * Run alone: `node --import tsx bench/compare/compare-listing.ts`.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';
import { openDriver, openStore } from '../../src/store/open-store.ts';
import { formatMs, median, printTable, tempFolder, timeMs } from '../bench-lib.ts';
import { langGraph, langGraphContender, payloads } from './contenders.ts';

async function timed(work: () => Promise<unknown> | unknown, runs = 20): Promise<number> {
  for (let warm = 0; warm < 3; warm++) await work();
  const times: number[] = [];
  for (let index = 0; index < runs; index++) times.push(await timeMs(work));
  return median(times);
}

async function quarryListing(count: number): Promise<number> {
  const folder = tempFolder('list-quarry');
  try {
    const path = join(folder.path, 'quarry.db');
    (await openStore({ db: path })).close();
    const driver = await openDriver(path);
    await driver.transaction(async (tx) => {
      for (let index = 0; index < count; index++) {
        await tx.query(
          `INSERT INTO sessions (id, owner_id, title, question, status, settings, workflow_name, workflow_version, created_at, updated_at) VALUES (?, 'local', ?, 'q', 'completed', '{}', 'research', 1, ?, ?)`,
          [`s-${index}`, `Session ${index}`, index, index],
        );
      }
    });
    await driver.close();
    const store = await openStore({ db: path });
    try {
      return await timed(() => store.listSessions({ ownerId: 'local', limit: 50 }));
    } finally {
      await store.close();
    }
  } finally {
    folder.remove();
  }
}

async function jsonListing(count: number): Promise<number> {
  const folder = tempFolder('list-json');
  try {
    for (let index = 0; index < count; index++)
      writeFileSync(
        join(folder.path, `s-${index}.json`),
        JSON.stringify({
          id: `s-${index}`,
          title: `Session ${index}`,
          status: 'completed',
          steps: [{ key: 'plan', output: 'q' }],
        }),
      );
    // Newest first means looking at every file's mtime, then reading the 50 newest for their titles.
    return await timed(() => {
      const files = readdirSync(folder.path).map((name) => ({
        name,
        mtime: statSync(join(folder.path, name)).mtimeMs,
      }));
      files.sort((a, b) => b.mtime - a.mtime);
      return files
        .slice(0, 50)
        .map((file) => (JSON.parse(readFileSync(join(folder.path, file.name), 'utf8')) as { title: string }).title);
    }, 5);
  } finally {
    folder.remove();
  }
}

async function langGraphListing(count: number): Promise<number> {
  const folder = tempFolder('list-langgraph');
  try {
    const contender = langGraphContender('sqlite');
    const step = payloads(1);
    for (let index = 0; index < count; index++) await contender.run(folder.path, `s-${index}`, step);
    const saver = SqliteSaver.fromConnString(join(folder.path, 'langgraph.db'));
    const database = new Database(join(folder.path, 'langgraph.db'), { readonly: true });
    try {
      // Threads are not first-class: find the newest checkpoints, then load each thread's state.
      return await timed(async () => {
        const threads = database
          .prepare(
            'SELECT thread_id, MAX(checkpoint_id) AS latest FROM checkpoints GROUP BY thread_id ORDER BY latest DESC LIMIT 50',
          )
          .all() as { thread_id: string }[];
        for (const thread of threads) await saver.getTuple({ configurable: { thread_id: thread.thread_id } });
      }, 5);
    } finally {
      database.close();
    }
  } finally {
    folder.remove();
  }
}

/** LangGraph threads on QuarrySaver are Quarry sessions: the store lists them, then each thread's state is loaded. */
async function quarrySaverListing(count: number): Promise<number> {
  const folder = tempFolder('list-quarry-saver');
  try {
    const saver = await QuarrySaver.open(join(folder.path, 'quarry.db'));
    const store = await openStore({ db: join(folder.path, 'quarry.db') });
    try {
      const step = payloads(1);
      for (let index = 0; index < count; index++)
        await langGraph(step, [])
          .compile({ checkpointer: saver })
          .invoke({ target: 1 }, { configurable: { thread_id: `s-${index}` } });
      return await timed(async () => {
        const { sessions } = await store.listSessions({ ownerId: 'local', limit: 50 });
        for (const session of sessions)
          await saver.getTuple({ configurable: { thread_id: session.title.replace('LangGraph thread ', '') } });
      }, 5);
    } finally {
      await store.close();
      await saver.close();
    }
  } finally {
    folder.remove();
  }
}

function bareListing(count: number): number {
  const folder = tempFolder('list-bare');
  try {
    mkdirSync(folder.path, { recursive: true });
    const database = new Database(join(folder.path, 'bare.db'));
    database.exec(
      'CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, updated_at INTEGER); CREATE INDEX by_update ON sessions (updated_at DESC)',
    );
    const insert = database.prepare('INSERT INTO sessions VALUES (?, ?, ?)');
    database.transaction(() => {
      for (let index = 0; index < count; index++) insert.run(`s-${index}`, `Session ${index}`, index);
    })();
    const select = database.prepare('SELECT * FROM sessions ORDER BY updated_at DESC LIMIT 50');
    const times: number[] = [];
    for (let index = 0; index < 50; index++) {
      const started = performance.now();
      select.all();
      times.push(performance.now() - started);
    }
    database.close();
    return median(times);
  } finally {
    folder.remove();
  }
}

export async function run(): Promise<void> {
  const rows: string[][] = [];
  rows.push(['Quarry (SQLite)', formatMs(await quarryListing(1_000)), formatMs(await quarryListing(100_000))]);
  rows.push([
    'LangGraph SqliteSaver',
    formatMs(await langGraphListing(1_000)),
    'not run: creating 100,000 threads one run at a time was too slow for this run',
  ]);
  rows.push([
    'LangGraph on QuarrySaver (SQLite)',
    formatMs(await quarrySaverListing(1_000)),
    `${formatMs(await quarrySaverListing(10_000))} at 10,000 threads (each made by a graph run)`,
  ]);
  rows.push(['JSON file per session', formatMs(await jsonListing(1_000)), formatMs(await jsonListing(100_000))]);
  rows.push(['bare SQLite table (floor)', formatMs(bareListing(1_000)), formatMs(bareListing(100_000))]);
  printTable(
    'Listing: first page of 50 sessions, newest first (median)',
    ['store', '1,000 sessions', '100,000 sessions'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
