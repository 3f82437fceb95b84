import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../../src/store/conformance/harness.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { within } from '../support/bounds.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { fakeModelEnv } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A foreground run that loses its lease says truthfully why: another worker took it, or nobody did
 * (it lapsed while the store could not be renewed, as after an outage), with what to do next.
 */
describe('quarry run when its lease is lost', () => {
  let home: string;
  let fake: FakeOpenAiServer;
  let store: Store;

  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), 'quarry-lease-lost-'));
    cpSync(join(root, 'test', 'fixtures', 'corpus'), join(home, 'docs'), { recursive: true });
    fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    store = await openStore({ db: join(home, 'quarry.db') });
  });
  afterEach(async () => {
    fake.release();
    await store.close();
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const runUntilHeld = async () => {
    fake.holdAfter(1);
    const child = spawn(
      process.execPath,
      [join(root, 'bin', 'quarry'), 'run', 'How does tidal power generate electricity?', '--docs', join(home, 'docs')],
      {
        env: {
          PATH: process.env.PATH,
          HOME: home,
          QUARRY_HOME: home,
          ...fakeModelEnv(fake.baseUrl),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await fake.waitUntilHeld(within(30_000));
    const [session] = (await store.listSessions()).sessions;
    return { child, exited, output: () => output, session: session! };
  };

  it('names the worker that took the session over', { timeout: within(60_000) }, async () => {
    const run = await runUntilHeld();
    await store.claimSession({
      sessionId: run.session.id,
      workerId: 'rescuer',
      ttlMs: 60_000,
      takeOverEpoch: run.session.leaseEpoch,
    });
    fake.release();
    expect(await run.exited).toBe(5);
    expect(run.output()).toContain(`Another worker (rescuer) took over session ${run.session.id.slice(0, 8)}`);
  });

  it('says the lease lapsed and nobody took it, and how to resume', { timeout: within(60_000) }, async () => {
    const run = await runUntilHeld();
    // Taken and given back at once: the run's lease is gone, and no worker holds the session.
    const lease = await store.claimSession({
      sessionId: run.session.id,
      workerId: 'passer-by',
      ttlMs: 60_000,
      takeOverEpoch: run.session.leaseEpoch,
    });
    await store.release(lease, { status: 'interrupted' });
    fake.release();
    expect(await run.exited).toBe(5);
    expect(run.output()).toContain(
      'its lease lapsed while the store could not be reached, and no other worker has taken it',
    );
    expect(run.output()).toContain(`quarry resume ${run.session.id.slice(0, 8)}`);
    expect(run.output()).not.toContain('Another worker');
    await eventually(async () => (await store.getSession(run.session.id)).status === 'interrupted');
  });
});
