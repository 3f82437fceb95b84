import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLIENT_TIMEOUTS } from '../../src/server/client-limits.ts';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { testConfig } from '../support/test-config.ts';

/** A raw connection and what the server wrote on it until it closed. */
function rawConnection(port: number): { socket: Socket; closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  return { socket, closed: new Promise((resolve) => socket.on('close', () => resolve(received))) };
}

describe('slow clients are cut off (issue 44: slow-loris)', () => {
  let database: TestDatabase;
  let server: RunningServer;
  // Shortened, so the test waits a second or two instead of twenty; the defaults are checked below.
  const timeouts = { headersMs: 1_500, idleMs: 1_000, checkEveryMs: 250 };

  beforeEach(async () => {
    database = await sqliteHarness.create();
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_PORT: '0' }),
      runner: false,
      log: () => undefined,
      clientTimeouts: timeouts,
    });
  });
  afterEach(async () => {
    await server.close();
    await database.destroy();
  });

  it('closes a connection that trickles its headers, while other clients are answered', {
    timeout: within(30_000),
  }, async () => {
    const slow = rawConnection(server.port);
    slow.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    let lines = 0;
    // One header line every 200 ms, never the blank line that ends them: the way slow-loris holds a connection.
    const trickle = setInterval(() => {
      if (!slow.socket.destroyed) slow.socket.write(`X-Slow-${lines++}: a\r\n`);
    }, 200);
    const startedAt = Date.now();
    try {
      const fast = await fetch(`${server.url}/healthz`);
      expect(fast.status).toBe(200);
      const answered = await slow.closed;
      // Cut off by the headers timeout, not by the client giving up: it was still sending.
      expect(slow.socket.destroyed).toBe(true);
      expect(answered).toMatch(/^HTTP\/1\.1 408 [\s\S]*did not arrive within 1.5 s/);
      expect(lines).toBeGreaterThan(0);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(timeouts.headersMs - 100);
    } finally {
      clearInterval(trickle);
    }
  });

  it('closes an idle kept-alive connection', { timeout: within(30_000) }, async () => {
    const idle = rawConnection(server.port);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const received = await idle.closed;
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(received).toMatch(/keep-alive/i);
  });

  it('gives every client 20 s for its headers and 5 s idle by default, checked every 2 s', () => {
    expect(CLIENT_TIMEOUTS).toEqual({ headersMs: 20_000, idleMs: 5_000, checkEveryMs: 2_000 });
  });
});
