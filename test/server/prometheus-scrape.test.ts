import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { localServiceContext } from '../../src/service/local-context.ts';
import { startResearch } from '../../src/service/start-research.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'corpus');

/** Debian's Prometheus server (package prometheus, which .ci/run installs). */
function findPrometheus(): string | null {
  if (existsSync('/usr/bin/prometheus')) return '/usr/bin/prometheus';
  if (process.env.CI === 'true') throw new Error('CI=true but /usr/bin/prometheus is missing: .ci/run installs it.');
  return null;
}
const prometheus = findPrometheus();

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Vector {
  metric: Record<string, string>;
  value: [number, string];
}

describe.skipIf(prometheus === null)('Prometheus scrapes a server and a worker (issue 36)', () => {
  let database: TestDatabase;
  let server: RunningServer | undefined;
  let fake: FakeOpenAiServer;
  let folder: string;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    database = await sqliteHarness.create();
    fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    folder = mkdtempSync(join(tmpdir(), 'quarry-prometheus-'));
  });
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const close of closers.splice(0)) await close();
    await server?.close();
    await fake.stop();
    await database.destroy();
    rmSync(folder, { recursive: true, force: true });
  });

  it('a PromQL query over its API returns the queue depth both report', { timeout: within(120_000) }, async () => {
    const env = {
      ...childEnv(),
      QUARRY_DB: database.location,
      QUARRY_LLM_BASE_URL: fake.baseUrl,
      QUARRY_LLM_API_KEY: 'k',
    };
    const config = testConfig(env);
    // Three sessions; the worker (one at a time) holds the first mid-run, so two stay queued.
    for (const label of ['a', 'b', 'c'])
      await startResearch(localServiceContext(database.store, config), {
        question: `How does tidal power work? (${label})`,
        docs: [fixtures],
        settings: { model: 'openai-compatible:fake', maxIterations: 1 },
      });
    fake.holdAfter(0);
    server = await startServer({
      store: database.store,
      config: testConfig({ ...env, QUARRY_PORT: '0' }),
      runner: false,
      log: () => undefined,
    });
    const worker = spawn(
      process.execPath,
      [join(root, 'bin', 'quarry'), 'worker', '--id', 'scraped', '--concurrency', '1', '--metrics-port', '0'],
      { env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(worker);
    let workerLog = '';
    worker.stderr!.on('data', (chunk) => {
      workerLog += chunk;
    });
    await eventually(() => /metrics at http:\/\/\S+/.test(workerLog), 20_000);
    const workerMetrics = new URL(/metrics at (http:\/\/\S+)/.exec(workerLog)![1]!);
    await fake.waitUntilHeld();

    // The server is scraped by a service name, as compose's Prometheus does (`api-1:7777`): through
    // a forward proxy, so the request's Host is that name (issue 45: Quarry answered it 403).
    const proxy = createHttpServer((request, response) => {
      const target = new URL(request.url!);
      const forwarded = httpRequest(
        { host: '127.0.0.1', port: new URL(server!.url).port, path: target.pathname, headers: request.headers },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forwarded.on('error', () => response.destroy());
      request.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => proxy.close(() => resolve(undefined))));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const port = await freePort();
    const configFile = join(folder, 'prometheus.yml');
    writeFileSync(
      configFile,
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: serve',
        `    proxy_url: ${proxyUrl}`,
        '    static_configs:',
        "      - targets: ['quarry-api-1:7777']",
        '  - job_name: worker',
        '    static_configs:',
        `      - targets: ['${workerMetrics.host}']`,
        '',
      ].join('\n'),
    );
    children.push(
      spawn(
        prometheus!,
        [
          `--config.file=${configFile}`,
          `--storage.tsdb.path=${join(folder, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdio: 'ignore' },
      ),
    );
    const query = async (promql: string): Promise<Vector[]> => {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(
        () => null,
      );
      if (!response?.ok) return [];
      return ((await response.json()) as { data: { result: Vector[] } }).data.result;
    };

    // Both targets are up, and each reports the same queue: two queued, one running.
    await eventually(async () => (await query('up == 1')).length === 2, 30_000);
    await eventually(async () => {
      const queued = await query('sum by (job) (quarry_sessions{status="queued"})');
      return queued.length === 2 && queued.every((each) => each.value[1] === '2');
    }, 30_000);
    const running = await query('quarry_sessions{status="running",job="worker"}');
    expect(running.map((each) => each.value[1])).toEqual(['1']);
    const active = await query('quarry_runner_active_sessions{job="worker"}');
    expect(active.map((each) => each.value[1])).toEqual(['1']);
  });
});
