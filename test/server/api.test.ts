import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import type { Store } from '../../src/store/store.ts';
import { FakeOpenAiServer, lastUserOf } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { readSse } from '../support/sse.ts';
import { fakeModelEnv, testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const QUESTION = 'How does tidal power generate electricity?';

describe('HTTP API', () => {
  let database: TestDatabase;
  let server: RunningServer;
  let docs: string;
  let home: string;

  async function start(store: Store, env: Record<string, string> = {}, options: { host?: string } = {}) {
    return startServer({
      store,
      config: testConfig({ QUARRY_DOCS: docs, QUARRY_HOST: options.host ?? '127.0.0.1', QUARRY_PORT: '0', ...env }),
      runner: true,
      heartbeatSeconds: 1,
    });
  }

  async function api(path: string, init: RequestInit & { token?: string } = {}) {
    const headers = new Headers(init.headers);
    if (init.token) headers.set('authorization', `Bearer ${init.token}`);
    if (init.body && !headers.has('content-type')) headers.set('content-type', 'application/json');
    const response = await fetch(`${server.url}${path}`, { ...init, headers });
    const text = await response.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body, headers: response.headers };
  }

  async function completed(id: string, token?: string) {
    await eventually(async () => (await api(`/api/sessions/${id}`, { token })).body.status === 'completed', 20_000);
  }

  beforeEach(async () => {
    database = await sqliteHarness.create();
    home = mkdtempSync(join(tmpdir(), 'quarry-api-'));
    docs = join(home, 'docs');
    cpSync(fixtures, docs, { recursive: true });
  });
  afterEach(async () => {
    await server?.close();
    await database.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  it('creates, lists, reads, renames, forks, exports, imports and deletes sessions', async () => {
    server = await start(database.store);
    const created = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: QUESTION, externalId: 'job-42', settings: { temperature: 0.3 } }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.any(String), status: 'queued', progress: { completedSteps: 0 } });
    const id = created.body.id as string;
    await completed(id);
    // A batch finds its session again by its own id.
    expect((await api('/api/sessions?externalId=job-42')).body.sessions.map((each: { id: string }) => each.id)).toEqual(
      [id],
    );
    expect((await api('/api/sessions?externalId=job-43')).body.sessions).toEqual([]);
    // PUT renames as PATCH does.
    const put = await api(`/api/sessions/${id}`, { method: 'PUT', body: JSON.stringify({ title: 'Put title' }) });
    expect(put).toMatchObject({ status: 200, body: { title: 'Put title' } });
    expect((await api(`/api/sessions/${id}`)).body.settings.temperature).toBe(0.3);
    const list = await api('/api/sessions?limit=10');
    expect(list.body.sessions).toHaveLength(1);
    expect(list.body.sessions[0]).toMatchObject({
      id,
      status: 'completed',
      progress: { phase: 'verify', resumePoint: null },
    });
    expect(list.body.sessions[0]).not.toHaveProperty('messages');
    const detail = await api(`/api/sessions/${id}`);
    expect(detail.body.report.latest).toContain('## Sources');
    expect(detail.body.report.versions).toHaveLength(1);
    expect(detail.body.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant']);
    // The report's text comes once: the answer that is the report points at its version, and the
    // version list carries no text (one version's is GET …/reports/{version}).
    expect(detail.body.messages[1]).toMatchObject({ role: 'assistant', content: '', reportVersion: 1 });
    expect(JSON.stringify(detail.body).split('## Sources').length - 1).toBe(1);
    expect(detail.body.report.versions[0]).not.toHaveProperty('report');
    // A version names what its own `[n]` point to (numbers differ between versions).
    const cited = detail.body.report.versions[0].citations as { number: number; title: string }[];
    expect(cited.length).toBeGreaterThan(0);
    for (const { number } of cited) expect(detail.body.report.latest).toContain(`[${number}]`);
    const version = await api(`/api/sessions/${id}/reports/1`);
    expect(version).toMatchObject({ status: 200, body: { version: 1, report: detail.body.report.latest } });
    expect((await api(`/api/sessions/${id}/reports/2`)).status).toBe(404);
    for (const bad of ['0', 'first', '1.5']) expect((await api(`/api/sessions/${id}/reports/${bad}`)).status).toBe(400);
    const messages = await api(`/api/sessions/${id}/messages`);
    expect(messages.body.messages[1].content).toBe(detail.body.report.latest);
    expect(detail.body.sources.some((source: { citation: number | null }) => source.citation === 1)).toBe(true);
    const steps = await api(`/api/sessions/${id}/steps?phase=search`);
    expect(steps.body.steps.every((step: { phase: string }) => step.phase === 'search')).toBe(true);
    expect(steps.body.steps[0]).toMatchObject({ status: 'completed', attempts: 1, durationMs: expect.any(Number) });
    expect((await api(`/api/sessions/${id}/messages?phase=verify`)).body.messages).toHaveLength(1);
    const one = await api(
      `/api/sessions/${id}/steps/${steps.body.steps[0].runId}/${encodeURIComponent(steps.body.steps[0].key)}`,
    );
    expect(one.body).toMatchObject({
      key: steps.body.steps[0].key,
      status: 'completed',
      output: { results: expect.any(Array) },
    });
    expect((await api(`/api/sessions/${id}/steps/${steps.body.steps[0].runId}/no-such-step`)).body.error.code).toBe(
      'STEP_NOT_FOUND',
    );
    expect((await api(`/api/sessions/${id}/sources`)).body.sources.length).toBeGreaterThan(0);
    expect(
      (await api(`/api/sessions/${id}`, { method: 'PATCH', body: JSON.stringify({ title: 'Tides' }) })).body.title,
    ).toBe('Tides');
    expect(
      (await api(`/api/sessions/${id}`, { method: 'PATCH', body: JSON.stringify({ title: 'Tides again' }) })).body
        .title,
    ).toBe('Tides again');
    const html = await api(`/api/sessions/${id}/export?format=html`);
    expect(html.headers.get('content-type')).toContain('text/html');
    expect(html.body).toContain('<h2>Sources</h2>');
    const pdf = await fetch(`${server.url}/api/sessions/${id}/export?format=pdf`);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toMatch(/\.pdf"$/);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString('latin1'),
    ).toBe('%PDF-');
    const exported = await api(`/api/sessions/${id}/export?format=json`);
    expect(exported.headers.get('content-disposition')).toContain('.quarry.json');
    const fork = await api(`/api/sessions/${id}/fork`, {
      method: 'POST',
      body: JSON.stringify({ from: 'outline', run: true }),
    });
    expect(fork.status).toBe(201);
    await completed(fork.body.id);
    expect((await api(`/api/sessions/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/api/sessions/${id}`)).status).toBe(404);
    const imported = await api('/api/sessions/import', { method: 'POST', body: JSON.stringify(exported.body) });
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({ id, title: 'Tides again', status: 'completed' });
    const resumed = await api(`/api/sessions/${id}/resume`, { method: 'POST', body: JSON.stringify({}) });
    expect(resumed.body.error.code).toBe('SESSION_COMPLETED');
    expect(resumed.status).toBe(409);
    const rewound = await api(`/api/sessions/${id}/resume`, {
      method: 'POST',
      body: JSON.stringify({ from: 'write' }),
    });
    expect(rewound.status).toBe(202);
    await completed(id);
    expect((await api('/api/capabilities')).body).toMatchObject({
      analyst: { kind: 'extractive' },
      documentFolders: [{ name: 'docs', path: docs }],
      runner: true,
    });
    const openapi = await api('/api/openapi.json');
    expect(openapi.body.openapi).toBe('3.1.0');
    expect(
      openapi.body.paths['/api/sessions'].post.requestBody.content['application/json'].schema.properties.question,
    ).toBeDefined();
  });

  it('refuses a model it cannot use with 400 before anything changes: create, resume, message, settings', async () => {
    // The operator offers these models; their keys are another matter.
    const offered = { QUARRY_SERVER_MODELS: 'openai:gpt-4.1-mini,nope:model,anthropic:claude-haiku-4-5' };
    server = await start(database.store, offered);
    const notOffered = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: QUESTION, settings: { model: 'openai:gpt-5' } }),
    });
    expect(notOffered).toMatchObject({
      status: 403,
      body: {
        error: { code: 'FORBIDDEN', field: 'settings.model', message: expect.stringContaining('does not offer') },
      },
    });
    const missing = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: QUESTION, settings: { model: 'openai:gpt-4.1-mini' } }),
    });
    expect(missing).toMatchObject({
      status: 400,
      body: { error: { code: 'MODEL_NOT_CONFIGURED', message: expect.stringContaining('OPENAI_API_KEY') } },
    });
    const unknown = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: QUESTION, settings: { model: 'nope:model' } }),
    });
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } });
    expect((await api('/api/sessions')).body.sessions).toEqual([]);
    // A session made while the key was there, resumed and asked after it is gone.
    await server.close();
    server = await start(database.store, { ...offered, OPENAI_API_KEY: 'k' });
    const id = (
      await api('/api/sessions', {
        method: 'POST',
        body: JSON.stringify({ question: QUESTION, start: false, settings: { model: 'openai:gpt-4.1-mini' } }),
      })
    ).body.id as string;
    await server.close();
    server = await start(database.store, offered);
    const before = (await api(`/api/sessions/${id}`)).body;
    for (const [path, body] of [
      [`/api/sessions/${id}/resume`, {}],
      [`/api/sessions/${id}/messages`, { role: 'user', content: 'Go on' }],
      [`/api/sessions/${id}`, { settings: { fastModel: 'anthropic:claude-haiku-4-5' } }],
    ] as const) {
      const refused = await api(path, { method: path.endsWith(id) ? 'PATCH' : 'POST', body: JSON.stringify(body) });
      expect(refused.status, path).toBe(400);
      expect(refused.body.error.code, path).toBe('MODEL_NOT_CONFIGURED');
    }
    const after = (await api(`/api/sessions/${id}`)).body;
    expect({ ...after, updatedAt: null }).toEqual({ ...before, updatedAt: null });
  });

  it('answers follow-ups and outline reviews through messages', async () => {
    server = await start(database.store);
    const created = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: QUESTION, settings: { reviewOutline: true } }),
    });
    const id = created.body.id as string;
    await eventually(async () => (await api(`/api/sessions/${id}`)).body.status === 'waiting', 20_000);
    expect((await api(`/api/sessions/${id}`)).body.pendingInput).toMatchObject({
      key: 'outline-review-1',
      payload: { outline: expect.any(Object) },
    });
    const answer = await api(`/api/sessions/${id}/messages`, {
      method: 'POST',
      body: JSON.stringify({ role: 'user', content: 'approve' }),
    });
    expect(answer).toMatchObject({ status: 202, body: { kind: 'answer', accepted: true } });
    await completed(id);
    const followUp = await api(`/api/sessions/${id}/messages`, {
      method: 'POST',
      body: JSON.stringify({ role: 'user', content: 'When did La Rance open?' }),
    });
    expect(followUp).toMatchObject({ status: 202, body: { kind: 'follow-up' } });
    await eventually(async () => (await api(`/api/sessions/${id}/messages`)).body.messages.length === 4, 20_000);
    expect((await api(`/api/sessions/${id}/messages`)).body.messages.at(-1).content).toContain('1966');
  });

  it('sums tokens, cost, searches and sources read over every run: outline review and follow-up included (issue 33)', async () => {
    const fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    try {
      server = await start(database.store, { ...fakeModelEnv(fake.baseUrl), QUARRY_PRICE_PER_MTOK: '3,15' });
      const id = (
        await api('/api/sessions', {
          method: 'POST',
          body: JSON.stringify({ question: QUESTION, settings: { reviewOutline: true } }),
        })
      ).body.id as string;
      await eventually(async () => (await api(`/api/sessions/${id}`)).body.status === 'waiting', 20_000);
      await api(`/api/sessions/${id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ role: 'user', content: 'approve' }),
      });
      await completed(id);
      await api(`/api/sessions/${id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ role: 'user', content: 'When did La Rance open?' }),
      });
      // A follow-up that researches again asks for its own outline review (the setting holds).
      await eventually(async () => {
        const { status } = (await api(`/api/sessions/${id}`)).body;
        if (status === 'waiting')
          await api(`/api/sessions/${id}/messages`, {
            method: 'POST',
            body: JSON.stringify({ role: 'user', content: 'approve' }),
          });
        return status === 'completed';
      }, 20_000);
      // Each outline review resumed its run (another activation); the follow-up is a second run.
      expect((await api(`/api/sessions/${id}`)).body.runs).toHaveLength(2);
      const steps = (await api(`/api/sessions/${id}/steps`)).body.steps as {
        runId: string;
        key: string;
        status: string;
        usage: { inputTokens?: number; outputTokens?: number; costUsd?: number } | null;
      }[];
      const done = steps.filter((step) => step.status === 'completed');
      const sum = (read: (step: (typeof done)[number]) => number) =>
        done.reduce((total, step) => total + read(step), 0);
      const { ledger } = (await api(`/api/sessions/${id}`)).body;
      expect(ledger).toEqual({
        inputTokens: sum((step) => step.usage?.inputTokens ?? 0),
        outputTokens: sum((step) => step.usage?.outputTokens ?? 0),
        costUsd: expect.closeTo(
          sum((step) => step.usage?.costUsd ?? 0),
          9,
        ),
        searches: done.filter((step) => /(^|\/)search-\d+$/.test(step.key)).length,
        sourcesRead: done.filter((step) => /(^|\/)read-\d+$/.test(step.key)).length,
      });
      // Every run counts: more than the last run's own steps, and real spending.
      const lastRun = (await api(`/api/sessions/${id}`)).body.runs.at(-1).id as string;
      const lastRunOnly = done.filter((step) => step.runId === lastRun);
      expect(ledger.inputTokens).toBeGreaterThan(lastRunOnly.reduce((t, s) => t + (s.usage?.inputTokens ?? 0), 0));
      expect(ledger.searches).toBeGreaterThan(0);
      expect(ledger.sourcesRead).toBeGreaterThan(0);
      expect(ledger.costUsd).toBeGreaterThan(0);
    } finally {
      await fake.stop();
    }
  });

  it('asks clarifying questions first when told to, waits for the answers, and researches the clarified question (issue 33)', async () => {
    const fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    try {
      server = await start(database.store, fakeModelEnv(fake.baseUrl));
      const create = async () =>
        (
          await api('/api/sessions', {
            method: 'POST',
            body: JSON.stringify({ question: QUESTION, settings: { clarify: true, maxIterations: 1 } }),
          })
        ).body.id as string;
      const waiting = async (id: string) => {
        await eventually(async () => (await api(`/api/sessions/${id}`)).body.status === 'waiting', 20_000);
        return (await api(`/api/sessions/${id}`)).body.pendingInput as {
          key: string;
          payload: { questions: string[] };
        };
      };
      const planPrompt = (id: string) =>
        api(`/api/sessions/${id}/steps?phase=plan`).then(
          (steps) => (steps.body.steps as { key: string; runId: string }[]).find((step) => step.key === 'plan')!,
        );

      // Nothing else has run yet: the questions come first, and the answer goes into the research.
      const answered = await create();
      const pending = await waiting(answered);
      expect(pending.key).toBe('clarify/answer');
      expect(pending.payload.questions.length).toBeGreaterThan(0);
      expect(pending.payload.questions.length).toBeLessThanOrEqual(3);
      expect(
        (await api(`/api/sessions/${answered}/steps`)).body.steps.map((step: { key: string }) => step.key),
      ).toEqual(['clarify', 'clarify/answer']);
      const reply = await api(`/api/sessions/${answered}/messages`, {
        method: 'POST',
        body: JSON.stringify({ role: 'user', content: 'Only the barrages in France, for a school report.' }),
      });
      expect(reply).toMatchObject({ status: 202, body: { kind: 'answer', accepted: true } });
      await completed(answered);
      const plan = await planPrompt(answered);
      const detail = await api(`/api/sessions/${answered}/steps/${plan.runId}/plan`);
      expect(detail.body.prompt.user).toContain(
        'Clarification from the person asking: Only the barrages in France, for a school report.',
      );

      // Skipping researches the question as asked.
      const skipped = await create();
      await waiting(skipped);
      await api(`/api/sessions/${skipped}/messages`, {
        method: 'POST',
        body: JSON.stringify({ role: 'user', content: 'skip' }),
      });
      await completed(skipped);
      const skippedPlan = await planPrompt(skipped);
      expect((await api(`/api/sessions/${skipped}/steps/${skippedPlan.runId}/plan`)).body.prompt.user).not.toContain(
        'Clarification',
      );
    } finally {
      await fake.stop();
    }
  });

  it('researches at once with clarify on but no model to ask: the extractive analyst never asks', async () => {
    server = await start(database.store);
    const id = (
      await api('/api/sessions', {
        method: 'POST',
        body: JSON.stringify({ question: QUESTION, settings: { clarify: true } }),
      })
    ).body.id as string;
    await completed(id);
    expect((await api(`/api/sessions/${id}`)).body.pendingInput).toBeNull();
  });

  it('keeps a session created with start:false parked, stops a queued one, and refuses a late approval (issue 16)', async () => {
    server = await start(database.store);
    const parked = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: QUESTION, start: false }),
    });
    expect(parked.status).toBe(201);
    // The runner never picks it up: it was created parked, in the same transaction.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await api(`/api/sessions/${parked.body.id}`)).body.status).toBe('interrupted');
    expect(await database.store.listSteps(parked.body.id)).toEqual([]);
    await server.close();

    // Without a runner a new session stays queued; stopping it parks it.
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_DOCS: docs, QUARRY_HOST: '127.0.0.1', QUARRY_PORT: '0' }),
      runner: false,
    });
    const queued = await api('/api/sessions', { method: 'POST', body: JSON.stringify({ question: QUESTION }) });
    expect((await api(`/api/sessions/${queued.body.id}`)).body.status).toBe('queued');
    expect((await api(`/api/sessions/${queued.body.id}/stop`, { method: 'POST' })).status).toBe(202);
    expect((await api(`/api/sessions/${queued.body.id}`)).body.status).toBe('interrupted');
    await server.close();

    // An "approve" sent again after the run finished is a late duplicate, not a new question.
    server = await start(database.store);
    const reviewed = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: QUESTION, settings: { reviewOutline: true } }),
    });
    const id = reviewed.body.id as string;
    await eventually(async () => (await api(`/api/sessions/${id}`)).body.status === 'waiting', 20_000);
    const approve = () =>
      api(`/api/sessions/${id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ role: 'user', content: 'approve' }),
      });
    expect((await approve()).body).toMatchObject({ kind: 'answer', accepted: true });
    await completed(id);
    const runs = (await api(`/api/sessions/${id}`)).body.runs.length;
    expect(await approve()).toMatchObject({ status: 200, body: { kind: 'answer', accepted: false } });
    expect((await api(`/api/sessions/${id}`)).body).toMatchObject({ status: 'completed', runs: { length: runs } });
  });

  it('carries the feed and several sessions on one live stream, each from its offset; a session it cannot follow is said once (issue 33)', async () => {
    server = await start(database.store, {}, {});
    const make = async (question: string) =>
      (await api('/api/sessions', { method: 'POST', body: JSON.stringify({ question, start: false }) })).body
        .id as string;
    const [first, second] = [await make('First: how do tides work?'), await make('Second: what is a barrage?')];
    expect((await api('/api/sessions/live?watch=not-a-pair')).status).toBe(400);
    const controller = new AbortController();
    const response = await fetch(`${server.url}/api/sessions/live?watch=${first}:0,${second}:1,missing-session:0`, {
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const seen: { event: string; data: any }[] = [];
    const reading = (async () => {
      let buffer = '';
      const decoder = new TextDecoder();
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) seen.push({ event, data: JSON.parse(data) });
        }
      }
    })().catch(() => undefined);
    try {
      await eventually(() => seen.some((each) => each.event === 'watch-error'), 20_000);
      await api(`/api/sessions/${second}`, {
        method: 'PATCH',
        body: JSON.stringify({ title: 'Renamed on the stream' }),
      });
      await eventually(
        () => seen.some((each) => each.event === 'session' && each.data.title === 'Renamed on the stream'),
        20_000,
      );
      const events = seen.filter((each) => each.event === 'session-event');
      // The first from its start; the second after offset 1, so never its creation.
      expect(events.find((each) => each.data.sessionId === first)?.data.event).toMatchObject({
        offset: 1,
        type: 'session-create',
      });
      expect(events.filter((each) => each.data.sessionId === second).every((each) => each.data.event.offset > 1)).toBe(
        true,
      );
      expect(seen.filter((each) => each.event === 'watch-error')).toEqual([
        {
          event: 'watch-error',
          data: { sessionId: 'missing-session', error: expect.objectContaining({ code: 'SESSION_NOT_FOUND' }) },
        },
      ]);
    } finally {
      controller.abort();
      await reading;
    }
  });

  it('replays missed events after a disconnect, without loss or duplicates', async () => {
    server = await start(database.store);
    const id = (await api('/api/sessions', { method: 'POST', body: JSON.stringify({ question: QUESTION }) })).body
      .id as string;
    const first = await readSse(`${server.url}/api/sessions/${id}/events`, {}, (events) => events.length >= 10);
    await completed(id);
    const rest = await readSse(
      `${server.url}/api/sessions/${id}/events`,
      { 'last-event-id': String(first.at(-1)!.id) },
      (events) => events.some((event) => event.event === 'run-end'),
    );
    const offsets = [...first, ...rest].map((event) => event.id);
    expect(offsets).toEqual(Array.from({ length: offsets.length }, (_, index) => index + 1));
    expect(rest.at(-1)!.data).toMatchObject({ type: 'run-end', data: { status: 'completed' } });
    const viaQuery = await readSse(
      `${server.url}/api/sessions/${id}/events?after=${offsets.length - 2}`,
      {},
      (events) => events.length >= 2,
    );
    expect(viaQuery.map((event) => event.id)).toEqual([offsets.length - 1, offsets.length]);
  });

  it('rejects malformed JSON, wrong types, oversized bodies, bad ids and unknown routes, changing nothing', async () => {
    server = await start(database.store);
    const malformed = await api('/api/sessions', { method: 'POST', body: '{"question": ' });
    expect(malformed).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', field: 'body' } } });
    const wrongType = await api('/api/sessions', { method: 'POST', body: JSON.stringify({ question: 42 }) });
    expect(wrongType).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', field: 'question' } } });
    const badSetting = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: QUESTION, settings: { maxIterations: 99 } }),
    });
    expect(badSetting.body.error.field).toBe('settings.maxIterations');
    // The server answers 413 as soon as it sees the length and may close before the body is sent.
    const huge = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ question: 'x'.repeat(2 * 1024 * 1024) });
      const request = httpRequest(
        `${server.url}/api/sessions`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', (error) =>
        (error as NodeJS.ErrnoException).code === 'EPIPE' || (error as NodeJS.ErrnoException).code === 'ECONNRESET'
          ? undefined
          : reject(error),
      );
      request.end(body);
    });
    expect(huge).toBe(413);
    expect((await api('/api/sessions/bad id!')).status).toBe(400);
    expect((await api('/api/sessions/no-such-session')).body.error.code).toBe('SESSION_NOT_FOUND');
    expect((await api('/api/sessions?limit=0')).status).toBe(400);
    expect((await api('/api/sessions?status=sleeping')).status).toBe(400);
    expect((await api('/api/nothing-here')).status).toBe(404);
    expect((await api('/api/sessions')).body.sessions).toEqual([]);
  });

  it("keeps two users apart: another user's session is not found through every route", async () => {
    const alice = await database.store.createUser({ name: 'alice' });
    const bob = await database.store.createUser({ name: 'bob' });
    const tokens = { alice: 'alice-token-123', bob: 'bob-token-456' };
    for (const [user, token] of [
      [alice, tokens.alice],
      [bob, tokens.bob],
    ] as const) {
      await database.store.addApiToken({
        userId: user.id,
        tokenHash: createHash('sha256').update(token).digest('hex'),
      });
    }
    server = await start(database.store);
    expect((await api('/api/sessions')).status).toBe(401);
    expect((await api('/api/sessions', { token: 'wrong' })).status).toBe(401);
    const id = (
      await api('/api/sessions', { method: 'POST', token: tokens.alice, body: JSON.stringify({ question: QUESTION }) })
    ).body.id as string;
    await completed(id, tokens.alice);
    expect((await api('/api/sessions', { token: tokens.bob })).body.sessions).toEqual([]);
    const attempts = [
      api(`/api/sessions/${id}`, { token: tokens.bob }),
      api(`/api/sessions/${id}/events`, { token: tokens.bob }),
      api(`/api/sessions/${id}/steps`, { token: tokens.bob }),
      api(`/api/sessions/${id}/messages`, { token: tokens.bob }),
      api(`/api/sessions/${id}/sources`, { token: tokens.bob }),
      api(`/api/sessions/${id}/export?format=json`, { token: tokens.bob }),
      api(`/api/sessions/${id}`, { method: 'PATCH', token: tokens.bob, body: JSON.stringify({ title: 'mine' }) }),
      api(`/api/sessions/${id}/resume`, { method: 'POST', token: tokens.bob, body: JSON.stringify({ force: true }) }),
      api(`/api/sessions/${id}/fork`, { method: 'POST', token: tokens.bob, body: JSON.stringify({}) }),
      api(`/api/sessions/${id}/messages`, {
        method: 'POST',
        token: tokens.bob,
        body: JSON.stringify({ role: 'user', content: 'hi' }),
      }),
      api(`/api/sessions/${id}/stop`, { method: 'POST', token: tokens.bob }),
      api(`/api/sessions/${id}/share`, { method: 'POST', token: tokens.bob }),
      api(`/api/sessions/${id}/share`, { token: tokens.bob }),
      api(`/api/sessions/${id}/share`, { method: 'DELETE', token: tokens.bob }),
      api(`/api/sessions/${id}`, { method: 'DELETE', token: tokens.bob }),
    ];
    for (const result of await Promise.all(attempts))
      expect(result).toMatchObject({ status: 404, body: { error: { code: 'SESSION_NOT_FOUND' } } });
    expect((await api(`/api/sessions/${id}`, { token: tokens.alice })).body.title).not.toBe('mine');

    // Alice shares it: the link opens the report read-only for anyone, without a token, until revoked.
    expect((await api(`/api/sessions/${id}/share`, { token: tokens.alice })).body).toEqual({
      shared: false,
      sharedAt: null,
    });
    const first = await api(`/api/sessions/${id}/share`, { method: 'POST', token: tokens.alice });
    expect(first.status).toBe(201);
    expect(first.body.url).toBe(`${server.url}${first.body.path}`);
    const opened = await fetch(first.body.url);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toContain('text/html');
    expect(opened.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await opened.text();
    expect(page).toContain('<h2>Sources</h2>');
    expect(page).not.toContain('<script');
    expect((await api(`/api/sessions/${id}/share`, { token: tokens.alice })).body.shared).toBe(true);
    // A new link replaces the old one; revoking ends the new one; a guessed token opens nothing.
    const second = await api(`/api/sessions/${id}/share`, { method: 'POST', token: tokens.alice });
    expect((await fetch(first.body.url)).status).toBe(404);
    expect((await fetch(second.body.url)).status).toBe(200);
    expect((await api(`/api/sessions/${id}/share`, { method: 'DELETE', token: tokens.alice })).status).toBe(204);
    expect((await fetch(second.body.url)).status).toBe(404);
    expect((await fetch(`${server.url}/share/qsh_${'A'.repeat(32)}`)).status).toBe(404);
    expect((await fetch(`${server.url}/share/anything`)).status).toBe(404);
  });

  it('serves nobody beyond loopback while it has no users, and keeps refusing after the last user is removed', async () => {
    server = await start(database.store, {}, { host: '0.0.0.0' });
    const base = `http://127.0.0.1:${server.port}`;
    for (const path of ['/api/sessions', '/api/capabilities', '/v1/models']) {
      expect((await fetch(`${base}${path}`)).status, path).toBe(401);
    }
    const posted = await fetch(`${base}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: QUESTION }),
    });
    expect(posted.status).toBe(401);
    expect((await database.store.listSessions()).sessions).toEqual([]);
  });

  it('serves the official openai client, streaming and not, with a follow-up turn on the same session', async () => {
    server = await start(database.store);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused-on-loopback' });
    expect((await client.models.list()).data.map((model) => model.id)).toEqual(['quarry']);
    const { data: first, response } = await client.chat.completions
      .create({ model: 'quarry', messages: [{ role: 'user', content: QUESTION }] })
      .withResponse();
    const report = first.choices[0]!.message.content!;
    const sessionId = response.headers.get('x-quarry-session-id')!;
    expect(report).toContain('## Sources');
    expect((await api('/api/sessions')).body.sessions.map((session: { id: string }) => session.id)).toEqual([
      sessionId,
    ]);
    // The same conversation again, naming its session, attaches to it instead of starting another.
    const again = await client.chat.completions.create(
      { model: 'quarry', messages: [{ role: 'user', content: QUESTION }] },
      { headers: { 'x-quarry-session-id': sessionId } },
    );
    expect(again.choices[0]!.message.content).toBe(report);
    expect((await api('/api/sessions')).body.sessions).toHaveLength(1);
    const stream = await client.chat.completions.create({
      model: 'quarry',
      stream: true,
      messages: [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: report },
        { role: 'user', content: 'When did the La Rance station open?' },
      ],
    });
    let content = '';
    let reasoning = '';
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      content += delta?.content ?? '';
      reasoning += delta?.reasoning_content ?? '';
    }
    expect(content).toContain('1966');
    expect(reasoning).toContain('Analyze…');
    const sessions = (await api('/api/sessions')).body.sessions;
    expect(sessions).toHaveLength(1);
    // A new turn while the session is busy elsewhere is refused, not silently dropped.
    await database.store.claimSession({
      sessionId: sessions[0].id,
      workerId: 'elsewhere',
      ttlMs: 60_000,
      fromStatuses: ['completed'],
    });
    const busy = await api('/v1/chat/completions', {
      method: 'POST',
      body: JSON.stringify({
        model: 'quarry',
        messages: [
          { role: 'user', content: QUESTION },
          { role: 'assistant', content: report },
          { role: 'user', content: 'When did the La Rance station open?' },
          { role: 'assistant', content: content },
          { role: 'user', content: 'And Sihwa?' },
        ],
      }),
    });
    // OpenAI's error shape on /v1, so its SDKs raise it as what it is.
    expect(busy).toMatchObject({
      status: 409,
      body: { error: { code: 'session_already_running', type: 'invalid_request_error', param: null } },
    });
    expect(
      (await api(`/api/sessions/${sessions[0].id}/messages`)).body.messages.map(
        (message: { role: string }) => message.role,
      ),
    ).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('continues a run and its event stream across a server restart', async () => {
    const fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    try {
      const env = {
        ...fakeModelEnv(fake.baseUrl),
      };
      // The title and the plan are answered; the run then waits on the model until the restart.
      fake.holdAfter(2);
      server = await start(database.store, env);
      const id = (
        await api('/api/sessions', {
          method: 'POST',
          body: JSON.stringify({ question: QUESTION, settings: { maxIterations: 1 } }),
        })
      ).body.id as string;
      const before = await readSse(`${server.url}/api/sessions/${id}/events`, {}, (events) =>
        events.some((event) => event.event === 'step-end' && (event.data.data as { key: string }).key === 'plan'),
      );
      await fake.waitUntilHeld();
      // Closing hands the run over once its step in flight ends: the model answers it now.
      const closing = server.close();
      fake.release();
      await closing;
      const callsAtRestart = fake.calls.length;
      server = await start(database.store, env);
      const after = await readSse(
        `${server.url}/api/sessions/${id}/events`,
        { 'last-event-id': String(before.at(-1)!.id) },
        (events) =>
          events.some(
            (event) => event.event === 'run-end' && (event.data.data as { status: string }).status === 'completed',
          ),
      );
      const offsets = [...before, ...after].map((event) => event.id);
      expect(offsets).toEqual(Array.from({ length: offsets.length }, (_, index) => index + 1));
      expect(after.some((event) => event.event === 'run-start')).toBe(true);
      await completed(id);
      // The plan was completed before the restart; it was never asked of the model again.
      const plan = (await database.store.listSteps(id, { includePrompts: true })).find((step) => step.key === 'plan')!;
      expect(fake.calls.slice(callsAtRestart).some((call) => lastUserOf(call.request) === plan.prompt!.user)).toBe(
        false,
      );
    } finally {
      await fake.stop();
    }
  });
});
