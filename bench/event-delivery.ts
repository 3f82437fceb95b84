/**
 * How late a browser hears of a research's progress: the time from an event's commit (its
 * `createdAt`) to its arrival over `GET /api/sessions/:id/events`, while the offline analyst runs
 * on a real manual. Two ways of running the same questions: the server runs them itself (what the
 * web UI does), or a `quarry run` process beside the server runs them and the server follows the
 * shared SQLite file (what the CLI does). Before steps let the process's I/O run, the server-run
 * column was p95 0.6–0.8 s with events arriving in batches; the goal is p95 ≤ 250 ms.
 * Corpus: BENCH_DOCS, else Debian's git-doc when installed, else the repository's docs/.
 * Run alone: `node --import tsx bench/event-delivery.ts`.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startServer } from '../src/server/serve.ts';
import { sqliteHarness } from '../src/store/sqlite/sqlite-harness.ts';
import { testConfig } from '../test/support/test-config.ts';
import { envInteger, formatMs, median, percentile, printTable } from './bench-lib.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const docs =
  process.env.BENCH_DOCS ?? (existsSync('/usr/share/doc/git-doc') ? '/usr/share/doc/git-doc' : join(root, 'docs'));
const RUNS = envInteger('BENCH_RUNS', 5);
const questions = [
  'How do I rewrite the author of old commits?',
  'How does git bisect find a bad commit?',
  'What does git stash do with untracked files?',
  'How do I undo the last commit but keep its changes?',
  'What is the difference between merge and rebase?',
];

interface Delivery {
  /** Commit to arrival, per event committed after the stream was open. */
  lagsMs: number[];
  runMs: number;
}

/** Follows a session's events until its run ends; each event's lag from its commit to arrival. */
async function follow(url: string, sessionId: string, since: number): Promise<Delivery> {
  const response = await fetch(`${url}/api/sessions/${sessionId}/events`);
  const lagsMs: number[] = [];
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    const arrived = Date.now();
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
        .join('\n')
        .trim();
      if (!data.startsWith('{')) continue;
      const event = JSON.parse(data) as { type?: string; createdAt?: string };
      if (!event.createdAt) continue;
      const committed = Date.parse(event.createdAt);
      first = Math.min(first, committed);
      last = Math.max(last, committed);
      if (committed >= since) lagsMs.push(arrived - committed);
      if (event.type === 'run-end') return { lagsMs, runMs: last - first };
    }
  }
  throw new Error(`the stream of ${sessionId} ended before its run did`);
}

async function serverRuns(url: string, question: string): Promise<Delivery> {
  const response = await fetch(`${url}/api/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ question, docs: [docs] }),
  });
  const session = (await response.json()) as { id: string };
  return follow(url, session.id, 0);
}

async function processRuns(url: string, databasePath: string, question: string): Promise<Delivery> {
  const child = spawn(join(root, 'bin/quarry'), ['run', question, '--docs', docs, '--json'], {
    env: { ...process.env, QUARRY_DB: databasePath, QUARRY_HOME: join(databasePath, '..') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const lines = createInterface({ input: child.stdout! });
  let sessionId = '';
  for await (const line of lines) {
    sessionId = (JSON.parse(line) as { sessionId?: string }).sessionId ?? '';
    if (sessionId) break;
  }
  // Only events committed once the stream is open count: the ones before it are history, not lag.
  const delivery = await follow(url, sessionId, Date.now() + 50);
  child.stdout!.resume();
  await exited;
  return delivery;
}

async function main() {
  const database = await sqliteHarness.create();
  const server = await startServer({
    store: database.store,
    config: testConfig({ QUARRY_DOCS: docs, QUARRY_PORT: '0' }),
    runner: true,
    log: () => undefined,
  });
  console.log(`event-delivery: ${RUNS} offline researches each way on ${docs}, SQLite`);
  const rows: (string | number)[][] = [];
  try {
    // The first run indexes the corpus; it is not measured.
    await serverRuns(server.url, 'warm up: what is a commit?');
    const ways: [string, (question: string) => Promise<Delivery>][] = [
      ['the server runs it', (question) => serverRuns(server.url, question)],
      ['a quarry run process runs it', (question) => processRuns(server.url, database.location, question)],
    ];
    for (const [way, run] of ways) {
      const deliveries: Delivery[] = [];
      for (let index = 0; index < RUNS; index++) deliveries.push(await run(questions[index % questions.length]!));
      const lags = deliveries.flatMap((delivery) => delivery.lagsMs);
      rows.push([
        way,
        lags.length,
        formatMs(median(lags)),
        formatMs(percentile(lags, 95)),
        formatMs(Math.max(...lags)),
        formatMs(median(deliveries.map((delivery) => delivery.runMs))),
      ]);
    }
  } finally {
    await server.close();
    await database.destroy();
  }
  printTable(
    'Commit to browser, per event (goal: p95 ≤ 250 ms)',
    ['who runs the research', 'events', 'median', 'p95', 'max', 'run (median)'],
    rows,
  );
}

await main();
