import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../src/store/conformance/harness.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Configuration is resolved once, the same for every interface (issue 21: serve ignored the file's model). */
describe('quarry serve with a config file', () => {
  let home: string;
  let fake: FakeOpenAiServer;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'quarry-serve-config-'));
    fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    cpSync(join(root, 'test', 'fixtures', 'corpus'), join(home, 'docs'), { recursive: true });
    mkdirSync(join(home, 'quarry'));
    writeFileSync(
      join(home, 'quarry', 'config.json'),
      JSON.stringify({ model: 'openai-compatible:fake-model', docs: [join(home, 'docs')] }),
    );
  });
  afterAll(async () => {
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('uses the model the config file names through the API', async () => {
    const server = spawn(process.execPath, [join(root, 'bin', 'quarry'), 'serve', '--port', '0'], {
      env: {
        PATH: process.env.PATH,
        HOME: home,
        QUARRY_HOME: join(home, 'quarry'),
        QUARRY_LLM_BASE_URL: fake.baseUrl,
        QUARRY_LLM_API_KEY: 'k',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    server.stderr.on('data', (chunk) => (stderr += chunk));
    try {
      await eventually(() => /listening on (http:\/\/\S+?) /.test(stderr), 30_000);
      const url = /listening on (http:\/\/\S+?) /.exec(stderr)![1]!;
      const capabilities = await (await fetch(`${url}/api/capabilities`)).json();
      expect(capabilities.analyst).toMatchObject({ kind: 'llm', model: 'openai-compatible:fake-model' });
      const created = await (
        await fetch(`${url}/api/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            question: 'How does tidal power generate electricity?',
            settings: { maxIterations: 1 },
          }),
        })
      ).json();
      const detail = await (await fetch(`${url}/api/sessions/${created.id}`)).json();
      expect(detail.settings.model).toBe('openai-compatible:fake-model');
      await eventually(
        async () => (await (await fetch(`${url}/api/sessions/${created.id}`)).json()).status === 'completed',
        60_000,
      );
      expect(fake.calls.length).toBeGreaterThan(0);
      const session = await (await fetch(`${url}/api/sessions/${created.id}`)).json();
      expect(session.report.latest).toContain('Written by openai-compatible:fake-model');
    } finally {
      server.kill('SIGTERM');
    }
  });
  it('logs one JSON object per line with QUARRY_LOG_FORMAT=json, and refuses a format it does not know (issue 36)', async () => {
    const env = { PATH: process.env.PATH, HOME: home, QUARRY_HOME: join(home, 'quarry'), QUARRY_LLM_API_KEY: 'k' };
    const server = spawn(
      process.execPath,
      [join(root, 'bin', 'quarry'), 'serve', '--port', '0', '--docs', join(home, 'docs')],
      {
        env: { ...env, QUARRY_LOG_FORMAT: 'json', QUARRY_LLM_BASE_URL: fake.baseUrl },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    server.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => server.on('exit', resolve));
    let sessionId = '';
    try {
      await eventually(() => stderr.includes('listening on'), 30_000);
      // A research run the server's runner runs: one line says how it ended.
      const url = /listening on (http:\/\/\S+?) /.exec(stderr)![1]!;
      sessionId = (
        await (
          await fetch(`${url}/api/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ question: 'How does tidal power generate electricity?' }),
          })
        ).json()
      ).id;
      await eventually(() => stderr.includes(`session ${sessionId} completed`), 60_000);
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      server.kill('SIGKILL');
    }
    const lines = stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: expect.stringContaining('listening on http://'),
      workerId: expect.any(String),
      pid: server.pid,
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: expect.stringContaining('shutting down') });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        sessionId,
        runId: expect.any(String),
        status: 'completed',
        durationMs: expect.any(Number),
      }),
    );
    // No question or document text in the log.
    expect(stderr).not.toContain('tidal');

    const refused = spawn(process.execPath, [join(root, 'bin', 'quarry'), 'worker'], {
      env: { ...env, QUARRY_LOG_FORMAT: 'xml' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let refusal = '';
    refused.stderr.on('data', (chunk) => (refusal += chunk));
    expect(await new Promise((resolve) => refused.on('exit', resolve))).toBe(2);
    expect(refusal).toContain('QUARRY_LOG_FORMAT');
  });
});
