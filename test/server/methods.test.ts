import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));

/** Methods every route answers, and HEAD of a stream (issue 44). */
describe('methods', () => {
  let database: TestDatabase;
  let server: RunningServer | undefined;

  beforeEach(async () => {
    database = await sqliteHarness.create();
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_PORT: '0', QUARRY_DOCS: fixtures }),
      runner: false,
      heartbeatSeconds: 1,
      log: () => undefined,
    });
  });
  afterEach(async () => {
    await server?.close();
    await database.destroy();
  });

  it('answers HEAD of a stream without opening it, and still shuts down at once after HEAD, GET and aborted streams', {
    timeout: within(30_000),
  }, async () => {
    const created = await fetch(`${server!.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'How do tides work?' }),
    });
    expect(created.status).toBeLessThan(300);
    const { id } = (await created.json()) as { id: string };
    const streams = ['/api/sessions/feed', `/api/sessions/${id}/events`, `/api/sessions/live?watch=${id}:0`];
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    for (let round = 0; round < 50; round++)
      for (const path of streams) {
        const head = await fetch(`${server!.url}${path}`, { method: 'HEAD' });
        expect(head.status, path).toBe(200);
        expect(head.headers.get('content-type'), path).toContain('text/event-stream');
      }
    // HEADs hold no stream: no heartbeat or subscription stays behind (each leaked one kept a timer
    // and kept the process alive after SIGTERM), and the per-user cap has room for a real stream.
    expect(timers() - before).toBeLessThan(10);
    const aborted = new AbortController();
    const open = await fetch(`${server!.url}/api/sessions/feed`, { signal: aborted.signal });
    expect(open.status).toBe(200);
    const reader = open.body!.getReader();
    await reader.read();
    aborted.abort();
    const held = new AbortController();
    const still = await fetch(`${server!.url}/api/sessions/${id}/events`, { signal: held.signal });
    expect(still.status).toBe(200);
    const started = performance.now();
    await server!.close();
    server = undefined;
    held.abort();
    expect(performance.now() - started).toBeLessThan(within(5_000));
  });

  it('answers a method a path does not take with 405 and the methods it does take', async () => {
    for (const [method, path, allowed] of [
      ['PUT', '/api/sessions', 'GET'],
      ['DELETE', '/healthz', 'GET'],
      ['POST', '/api/sessions/some-id/steps', 'GET'],
      ['DELETE', '/api/sessions/some-id/messages', 'GET, HEAD, POST'],
      ['PUT', '/v1/chat/completions', 'POST'],
    ] as const) {
      const response = await fetch(`${server!.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'DELETE' ? undefined : '{}',
      });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get('allow'), `${method} ${path}`).toContain(allowed);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
    }
    expect((await fetch(`${server!.url}/api/no-such-thing`)).status).toBe(404);
  });
});
