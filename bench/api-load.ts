/**
 * The HTTP API under load, with the server in its own process (`quarry serve`) and this script as
 * the load generator on loopback: requests per second and latency of GET /api/sessions with 10,000
 * sessions, and how many concurrent SSE clients one server keeps fed while events flow.
 * Run alone: `node --import tsx bench/api-load.ts`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDriver, openStore } from '../src/store/open-store.ts';
import { formatMs, median, percentile, printTable, tempFolder } from './bench-lib.ts';

const root = fileURLToPath(new URL('../', import.meta.url));

async function fillSessions(path: string, count: number): Promise<string> {
  const store = await openStore({ db: path });
  const first = await store.createSession({
    ownerId: 'local',
    title: 'Live session',
    question: 'q',
    workflow: { name: 'research', version: 1 },
    run: { kind: 'initial' },
  });
  await store.updateSession(first.id, { status: 'interrupted' });
  await store.close();
  const driver = await openDriver(path);
  await driver.transaction(async (tx) => {
    for (let index = 0; index < count; index++) {
      await tx.query(
        `INSERT INTO sessions (id, owner_id, title, question, status, settings, workflow_name, workflow_version, created_at, updated_at) VALUES (?, 'local', ?, 'q', 'completed', '{}', 'research', 1, ?, ?)`,
        [`bench-${index}`, `Session ${index}`, 1_700_000_000_000 + index, 1_700_000_000_000 + index],
      );
    }
  });
  await driver.close();
  return first.id;
}

async function startServer(path: string, port: number) {
  const child = spawn(process.execPath, [join(root, 'bin/quarry'), 'serve', '--port', String(port), '--no-runner'], {
    env: { ...process.env, QUARRY_DB: path },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
    child.on('exit', () => reject(new Error('server exited')));
  });
  return child;
}

async function loadList(url: string, seconds: number, connections: number) {
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) {
        const started = performance.now();
        const response = await fetch(url);
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
      }
    }),
  );
  return {
    requests: latencies.length,
    perSecond: latencies.length / seconds,
    median: median(latencies),
    p95: percentile(latencies, 95),
  };
}

/** Opens `clients` SSE streams, appends `events` events, and counts the clients that got them all. */
async function sseClients(base: string, path: string, sessionId: string, clients: number, events: number) {
  const store = await openStore({ db: path });
  const start = (await store.getSession(sessionId)).lastEventOffset;
  const controllers: AbortController[] = [];
  const received = new Array<number>(clients).fill(0);
  const opened = await Promise.allSettled(
    received.map(async (_, index) => {
      const controller = new AbortController();
      controllers.push(controller);
      const response = await fetch(`${base}/api/sessions/${sessionId}/events?after=${start}`, {
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      void (async () => {
        const decoder = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
          if (done) return;
          received[index]! += (decoder.decode(value).match(/^id: /gm) ?? []).length;
        }
      })();
    }),
  );
  const started = performance.now();
  for (let event = 0; event < events; event++) {
    await store.appendEvent({ sessionId, event: { type: 'phase-start', data: { phase: `bench-${event}` } } });
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const deadline = Date.now() + 15_000;
  while (received.filter((count) => count >= events).length < clients && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const seconds = (performance.now() - started) / 1000;
  for (const controller of controllers) controller.abort();
  await store.close();
  return {
    opened: opened.filter((result) => result.status === 'fulfilled').length,
    complete: received.filter((count) => count >= events).length,
    seconds,
  };
}

export async function run(): Promise<void> {
  const folder = tempFolder('api');
  const path = join(folder.path, 'quarry.db');
  const port = 7900 + Math.floor(Math.random() * 50);
  try {
    const live = await fillSessions(path, 10_000);
    const server = await startServer(path, port);
    const base = `http://127.0.0.1:${port}`;
    try {
      const rows: string[][] = [];
      for (const connections of [1, 16, 64]) {
        const result = await loadList(`${base}/api/sessions?limit=50`, 5, connections);
        rows.push([
          String(connections),
          String(result.requests),
          result.perSecond.toFixed(0),
          formatMs(result.median),
          formatMs(result.p95),
        ]);
      }
      printTable(
        'GET /api/sessions?limit=50 with 10,001 sessions (SQLite; server and load generator on one 2-core machine)',
        ['connections', 'requests', 'requests/s', 'median', 'p95'],
        rows,
      );
      const sse: string[][] = [];
      for (const clients of [100, 500, 1000]) {
        const result = await sseClients(base, path, live, clients, 20);
        sse.push([String(clients), String(result.opened), String(result.complete), `${result.seconds.toFixed(1)} s`]);
      }
      printTable(
        'Concurrent SSE clients on one server, 20 events appended by another process',
        ['clients', 'streams opened', 'got every event', 'time'],
        sse,
      );
    } finally {
      server.kill('SIGTERM');
    }
  } finally {
    folder.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
