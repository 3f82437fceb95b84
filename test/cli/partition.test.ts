import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { within } from '../support/bounds.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { fakeModelEnv } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A silent network partition between a foreground run and its PostgreSQL: no reset, no error, the
 * database simply stops answering mid-run. The run must not hang: once its lease has lapsed it stops,
 * says so and exits; when the network returns, the session resumes with nothing lost.
 */
describe.skipIf(postgresSkipReason() !== null)('quarry run through a silent network partition', () => {
  let home: string;
  let fake: FakeOpenAiServer;
  let database: TestDatabase;
  let proxy: TcpProxy;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), 'quarry-partition-'));
    cpSync(join(root, 'test', 'fixtures', 'corpus'), join(home, 'docs'), { recursive: true });
    fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    database = await postgresHarness.create();
    const url = new URL(database.location);
    proxy = await new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) }).start();
    url.host = `127.0.0.1:${proxy.port}`;
    env = {
      PATH: process.env.PATH,
      HOME: home,
      QUARRY_HOME: home,
      QUARRY_DB: url.toString(),
      ...fakeModelEnv(fake.baseUrl),
    };
  });
  afterEach(async () => {
    fake.release();
    proxy.heal();
    await proxy.stop();
    await database.destroy();
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const quarry = (args: string[]) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'quarry'), ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    return { child, exited, output: () => output };
  };

  /** The exit code, or 'hung' (and the process killed) past a generous bound. */
  const exitOrHang = async (run: ReturnType<typeof quarry>) => {
    const code = await Promise.race([
      run.exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), within(90_000)).unref()),
    ]);
    if (code === 'hung') run.child.kill('SIGKILL');
    return code;
  };

  /** Starts a research in the foreground, and silences the network while its second model call is out. */
  const runUntilPartitioned = async () => {
    fake.holdAfter(1);
    const run = quarry(['run', 'How does tidal power generate electricity?', '--docs', join(home, 'docs')]);
    await fake.waitUntilHeld(within(30_000));
    const [session] = (await database.store.listSessions()).sessions;
    // Its answer then has nowhere to be written.
    proxy.blackhole();
    fake.release();
    return { run, session: session! };
  };

  it('stops once its lease lapses, says so, and resumes when the network returns', {
    timeout: within(120_000),
  }, async () => {
    const { run, session } = await runUntilPartitioned();
    const code = await exitOrHang(run);
    expect(code, run.output()).toBe(5);
    expect(run.output()).toContain(
      'its lease lapsed while the store could not be reached, and no other worker has taken it',
    );
    expect(run.output()).not.toContain('nothing handled');

    proxy.heal();
    const resumed = quarry(['resume', session.id.slice(0, 8)]);
    expect(await resumed.exited, resumed.output()).toBe(0);
    expect(resumed.output()).toContain(`Session ${session.id} completed`);
    const journal = await database.store.loadJournal((await database.store.getSession(session.id)).currentRunId!);
    expect(journal.filter((step) => step.status === 'completed').length).toBeGreaterThan(3);
  });

  it('ends a Ctrl-C given during the partition once the lease lapses, without a second Ctrl-C', {
    timeout: within(120_000),
  }, async () => {
    const { run } = await runUntilPartitioned();
    // The stop cannot be recorded (the store is silent); the lease running out still ends the run.
    run.child.kill('SIGINT');
    const code = await exitOrHang(run);
    expect(code, run.output()).toBe(5);
    expect(run.output()).toContain('its lease lapsed while the store could not be reached');
  });

  it('lets a worker told to stop during the partition exit', { timeout: within(120_000) }, async () => {
    fake.holdAfter(1);
    const started = quarry([
      'run',
      'How does tidal power generate electricity?',
      '--docs',
      join(home, 'docs'),
      '--detach',
    ]);
    expect(await started.exited, started.output()).toBe(0);
    const worker = quarry(['worker']);
    await fake.waitUntilHeld(within(30_000));
    proxy.blackhole();
    fake.release();
    worker.child.kill('SIGTERM');
    const code = await exitOrHang(worker);
    expect(code, worker.output()).toBe(0);
  });

  it('lets a server told to stop during the partition exit', { timeout: within(120_000) }, async () => {
    fake.holdAfter(1);
    const serve = quarry(['serve', '--port', '0', '--docs', join(home, 'docs')]);
    await eventually(() => /listening on (http:\/\/\S+)/.test(serve.output()), 30_000);
    const url = /listening on (http:\/\/\S+)/.exec(serve.output())![1]!;
    const created = await fetch(`${url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'How does tidal power generate electricity?' }),
    });
    expect(created.status).toBe(201);
    await fake.waitUntilHeld(within(30_000));
    proxy.blackhole();
    fake.release();
    serve.child.kill('SIGTERM');
    const code = await exitOrHang(serve);
    expect(code, serve.output()).toBe(0);
  });

  it('keeps /metrics answering and every log line JSON while the database is silent', {
    timeout: within(120_000),
  }, async () => {
    env = { ...env, QUARRY_LOG_FORMAT: 'json' };
    const serve = quarry(['serve', '--port', '0', '--docs', join(home, 'docs')]);
    await eventually(() => /listening on (http:\/\/[^\s"]+)/.test(serve.output()), 30_000);
    const url = /listening on (http:\/\/[^\s"]+)/.exec(serve.output())![1]!;
    const scrape = async () => {
      const started = performance.now();
      const response = await fetch(`${url}/metrics`);
      return { status: response.status, text: await response.text(), ms: performance.now() - started };
    };
    const before = await scrape();
    expect(before.text).toMatch(/^quarry_store_reachable 1$/m);
    expect(before.text).toMatch(/^quarry_sessions\{/m);

    proxy.blackhole();
    // A request that needs the store fails in the meantime, and is logged.
    const failing = fetch(`${url}/api/sessions`).then((response) => response.status);
    for (let scrapes = 0; scrapes < 3; scrapes++) {
      const during = await scrape();
      expect(during.status).toBe(200);
      expect(during.ms).toBeLessThan(within(1_000));
      expect(during.text).toMatch(/^quarry_store_reachable 0$/m);
      // What the store would say is left out; what the process knows by itself is there.
      expect(during.text).not.toMatch(/^quarry_sessions\{/m);
      expect(during.text).toMatch(/^quarry_runner_concurrency \d+$/m);
      expect(during.text).toMatch(/^process_cpu_seconds_total /m);
    }
    expect(await failing).toBe(503);

    proxy.heal();
    await eventually(async () => /^quarry_store_reachable 1$/m.test((await scrape()).text), 30_000);
    serve.child.kill('SIGTERM');
    expect(await exitOrHang(serve), serve.output()).toBe(0);
    const lines = serve
      .output()
      .split('\n')
      .filter((line) => line.trim());
    expect(lines.some((line) => line.includes('GET /api/sessions failed'))).toBe(true);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
