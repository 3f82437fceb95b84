import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { testConfig } from '../support/test-config.ts';

/**
 * Behind a reverse proxy (issue 44): local mode is never a proxy's traffic, whatever the proxy sends
 * or leaves out, and a client is told apart by forwarding headers only from a proxy the operator
 * trusts.
 */
describe('behind a proxy', () => {
  let database: TestDatabase | undefined;
  let server: RunningServer | undefined;

  afterEach(async () => {
    await server?.close();
    await database?.destroy();
    server = undefined;
    database = undefined;
  });

  async function start(env: Record<string, string> = {}) {
    database = await sqliteHarness.create();
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_PORT: '0', ...env }),
      runner: false,
      log: () => undefined,
    });
    return server;
  }

  /** The status of a raw HTTP request: a version and headers exactly as a proxy would send them. */
  function status(port: number, request: { version?: string; headers?: Record<string, string> } = {}) {
    return new Promise<number>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const headers = { host: `127.0.0.1:${port}`, ...request.headers };
      socket.on('connect', () =>
        socket.write(
          `GET /api/sessions HTTP/${request.version ?? '1.1'}\r\n${Object.entries(headers)
            .map(([name, value]) => `${name}: ${value}\r\n`)
            .join('')}connection: close\r\n\r\n`,
        ),
      );
      let response = '';
      socket.on('data', (chunk) => (response += chunk));
      socket.on('end', () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1] ?? 0)));
      socket.on('error', reject);
    });
  }

  it('gives local mode only to this machine’s own requests, never a proxy’s (nginx’s default, X-Real-IP, Via…)', async () => {
    const { port } = await start();
    expect(await status(port)).toBe(200);
    const proxied: Record<string, { version?: string; headers?: Record<string, string> }> = {
      "nginx's default proxy_pass (HTTP/1.0, nothing added)": { version: '1.0' },
      'X-Real-IP only': { headers: { 'x-real-ip': '203.0.113.5' } },
      'Via only': { headers: { via: '1.1 proxy.example' } },
      'X-Forwarded-Proto only': { headers: { 'x-forwarded-proto': 'https' } },
      'X-Forwarded-For': { headers: { 'x-forwarded-for': '203.0.113.5' } },
      Forwarded: { headers: { forwarded: 'for=203.0.113.5' } },
      'a public Host': { headers: { host: 'research.example.org' } },
    };
    for (const [name, request] of Object.entries(proxied)) expect(await status(port, request), name).not.toBe(200);
  });

  it('never gives local mode on a server that trusts a proxy', async () => {
    const { port } = await start({ QUARRY_TRUST_PROXY: '127.0.0.1' });
    expect(await status(port)).toBe(401);
  });

  it('throttles failed sign-ins per client behind a trusted proxy, so one guesser locks out no one else', async () => {
    const { port } = await start({ QUARRY_TRUST_PROXY: '127.0.0.1/8' });
    const user = await database!.store.createUser({ name: 'alice' });
    await database!.store.addApiToken({
      userId: user.id,
      tokenHash: createHash('sha256').update('alice-token-123').digest('hex'),
    });
    const as = (client: string, token: string) =>
      status(port, { headers: { 'x-forwarded-for': `${client}, 127.0.0.9`, authorization: `Bearer ${token}` } });
    for (let attempt = 0; attempt < 20; attempt++) expect(await as('203.0.113.5', `wrong-${attempt}`)).toBe(401);
    expect(await as('203.0.113.5', 'wrong-again')).toBe(429);
    // Another client behind the same proxy signs in as ever.
    expect(await as('198.51.100.7', 'alice-token-123')).toBe(200);
    expect(await as('198.51.100.7', 'wrong')).toBe(401);
  });

  it('refuses a trust setting that is neither a count nor addresses', () => {
    expect(() => testConfig({ QUARRY_TRUST_PROXY: 'everyone' })).toThrow(/QUARRY_TRUST_PROXY/);
    expect(() => testConfig({ QUARRY_TRUST_PROXY: '0' })).toThrow(/QUARRY_TRUST_PROXY/);
    expect(testConfig({ QUARRY_TRUST_PROXY: '2' }).server.trustProxy).toEqual({ hops: 2 });
    expect(testConfig({ QUARRY_TRUST_PROXY: '10.0.0.0/8, ::1' }).server.trustProxy).toEqual({
      addresses: ['10.0.0.0/8', '::1'],
    });
  });
});
