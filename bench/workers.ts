/**
 * Many workers on one PostgreSQL database: sessions completed per minute with 1, 2 and 4 worker
 * processes against a fake LLM with a fixed latency, and the time from a worker's death (SIGKILL) to
 * its sessions running again elsewhere. Run alone: `node --import tsx bench/workers.ts`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '../src/config/quarry-config.ts';
import { indexFolders } from '../src/providers/search/local-corpus/index-folders.ts';
import { localServiceContext } from '../src/service/local-context.ts';
import { startResearch } from '../src/service/start-research.ts';
import { openDriver, openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import { FakeOpenAiServer } from '../test/support/fake-openai-server.ts';
import { schemaFakeModel } from '../test/support/schema-fake-model.ts';
import { pgBenchUrl, printTable } from './bench-lib.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const docs = join(root, 'test', 'fixtures', 'corpus');
const LATENCY_MS = 200;
const SESSIONS = 24;

function worker(name: string, env: NodeJS.ProcessEnv, leaseTtl: number): ChildProcess {
  return spawn(
    process.execPath,
    [join(root, 'bin/quarry'), 'worker', '--id', name, '--concurrency', '4', '--lease-ttl', String(leaseTtl)],
    { env, stdio: 'ignore' },
  );
}

async function completedCount(store: Store): Promise<number> {
  return (await store.listSessions({ status: ['completed'], limit: 500 })).sessions.length;
}

async function withSchema<T>(work: (location: string, store: Store) => Promise<T>): Promise<T> {
  const schema = `quarry_bench_${Math.random().toString(36).slice(2, 8)}`;
  const url = new URL(pgBenchUrl);
  url.searchParams.set('schema', schema);
  const store = await openStore({ db: url.toString() });
  try {
    return await work(url.toString(), store);
  } finally {
    await store.close();
    const driver = await openDriver(pgBenchUrl, { schema });
    await driver.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await driver.close();
  }
}

async function createSessions(store: Store, env: NodeJS.ProcessEnv, count: number): Promise<void> {
  await indexFolders(store, [docs]);
  const context = localServiceContext(store, resolveConfig({ env }));
  for (let index = 0; index < count; index++) {
    await startResearch(context, {
      question: `How does tidal power work? (${index})`,
      docs: [docs],
      settings: { model: 'openai-compatible:fake', maxIterations: 1, queriesPerIteration: 2 },
    });
  }
}

export async function run(): Promise<void> {
  const fake = await new FakeOpenAiServer(schemaFakeModel(), { delayMs: LATENCY_MS }).start();
  const env = { ...process.env, QUARRY_LLM_BASE_URL: fake.baseUrl, QUARRY_LLM_API_KEY: 'k' };
  const rows: string[][] = [];
  try {
    for (const count of [1, 2, 4]) {
      const result = await withSchema(async (location, store) => {
        await createSessions(store, env, SESSIONS);
        const started = performance.now();
        const children = Array.from({ length: count }, (_, index) =>
          worker(`w${index}`, { ...env, QUARRY_DB: location }, 15),
        );
        try {
          while ((await completedCount(store)) < SESSIONS) await new Promise((resolve) => setTimeout(resolve, 100));
        } finally {
          for (const child of children) child.kill('SIGKILL');
        }
        return (performance.now() - started) / 1000;
      });
      rows.push([String(count), String(SESSIONS), `${result.toFixed(1)} s`, (SESSIONS / (result / 60)).toFixed(0)]);
    }
    printTable(
      `Sessions completed per minute (fake LLM at ${LATENCY_MS} ms per call, 4 sessions per worker at once, PostgreSQL)`,
      ['workers', 'sessions', 'wall time', 'sessions/min'],
      rows,
    );

    const failover: string[][] = [];
    for (const leaseTtl of [2, 5]) {
      const seconds = await withSchema(async (location, store) => {
        await createSessions(store, env, 4);
        const victim = worker('victim', { ...env, QUARRY_DB: location }, leaseTtl);
        let survivor: ChildProcess | null = null;
        try {
          while (
            !(await store.listSessions({ status: ['running'] })).sessions.some(
              (session) => session.lease?.workerId === 'victim',
            )
          )
            await new Promise((resolve) => setTimeout(resolve, 20));
          survivor = worker('survivor', { ...env, QUARRY_DB: location }, leaseTtl);
          await new Promise((resolve) => setTimeout(resolve, 1500)); // the survivor is up and idle
          const killedAt = performance.now();
          victim.kill('SIGKILL');
          while (
            !(await store.listSessions({ status: ['running'] })).sessions.some(
              (session) => session.lease?.workerId === 'survivor',
            )
          )
            await new Promise((resolve) => setTimeout(resolve, 20));
          return (performance.now() - killedAt) / 1000;
        } finally {
          victim.kill('SIGKILL');
          survivor?.kill('SIGKILL');
        }
      });
      failover.push([`${leaseTtl} s`, `${seconds.toFixed(2)} s`]);
    }
    printTable(
      'From SIGKILL of a worker to its sessions running on another worker',
      ['lease TTL', 'time to resume elsewhere'],
      failover,
    );
  } finally {
    await fake.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
