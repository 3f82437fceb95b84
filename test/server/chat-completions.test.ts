import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { StoreHarness, TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { FakeOpenAiServer, systemOf } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { fakeModelEnv, testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const QUESTION = 'How does tidal power generate electricity?';
const judging = (request: { messages: { role: string; content: string }[] }) =>
  systemOf(request as never).includes('check claims');

/**
 * The OpenAI Chat Completions contract as the official `openai` client sees it, against a real
 * `quarry serve` whose research model is a local fake that streams: the answer streams while it is
 * written, usage is the journal's, failures are errors, and options Quarry lacks are refused.
 */
function describeChat(harness: StoreHarness, skip: string | null) {
  describe.skipIf(skip !== null)(`chat completions on ${harness.name}`, () => {
    let database: TestDatabase;
    let server: RunningServer;
    let fake: FakeOpenAiServer;
    let home: string;
    let failing = false;
    /** A server researching with the fake model, over this test's documents. */
    const startChatServer = (env: Record<string, string> = {}) =>
      startServer({
        store: database.store,
        config: testConfig({
          QUARRY_DOCS: join(home, 'docs'),
          QUARRY_PORT: '0',
          ...fakeModelEnv(fake.baseUrl),
          ...env,
        }),
        runner: true,
        log: () => undefined,
      });
    const client = () => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });

    beforeEach(async () => {
      database = await harness.create();
      const model = schemaFakeModel();
      failing = false;
      fake = await new FakeOpenAiServer((request) => {
        // A refusal the model's client does not retry: the run fails at its first step.
        if (failing) throw Object.assign(new Error('the model refuses this key'), { status: 401 });
        return model(request);
      }).start();
      home = mkdtempSync(join(tmpdir(), 'quarry-chat-'));
      cpSync(fixtures, join(home, 'docs'), { recursive: true });
      server = await startChatServer();
    });
    afterEach(async () => {
      await server?.close();
      await fake?.stop();
      await database?.destroy();
      rmSync(home, { recursive: true, force: true });
    });

    /** Tokens the run's model steps recorded, as the journal holds them. */
    async function journalUsage(sessionId: string) {
      const steps = await database.store.listSteps(sessionId);
      const input = steps.reduce((sum, step) => sum + (step.usage?.inputTokens ?? 0), 0);
      const output = steps.reduce((sum, step) => sum + (step.usage?.outputTokens ?? 0), 0);
      return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
    }

    it('streams the report while it is written, ends with exactly the stored answer, and reports the journal’s usage', async () => {
      // The claims check waits: the sections are written, the run has not ended.
      fake.holdWhen(judging);
      const { data: stream, response } = await client()
        .chat.completions.create({
          model: 'quarry',
          stream: true,
          stream_options: { include_usage: true },
          temperature: 0.2,
          messages: [{ role: 'user', content: QUESTION }],
        })
        .withResponse();
      const sessionId = response.headers.get('x-quarry-session-id')!;
      let content = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      let finish: string | null = null;
      let firstTextWhile: string | null = null;
      for await (const chunk of stream) {
        const text = chunk.choices[0]?.delta.content ?? '';
        if (text && firstTextWhile === null) {
          firstTextWhile = (await database.store.getSession(sessionId)).status;
          await fake.waitUntilHeld();
          fake.release();
        }
        content += text;
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(firstTextWhile, 'the first text arrived while the run was still running').toBe('running');
      expect(finish).toBe('stop');
      const messages = await database.store.listMessages(sessionId);
      expect(content).toBe(messages.findLast((message) => message.role === 'assistant')!.content);
      expect(content).toMatch(/^# .+\n\n## /);
      expect(content).toContain('## Sources');
      expect(usage).toEqual(await journalUsage(sessionId));
      expect(usage!.total_tokens).toBeGreaterThan(0);
      // The temperature reached every model call.
      expect(fake.calls.every((call) => call.request.temperature === 0.2)).toBe(true);

      // Not streamed: the same answer, and the same usage.
      const again = await client().chat.completions.create(
        { model: 'quarry', messages: [{ role: 'user', content: QUESTION }] },
        { headers: { 'x-quarry-session-id': sessionId } },
      );
      expect(again.choices[0]!.message.content).toBe(content);
      expect(again.usage).toEqual(await journalUsage(sessionId));
    });

    it('attaches a re-sent one-message chat to its running research, and researches anew once that run has ended', async () => {
      fake.holdWhen(judging);
      const controller = new AbortController();
      const { data: stream, response } = await client()
        .chat.completions.create(
          { model: 'quarry', stream: true, messages: [{ role: 'user', content: QUESTION }] },
          { signal: controller.signal },
        )
        .withResponse();
      const sessionId = response.headers.get('x-quarry-session-id')!;
      // The client drops the connection once the answer is being written, while the run holds.
      for await (const chunk of stream) {
        if (!chunk.choices[0]?.delta.content) continue;
        controller.abort();
        break;
      }
      await fake.waitUntilHeld();

      // The same conversation again, with no id: the same session, not a second research. Its
      // headers come once it has attached; only then does the run go on.
      const { data: resent, response: attached } = await client()
        .chat.completions.create({ model: 'quarry', stream: true, messages: [{ role: 'user', content: QUESTION }] })
        .withResponse();
      expect(attached.headers.get('x-quarry-session-id')).toBe(sessionId);
      fake.release();
      let content = '';
      for await (const chunk of resent) content += chunk.choices[0]?.delta.content ?? '';
      const messages = await database.store.listMessages(sessionId);
      expect(content).toBe(messages.findLast((message) => message.role === 'assistant')!.content);
      expect((await database.store.listSessions({})).sessions).toHaveLength(1);

      // The run has ended: the same message is asked anew.
      const { response: anew } = await client()
        .chat.completions.create({ model: 'quarry', messages: [{ role: 'user', content: QUESTION }] })
        .withResponse();
      expect(anew.headers.get('x-quarry-session-id')).not.toBe(sessionId);
      expect((await database.store.listSessions({})).sessions).toHaveLength(2);
    });

    it('asks clarifying questions first on a server that says so, and researches once the chat answers them', async () => {
      await server.close();
      server = await startChatServer({ QUARRY_CLARIFY: '1' });
      const openai = client();
      const asked = await openai.chat.completions.create({
        model: 'quarry',
        messages: [{ role: 'user', content: QUESTION }],
      });
      const questions = asked.choices[0]!.message.content!;
      expect(questions).toMatch(/^Before I start, a few questions/);
      expect(asked.choices[0]!.finish_reason).toBe('stop');
      const answered = await openai.chat.completions.create({
        model: 'quarry',
        messages: [
          { role: 'user', content: QUESTION },
          { role: 'assistant', content: questions },
          { role: 'user', content: 'Only tidal barrages, please.' },
        ],
      });
      expect(answered.choices[0]!.message.content).toContain('## Sources');
      const [session] = (await database.store.listSessions()).sessions;
      const plan = (await database.store.listSteps(session!.id, { includePrompts: true })).find(
        (step) => step.key === 'plan',
      );
      expect(plan?.prompt?.user).toContain('Clarification from the person asking: Only tidal barrages, please.');
    });

    it('raises a failed research as an error in the client, streamed or not', async () => {
      failing = true;
      const plain = client().chat.completions.create({
        model: 'quarry',
        messages: [{ role: 'user', content: QUESTION }],
      });
      await expect(plain).rejects.toMatchObject({ status: 502, code: 'research_failed', type: 'server_error' });
      const stream = await client().chat.completions.create({
        model: 'quarry',
        stream: true,
        messages: [{ role: 'user', content: `${QUESTION} Again.` }],
      });
      const read = async () => {
        for await (const _chunk of stream) {
          // reading until the error
        }
      };
      await expect(read()).rejects.toThrow(/The research failed/);
    });

    it('refuses, by name, every option it does not implement, and accepts their defaults', async () => {
      const refused: Record<string, unknown> = {
        top_p: 0.5,
        n: 2,
        max_tokens: 100,
        max_completion_tokens: 100,
        stop: ['\n'],
        seed: 1,
        presence_penalty: 1,
        frequency_penalty: 1,
        logprobs: true,
        top_logprobs: 2,
        logit_bias: { 50256: -100 },
        response_format: { type: 'json_object' },
        tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
        tool_choice: 'auto',
        parallel_tool_calls: true,
        reasoning_effort: 'high',
        modalities: ['text', 'audio'],
        store: false,
        web_search_options: {},
        made_up_option: true,
      };
      for (const [name, value] of Object.entries(refused)) {
        const request = client().chat.completions.create({
          model: 'quarry',
          messages: [{ role: 'user', content: QUESTION }],
          [name]: value,
        } as never);
        await expect(request, name).rejects.toMatchObject({
          status: 400,
          code: 'unsupported_parameter',
          param: name,
        });
      }
      await expect(
        client().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: QUESTION }] }),
      ).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
      // An image is refused by name, never dropped (issue 45).
      await expect(
        client().chat.completions.create({
          model: 'quarry',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: QUESTION },
                { type: 'image_url', image_url: { url: 'https://example.org/tide.png' } },
              ],
            },
          ],
        }),
      ).rejects.toMatchObject({ status: 400, code: 'unsupported_content_part', param: 'messages.0.content.1.type' });
      // Nothing was started by a refused request.
      expect((await database.store.listSessions()).sessions).toEqual([]);
      // The defaults are what Quarry does anyway.
      const accepted = await client().chat.completions.create({
        model: 'quarry',
        messages: [{ role: 'user', content: QUESTION }],
        n: 1,
        top_p: 1,
        presence_penalty: 0,
        frequency_penalty: 0,
        response_format: { type: 'text' },
      });
      // Accepted and researched (what the fake model writes, copied from its prompts, varies with
      // the run's temporary paths in them: that a report came is asserted, not what it says).
      expect(accepted.choices[0]!.message.content).toMatch(/^# \S/);
      expect((await database.store.listSessions()).sessions).toHaveLength(1);
      expect(await client().models.retrieve('quarry')).toMatchObject({ id: 'quarry', object: 'model' });
      await expect(client().models.retrieve('gpt-4o')).rejects.toMatchObject({ status: 404 });
    });

    it('answers a front end’s title and tag requests without starting research, and continues a chat whose reply was edited', async () => {
      const openai = client();
      const first = await openai.chat.completions
        .create({ model: 'quarry', messages: [{ role: 'user', content: QUESTION }] })
        .withResponse();
      const sessionId = first.response.headers.get('x-quarry-session-id')!;
      const report = first.data.choices[0]!.message.content!;
      const callsBefore = fake.calls.length;
      // As Open WebUI asks for a title and tags after the first exchange.
      const history = `<chat_history>\nUSER: ${QUESTION}\nASSISTANT: ${report.slice(0, 200)}\n</chat_history>`;
      const title = await openai.chat.completions
        .create({
          model: 'quarry',
          messages: [
            {
              role: 'user',
              content: `### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Output:\nJSON format: { "title": "your concise title here" }\n### Chat History:\n${history}`,
            },
          ],
        })
        .withResponse();
      expect(title.response.headers.get('x-quarry-session-id')).toBeNull();
      expect(title.data.choices[0]!.message.content!.length).toBeGreaterThan(0);
      const tags = await openai.chat.completions.create({
        model: 'quarry',
        stream: true,
        messages: [
          {
            role: 'user',
            content: `### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history.\n### Output:\nJSON format: { "tags": ["tag1", "tag2"] }\n### Chat History:\n${history}`,
          },
        ],
      });
      let tagText = '';
      for await (const chunk of tags) tagText += chunk.choices[0]?.delta.content ?? '';
      expect(tagText.length).toBeGreaterThan(0);
      // One model call each (the server's model answers the prompt as sent), and no session besides the chat.
      expect(fake.calls.length).toBe(callsBefore + 2);
      expect((await database.store.listSessions()).sessions.map((session) => session.id)).toEqual([sessionId]);

      // The client edited the assistant's reply; the user turns still say which chat this is.
      const edited = await openai.chat.completions
        .create({
          model: 'quarry',
          messages: [
            { role: 'user', content: QUESTION },
            { role: 'assistant', content: `${report}\n\n(edited by the user)` },
            { role: 'user', content: 'When did the La Rance station open?' },
          ],
        })
        .withResponse();
      expect(edited.response.headers.get('x-quarry-session-id')).toBe(sessionId);
      expect((await database.store.listSessions()).sessions).toHaveLength(1);
    });
  });
}

describeChat(sqliteHarness, null);
describeChat(postgresHarness, postgresSkipReason());
