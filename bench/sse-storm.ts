/**
 * A reconnect storm: 100 event-stream clients connect to one `quarry serve` at once, each reads a
 * finished session's whole event log (a replay: what every client of a restarted server asks for),
 * disconnects and connects again, five rounds, without waiting the `retry:` the server asks for
 * (the worst client). Meanwhile a probe asks `/healthz` every 100 ms. Printed: how long `/healthz`
 * took, how long a round took, and what the clients met (429 past the per-user stream cap, a stream
 * that broke, a client that gave up after 30 s), beside the same storm with the cap raised out of
 * the way (`limits.streams: 1000`, where an operator who raised it stands).
 * Run alone: `node --import tsx bench/sse-storm.ts` (after `npm run build`).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envInteger, formatMs, median, percentile, printTable, tempFolder } from './bench-lib.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const quarry = join(root, 'bin', 'quarry');
const CLIENTS = envInteger('BENCH_CLIENTS', 100);
const ROUNDS = envInteger('BENCH_ROUNDS', 5);
const GIVE_UP_MS = 30_000;

interface Outcome {
  completed: number;
  refused: number;
  broken: number;
  abandoned: number;
  roundMs: number[];
  healthMs: number[];
  events: number;
}

async function startServe(home: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [quarry, 'serve', '--port', '0', '--no-runner'], {
    env: { ...process.env, QUARRY_HOME: home },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk) => {
      log += chunk;
      const found = /listening on (http:\/\/\S+?) /.exec(log);
      if (found) resolve(found[1]!);
    });
    child.on('exit', () => reject(new Error(`serve exited: ${log}`)));
  });
  return { child, url };
}

/** How many events one full replay carried. */
let eventsReplayed = 0;

/** One client: reads the session's events from the start until the run's end; how it went. */
async function replay(url: string, sessionId: string): Promise<'completed' | 'refused' | 'broken' | 'abandoned'> {
  const controller = new AbortController();
  let gaveUp = false;
  const timer = setTimeout(() => {
    gaveUp = true;
    controller.abort();
  }, GIVE_UP_MS);
  let stage = 'connect';
  try {
    const response = await fetch(`${url}/api/sessions/${sessionId}/events`, { signal: controller.signal });
    stage = `status ${response.status}`;
    if (response.status === 429) {
      await response.body?.cancel();
      return 'refused';
    }
    if (!response.ok || !response.body) return 'broken';
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return 'broken';
      text += decoder.decode(value, { stream: true });
      stage = `read ${text.length} bytes`;
      if (text.includes('event: run-end')) {
        eventsReplayed = text.split('\nevent: ').length - 1;
        await reader.cancel().catch(() => undefined);
        return 'completed';
      }
    }
  } catch (error) {
    if (process.env.BENCH_DEBUG) console.error(stage, (error as Error).message);
    return gaveUp ? 'abandoned' : 'broken';
  } finally {
    clearTimeout(timer);
  }
}

async function storm(streamsPerUser: number | null): Promise<Outcome> {
  const home = tempFolder('storm');
  try {
    if (streamsPerUser !== null)
      writeFileSync(
        join(home.path, 'config.json'),
        JSON.stringify({ server: { limits: { streams: streamsPerUser } } }),
      );
    // A finished research whose event log every client replays.
    const run = spawnSync(
      process.execPath,
      [quarry, '--json', 'run', 'How does tidal power work?', '--docs', join(root, 'test', 'fixtures', 'corpus')],
      { env: { ...process.env, QUARRY_HOME: home.path }, encoding: 'utf8' },
    );
    const sessionId = (JSON.parse(run.stdout.split('\n')[0]!) as { sessionId: string }).sessionId;
    const { child, url } = await startServe(home.path);
    const outcome: Outcome = {
      completed: 0,
      refused: 0,
      broken: 0,
      abandoned: 0,
      roundMs: [],
      healthMs: [],
      events: 0,
    };
    let storming = true;
    const probe = (async () => {
      while (storming) {
        const started = performance.now();
        await fetch(`${url}/healthz`).then((response) => response.text());
        outcome.healthMs.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    for (let round = 0; round < ROUNDS; round++) {
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: CLIENTS }, () => replay(url, sessionId)));
      outcome.roundMs.push(performance.now() - started);
      for (const result of results) outcome[result]++;
    }
    storming = false;
    await probe;
    outcome.events = eventsReplayed;
    child.kill('SIGKILL');
    return outcome;
  } finally {
    home.remove();
  }
}

const rows: string[][] = [];
for (const [label, cap] of [
  ['default (32 streams per user)', null],
  ['cap raised (1,000 per user)', 1000],
] as const) {
  const outcome = await storm(cap);
  rows.push([
    label,
    String(outcome.events),
    formatMs(median(outcome.healthMs)),
    formatMs(percentile(outcome.healthMs, 95)),
    formatMs(Math.max(...outcome.healthMs)),
    formatMs(median(outcome.roundMs)),
    formatMs(Math.max(...outcome.roundMs)),
    `${outcome.completed}/${outcome.refused}/${outcome.broken}/${outcome.abandoned}`,
  ]);
}
printTable(
  `Reconnect storm: ${CLIENTS} clients × ${ROUNDS} rounds, each replaying a finished session's events`,
  ['server', 'events', '/healthz p50', 'p95', 'max', 'round p50', 'round max', 'streams done/429/broken/gave up'],
  rows,
);
