import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { readSse, type SseEvent } from '../support/sse.ts';
import { testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const QUESTION = 'How does tidal power generate electricity?';

/** The session feed and the citation route: what the web UI's live sidebar and citation panel read. */
describe('live session feed and citations', () => {
  let database: TestDatabase;
  let server: RunningServer;
  let home: string;
  const tokens = { alice: 'alice-token-123', bob: 'bob-token-456' };

  async function api(path: string, init: RequestInit & { token?: string } = {}) {
    const headers = new Headers(init.headers);
    if (init.token) headers.set('authorization', `Bearer ${init.token}`);
    if (init.body) headers.set('content-type', 'application/json');
    const response = await fetch(`${server.url}${path}`, { ...init, headers });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  beforeEach(async () => {
    database = await sqliteHarness.create();
    home = mkdtempSync(join(tmpdir(), 'quarry-live-'));
    cpSync(fixtures, join(home, 'docs'), { recursive: true });
    for (const name of ['alice', 'bob'] as const) {
      const user = await database.store.createUser({ name });
      await database.store.addApiToken({
        userId: user.id,
        tokenHash: createHash('sha256').update(tokens[name]).digest('hex'),
      });
    }
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_DOCS: join(home, 'docs'), QUARRY_PORT: '0' }),
      runner: true,
      heartbeatSeconds: 1,
    });
  });
  afterEach(async () => {
    await server?.close();
    await database.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  it("pushes a user's own session changes (created, progress, status, rename, delete) and nobody else's", {
    timeout: within(60_000),
  }, async () => {
    let id = '';
    let done = false;
    let heard: SseEvent[] = [];
    let bobReady = false;
    const aliceFeed = readSse(
      `${server.url}/api/sessions/feed`,
      { authorization: `Bearer ${tokens.alice}` },
      (events) => {
        heard = events;
        return events.some((event) => event.event === 'session-delete' && event.data.id === id);
      },
    );
    const bobFeed = readSse(`${server.url}/api/sessions/feed`, { authorization: `Bearer ${tokens.bob}` }, (events) => {
      bobReady = events.some((event) => event.event === 'ready');
      return done;
    });
    // Both feeds are connected before anything changes.
    await eventually(() => bobReady && heard.some((event) => event.event === 'ready'));
    id = (
      await api('/api/sessions', { method: 'POST', token: tokens.alice, body: JSON.stringify({ question: QUESTION }) })
    ).body.id;
    await eventually(
      async () => (await api(`/api/sessions/${id}`, { token: tokens.alice })).body.status === 'completed',
      30_000,
    );
    expect(
      (await api(`/api/sessions/${id}`, { method: 'PATCH', token: tokens.alice, body: '{"title":"Tides, renamed"}' }))
        .status,
    ).toBe(200);
    // The feed pushes the rename before the deletion follows it.
    await eventually(() => heard.some((event) => event.event === 'session' && event.data.title === 'Tides, renamed'));
    expect((await api(`/api/sessions/${id}`, { method: 'DELETE', token: tokens.alice })).status).toBe(204);
    const events: SseEvent[] = await aliceFeed;
    done = true;
    const bobEvents = await bobFeed;

    expect(events[0]?.event).toBe('ready');
    const mine = events.filter((event) => event.event === 'session').map((event) => event.data);
    expect(mine.every((session) => session.id === id)).toBe(true);
    const statuses = mine.map((session) => session.status);
    expect(statuses).toContain('completed');
    expect(statuses.indexOf('completed')).toBeGreaterThan(-1);
    // Progress is pushed while it runs: more than one distinct step count before the end.
    expect(new Set(mine.map((session) => session.progress.completedSteps)).size).toBeGreaterThan(1);
    expect(mine.at(-1)).toMatchObject({ title: 'Tides, renamed', status: 'completed' });
    expect(events.at(-1)).toMatchObject({ event: 'session-delete', data: { id } });
    // Bob's feed heard nothing of Alice's session, not even its id.
    expect(bobEvents.map((event) => event.event)).toEqual(['ready']);
    expect(JSON.stringify(bobEvents)).not.toContain(id);
  });

  it('answers what a citation points to, with its passage in the text that was read', {
    timeout: within(60_000),
  }, async () => {
    const id = (
      await api('/api/sessions', { method: 'POST', token: tokens.alice, body: JSON.stringify({ question: QUESTION }) })
    ).body.id;
    await eventually(
      async () => (await api(`/api/sessions/${id}`, { token: tokens.alice })).body.status === 'completed',
      30_000,
    );
    const detail = (await api(`/api/sessions/${id}`, { token: tokens.alice })).body;
    const cited = detail.sources.find((source: { citation: number | null }) => source.citation === 1);
    const citation = await api(`/api/sessions/${id}/citations/1`, { token: tokens.alice });
    expect(citation.status).toBe(200);
    expect(citation.body).toMatchObject({ number: 1, url: cited.url, title: cited.title, version: 1 });
    expect(citation.body.passages.length).toBeGreaterThan(0);
    const report: string = detail.report.latest;
    for (const passage of citation.body.passages) {
      expect(passage.quote.length).toBeGreaterThan(10);
      // The quote sits in its context exactly as the source has it.
      expect(`${passage.before}${passage.quote}${passage.after}`).toContain(passage.quote);
    }
    // Every claim it lists is a sentence of the report that cites [1].
    for (const claim of citation.body.claims) expect(report).toContain(claim.claim.slice(0, 40));

    expect((await api(`/api/sessions/${id}/citations/999`, { token: tokens.alice })).body.error.code).toBe('NOT_FOUND');
    expect((await api(`/api/sessions/${id}/citations/1?version=7`, { token: tokens.alice })).status).toBe(404);
    expect((await api(`/api/sessions/${id}/citations/abc`, { token: tokens.alice })).status).toBe(400);
    expect((await api(`/api/sessions/${id}/citations/0`, { token: tokens.alice })).status).toBe(400);
    expect((await api(`/api/sessions/${id}/citations/1`, { token: tokens.bob })).body.error.code).toBe(
      'SESSION_NOT_FOUND',
    );

    // An answer in the conversation numbers its sources its own way, and its numbers resolve there (issue 46).
    const asked = await api(`/api/sessions/${id}/messages`, {
      method: 'POST',
      token: tokens.alice,
      body: JSON.stringify({ role: 'user', content: 'How does a tidal barrage generate electricity?' }),
    });
    expect(asked.status).toBe(202);
    await eventually(
      async () => (await api(`/api/sessions/${id}`, { token: tokens.alice })).body.status === 'completed',
      30_000,
    );
    const after = (await api(`/api/sessions/${id}`, { token: tokens.alice })).body;
    const answer = after.messages.findLast((message: { role: string }) => message.role === 'assistant');
    expect(answer.citations.length).toBeGreaterThan(0);
    for (const source of answer.citations) {
      // Listed under the number its text uses, never renumbered by a Markdown list.
      const text = (await api(`/api/sessions/${id}/messages`, { token: tokens.alice })).body.messages.find(
        (message: { id: string }) => message.id === answer.id,
      ).content;
      expect(text).toContain(`- [${source.number}] ${source.title}`);
      const opened = await api(`/api/sessions/${id}/citations/${source.number}?answer=${answer.id}`, {
        token: tokens.alice,
      });
      expect(opened.body).toMatchObject({ number: source.number, url: source.url, answer: answer.id, version: null });
    }
    // Each report version exports as itself; one the session does not have is 404.
    const exported = await fetch(`${server.url}/api/sessions/${id}/export?format=md&version=1`, {
      headers: { authorization: `Bearer ${tokens.alice}` },
    });
    expect(exported.status).toBe(200);
    expect(await exported.text()).toMatch(/^# How does tidal power generate electricity/);
    const missing = await fetch(`${server.url}/api/sessions/${id}/export?format=md&version=9`, {
      headers: { authorization: `Bearer ${tokens.alice}` },
    });
    expect(missing.status).toBe(404);
    expect(
      (await api(`/api/sessions/${id}/citations/1?answer=not-an-answer`, { token: tokens.alice })).body.error.code,
    ).toBe('NOT_FOUND');
    expect(
      (await api(`/api/sessions/${id}/citations/1?answer=${answer.id}&version=1`, { token: tokens.alice })).status,
    ).toBe(400);
    expect(
      (await api(`/api/sessions/${id}/citations/1?answer=${answer.id}`, { token: tokens.bob })).body.error.code,
    ).toBe('SESSION_NOT_FOUND');
  });

  it('signs a browser in with a token as an HttpOnly cookie, and out again', async () => {
    const refused = await fetch(`${server.url}/api/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'not-a-token' }),
    });
    expect(refused.status).toBe(401);
    const signIn = await fetch(`${server.url}/api/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: tokens.bob }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).not.toContain(tokens.bob);
    const pair = cookie.split(';')[0]!;
    const me = await fetch(`${server.url}/api/auth/me`, { headers: { cookie: pair } });
    expect(await me.json()).toMatchObject({ user: { name: 'bob' }, auth: 'tokens' });
    const signOut = await fetch(`${server.url}/api/auth/session`, { method: 'DELETE', headers: { cookie: pair } });
    expect(signOut.status).toBe(204);
    expect((await fetch(`${server.url}/api/auth/me`, { headers: { cookie: pair } })).status).toBe(401);
  });
});
