import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localServiceContext } from '../../src/service/local-context.ts';
import { startResearch } from '../../src/service/start-research.ts';
import { eventually, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'corpus');
const quarry = join(root, 'bin', 'quarry');

/** Debian's libfaketime: a process started with it preloaded reads a wall clock we choose. */
function findFaketime(): string | null {
  const multiarch = spawnSync('gcc', ['-print-multiarch'], { encoding: 'utf8' }).stdout?.trim() || 'x86_64-linux-gnu';
  const path = `/usr/lib/${multiarch}/faketime/libfaketime.so.1`;
  if (existsSync(path)) return path;
  if (process.env.CI === 'true') throw new Error(`CI=true but ${path} is missing: .ci/run installs faketime.`);
  return null;
}
const faketime = findFaketime();

/**
 * The environment for a process whose wall clock is shifted (`FAKETIME`, "+2h") or read from a file
 * the test rewrites while it runs. Its monotonic clock stays true, as a wrong or jumping wall clock
 * on a real machine leaves it.
 */
function skewed(env: NodeJS.ProcessEnv, clock: { offset: string } | { file: string }): NodeJS.ProcessEnv {
  return {
    ...env,
    LD_PRELOAD: faketime!,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
    ...('offset' in clock
      ? { FAKETIME: clock.offset }
      : { FAKETIME_TIMESTAMP_FILE: clock.file, FAKETIME_CACHE_DURATION: '1' }),
  };
}

describe.skipIf(faketime === null)('leases on SQLite when process clocks disagree', () => {
  let database: TestDatabase;
  let fake: FakeOpenAiServer;
  let folder: string;
  let env: NodeJS.ProcessEnv;
  const children: ChildProcess[] = [];

  function startWorker(name: string, workerEnv: NodeJS.ProcessEnv, options: { ttl: number; concurrency: number }) {
    const child = spawn(
      process.execPath,
      [
        quarry,
        'worker',
        '--id',
        name,
        '--concurrency',
        String(options.concurrency),
        '--lease-ttl',
        String(options.ttl),
      ],
      { env: workerEnv, stdio: 'ignore' },
    );
    children.push(child);
    return child;
  }

  async function createSession(label: string): Promise<string> {
    const { session } = await startResearch(localServiceContext(database.store, testConfig(env)), {
      question: `How does tidal power work? (${label})`,
      docs: [join(folder, 'docs')],
      settings: { model: 'openai-compatible:fake', maxIterations: 1, queriesPerIteration: 2 },
    });
    return session.id;
  }

  async function bothCompleted(first: string, second: string): Promise<void> {
    await eventually(
      async () =>
        (await database.store.getSession(first)).status === 'completed' &&
        (await database.store.getSession(second)).status === 'completed',
      60_000,
    );
  }

  async function leaseOf(sessionId: string) {
    return (await database.store.getSession(sessionId)).lease;
  }

  beforeEach(async () => {
    database = await sqliteHarness.create();
    fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    folder = mkdtempSync(join(tmpdir(), 'quarry-skew-'));
    cpSync(fixtures, join(folder, 'docs'), { recursive: true });
    env = {
      ...childEnv(),
      QUARRY_DB: database.location,
      QUARRY_LLM_BASE_URL: fake.baseUrl,
      QUARRY_LLM_API_KEY: 'k',
    };
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await fake.stop();
    await database.destroy();
    rmSync(folder, { recursive: true, force: true });
  });

  it('the tool works: a process started with it reads a clock two hours ahead', () => {
    const read = Number(
      execFileSync(process.execPath, ['-e', 'process.stdout.write(String(Date.now()))'], {
        env: skewed(childEnv(), { offset: '+2h' }),
        encoding: 'utf8',
      }),
    );
    expect(read - Date.now()).toBeGreaterThan(110 * 60_000);
  });

  it('a worker whose clock runs two hours ahead neither takes a live session nor waits out a dead holder', {
    timeout: within(120_000),
  }, async () => {
    const first = await createSession('first');
    // Every model call waits: the sessions stay mid-run while the test looks at their leases.
    fake.holdAfter(0);
    // Ten-minute leases: within the test, only a clock two hours ahead would see one run out.
    const holder = startWorker('true-clock', env, { ttl: 600, concurrency: 1 });
    await fake.waitUntilHeld();
    const held = await leaseOf(first);
    expect(held?.workerId).toBe('true-clock');

    const second = await createSession('second');
    startWorker('ahead', skewed(env, { offset: '+2h' }), { ttl: 600, concurrency: 2 });
    // A worker claims a dead worker's session before queued work: taking the second session says
    // the first did not look dead to it.
    await eventually(async () => (await leaseOf(second))?.workerId === 'ahead', 20_000);
    expect(await leaseOf(first)).toMatchObject({ workerId: 'true-clock', epoch: held!.epoch });
    expect((await database.store.getSession(first)).status).toBe('running');

    // Nor does a one-shot command on that clock take it.
    const resume = spawnSync(process.execPath, [quarry, 'resume', first], {
      env: skewed(env, { offset: '+2h' }),
      encoding: 'utf8',
      timeout: within(20_000),
    });
    expect(resume.status, resume.stderr).not.toBe(0);
    expect(resume.stderr).toMatch(/already running/);

    // The holder dies: its session goes to the skewed worker at once, not after the lease's ten minutes.
    holder.kill('SIGKILL');
    await eventually(async () => (await leaseOf(first))?.workerId === 'ahead', 20_000);
    fake.release();
    await bothCompleted(first, second);
  });

  it("a holder's wall clock jumping two hours back does not hand its session to another worker", {
    timeout: within(120_000),
  }, async () => {
    const clockFile = join(folder, 'clock');
    writeFileSync(clockFile, '+0');
    const first = await createSession('first');
    fake.holdAfter(0);
    // Three-second leases, renewed every second: every renewal after the jump is on the moved clock.
    startWorker('jumps', skewed(env, { file: clockFile }), { ttl: 3, concurrency: 1 });
    await fake.waitUntilHeld();
    const held = await leaseOf(first);
    expect(held?.workerId).toBe('jumps');

    writeFileSync(clockFile, '-2h');
    // Wait for two renewals written after the jump (the clock file is read at most a second late).
    const expiryRaw = async () =>
      (await database.query('SELECT lease_expires_at FROM sessions WHERE id = ?', [first]))[0]?.lease_expires_at;
    let renewals = 0;
    let last = await expiryRaw();
    await eventually(async () => {
      const now = await expiryRaw();
      if (now !== last) renewals++;
      last = now;
      return renewals >= 3;
    }, 20_000);

    const second = await createSession('second');
    startWorker('steady', env, { ttl: 3, concurrency: 1 });
    await eventually(async () => (await leaseOf(second))?.workerId === 'steady', 20_000);
    expect(await leaseOf(first)).toMatchObject({ workerId: 'jumps', epoch: held!.epoch });
    expect((await database.store.getSession(first)).status).toBe('running');

    fake.release();
    await bothCompleted(first, second);
    const runStarts = (await database.store.readEvents(first)).filter((event) => event.type === 'run-start');
    expect(runStarts.map((event) => (event.data as { workerId: string }).workerId)).toEqual(['jumps']);
  });
});
