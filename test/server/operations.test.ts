import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serverMetrics } from '../../src/server/metrics.ts';
import { metricsRefusal } from '../../src/server/metrics-access.ts';
import { serveMetrics } from '../../src/server/metrics-listener.ts';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { childEnv } from '../support/child-env.ts';
import { readSse } from '../support/sse.ts';
import { testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));

/** One sample's value from Prometheus text, or undefined when the exposition has no such line. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((each) => each.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('operating a server: /metrics and /readyz (issue 36)', () => {
  let database: TestDatabase;
  let server: RunningServer | undefined;
  let home: string;

  beforeEach(async () => {
    database = await sqliteHarness.create();
    home = mkdtempSync(join(tmpdir(), 'quarry-ops-'));
    cpSync(fixtures, join(home, 'docs'), { recursive: true });
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_DOCS: join(home, 'docs'), QUARRY_PORT: '0' }),
      runner: true,
      log: () => undefined,
    });
  });
  afterEach(async () => {
    await server?.close();
    await database.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  it('exposes the queue by status, the runner and the open event streams in Prometheus format', async () => {
    const url = server!.url;
    const scrape = async () => {
      const response = await fetch(`${url}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/plain');
      return response.text();
    };
    const created = await fetch(`${url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'How does tidal power generate electricity?' }),
    });
    expect(created.status).toBe(201);
    await eventually(async () => sample(await scrape(), 'quarry_sessions{status="completed"}') === 1);
    const text = await scrape();
    expect(sample(text, 'quarry_sessions{status="queued"}')).toBe(0);
    expect(sample(text, 'quarry_runner_concurrency')).toBeGreaterThan(0);
    expect(text).toMatch(/^quarry_info\{version="[^"]+",store="sqlite"\} 1$/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    // No user data: no question, title or id in the exposition.
    expect(text).not.toContain('tidal');

    const feed = new AbortController();
    const stream = await fetch(`${url}/api/sessions/feed`, { signal: feed.signal });
    expect(stream.status).toBe(200);
    // A stream first tells its client how long to wait before reconnecting: 2-8 s at random, so a
    // restarted server's clients come back spread out, not as one storm.
    const first = new TextDecoder().decode((await stream.body!.getReader().read()).value);
    const retry = Number(/^retry: (\d+)\n\n/.exec(first)?.[1]);
    expect(retry).toBeGreaterThanOrEqual(2_000);
    expect(retry).toBeLessThan(8_000);
    expect(sample(await scrape(), 'quarry_event_streams')).toBe(1);
    feed.abort();
    await eventually(async () => sample(await scrape(), 'quarry_event_streams') === 0);
  });

  it('counts runs, steps by kind, lease claims and how late events reach a stream', async () => {
    const url = server!.url;
    const created = await (
      await fetch(`${url}/api/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'How does tidal power generate electricity?' }),
      })
    ).json();
    // A reader follows the run as it happens: its events' delivery lag is measured.
    await readSse(`${url}/api/sessions/${created.id}/events`, {}, (events) =>
      events.some((event) => event.event === 'run-end'),
    );
    await eventually(
      async () => (await (await fetch(`${url}/api/sessions/${created.id}`)).json()).status === 'completed',
    );
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(sample(text, 'quarry_runs_started_total')).toBe(1);
    expect(sample(text, 'quarry_runs_ended_total{status="completed"}')).toBe(1);
    expect(sample(text, 'quarry_lease_claims_total{takeover="false"}')).toBe(1);
    const steps = sample(text, 'quarry_step_duration_seconds_count{kind="task",status="completed"}')!;
    const completedSteps = (await (await fetch(`${url}/api/sessions/${created.id}/steps`)).json()).steps.filter(
      (step: { kind: string; status: string }) => step.kind === 'task' && step.status === 'completed',
    ).length;
    expect(steps).toBe(completedSteps);
    expect(sample(text, 'quarry_event_delivery_lag_seconds_count')).toBeGreaterThan(0);
    expect(text).toMatch(/^quarry_event_delivery_lag_seconds_bucket\{le="0\.25"\} \d+$/m);
  });

  it('counts how late events reach a streamed chat answer too, not only the event streams (issue 45)', async () => {
    const url = server!.url;
    const count = async () =>
      sample(await (await fetch(`${url}/metrics`)).text(), 'quarry_event_delivery_lag_seconds_count') ?? 0;
    const before = await count();
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'quarry',
        stream: true,
        messages: [{ role: 'user', content: 'How does tidal power generate electricity?' }],
      }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('data: [DONE]');
    expect(await count()).toBeGreaterThan(before);
  });

  it('is ready while the store answers and the runner claims; not ready once either stops', async () => {
    const url = server!.url;
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      checks: { store: 'ok', schema: 'current', runner: 'running' },
    });
    await server!.runner!.shutdown();
    const noRunner = await fetch(`${url}/readyz`);
    expect(noRunner.status).toBe(503);
    expect((await noRunner.json()).checks.runner).toBe('stopped');
    await database.store.close();
    const noStore = await fetch(`${url}/readyz`);
    expect(noStore.status).toBe(503);
    const unreachable = (await noStore.json()).checks.store;
    expect(unreachable).toMatch(/^unreachable: [A-Z_]+$/);
    // The probe is anonymous: it names no database path, host or user.
    expect(unreachable).not.toContain(database.store.info().location);
    // The process itself is up: /healthz says so.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});

describe('who may read /metrics (issue 44)', () => {
  let database: TestDatabase;
  const servers: RunningServer[] = [];
  const start = async (env: Record<string, string>) => {
    const started = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_PORT: '0', ...env }),
      runner: false,
      log: () => undefined,
    });
    servers.push(started);
    return started.url;
  };
  beforeEach(async () => {
    database = await sqliteHarness.create();
  });
  afterEach(async () => {
    for (const each of servers.splice(0)) await each.close();
    await database.destroy();
  });

  it('without a token: a direct scraper on a private network, never the public path', async () => {
    const url = await start({ QUARRY_PUBLIC_NAMES: 'research.example.org' });
    expect((await fetch(`${url}/metrics`)).status).toBe(200);
    // Through a proxy (any proxy header), or by the name users reach the server at: refused.
    for (const headers of [
      { 'x-forwarded-for': '203.0.113.9' } as Record<string, string>,
      { via: '1.1 nginx' },
      { 'x-real-ip': '203.0.113.9' },
    ]) {
      const response = await fetch(`${url}/metrics`, { headers });
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect((await response.json()).error.message).toContain('QUARRY_METRICS_TOKEN');
    }
    // fetch sets Host itself: node:http sends the public name.
    const byPublicName = await new Promise<number>((resolve, reject) =>
      httpGet(`${url}/metrics`, { headers: { host: 'research.example.org' } }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      }).on('error', reject),
    );
    expect(byPublicName).toBe(403);
    const policy = { token: null, publicNames: new Set<string>() };
    const direct = (peer: string | null) =>
      metricsRefusal({ authorization: undefined, headers: new Headers(), peer }, policy);
    expect(direct('127.0.0.1')).toBeNull();
    expect(direct('::ffff:172.18.0.3')).toBeNull(); // a compose network
    expect(direct('10.2.3.4')).toBeNull();
    expect(direct('203.0.113.5')?.status).toBe(403); // anyone on the internet
    expect(direct('2001:db8::1')?.status).toBe(403);
    expect(direct(null)?.status).toBe(403);
  });

  it('with QUARRY_METRICS_TOKEN: that bearer token and nothing else, on the server and a worker’s own port', async () => {
    const token = 'metrics-secret-0123456789';
    const url = await start({ QUARRY_METRICS_TOKEN: token });
    const none = await fetch(`${url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect(
      (await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer wrong-secret-0123456789' } })).status,
    ).toBe(401);
    const right = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}`, via: '1.1 nginx' } });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('quarry_sessions');

    const listener = await serveMetrics(serverMetrics({ store: database.store }), {
      host: '127.0.0.1',
      port: 0,
      token,
    });
    try {
      expect((await fetch(listener.url)).status).toBe(401);
      const scraped = await fetch(listener.url, { headers: { authorization: `Bearer ${token}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('quarry_sessions');
    } finally {
      listener.close();
    }
    expect(() => testConfig({ QUARRY_METRICS_TOKEN: 'short' })).toThrow(/QUARRY_METRICS_TOKEN/);
  });
});

describe('quarry worker --metrics-port (issue 36)', () => {
  it('serves the same metrics on a port of its own, and stops serving them with the worker', async () => {
    const home = mkdtempSync(join(tmpdir(), 'quarry-worker-metrics-'));
    const bin = fileURLToPath(new URL('../../bin/quarry', import.meta.url));
    const worker = spawn(process.execPath, [bin, 'worker', '--concurrency', '3', '--metrics-port', '0'], {
      env: childEnv({ HOME: home, QUARRY_HOME: home, QUARRY_METRICS_TOKEN: 'worker-metrics-0123456789' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    worker.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => worker.on('exit', resolve));
    try {
      await eventually(() => /metrics at (http:\/\/\S+)/.test(stderr), 30_000);
      const url = /metrics at (http:\/\/\S+)/.exec(stderr)![1]!;
      expect((await fetch(url)).status).toBe(401);
      const text = await (await fetch(url, { headers: { authorization: 'Bearer worker-metrics-0123456789' } })).text();
      expect(sample(text, 'quarry_runner_concurrency')).toBe(3);
      expect(sample(text, 'quarry_sessions{status="queued"}')).toBe(0);
      expect((await fetch(url.replace('/metrics', '/other'))).status).toBe(404);
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      worker.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    }
  });
});
