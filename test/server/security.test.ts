import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { QuarryConfig } from '../../src/config/quarry-config.ts';
import { indexFolders } from '../../src/providers/search/local-corpus/index-folders.ts';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { addToken, addUser, removeUser, revokeToken } from '../../src/service/users.ts';
import { eventually, type StoreHarness, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const QUESTION = 'How does tidal power generate electricity?';
const SECRET = 'The vault under the old mill opens with the code 4711, and nobody else may know it.';
// Words of the secret memo (its title included) that no allowed document holds. Not the code alone: '4711'
// turns up in a session's timestamps and counts by chance (CI failed on one).
const LEAK = /vault|old mill|code 4711|private memo|our secret/i;

interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

function describeSecurity(harness: StoreHarness, skipReason: string | null) {
  describe.skipIf(skipReason !== null)(`server security on ${harness.name}`, () => {
    let database: TestDatabase;
    let server: RunningServer | undefined;
    let home: string;
    let root: string;
    let secret: string;

    beforeEach(async () => {
      database = await harness.create();
      home = mkdtempSync(join(tmpdir(), 'quarry-security-'));
      root = join(home, 'docs');
      secret = join(home, 'private');
      cpSync(fixtures, root, { recursive: true });
      mkdirSync(secret);
      writeFileSync(
        join(secret, 'memo.md'),
        `# Private memo about tidal power\n\n${SECRET} Tidal power is our secret.\n`,
      );
      // A link inside the allowed folder that leads out of it.
      symlinkSync(secret, join(root, 'escape'));
    });
    afterEach(async () => {
      await server?.close();
      server = undefined;
      await database.destroy();
      rmSync(home, { recursive: true, force: true });
    });

    async function start(
      options: {
        host?: string;
        limits?: Partial<QuarryConfig['server']['limits']>;
        runner?: boolean;
        env?: Record<string, string>;
      } = {},
    ) {
      const config = testConfig({
        QUARRY_DOCS: root,
        QUARRY_HOST: options.host ?? '127.0.0.1',
        QUARRY_PORT: '0',
        ...options.env,
      });
      server = await startServer({
        store: database.store,
        config: { ...config, server: { ...config.server, limits: { ...config.server.limits, ...options.limits } } },
        runner: options.runner ?? true,
        heartbeatSeconds: 1,
        log: () => undefined,
      });
      return server;
    }

    async function api(path: string, init: RequestInit & { token?: string } = {}): Promise<Reply> {
      const headers = new Headers(init.headers);
      if (init.token) headers.set('authorization', `Bearer ${init.token}`);
      if (init.body && !headers.has('content-type')) headers.set('content-type', 'application/json');
      const response = await fetch(`http://127.0.0.1:${server!.port}${path}`, { ...init, headers });
      const text = await response.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, body, headers: response.headers };
    }

    const post = (path: string, body: unknown, token?: string) =>
      api(path, { method: 'POST', body: JSON.stringify(body), token });

    async function completed(id: string, token?: string) {
      await eventually(async () => (await api(`/api/sessions/${id}`, { token })).body.status === 'completed', 30_000);
      return (await api(`/api/sessions/${id}`, { token })).body;
    }

    it('reads only the folders the operator allowed: create, settings, resume, import and links are refused', async () => {
      const bob = (await addUser(database.store, { name: 'bob' })).token;
      await start();
      const forbidden = [
        { question: QUESTION, docs: [secret] },
        { question: QUESTION, docs: ['/etc'] },
        { question: QUESTION, docs: [join(root, '..', 'private')] },
        { question: QUESTION, docs: [join(root, 'escape')] },
        { question: QUESTION, settings: { docs: [secret] } },
      ];
      for (const body of forbidden) {
        const refused = await post('/api/sessions', body, bob);
        expect(refused.status, JSON.stringify(body)).toBe(403);
        expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('docs') });
      }
      expect((await api('/api/sessions', { token: bob })).body.sessions).toEqual([]);

      // By name, or a folder inside it: allowed, and only that folder is searched.
      const energy = await post('/api/sessions', { question: QUESTION, docs: [join(root, 'energy')] }, bob);
      expect(energy.status).toBe(201);
      const done = await completed(energy.body.id, bob);
      expect(done.sources.length).toBeGreaterThan(0);
      for (const source of done.sources) expect(decodeURIComponent(source.url)).toContain(`${root}/energy/`);
      expect(done.report.latest).not.toMatch(LEAK);

      const resumed = await post(`/api/sessions/${energy.body.id}/resume`, { force: true, docs: [secret] }, bob);
      expect(resumed.status).toBe(403);
      expect((await api(`/api/sessions/${energy.body.id}`, { token: bob })).body.settings.docs).toEqual([
        join(root, 'energy'),
      ]);

      // An imported session keeps only the allowed folders, and says which it dropped.
      const exported = (await api(`/api/sessions/${energy.body.id}/export?format=json`, { token: bob })).body;
      exported.session.id = 'imported-with-private-folders';
      exported.session.settings.docs = [secret, '/', root];
      const imported = await post('/api/sessions/import', exported, bob);
      expect(imported.status).toBe(201);
      expect(imported.body.droppedFolders).toEqual([secret, '/']);
      const rerun = await post(`/api/sessions/${imported.body.id}/resume`, { force: true }, bob);
      expect(rerun.status, JSON.stringify(rerun.body)).toBe(202);
      const after = await completed(imported.body.id, bob);
      expect(after.settings.docs).toEqual([root]);
      expect(JSON.stringify(after)).not.toMatch(LEAK);
    });

    it('treats an imported journal as data: its search results open nothing outside the session folders (issue 34)', async () => {
      // The memo is indexed in the same store (as \`quarry index\` on this machine would), in a folder
      // that is not one of the server's roots.
      await indexFolders(database.store, [secret]);
      const memo = (await database.store.listDocuments({ pathPrefix: `${secret}/` }))[0]!;
      const bob = (await addUser(database.store, { name: 'bob' })).token;
      await start();
      const own = await post('/api/sessions', { question: QUESTION }, bob);
      await completed(own.body.id, bob);
      const exported = (await api(`/api/sessions/${own.body.id}/export?format=json`, { token: bob })).body;
      let poisoned = 0;
      for (const step of exported.steps) {
        if (!/search-\d+$/.test(step.key) || !Array.isArray(step.output?.results)) continue;
        step.output.results.forEach((result: any, index: number) => {
          if (result.provider !== 'local') return;
          // Half keep their own address and name the memo by id; half name the memo's file.
          result.metadata = { ...result.metadata, documentId: memo.id, position: 0 };
          if (index % 2 === 1) result.url = pathToFileURL(memo.path).href;
          poisoned++;
        });
      }
      expect(poisoned).toBeGreaterThan(0);
      exported.session.id = 'poisoned-journal';
      const imported = await post('/api/sessions/import', exported, bob);
      expect(imported.status, JSON.stringify(imported.body)).toBe(201);
      const firstRead = exported.steps.find((step: any) => /read-\d+$/.test(step.key)).key;
      const resumed = await post(`/api/sessions/${imported.body.id}/resume`, { from: firstRead }, bob);
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(202);
      const after = await completed(imported.body.id, bob);
      const steps = await database.store.listSteps(imported.body.id);
      const reads = steps.filter((step) => /read-\d+$/.test(step.key) && step.status === 'completed');
      expect(reads.length).toBeGreaterThan(0);
      expect(JSON.stringify(reads.map((step) => step.output))).not.toMatch(LEAK);
      expect(JSON.stringify(after)).not.toMatch(LEAK);
    });

    it('decides auth per request: the first user added requires tokens at once, on loopback too (issue 34)', async () => {
      await start();
      expect((await post('/api/sessions', { question: QUESTION, start: false })).status).toBe(201);
      expect((await api('/api/auth/me')).body).toMatchObject({ auth: 'local' });
      // A proxy in front of a loopback server is not this machine's user.
      expect((await api('/api/sessions', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(401);
      const alice = await addUser(database.store, { name: 'alice' });
      expect((await post('/api/sessions', { question: QUESTION, start: false })).status).toBe(401);
      expect((await api('/api/sessions', { token: 'garbage' })).status).toBe(401);
      expect((await api('/api/auth/me', { token: alice.token })).body).toMatchObject({ auth: 'tokens' });
      expect((await api('/api/sessions', { token: alice.token })).body.sessions).toEqual([]);
      // The last user gone, a loopback server serves its one local user again.
      await removeUser(database.store, 'alice');
      expect((await api('/api/sessions')).status).toBe(200);
      expect((await api('/api/sessions', { token: alice.token })).status).toBe(200);
    });

    it('never has a local user behind a reverse proxy (QUARRY_PUBLIC_NAMES or QUARRY_PUBLIC_URL)', async () => {
      const exposed: Record<string, string>[] = [
        { QUARRY_PUBLIC_NAMES: 'research.example.org' },
        { QUARRY_PUBLIC_URL: 'https://research.example.org' },
      ];
      for (const env of exposed) {
        await start({ env });
        expect((await api('/api/sessions')).status).toBe(401);
        expect((await post('/api/sessions', { question: QUESTION })).status).toBe(401);
        await server!.close();
        server = undefined;
      }
      expect((await database.store.listSessions()).sessions).toEqual([]);
    });

    it('ties a browser sign-in to its API token: revoked with it, never renewed by itself, kept in the cookie for its life', async () => {
      const alice = await addUser(database.store, { name: 'alice' });
      await start({ host: '0.0.0.0' });
      const signIn = await post('/api/auth/session', { token: alice.token });
      expect(signIn.status).toBe(200);
      const cookie = signIn.headers.get('set-cookie')!;
      expect(cookie).toMatch(/Max-Age=\d+/);
      expect(cookie).toMatch(/HttpOnly/);
      const browserToken = /quarry_token=([^;]+)/.exec(cookie)![1]!;
      expect((await api('/api/sessions', { headers: { cookie: `quarry_token=${browserToken}` } })).status).toBe(200);
      // A sign-in token cannot mint another.
      expect((await post('/api/auth/session', { token: browserToken })).status).toBe(401);
      await revokeToken(database.store, alice.record.id);
      expect((await api('/api/sessions', { headers: { cookie: `quarry_token=${browserToken}` } })).status).toBe(401);
      // Signing in again and again keeps a bounded number of sign-ins.
      const second = await addToken(database.store, { name: 'alice' });
      for (let index = 0; index < 15; index++)
        expect((await post('/api/auth/session', { token: second.token })).status).toBe(200);
      const signIns = (await database.store.listApiTokens()).filter((token) => token.parentId === second.record.id);
      expect(signIns.length).toBeLessThanOrEqual(10);
    });

    it('holds each user limit under racing requests at every entry point (issue 34)', async () => {
      await start({ runner: false, limits: { activeRuns: 3, sessions: 1000 } });
      const RACERS = 16;
      const user = async (name: string) => (await addUser(database.store, { name })).token;
      const parked = async (token: string, count: number) =>
        Promise.all(
          Array.from(
            { length: count },
            async () => (await post('/api/sessions', { question: QUESTION, start: false }, token)).body.id as string,
          ),
        );
      const accepted = async (replies: Promise<Reply>[], ok: number) => {
        const statuses = (await Promise.all(replies)).map((reply) => reply.status);
        for (const status of statuses) expect([ok, 429]).toContain(status);
        return statuses.filter((status) => status === ok).length;
      };
      const active = async (token: string) =>
        (await api('/api/sessions?status=queued,running&limit=100', { token })).body.sessions.length;

      const creator = await user('creator');
      expect(
        await accepted(
          Array.from({ length: RACERS }, () => post('/api/sessions', { question: QUESTION }, creator)),
          201,
        ),
      ).toBe(3);

      const asker = await user('asker');
      const askable = await parked(asker, RACERS);
      expect(
        await accepted(
          askable.map((id) => post(`/api/sessions/${id}/messages`, { role: 'user', content: 'And the costs?' }, asker)),
          202,
        ),
      ).toBe(3);

      const resumer = await user('resumer');
      const resumable = await parked(resumer, RACERS);
      expect(
        await accepted(
          resumable.map((id) => post(`/api/sessions/${id}/resume`, {}, resumer)),
          202,
        ),
      ).toBe(3);

      const forker = await user('forker');
      const [original] = await parked(forker, 1);
      expect(
        await accepted(
          Array.from({ length: RACERS }, () => post(`/api/sessions/${original}/fork`, { run: true }, forker)),
          201,
        ),
      ).toBe(3);
      // A refused fork leaves nothing behind.
      expect((await api('/api/sessions?limit=100', { token: forker })).body.sessions).toHaveLength(4);

      const responder = await user('responder');
      expect(
        await accepted(
          Array.from({ length: RACERS }, () =>
            post('/v1/responses', { model: 'quarry', input: QUESTION, background: true }, responder),
          ),
          200,
        ),
      ).toBe(3);

      const mcpUser = await user('mcp-user');
      const clients = await Promise.all(
        Array.from({ length: RACERS }, async () => {
          const client = new McpClient({ name: 'race', version: '1.0.0' });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server!.port}/mcp`), {
              requestInit: { headers: { authorization: `Bearer ${mcpUser}` } },
            }),
          );
          return client;
        }),
      );
      const results = await Promise.all(
        clients.map((client) => client.callTool({ name: 'start_research', arguments: { question: QUESTION } })),
      );
      await Promise.all(clients.map((client) => client.close()));
      expect(results.filter((result) => !result.isError)).toHaveLength(3);
      for (const token of [creator, asker, resumer, forker, responder, mcpUser]) expect(await active(token)).toBe(3);
    });

    it('answers an empty or malformed JSON body with 400 on every JSON route, and changes nothing (issue 34)', async () => {
      await start({ runner: false });
      const id = (await post('/api/sessions', { question: QUESTION, start: false })).body.id as string;
      const routes: [string, string][] = [
        ['POST', '/api/sessions'],
        ['POST', '/api/sessions/import'],
        ['POST', `/api/sessions/${id}/resume`],
        ['POST', `/api/sessions/${id}/fork`],
        ['POST', `/api/sessions/${id}/messages`],
        ['PATCH', `/api/sessions/${id}`],
        ['POST', '/api/auth/session'],
        ['POST', '/v1/chat/completions'],
        ['POST', '/v1/responses'],
      ];
      for (const [method, path] of routes) {
        for (const body of [undefined, '{', '[1,']) {
          const reply = await api(path, { method, body, headers: { 'content-type': 'application/json' } });
          expect(reply.status, `${method} ${path} ${body}`).toBe(400);
          expect(reply.body.error?.code ?? reply.body.error?.type, `${method} ${path}`).toBeTruthy();
        }
      }
      expect((await api('/api/sessions')).body.sessions.map((session: { id: string }) => session.id)).toEqual([id]);
    });

    it('sends its security headers on every kind of answer: JSON, errors, streams, pages (issue 34)', async () => {
      await start();
      const checks = [
        await fetch(`http://127.0.0.1:${server!.port}/api/sessions`),
        await fetch(`http://127.0.0.1:${server!.port}/api/sessions/nope`),
        await fetch(`http://127.0.0.1:${server!.port}/healthz`),
      ];
      for (const response of checks) {
        expect(response.headers.get('x-content-type-options')).toBe('nosniff');
        expect(response.headers.get('x-frame-options')).toBe('DENY');
        await response.body?.cancel();
      }
      expect(checks[0]!.headers.get('cache-control')).toBe('no-store');
      expect(checks[1]!.headers.get('cache-control')).toBe('no-store');
      const controller = new AbortController();
      const feed = await fetch(`http://127.0.0.1:${server!.port}/api/sessions/feed`, { signal: controller.signal });
      expect(feed.headers.get('x-content-type-options')).toBe('nosniff');
      controller.abort();
    });

    it('caps each user’s open event streams and answers GET /mcp with 405 (issue 34)', async () => {
      await start({ limits: { streams: 2 } });
      const url = `http://127.0.0.1:${server!.port}/api/sessions/feed`;
      const open = async () => {
        const controller = new AbortController();
        const response = await fetch(url, { signal: controller.signal });
        return { response, close: () => controller.abort() };
      };
      const first = await open();
      const second = await open();
      expect([first.response.status, second.response.status]).toEqual([200, 200]);
      const third = await open();
      expect(third.response.status).toBe(429);
      expect(third.response.headers.get('retry-after')).toMatch(/^\d+$/);
      first.close();
      await eventually(async () => {
        const again = await open();
        again.close();
        return again.response.status === 200;
      }, 10_000);
      second.close();
      const mcp = await fetch(`http://127.0.0.1:${server!.port}/mcp`, { headers: { accept: 'text/event-stream' } });
      expect(mcp.status).toBe(405);
      expect(mcp.headers.get('allow')).toBe('POST');
    });

    it('offers only the operator’s models and caps what one run may spend (issue 34)', async () => {
      await start({
        runner: false,
        env: {
          QUARRY_SERVER_MODELS: 'openai-compatible:offered',
          QUARRY_LLM_BASE_URL: 'http://127.0.0.1:9',
          QUARRY_LLM_API_KEY: 'k',
        },
        limits: { tokenBudget: 50_000 },
      });
      const capabilities = (await api('/api/capabilities')).body;
      expect(capabilities.models).toEqual(['openai-compatible:offered']);
      const other = await post('/api/sessions', {
        question: QUESTION,
        settings: { model: 'openai-compatible:pricey' },
      });
      expect(other).toMatchObject({ status: 403, body: { error: { field: 'settings.model' } } });
      const greedy = await post('/api/sessions', {
        question: QUESTION,
        settings: { model: 'openai-compatible:offered', tokenBudget: 1_000_000 },
      });
      expect(greedy).toMatchObject({ status: 400, body: { error: { field: 'settings.tokenBudget' } } });
      const capped = await post('/api/sessions', {
        question: QUESTION,
        start: false,
        settings: { model: 'openai-compatible:offered' },
      });
      expect(capped.status).toBe(201);
      expect((await api(`/api/sessions/${capped.body.id}`)).body.settings.tokenBudget).toBe(50_000);
      const unknown = await post('/api/sessions', { question: QUESTION, settings: { temprature: 0.2 } });
      expect(unknown).toMatchObject({ status: 400, body: { error: { field: 'settings.temprature' } } });
      expect((await api('/api/sessions')).body.sessions).toHaveLength(1);
    });

    it('keeps a run within the budget ceilings for its whole life: PATCH, import and follow-ups (issue 44)', async () => {
      await start({ runner: false, limits: { tokenBudget: 3_000 } });
      const made = await post('/api/sessions', { question: QUESTION, start: false });
      const id = made.body.id as string;
      const settingsOf = async () => (await api(`/api/sessions/${id}`)).body.settings;
      expect((await settingsOf()).tokenBudget).toBe(3_000);
      const patch = (settings: Record<string, unknown>) =>
        api(`/api/sessions/${id}`, { method: 'PATCH', body: JSON.stringify({ settings }) });
      // Removing the budget puts the ceiling back; asking above it is refused, and changes nothing.
      expect((await patch({ tokenBudget: null })).status).toBe(200);
      expect((await settingsOf()).tokenBudget).toBe(3_000);
      expect(await patch({ tokenBudget: 16_000 })).toMatchObject({
        status: 400,
        body: { error: { field: 'settings.tokenBudget' } },
      });
      expect((await settingsOf()).tokenBudget).toBe(3_000);
      // A setting Quarry does not have is refused by PATCH as by POST, and nothing is stored.
      expect(await patch({ temprature: 0.2 })).toMatchObject({
        status: 400,
        body: { error: { field: 'settings.temprature' } },
      });
      expect(await settingsOf()).not.toHaveProperty('temprature');
      // A file without a budget (or with a bigger one) is imported within the ceiling.
      const exported = (await api(`/api/sessions/${id}/export?format=json`)).body;
      exported.session.id = 'imported-without-budget';
      const { tokenBudget: _budget, ...unbudgeted } = exported.session.settings;
      exported.session.settings = unbudgeted;
      const imported = await post('/api/sessions/import', exported);
      expect(imported.status).toBe(201);
      const importedId = (imported.body.session?.id ?? imported.body.id) as string;
      expect((await api(`/api/sessions/${importedId}`)).body.settings.tokenBudget).toBe(3_000);
      // A session whose stored settings went past the ceiling (written before it was lowered, or by
      // the command line) runs its next turn within it.
      await database.store.updateSession(id, { settings: { ...(await settingsOf()), tokenBudget: 50_000 } });
      await database.store.updateSession(id, { status: 'completed' });
      const asked = await post(`/api/sessions/${id}/messages`, { role: 'user', content: 'And what about waves?' });
      expect(asked.status).toBeLessThan(300);
      expect((await settingsOf()).tokenBudget).toBe(3_000);
    });

    it('refuses forged list cursors, oversized imports and imports with unknown settings with 4xx (issue 34)', async () => {
      await start({ runner: false });
      for (const cursor of ['[1e999,"x"]', '[-1,"x"]', '["x",1]', '[1.5,"x"]', '[9007199254740993,"x"]'])
        expect((await api(`/api/sessions?cursor=${encodeURIComponent(cursor)}`)).status, cursor).toBe(400);
      const made = await post('/api/sessions', { question: QUESTION, start: false });
      const exported = (await api(`/api/sessions/${made.body.id}/export?format=json`)).body;
      exported.session.id = 'with-unknown-settings';
      exported.session.settings = { ...exported.session.settings, temperature2: 3 };
      const unknown = await post('/api/sessions/import', exported);
      expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } });
      exported.session.settings.temperature2 = undefined;
      exported.padding = 'x'.repeat(40 * 1024 * 1024);
      const big = await post('/api/sessions/import', exported);
      expect(big.status).toBe(413);
      expect((await api('/api/sessions')).body.sessions).toHaveLength(1);
    });

    it('throttles a client that keeps failing to authenticate (issue 34)', async () => {
      const alice = await addUser(database.store, { name: 'alice' });
      await start({ host: '0.0.0.0' });
      for (let attempt = 0; attempt < 20; attempt++)
        expect((await api('/api/sessions', { token: `wrong-${attempt}` })).status).toBe(401);
      const throttled = await api('/api/sessions', { token: 'wrong-again' });
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await post('/api/auth/session', { token: 'wrong' })).status).toBe(429);
      // Throttled by address: even the right token waits (this client made the failures).
      expect((await api('/api/sessions', { token: alice.token })).status).toBe(429);
    });

    it('marks the sign-in cookie Secure behind https, and answers oversized headers and hoarded connections (issue 34)', async () => {
      const alice = await addUser(database.store, { name: 'alice' });
      await start({ env: { QUARRY_PUBLIC_URL: 'https://research.example.org' } });
      const signIn = await post('/api/auth/session', { token: alice.token });
      expect(signIn.headers.get('set-cookie')).toMatch(/; Secure/);
      await server!.close();
      server = undefined;
      await start({ host: '0.0.0.0' });
      const proxied = await api('/api/auth/session', {
        method: 'POST',
        body: JSON.stringify({ token: alice.token }),
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(proxied.headers.get('set-cookie')).toMatch(/; Secure/);
      const raw = (request: string) =>
        new Promise<string>((resolve) => {
          const socket = connect(server!.port, '127.0.0.1', () => socket.write(request));
          let answer = '';
          socket.on('data', (chunk) => (answer += chunk));
          socket.on('close', () => resolve(answer));
          socket.on('error', () => resolve(answer));
        });
      const headers = Array.from({ length: 1500 }, (_, index) => `x-h${index}: ${'v'.repeat(20)}`).join('\r\n');
      const overflow = await raw(`GET /api/sessions HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}\r\n\r\n`);
      expect(overflow).toMatch(/^HTTP\/1\.1 431/);
      expect(overflow).toContain('"code":"PAYLOAD_TOO_LARGE"');
      // Connections past the per-client cap (64) get their request answered 429 with a Retry-After and
      // are closed: a client is told when to come back instead of seeing its connection vanish.
      const open = (request?: string) =>
        new Promise<{ socket: Socket; answer: Promise<string> }>((resolve) => {
          let answer = '';
          const socket = connect(server!.port, '127.0.0.1', () => {
            if (request) socket.write(request);
            resolve({ socket, answer: closed });
          });
          const closed = new Promise<string>((done) => {
            socket.on('data', (chunk) => (answer += chunk));
            socket.on('close', () => done(answer));
            socket.on('error', () => done(answer));
          });
        });
      const held = await Promise.all(Array.from({ length: 64 }, () => open()));
      const extra = await Promise.all(
        Array.from({ length: 3 }, () => open('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n')),
      );
      for (const { answer } of extra) {
        const text = await answer;
        expect(text).toMatch(/^HTTP\/1\.1 429/);
        expect(text).toMatch(/\r\nretry-after: [2-8]\r\n/i);
        expect(text).toMatch(/\r\nconnection: close\r\n/i);
        expect(text).toContain('"code":"RATE_LIMITED"');
      }
      // One past the cap that sends nothing is dropped after a few seconds.
      const silent = await open();
      expect(await silent.answer).toBe('');
      const sockets = [...held, ...extra, silent].map(({ socket }) => socket);
      for (const socket of sockets) socket.destroy();
      expect((await api('/api/sessions', { token: alice.token })).status).toBe(200);
    });

    it('fails closed beyond loopback: no users, a removed user, a revoked or expired token get 401', async () => {
      const alice = await addUser(database.store, { name: 'alice' });
      const second = await addToken(database.store, { name: 'alice', label: 'laptop' });
      const expired = await addToken(database.store, { name: 'alice', expiresIn: '1s' });
      await start({ host: '0.0.0.0' });
      expect((await api('/api/sessions', { token: alice.token })).status).toBe(200);
      expect((await api('/api/sessions', { token: second.token })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await api('/api/sessions', { token: expired.token })).status).toBe(401);
      await revokeToken(database.store, second.record.id);
      expect((await api('/api/sessions', { token: second.token })).status).toBe(401);
      expect((await api('/api/sessions', { token: alice.token })).status).toBe(200);
      await removeUser(database.store, 'alice');
      // No users left: nobody gets in, never everybody.
      for (const path of ['/api/sessions', '/api/capabilities', '/v1/models', '/api/auth/me']) {
        expect((await api(path)).status, path).toBe(401);
        expect((await api(path, { token: alice.token })).status, path).toBe(401);
      }
      expect((await post('/api/sessions', { question: QUESTION })).status).toBe(401);
      expect((await database.store.listSessions()).sessions).toEqual([]);
    });

    it('refuses a foreign Host, a cross-site Origin and text/plain bodies; its own pages still work', async () => {
      await start();
      const port = server!.port;
      // (fetch never lets a caller set Host; a plain HTTP request does, as a rebinding page's does.)
      const foreign = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest(
          { host: '127.0.0.1', port, path: '/api/sessions', headers: { host: `evil.example:${port}` } },
          (response) => {
            let body = '';
            response.on('data', (chunk) => (body += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        request.on('error', reject);
        request.end();
      });
      expect(foreign.status).toBe(403);
      expect(JSON.parse(foreign.body).error.code).toBe('FORBIDDEN');
      const crossSite = await api('/api/sessions', {
        method: 'POST',
        headers: { origin: 'https://evil.example' },
        body: JSON.stringify({ question: QUESTION }),
      });
      expect(crossSite).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
      const plain = await api('/api/sessions', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ question: QUESTION }),
      });
      expect(plain).toMatchObject({ status: 415, body: { error: { code: 'UNSUPPORTED_MEDIA_TYPE' } } });
      expect((await api('/api/sessions')).body.sessions).toEqual([]);
      // The web UI's own requests: same origin, JSON.
      const own = await api('/api/sessions', {
        method: 'POST',
        headers: { origin: `http://127.0.0.1:${port}` },
        body: JSON.stringify({ question: QUESTION }),
      });
      expect(own.status).toBe(201);
      expect((await api('/api/capabilities', { headers: { origin: `http://127.0.0.1:${port}` } })).status).toBe(200);
    });

    it('keeps two OpenAI-endpoint chats with the same first message apart', async () => {
      await start();
      const chat = (messages: { role: string; content: string }[]) =>
        post('/v1/chat/completions', { model: 'quarry', messages });
      const first = await chat([{ role: 'user', content: QUESTION }]);
      const second = await chat([{ role: 'user', content: QUESTION }]);
      const [a, b] = [first, second].map((reply) => reply.headers.get('x-quarry-session-id'));
      expect(a).not.toBe(b);
      const report = first.body.choices[0].message.content as string;
      // Chat A continues; then chat B continues with its own question: B's session is not A's.
      const continuedA = await chat([
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: report },
        { role: 'user', content: 'When did the La Rance station open?' },
      ]);
      const continuedB = await chat([
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: second.body.choices[0].message.content },
        { role: 'user', content: 'Where is the Pentland Firth?' },
      ]);
      const sessionA = continuedA.headers.get('x-quarry-session-id');
      const sessionB = continuedB.headers.get('x-quarry-session-id');
      expect(new Set([sessionA, sessionB])).toEqual(new Set([a, b]));
      const questionsOf = async (id: string | null) =>
        (await api(`/api/sessions/${id}/messages`)).body.messages
          .filter((message: { role: string }) => message.role === 'user')
          .map((message: { content: string }) => message.content);
      expect(await questionsOf(sessionA)).toEqual([QUESTION, 'When did the La Rance station open?']);
      expect(await questionsOf(sessionB)).toEqual([QUESTION, 'Where is the Pentland Firth?']);
      // chat_id names a conversation outright.
      const named = await post('/v1/chat/completions', {
        model: 'quarry',
        chat_id: 'team-chat-1',
        messages: [{ role: 'user', content: QUESTION }],
      });
      expect(named.headers.get('x-quarry-session-id')).not.toBe(a);
      expect(named.headers.get('x-quarry-session-id')).not.toBe(b);
    });

    it('limits question size, active runs and sessions per user with 413 and 429, storing nothing', async () => {
      await start({ runner: false, limits: { questionChars: 100, activeRuns: 1, sessions: 2 } });
      const long = await post('/api/sessions', { question: `${'Why '.repeat(30)}?` });
      expect(long).toMatchObject({ status: 413, body: { error: { code: 'PAYLOAD_TOO_LARGE' } } });
      const first = await post('/api/sessions', { question: QUESTION });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      const busy = await post('/api/sessions', { question: QUESTION });
      expect(busy).toMatchObject({ status: 429, body: { error: { code: 'RATE_LIMITED' } } });
      expect(busy.headers.get('retry-after')).toMatch(/^\d+$/);
      const parked = await post('/api/sessions', { question: QUESTION, start: false });
      expect(parked.status).toBe(201);
      const full = await post('/api/sessions', { question: QUESTION, start: false });
      expect(full).toMatchObject({
        status: 429,
        body: { error: { code: 'RATE_LIMITED', message: expect.stringContaining('limit is 2') } },
      });
      const fork = await post(`/api/sessions/${parked.body.id}/fork`, {});
      expect(fork.status).toBe(429);
      expect((await api('/api/sessions')).body.sessions).toHaveLength(2);
    });

    it('indexes folders in the background: creating returns at once, the run reports indexing progress', async () => {
      const big = join(root, 'generated');
      mkdirSync(big);
      for (let index = 0; index < 2000; index++)
        writeFileSync(
          join(big, `page-${index}.html`),
          `<html><head><title>Page ${index}</title></head><body><h1>Page ${index}</h1><p>Tidal turbines number ${index} turn slowly in the estuary, and this page describes them at length.</p></body></html>`,
        );
      await start();
      const created = await post('/api/sessions', { question: QUESTION });
      expect(created.status).toBe(201);
      expect(created.body.status).toBe('queued');
      await completed(created.body.id);
      const events = (await database.store.readEvents(created.body.id)).filter(
        (event) => event.type === 'index-progress',
      );
      expect(events.length).toBeGreaterThan(0);
      expect(events.at(-1)!.data).toMatchObject({ folder: root });
      expect((await api('/healthz')).status).toBe(200);
    });

    it('stops background indexing on close: nothing writes to the store afterwards', async () => {
      const big = join(root, 'generated');
      mkdirSync(big);
      for (let index = 0; index < 2000; index++)
        writeFileSync(join(big, `page-${index}.md`), `# Page ${index}\n\nTidal turbine ${index} turns slowly.\n`);
      const logged: string[] = [];
      const config = testConfig({ QUARRY_DOCS: root, QUARRY_PORT: '0' });
      const running = await startServer({
        store: database.store,
        config,
        runner: false,
        log: (line) => logged.push(line),
      });
      // Closing while the folder is being indexed.
      await eventually(async () => (await database.store.listDocuments({ pathPrefix: big })).length > 0, 60_000);
      await running.close();
      const count = (await database.store.listDocuments()).length;
      expect(count).toBeLessThan(2000 + 10);
      // Nothing of that indexing is still running to write later, or to fail loudly on a closed store.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await database.store.listDocuments()).length).toBe(count);
      expect(logged.filter((line) => line.includes('failed'))).toEqual([]);
    });
  });
}

describeSecurity(sqliteHarness, null);
describeSecurity(postgresHarness, postgresSkipReason());
