import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
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
    expect((await noStore.json()).checks.store).toMatch(/^unreachable: /);
    // The process itself is up: /healthz says so.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});

describe('quarry worker --metrics-port (issue 36)', () => {
  it('serves the same metrics on a port of its own, and stops serving them with the worker', async () => {
    const home = mkdtempSync(join(tmpdir(), 'quarry-worker-metrics-'));
    const bin = fileURLToPath(new URL('../../bin/quarry', import.meta.url));
    const worker = spawn(process.execPath, [bin, 'worker', '--concurrency', '3', '--metrics-port', '0'], {
      env: { PATH: process.env.PATH, HOME: home, QUARRY_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    worker.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => worker.on('exit', resolve));
    try {
      await eventually(() => /metrics at (http:\/\/\S+)/.test(stderr), 30_000);
      const url = /metrics at (http:\/\/\S+)/.exec(stderr)![1]!;
      const text = await (await fetch(url)).text();
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
