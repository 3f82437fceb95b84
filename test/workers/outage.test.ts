import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localServiceContext } from '../../src/service/local-context.ts';
import { startResearch } from '../../src/service/start-research.ts';
import { eventually, sleep } from '../../src/store/conformance/harness.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { within } from '../support/bounds.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { tallyPrompts } from '../support/model-calls.ts';
import { OwnPostgres } from '../support/own-postgres.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'quarry');
const fixtures = join(root, 'test', 'fixtures', 'corpus');
const QUESTION = 'How does tidal power generate electricity, and where are tidal stations?';

/** A child process with its output kept, and its exit awaited. */
function start(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk) => (output.stdout += chunk));
  child.stderr!.on('data', (chunk) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

/** Store reads that wait out the outage the test itself causes. */
async function retrying<T>(read: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch {
      await sleep(250);
    }
  }
}

describe.skipIf(process.env.STORE_BACKENDS !== undefined && !process.env.STORE_BACKENDS.includes('postgres'))(
  'a PostgreSQL restart and outage under a worker, a server and a foreground run',
  () => {
    let cluster: OwnPostgres;
    let fake: FakeOpenAiServer;
    let store: Store;
    let home: string;
    let docs: string;
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      cluster = await OwnPostgres.create();
      fake = await new FakeOpenAiServer(schemaFakeModel(), { delayMs: 150 }).start();
      home = mkdtempSync(join(tmpdir(), 'quarry-outage-'));
      docs = join(home, 'docs');
      cpSync(fixtures, docs, { recursive: true });
      store = await openStore({ db: cluster.url });
    }, within(60_000));
    afterAll(async () => {
      for (const child of children) child.kill('SIGKILL');
      await store?.close().catch(() => undefined);
      await fake?.stop();
      cluster?.destroy();
      rmSync(home, { recursive: true, force: true });
    });

    it('waits the database out and finishes everything, repeating no completed model call', {
      timeout: within(240_000),
    }, async () => {
      const env = {
        ...process.env,
        QUARRY_HOME: home,
        QUARRY_DB: cluster.url,
        QUARRY_MODEL: 'openai-compatible:fake',
        QUARRY_LLM_BASE_URL: fake.baseUrl,
        QUARRY_LLM_API_KEY: 'k',
      };
      const config = testConfig(env);
      const queued: string[] = [];
      for (let index = 0; index < 3; index++) {
        const { session } = await startResearch(localServiceContext(store, config), {
          question: `${QUESTION} (worker case ${index})`,
          docs: [docs],
          settings: { maxIterations: 1 },
        });
        queued.push(session.id);
      }
      const worker = start(['worker', '--concurrency', '2'], env);
      const server = start(['serve', '--port', '0', '--docs', docs], env);
      children.push(worker.child, server.child);
      await eventually(() => /listening on (http:\/\/\S+?) /.test(server.output.stderr), 30_000);
      const url = /listening on (http:\/\/\S+?) /.exec(server.output.stderr)![1]!;
      const created = await (
        await fetch(`${url}/api/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question: `${QUESTION} (server case)`, settings: { maxIterations: 1 } }),
        })
      ).json();
      const foreground = start(['run', `${QUESTION} (foreground case)`, '--docs', docs, '--iterations', '1'], env);
      children.push(foreground.child);

      // Everyone is mid-run: restart the database, then take it away for a few seconds.
      await eventually(() => fake.calls.length >= 12, 60_000);
      cluster.restart();
      await eventually(() => fake.calls.length >= 24, 60_000);
      cluster.stop();
      await sleep(3_000);
      cluster.start();

      expect(await foreground.exited, `${foreground.output.stdout.slice(-3000)}\n${foreground.output.stderr}`).toBe(0);
      expect(foreground.output.stdout).toContain('## Sources');
      const ids = [...queued, created.id as string];
      await eventually(async () => {
        const sessions = await retrying(() => Promise.all(ids.map((id) => store.getSession(id))));
        return sessions.every((session) => session.status === 'completed');
      }, 120_000).catch(async (error: Error) => {
        throw new Error(`${error.message}\nworker: ${worker.output.stderr}\nserver: ${server.output.stderr}`);
      });
      // The worker and the server lived through it, and the server still answers.
      expect(worker.child.exitCode).toBeNull();
      expect(server.child.exitCode).toBeNull();
      expect((await fetch(`${url}/api/sessions/${created.id}`)).status).toBe(200);

      // No model call of a completed step was sent twice (a step cut off mid-call may be sent again).
      for (const id of ids) {
        for (const tally of tallyPrompts(await store.listSteps(id, { includePrompts: true }), fake.calls)) {
          if (tally.completed > 0)
            expect(tally.sent, `${id} ${tally.keys.join(', ')}`).toBeLessThanOrEqual(tally.attempts);
        }
      }
      worker.child.kill('SIGTERM');
      server.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    });
  },
);
