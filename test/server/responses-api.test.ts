import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { readSse, type SseEvent } from '../support/sse.ts';
import { fakeModelEnv, testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const QUESTION = 'How does tidal power generate electricity?';
const tokens = { alice: 'alice-responses-token', bob: 'bob-responses-token' };

/**
 * The OpenAI Responses API, driven by the official `openai` client and by plain HTTP with an SSE
 * parser, against a server whose research model is a fake OpenAI-compatible server (which holds a
 * run's model calls where a test must act mid-run).
 */
describe('OpenAI Responses API', () => {
  let database: TestDatabase;
  let server: RunningServer;
  let fake: FakeOpenAiServer;
  let home: string;
  /** A server researching with the fake model over this test's documents. */
  const startResponsesServer = (env: Record<string, string> = {}) =>
    startServer({
      store: database.store,
      config: testConfig({ QUARRY_DOCS: join(home, 'docs'), QUARRY_PORT: '0', ...fakeModelEnv(fake.baseUrl), ...env }),
      runner: true,
      heartbeatSeconds: 1,
    });
  const client = (token: string) => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: token, maxRetries: 0 });

  beforeAll(async () => {
    database = await sqliteHarness.create();
    fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    home = mkdtempSync(join(tmpdir(), 'quarry-responses-'));
    cpSync(fixtures, join(home, 'docs'), { recursive: true });
    for (const name of ['alice', 'bob'] as const) {
      const user = await database.store.createUser({ name });
      const tokenHash = createHash('sha256').update(tokens[name]).digest('hex');
      await database.store.addApiToken({ userId: user.id, tokenHash });
    }
    server = await startResponsesServer();
  });
  afterAll(async () => {
    await server?.close();
    await fake?.stop();
    await database?.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  const finished = async (openai: OpenAI, id: string) => {
    let response = await openai.responses.retrieve(id);
    await eventually(async () => {
      response = await openai.responses.retrieve(id);
      return !['queued', 'in_progress'].includes(response.status ?? '');
    }, 60_000);
    return response;
  };

  const sessionOf = (response: unknown) => (response as { quarry_session_id: string }).quarry_session_id;
  /**
   * The response's text is a finished report with its sources, written by the session researching
   * QUESTION. (Which words the fake model copies into the report depends on the random corpus path
   * in its prompts, so the text itself is not searched for the question's words.)
   */
  const expectReportOnQuestion = async (response: { output_text: string }) => {
    expect((await database.store.getSession(sessionOf(response))).question).toBe(QUESTION);
    expect(response.output_text).toMatch(/^# .+/);
    expect(response.output_text).toMatch(/\[1\]/);
    expect(response.output_text).toMatch(/^## Sources\n\n1\. .+/m);
  };

  it('runs in the background: create returns at once, retrieve gives the cited report', {
    timeout: within(90_000),
  }, async () => {
    const openai = client(tokens.alice);
    const created = await openai.responses.create({
      model: 'quarry',
      input: QUESTION,
      background: true,
      metadata: { job: 'nightly' },
    });
    expect(['queued', 'in_progress']).toContain(created.status);
    expect(created.background).toBe(true);
    expect(created.metadata).toEqual({ job: 'nightly' });
    const done = await finished(openai, created.id);
    expect(done.status).toBe('completed');
    // What the request said is kept: later reads (from any server on the store) echo it too.
    expect(done.metadata).toEqual({ job: 'nightly' });
    expect(done.background).toBe(true);
    await expectReportOnQuestion(done);
    // The model's tokens over the whole run, as the journal recorded them.
    expect(done.usage!.input_tokens).toBeGreaterThan(0);
    expect(done.usage!.output_tokens).toBeGreaterThan(0);
    expect(done.usage!.total_tokens).toBe(done.usage!.input_tokens + done.usage!.output_tokens);
    const message = done.output.find((item) => item.type === 'message');
    const text = message?.type === 'message' ? message.content[0] : undefined;
    expect(text?.type).toBe('output_text');
    if (text?.type !== 'output_text') return;
    expect(text.annotations.length).toBeGreaterThan(0);
    for (const annotation of text.annotations) {
      expect(annotation.type).toBe('url_citation');
      if (annotation.type !== 'url_citation') continue;
      expect(text.text.slice(annotation.start_index, annotation.end_index)).toMatch(/^\[\d+\]$/);
      // A local document by its path in the document folder, never a path on the server.
      expect(annotation.url).not.toContain(home);
      expect(annotation.url).toMatch(/^(energy|nature|reports)\/[\w-]+\.\w+$|^https?:\/\//);
    }
    // Research progress is the reasoning summary.
    const reasoning = done.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.type === 'reasoning' && reasoning.summary[0]?.text).toMatch(/Searching: /);
    const inputs = await openai.responses.inputItems.list(created.id);
    expect(inputs.data.map((item) => (item.type === 'message' ? item.content : null))).toEqual([
      [{ type: 'input_text', text: QUESTION }],
    ]);
  });

  it('streams, and picks a dropped stream up again from its last sequence number', {
    timeout: within(90_000),
  }, async () => {
    const openai = client(tokens.alice);
    const first: { type: string; sequence_number: number }[] = [];
    const stream = await openai.responses.create({ model: 'quarry', input: QUESTION, stream: true, background: true });
    let id = '';
    for await (const event of stream) {
      first.push(event);
      if (event.type === 'response.created') id = event.response.id;
      // Drop the connection while the research is still searching.
      if (event.type === 'response.reasoning_summary_text.delta') break;
    }
    expect(id).toMatch(/^resp_/);
    const last = first.at(-1)!.sequence_number;
    const rest: { type: string; sequence_number: number; delta?: string }[] = [];
    const resumed = await openai.responses.retrieve(id, { stream: true, starting_after: last });
    for await (const event of resumed) rest.push(event);
    const all = [...first, ...rest];
    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, index) => index));
    expect(all[0]!.type).toBe('response.created');
    expect(all.at(-1)!.type).toBe('response.completed');
    const streamed = rest
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event.delta)
      .join('');
    expect(streamed).toBe((await openai.responses.retrieve(id)).output_text);
    // The same stream read again from the start is the same stream.
    const replay: { type: string; sequence_number: number }[] = [];
    for await (const event of await openai.responses.retrieve(id, { stream: true })) replay.push(event);
    expect(replay.map((event) => `${event.sequence_number}:${event.type}`)).toEqual(
      all.map((event) => `${event.sequence_number}:${event.type}`),
    );
  });

  it('speaks the Responses wire format event by event over plain HTTP', { timeout: within(90_000) }, async () => {
    const events = await readSse(
      `${server.url}/v1/responses`,
      { authorization: `Bearer ${tokens.alice}` },
      (seen) => seen.some((event) => /^response\.(completed|failed|incomplete)$/.test(event.event)),
      {
        model: 'quarry',
        instructions: 'Answer for an engineer.',
        input: [{ role: 'user', content: [{ type: 'input_text', text: QUESTION }] }],
        stream: true,
      },
    );
    const types = events.map((event: SseEvent) => event.event);
    for (const event of events) {
      expect(event.data.type).toBe(event.event);
      expect(Number.isInteger(event.data.sequence_number)).toBe(true);
    }
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    const order = (type: string) => types.indexOf(type);
    expect(order('response.output_item.added')).toBeLessThan(order('response.reasoning_summary_part.added'));
    expect(order('response.reasoning_summary_part.added')).toBeLessThan(order('response.reasoning_summary_text.delta'));
    expect(order('response.content_part.added')).toBeLessThan(order('response.output_text.delta'));
    expect(types.lastIndexOf('response.output_text.delta')).toBeLessThan(order('response.output_text.done'));
    expect(order('response.output_text.done')).toBeLessThan(order('response.content_part.done'));
    expect(types.at(-2)).toBe('response.output_item.done');
    expect(types.at(-1)).toBe('response.completed');
    const completed = events.at(-1)!.data.response;
    expect(completed.status).toBe('completed');
    expect(completed.instructions).toBe('Answer for an engineer.');
    expect(completed.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'message']);
  });

  it('continues a session with previous_response_id, and keeps users apart', { timeout: within(90_000) }, async () => {
    const openai = client(tokens.alice);
    const first = await openai.responses.create({ model: 'quarry', input: QUESTION });
    expect(first.status).toBe('completed');
    const followUp = await openai.responses.create({
      model: 'quarry',
      input: 'When did La Rance open?',
      previous_response_id: first.id,
    });
    expect(followUp.status).toBe('completed');
    expect(followUp.previous_response_id).toBe(first.id);
    expect(followUp.id).not.toBe(first.id);
    expect(sessionOf(followUp)).toBe(sessionOf(first));
    expect(followUp.output_text.length).toBeGreaterThan(0);
    expect(followUp.output_text).not.toBe(first.output_text);
    // The first response still reads as it was; the follow-up keeps what it continued.
    expect((await openai.responses.retrieve(first.id)).output_text).toBe(first.output_text);
    expect((await openai.responses.retrieve(followUp.id)).previous_response_id).toBe(first.id);
    expect((await openai.responses.retrieve(first.id)).previous_response_id).toBeNull();
    const inputs = await openai.responses.inputItems.list(followUp.id);
    expect(inputs.data).toHaveLength(1);

    const bob = client(tokens.bob);
    await expect(bob.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      bob.responses.create({ model: 'quarry', input: 'And then?', previous_response_id: first.id }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(bob.responses.cancel(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.responses.delete(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(openai.responses.retrieve('resp_forged')).rejects.toMatchObject({ status: 404 });
    await expect(openai.responses.retrieve(`resp_999999_0_${sessionOf(first)}`)).rejects.toMatchObject({ status: 404 });
  });

  it('answers a client’s housekeeping task (a chat title) without starting a research, unstored (issue 45)', async () => {
    const openai = client(tokens.alice);
    const before = (await database.store.listSessions({ limit: 500 })).sessions.length;
    const titled = await openai.responses.create({
      model: 'quarry',
      input: `### Task:\nGenerate a concise, 3-5 word title for the chat history.\n<chat_history>\nUSER: ${QUESTION}\n</chat_history>`,
    });
    expect(titled.status).toBe('completed');
    expect((titled as unknown as { store: boolean }).store).toBe(false);
    expect(titled.output_text.length).toBeGreaterThan(0);
    expect((await database.store.listSessions({ limit: 500 })).sessions.length).toBe(before);
    await expect(openai.responses.retrieve(titled.id)).rejects.toMatchObject({ status: 404 });

    // Streamed, as clients ask for it: the same answer as Responses stream events, still no research.
    const stream = await openai.responses.create({
      model: 'quarry',
      stream: true,
      input: `### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history.\n<chat_history>\nUSER: ${QUESTION}\n</chat_history>`,
    });
    const types: string[] = [];
    let streamedText = '';
    let completed: { id: string; status: string; store: boolean; output_text: string } | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') streamedText += event.delta;
      if (event.type === 'response.completed') completed = event.response as unknown as typeof completed;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(completed).toMatchObject({ status: 'completed', store: false });
    expect(streamedText.length).toBeGreaterThan(0);
    expect(completed!.output_text).toBe(streamedText);
    expect(completed!.id).toMatch(/^resp_chore_/);
    expect((await database.store.listSessions({ limit: 500 })).sessions.length).toBe(before);
  });

  it('asks clarifying questions first on a server that says so; the next turn answers them', {
    timeout: within(90_000),
  }, async () => {
    const clarifying = await startResponsesServer({ QUARRY_CLARIFY: '1' });
    try {
      const openai = new OpenAI({ baseURL: `${clarifying.url}/v1`, apiKey: tokens.alice, maxRetries: 0 });
      const asked = await openai.responses.create({ model: 'quarry', input: QUESTION });
      expect(asked.status).toBe('completed');
      expect(asked.output_text).toMatch(/^Before I start, a few questions/);
      expect((await database.store.getSession(sessionOf(asked))).status).toBe('waiting');
      const answered = await openai.responses.create({
        model: 'quarry',
        input: 'Only tidal barrages, please.',
        previous_response_id: asked.id,
      });
      expect(sessionOf(answered)).toBe(sessionOf(asked));
      // A report on the question (whether the fake model's generic queries find sources depends on
      // the random folder names in its prompts, so citations are not what this test judges).
      expect(answered.status).toBe('completed');
      expect((await database.store.getSession(sessionOf(answered))).question).toBe(QUESTION);
      expect(answered.output_text).toMatch(/^# .+/);
      const plan = (await database.store.listSteps(sessionOf(asked), { includePrompts: true })).find(
        (step) => step.key === 'plan',
      );
      expect(plan?.prompt?.user).toContain('Clarification from the person asking: Only tidal barrages, please.');
      // The answering turn added no question of its own: a later turn's question is not listed as its input.
      const next = await openai.responses.create({
        model: 'quarry',
        input: 'When did La Rance open?',
        previous_response_id: answered.id,
      });
      expect(next.status).toBe('completed');
      const listed = async (id: string) => {
        const items = [];
        for await (const item of openai.responses.inputItems.list(id)) items.push(item);
        return items.map((item) => (item.type === 'message' ? item.content : []));
      };
      expect(await listed(answered.id)).toEqual([]);
      expect(await listed(asked.id)).toEqual([[{ type: 'input_text', text: QUESTION }]]);
      expect(await listed(next.id)).toEqual([[{ type: 'input_text', text: 'When did La Rance open?' }]]);
    } finally {
      await clarifying.close();
    }
  });

  it('branches from an earlier turn, keeps each turn’s own input and instructions, and pages input items', {
    timeout: within(90_000),
  }, async () => {
    const openai = client(tokens.alice);
    const first = await openai.responses.create({ model: 'quarry', input: QUESTION });
    const second = await openai.responses.create({
      model: 'quarry',
      input: 'When did La Rance open?',
      previous_response_id: first.id,
      instructions: 'Answer in one sentence.',
    });
    expect(second.instructions).toBe('Answer in one sentence.');
    // A turn after the first, not after the second: a branch, and the second turn stays as it was.
    const branch = await openai.responses.create({
      model: 'quarry',
      input: 'Where is the Pentland Firth?',
      previous_response_id: first.id,
    });
    expect(branch.status).toBe('completed');
    expect(sessionOf(branch)).not.toBe(sessionOf(first));
    expect(branch.previous_response_id).toBe(first.id);
    const original = await database.store.listMessages(sessionOf(first));
    expect(original.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      QUESTION,
      'When did La Rance open?',
    ]);
    const branched = await database.store.listMessages(sessionOf(branch));
    expect(branched.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      QUESTION,
      'Where is the Pentland Firth?',
    ]);
    expect((await openai.responses.retrieve(second.id)).output_text).toBe(second.output_text);
    // Each turn's input is its own question; paging with the SDK ends.
    const items = [];
    for await (const item of openai.responses.inputItems.list(first.id, { limit: 1 })) items.push(item);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'message', content: [{ type: 'input_text', text: QUESTION }] });
    // An assistant reply given back as output_text is conversation, not refused.
    const withHistory = await openai.responses.create({
      model: 'quarry',
      input: [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: [{ type: 'output_text', text: first.output_text, annotations: [] }] },
        { role: 'user', content: 'And in Korea?' },
      ] as never,
    });
    expect(withHistory.status).toBe('completed');
    // Plain JSON carries output_text too, and the fields every Responses client reads.
    const raw = await (
      await fetch(`${server.url}/v1/responses/${first.id}`, { headers: { authorization: `Bearer ${tokens.alice}` } })
    ).json();
    expect(raw.output_text).toBe(first.output_text);
    for (const field of [
      'completed_at',
      'max_output_tokens',
      'reasoning',
      'service_tier',
      'truncation',
      'top_logprobs',
    ])
      expect(raw, field).toHaveProperty(field);
  });

  it('refuses bad requests clearly and stores nothing', async () => {
    const post = (body: unknown) =>
      fetch(`${server.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.bob}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const before = await database.store.listSessions({ limit: 500 });
    for (const [body, status] of [
      [{ input: [] }, 400],
      [{ input: '' }, 400],
      [{ input: [{ role: 'assistant', content: 'no question here' }] }, 400],
      [{ input: 'x', background: 'yes' }, 400],
      [{ input: 'x', metadata: { job: 7 } }, 400],
      [{ input: 'x', metadata: { ['k'.repeat(65)]: 'v' } }, 400],
      [{ input: 'x', metadata: { 'nul\u0000key': 'v' } }, 400],
      [{ input: 'x', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])) }, 400],
      [{ input: 'nul \u0000 byte' }, 400],
      [{ input: 'x', previous_response_id: 'resp_not_ours' }, 404],
      // Options Quarry does not implement, and tool outputs it never asked for.
      [{ input: 'x', max_output_tokens: 100 }, 400],
      [{ input: 'x', tools: [{ type: 'web_search' }] }, 400],
      [{ input: 'x', made_up: 1 }, 400],
      [{ input: 'x', model: 'gpt-4o' }, 404],
      [{ input: [{ type: 'function_call_output', call_id: 'c1', output: '42' }] }, 400],
      // A part Quarry cannot read is refused, never dropped (issue 45).
      [
        {
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: 'What is in this picture?' },
                { type: 'input_image', image_url: 'https://example.org/tide.png' },
              ],
            },
          ],
        },
        400,
      ],
    ] as const) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect((await response.json()).error.message).toBeTruthy();
    }
    expect((await database.store.listSessions({ limit: 500 })).sessions).toHaveLength(before.sessions.length);
  });

  it('cancels a running response, which a later "continue" resumes; delete removes it', {
    timeout: within(90_000),
  }, async () => {
    const openai = client(tokens.alice);
    // The run waits on its first model call until it is cancelled.
    fake.holdAfter(0);
    const created = await openai.responses.create({ model: 'quarry', input: QUESTION, background: true });
    await fake.waitUntilHeld();
    const cancelled = await openai.responses.cancel(created.id);
    fake.release();
    expect(cancelled.status).toBe('cancelled');
    expect((await openai.responses.retrieve(created.id)).status).toBe('cancelled');
    const resumed = await openai.responses.create({
      model: 'quarry',
      input: 'continue',
      previous_response_id: created.id,
    });
    expect(resumed.status).toBe('completed');
    expect(sessionOf(resumed)).toBe(sessionOf(created));
    await expectReportOnQuestion(resumed);
    await openai.responses.delete(created.id);
    await expect(openai.responses.retrieve(resumed.id)).rejects.toMatchObject({ status: 404 });
  });
});
