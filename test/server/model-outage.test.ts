import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { fakeModelEnv, testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const QUESTION = 'How does tidal power generate electricity?';

/** A port nothing listens on: connections to it are refused, as to a model server that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A model that is down (issue 45): every client that waits on the research sees that it waits and
 * on what, and gets an error with the cause once the outage lasts past QUARRY_OUTAGE_WAIT; the
 * session stays resumable.
 */
describe('a model outage', () => {
  let database: TestDatabase;
  let server: RunningServer;

  beforeEach(async () => {
    database = await sqliteHarness.create();
    server = await startServer({
      store: database.store,
      config: testConfig({
        QUARRY_DOCS: fixtures,
        QUARRY_PORT: '0',
        QUARRY_OUTAGE_WAIT: '3',
        ...fakeModelEnv(`http://127.0.0.1:${await closedPort()}/v1`),
      }),
      runner: true,
      log: () => undefined,
    });
  });
  afterEach(async () => {
    await server.close();
    await database.destroy();
  });

  const client = () => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });

  it('shows a streaming chat what it waits on, then ends it with the cause; the session is resumable', {
    timeout: within(60_000),
  }, async () => {
    const stream = await client().chat.completions.create({
      model: 'quarry',
      stream: true,
      messages: [{ role: 'user', content: QUESTION }],
    });
    const reasoning: string[] = [];
    const failure = await (async () => {
      try {
        for await (const chunk of stream) {
          const line = (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content;
          if (line) reasoning.push(line);
        }
      } catch (error) {
        return error as Error;
      }
      return null;
    })();
    expect(reasoning.some((line) => /^Waiting: The model openai-compatible:fake is unavailable/.test(line))).toBe(true);
    expect(failure?.message).toMatch(/unavailable.*waited \d+ s.*resume/s);
    const sessions = (await database.store.listSessions()).sessions;
    expect(sessions).toHaveLength(1);
    expect(['interrupted', 'running']).toContain(sessions[0]!.status);
  });

  it('answers a chat that waits with 502 research_failed naming the outage, before any timeout', {
    timeout: within(60_000),
  }, async () => {
    const started = Date.now();
    const error = await client()
      .chat.completions.create({ model: 'quarry', messages: [{ role: 'user', content: QUESTION }] })
      .catch((caught: unknown) => caught as InstanceType<typeof OpenAI.APIError>);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(
      /The model openai-compatible:fake is unavailable/,
    );
    // Within the bound and the back-off it was waiting in, far from the 300 s the server allows.
    expect(Date.now() - started).toBeLessThan(within(60_000));
  });

  it('fails a Responses turn that waits with the outage as its error', { timeout: within(60_000) }, async () => {
    const response = await client().responses.create({ model: 'quarry', input: QUESTION });
    expect(response.status).toBe('failed');
    expect(response.error?.message).toMatch(/The model openai-compatible:fake is unavailable/);
  });
});
