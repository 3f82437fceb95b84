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
import { childEnv } from '../support/child-env.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { tallyPrompts } from '../support/model-calls.ts';
import { OwnPostgres } from '../support/own-postgres.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { readSse } from '../support/sse.ts';
import { fakeModelEnv, testConfig } from '../support/test-config.ts';

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
        ...childEnv(),
        QUARRY_HOME: home,
        QUARRY_DB: cluster.url,
        ...fakeModelEnv(fake.baseUrl),
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
      // A browser following the server's session stays connected through the outage and sees every
      // event once, in order, to the end.
      const followed = readSse(`${url}/api/sessions/${created.id}/events`, {}, (events) =>
        events.some(
          (event) => event.event === 'error' || (event.event === 'run-end' && event.data.data.status === 'completed'),
        ),
      ).catch((error: Error) => error);
      const foreground = start(['run', `${QUESTION} (foreground case)`, '--docs', docs, '--iterations', '1'], env);
      children.push(foreground.child);

      // Everyone is mid-run: restart the database, then take it away for a few seconds.
      await eventually(() => fake.calls.length >= 12, 60_000);
      cluster.restart();
      await eventually(() => fake.calls.length >= 24, 60_000);
      // The model waits while the database is away: every run, the followed one too, is mid-way
      // through it, and the stream's reads meet the outage.
      // Longer than the driver's own reconnection attempts (about 12 s): its callers must wait it out.
      fake.holdAfter(0);
      cluster.stop();
      await sleep(15_000);
      cluster.start();
      fake.release();

      // An outage longer than a lease ends the foreground run's claim: it says so (the worker took it
      // over, or may) and exits 5, and the worker finishes the session (checked below with the others).
      const exitCode = await foreground.exited;
      const foregroundLog = `${foreground.output.stdout.slice(-3000)}\n${foreground.output.stderr}`;
      if (exitCode === 0) expect(foreground.output.stdout).toContain('## Sources');
      else {
        expect(exitCode, foregroundLog).toBe(5);
        expect(foreground.output.stdout, foregroundLog).toMatch(
          /Another worker \(.*\) took over session|its lease lapsed while the store could not be reached/,
        );
      }
      const foregroundId = (await retrying(() => store.listSessions({ limit: 50 }))).sessions.find((session) =>
        session.question.includes('(foreground case)'),
      )!.id;
      const ids = [...queued, created.id as string, foregroundId];
      await eventually(async () => {
        const sessions = await retrying(() => Promise.all(ids.map((id) => store.getSession(id))));
        return sessions.every((session) => session.status === 'completed');
      }, 120_000).catch(async (error: Error) => {
        throw new Error(`${error.message}\nworker: ${worker.output.stderr}\nserver: ${server.output.stderr}`);
      });
      const events = await followed;
      if (events instanceof Error)
        throw new Error(`the stream broke: ${events.message}\nserver: ${server.output.stderr}`);
      expect(events.filter((event) => event.event === 'error')).toEqual([]);
      expect(events.at(-1)).toMatchObject({ event: 'run-end', data: { data: { status: 'completed' } } });
      expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1));
      // Nothing went unhandled in the server while its database went away.
      expect(server.output.stderr).not.toMatch(/nothing handled/);
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
