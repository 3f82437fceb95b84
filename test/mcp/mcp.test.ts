import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { fakeModelEnv, testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'corpus');
const QUESTION = 'How does tidal power generate electricity?';
const tokens = { alice: 'alice-mcp-token-0001', bob: 'bob-mcp-token-0002' };

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: any };

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'quarry-test', version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolResult;

describe('MCP server', () => {
  let database: TestDatabase;
  let open: RunningServer;
  let withUsers: RunningServer;
  let usersDatabase: TestDatabase;

  beforeAll(async () => {
    database = await sqliteHarness.create();
    usersDatabase = await sqliteHarness.create();
    for (const name of ['alice', 'bob'] as const) {
      const user = await usersDatabase.store.createUser({ name });
      const tokenHash = createHash('sha256').update(tokens[name]).digest('hex');
      await usersDatabase.store.addApiToken({ userId: user.id, tokenHash });
    }
    const config = testConfig({ QUARRY_DOCS: fixtures, QUARRY_PORT: '0' });
    open = await startServer({ store: database.store, config, runner: true, heartbeatSeconds: 1 });
    withUsers = await startServer({ store: usersDatabase.store, config, runner: true, heartbeatSeconds: 1 });
  });
  afterAll(async () => {
    await open?.close();
    await withUsers?.close();
    await database?.destroy();
    await usersDatabase?.destroy();
  });

  it('passes the MCP conformance suite’s server scenarios, but for its listed expected failures', {
    timeout: within(180_000),
  }, async () => {
    const suite = join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
    const run = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        join(root, 'test', 'mcp', 'node20-fs-glob.mjs'),
        suite,
        'server',
        '--url',
        `${open.url}/mcp`,
        '--expected-failures',
        join(root, 'test', 'mcp', 'expected-failures.yaml'),
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    ).catch((error: { code: number; stdout: string; stderr: string }) => error);
    const output = `${run.stdout}\n${run.stderr}`;
    expect(output, output.slice(-3000)).not.toMatch(/Unexpected failures|Stale|now pass/i);
    expect('code' in run ? run.code : 0, output.slice(-3000)).toBe(0);
    for (const scenario of [
      'server-initialize',
      'tools-list',
      'tools-call-error',
      'prompts-list',
      'dns-rebinding-protection',
    ])
      expect(output).toMatch(new RegExp(`✓ ${scenario}:`));
  });

  it('drives research over Streamable HTTP with a token; a run outlives its client; users stay apart', {
    timeout: within(90_000),
  }, async () => {
    const alice = await connect(`${withUsers.url}/mcp`, tokens.alice);
    const tools = (await alice.listTools()).tools.map((tool) => tool.name).sort();
    expect(tools).toEqual([
      'ask_followup',
      'get_research',
      'list_sessions',
      'research',
      'search_sources',
      'start_research',
    ]);
    const started = await call(alice, 'start_research', { question: QUESTION });
    const sessionId = started.structuredContent.sessionId as string;
    expect(sessionId).toBeTruthy();
    // The client goes away at once; the research goes on without it.
    await alice.close();

    const again = await connect(`${withUsers.url}/mcp`, tokens.alice);
    let state: ToolResult = await call(again, 'get_research', { sessionId });
    await eventually(async () => {
      state = await call(again, 'get_research', { sessionId });
      return state.structuredContent.status === 'completed';
    }, 60_000);
    expect(state.structuredContent.report).toMatch(/tidal/i);
    expect(state.structuredContent.sources.length).toBeGreaterThan(0);
    const found = await call(again, 'search_sources', { sessionId, query: 'tidal' });
    expect(found.structuredContent.sources.length).toBeGreaterThan(0);
    const listed = await call(again, 'list_sessions', {});
    expect(listed.structuredContent.sessions.map((session: { sessionId: string }) => session.sessionId)).toContain(
      sessionId,
    );
    const report = await again.readResource({ uri: `quarry://sessions/${sessionId}/report` });
    expect(report.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    expect((report.contents[0] as { text: string }).text).toBe(state.structuredContent.report);
    const resources = (await again.listResources()).resources.map((resource) => resource.uri);
    expect(resources).toContain(`quarry://sessions/${sessionId}/sources`);
    const asked = await call(again, 'ask_followup', { sessionId, text: 'When did La Rance open?' });
    expect(asked.structuredContent.kind).toBe('follow-up');
    await eventually(
      async () => (await call(again, 'get_research', { sessionId })).structuredContent.status === 'completed',
    );
    // The follow-up is readable: its answer, every report version, the conversation.
    const after = await call(again, 'get_research', { sessionId });
    expect(after.structuredContent.answer).toMatch(/1966/);
    expect(after.content[0]?.text).toContain(after.structuredContent.answer);
    expect(after.structuredContent.reportVersion).toBe(after.structuredContent.reportVersions);
    expect((await call(again, 'get_research', { sessionId, version: 1 })).structuredContent.report).toBe(
      state.structuredContent.report,
    );
    const latest = await again.readResource({ uri: `quarry://sessions/${sessionId}/report` });
    expect((latest.contents[0] as { text: string }).text).toBe(after.structuredContent.report);
    const first = await again.readResource({ uri: `quarry://sessions/${sessionId}/reports/1` });
    expect((first.contents[0] as { text: string }).text).toBe(state.structuredContent.report);
    const conversation = await again.readResource({ uri: `quarry://sessions/${sessionId}/conversation` });
    expect((conversation.contents[0] as { text: string }).text).toContain(after.structuredContent.answer);

    const bob = await connect(`${withUsers.url}/mcp`, tokens.bob);
    const stolen = await call(bob, 'get_research', { sessionId });
    expect(stolen.isError).toBe(true);
    expect(stolen.content[0]?.text).toMatch(/^SESSION_NOT_FOUND/);
    expect((await call(bob, 'list_sessions', {})).structuredContent.sessions).toEqual([]);
    // Another user's session is a resource that does not exist (-32002), as is any unknown URI.
    await expect(bob.readResource({ uri: `quarry://sessions/${sessionId}/report` })).rejects.toMatchObject({
      code: -32002,
    });
    await expect(bob.readResource({ uri: 'quarry://nothing/here' })).rejects.toMatchObject({ code: -32002 });
    await bob.close();
    await again.close();
    // No token, no MCP: a 401 that says how to authenticate, and where the resource's metadata is.
    await expect(connect(`${withUsers.url}/mcp`)).rejects.toThrow();
    const denied = await fetch(`${withUsers.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toBe(
      `Bearer realm="quarry", resource_metadata="${withUsers.url}/.well-known/oauth-protected-resource"`,
    );
    const metadata = await fetch(`${withUsers.url}/.well-known/oauth-protected-resource`);
    expect(metadata.headers.get('content-type')).toMatch(/json/);
    expect(await metadata.json()).toMatchObject({
      resource: `${withUsers.url}/mcp`,
      bearer_methods_supported: ['header'],
    });
    const unknown = await fetch(`${withUsers.url}/.well-known/openid-configuration`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/json/);
  });

  it('runs research as an MCP task: created at once, outlives its client, read and listed from another connection', {
    timeout: within(90_000),
  }, async () => {
    const alice = await connect(`${withUsers.url}/mcp`, tokens.alice);
    let taskId = '';
    const stream = alice.experimental.tasks.callToolStream(
      { name: 'research', arguments: { question: QUESTION } },
      undefined,
      {
        task: { ttl: 60_000 },
      },
    );
    for await (const message of stream) {
      expect(message.type).toBe('taskCreated');
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      break;
    }
    expect(taskId).toMatch(/^resp_0_0_/);
    await alice.close();

    const again = await connect(`${withUsers.url}/mcp`, tokens.alice);
    await eventually(async () => (await again.experimental.tasks.getTask(taskId)).status === 'completed', 60_000);
    const done = (await again.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as ToolResult;
    expect(done.content[0]?.text).toMatch(/\[1\]/);
    expect(done.structuredContent.sources.length).toBeGreaterThan(0);
    const listed = await again.experimental.tasks.listTasks();
    expect(listed.tasks.map((task) => task.taskId)).toContain(taskId);
    await expect(again.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/terminal/);

    // A plain call (a client without tasks) waits for the report, hearing progress meanwhile.
    const heard: string[] = [];
    const plain = (await again.callTool(
      { name: 'research', arguments: { question: 'What is a tidal barrage?' } },
      undefined,
      {
        onprogress: (note) => heard.push(note.message ?? ''),
        timeout: within(60_000),
      },
    )) as ToolResult;
    expect(plain.isError).toBeFalsy();
    expect(plain.content[0]?.text).toMatch(/barrage/i);
    expect(heard.some((line) => line.startsWith('Searching: '))).toBe(true);
    // start_research is not a task tool: called as one, it is refused and starts nothing.
    const sessionsBefore = (await call(again, 'list_sessions', {})).structuredContent.sessions.length;
    const refused = again.experimental.tasks.callToolStream(
      { name: 'start_research', arguments: { question: 'Should not start' } },
      undefined,
      { task: { ttl: 60_000 } },
    );
    const messages = [];
    for await (const message of refused) messages.push(message);
    expect(messages.at(-1)).toMatchObject({ type: 'error', error: { code: -32601 } });
    expect((await call(again, 'list_sessions', {})).structuredContent.sessions).toHaveLength(sessionsBefore);
    // Every tool says what its structured content holds.
    for (const tool of (await again.listTools()).tools) expect(tool.outputSchema, tool.name).toBeDefined();

    // Another user's task is not found, nor listed.
    const bob = await connect(`${withUsers.url}/mcp`, tokens.bob);
    await expect(bob.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/i);
    expect((await bob.experimental.tasks.listTasks()).tasks).toEqual([]);
    await bob.close();
    await again.close();
  });

  it('cancels a research task that has not finished; its session is stopped, not lost', {
    timeout: within(60_000),
  }, async () => {
    // A server without a runner: the research stays queued until cancelled.
    const parkedDatabase = await sqliteHarness.create();
    const parked = await startServer({
      store: parkedDatabase.store,
      config: testConfig({ QUARRY_DOCS: fixtures, QUARRY_PORT: '0' }),
      runner: false,
    });
    try {
      const client = await connect(`${parked.url}/mcp`);
      const stream = client.experimental.tasks.callToolStream(
        { name: 'research', arguments: { question: 'Which rivers have tidal bores?' } },
        undefined,
        { task: { ttl: 60_000 } },
      );
      let taskId = '';
      for await (const message of stream) {
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        break;
      }
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
      expect((await client.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
      await eventually(async () => (await client.experimental.tasks.getTask(taskId)).status === 'cancelled', 20_000);
      const state = await call(client, 'get_research', { sessionId: taskId.replace(/^resp_0_0_/, '') });
      expect(state.structuredContent.status).toBe('interrupted');
      await client.close();
    } finally {
      await parked.close();
      await parkedDatabase.destroy();
    }
  });

  it('answers tasks/cancel of a running research with cancelled, and the run stops (issue 45)', {
    timeout: within(60_000),
  }, async () => {
    const fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    const runningDatabase = await sqliteHarness.create();
    const running = await startServer({
      store: runningDatabase.store,
      config: testConfig({ QUARRY_DOCS: fixtures, QUARRY_PORT: '0', ...fakeModelEnv(fake.baseUrl) }),
      runner: true,
      heartbeatSeconds: 1,
    });
    try {
      // The research runs and waits on its second model call.
      fake.holdAfter(1);
      const client = await connect(`${running.url}/mcp`);
      const stream = client.experimental.tasks.callToolStream(
        { name: 'research', arguments: { question: 'Which rivers have tidal bores?' } },
        undefined,
        { task: { ttl: 60_000 } },
      );
      let taskId = '';
      for await (const message of stream) {
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        break;
      }
      await fake.waitUntilHeld();
      const sessionId = taskId.replace(/^resp_0_0_/, '');
      expect((await runningDatabase.store.getSession(sessionId)).status).toBe('running');
      expect((await client.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
      fake.release();
      await eventually(
        async () => (await runningDatabase.store.getSession(sessionId)).status === 'interrupted',
        10_000,
      );
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
      await client.close();
    } finally {
      fake.release();
      await running.close();
      await runningDatabase.destroy();
      await fake.stop();
    }
  });

  it('asks clarifying questions on a server that says so, answered with ask_followup', {
    timeout: within(90_000),
  }, async () => {
    const fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    const clarifyingDatabase = await sqliteHarness.create();
    const clarifying = await startServer({
      store: clarifyingDatabase.store,
      config: testConfig({
        QUARRY_DOCS: fixtures,
        QUARRY_PORT: '0',
        QUARRY_CLARIFY: '1',
        ...fakeModelEnv(fake.baseUrl),
      }),
      runner: true,
      heartbeatSeconds: 1,
    });
    try {
      const client = await connect(`${clarifying.url}/mcp`);
      const started = await call(client, 'start_research', { question: QUESTION });
      const sessionId = started.structuredContent.sessionId as string;
      let state: ToolResult = await call(client, 'get_research', { sessionId });
      await eventually(async () => {
        state = await call(client, 'get_research', { sessionId });
        return state.structuredContent.status === 'waiting';
      }, 30_000);
      expect(state.structuredContent.waitingFor).toMatch(/^Before I start, a few questions/);
      expect(state.content[0]?.text).toContain('Answer with ask_followup.');
      await call(client, 'ask_followup', { sessionId, text: 'Only tidal barrages, please.' });
      await eventually(async () => {
        state = await call(client, 'get_research', { sessionId });
        return state.structuredContent.status === 'completed';
      }, 60_000);
      expect(state.structuredContent.report).toMatch(/^## Sources/m);
      const plan = (await clarifyingDatabase.store.listSteps(sessionId, { includePrompts: true })).find(
        (step) => step.key === 'plan',
      );
      expect(plan?.prompt?.user).toContain('Clarification from the person asking: Only tidal barrages, please.');
      await client.close();
    } finally {
      await clarifying.close();
      await clarifyingDatabase.destroy();
      await fake.stop();
    }
  });

  it('serves stdio with quarry mcp: waits for a report, with progress notifications', {
    timeout: within(90_000),
  }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'quarry-mcp-'));
    cpSync(fixtures, join(home, 'docs'), { recursive: true });
    const client = new Client({ name: 'quarry-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(root, 'bin', 'quarry'), 'mcp', '--docs', join(home, 'docs')],
      env: { PATH: process.env.PATH ?? '', HOME: home, QUARRY_HOME: home },
      stderr: 'pipe',
    });
    try {
      await client.connect(transport);
      const logged: string[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => {
        logged.push(String(note.params.data));
      });
      const progress: string[] = [];
      const done = (await client.callTool(
        { name: 'start_research', arguments: { question: QUESTION, wait: true } },
        undefined,
        {
          onprogress: (note) => progress.push(note.message ?? ''),
          timeout: within(60_000),
        },
      )) as ToolResult;
      expect(done.isError).toBeFalsy();
      expect(done.structuredContent.status).toBe('completed');
      expect(done.structuredContent.report).toMatch(/tidal/i);
      expect(progress.some((line) => line.startsWith('Searching: '))).toBe(true);
      // The session id comes first, the phases as log messages (issue 45).
      expect(progress[0]).toContain(`Research session ${done.structuredContent.sessionId} started`);
      expect(logged).toContain(`Session ${done.structuredContent.sessionId}: search phase started`);
      expect(logged.at(-1)).toBe(`Session ${done.structuredContent.sessionId}: run ended (completed)`);
      const prompt = await client.getPrompt({ name: 'research', arguments: { question: QUESTION } });
      expect(JSON.stringify(prompt.messages)).toContain(QUESTION);
    } finally {
      await client.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
