import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { eventually } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { testConfig } from '../support/test-config.ts';

const bin = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'quarry');
const home = mkdtempSync(join(tmpdir(), 'quarry-watch-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

it('quarry index --watch keeps a folder indexed: a file saved a moment ago is found, a removed one is gone (issue 47)', {
  timeout: within(90_000),
}, async () => {
  const docs = join(home, 'cli-docs');
  mkdirSync(docs);
  writeFileSync(join(docs, 'tides.md'), '# Tides\n\nThe moon raises two bulges of water.\n');
  const env = childEnv({ QUARRY_HOME: join(home, 'cli-home') });
  const watcher = spawn(process.execPath, [bin, 'index', '--watch', docs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  watcher.stdout.on('data', (chunk) => (output += chunk));
  watcher.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => watcher.on('exit', resolve));
  // A watcher that stops early fails the test at once, with what it printed (not after the bound).
  let running = true;
  void exited.then(() => (running = false));
  // A process that could not start says so by an error, not an exit.
  watcher.on('error', (error) => {
    output += `\n(spawn failed: ${error.message})`;
    running = false;
  });
  const until = async (seen: () => boolean) => {
    await eventually(() => {
      if (!seen() && !running) throw new Error(`the watcher exited early:\n${output}`);
      return seen();
    }, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}; the watcher printed:\n${output}`);
    });
  };
  try {
    await until(() => output.includes('Watching'));
    expect(output).toContain('1 added');
    const fresh = join(docs, 'locks.md');
    writeFileSync(fresh, '# Locks\n\nThe lock gate at Granville opens two hours either side of high water.\n');
    await until(() => /cli-docs: 1 added/.test(output));
    const run = spawnSync(
      process.execPath,
      [bin, 'run', 'When does the lock gate at Granville open?', '--docs', docs],
      {
        env,
        encoding: 'utf8',
        timeout: within(30_000),
      },
    );
    expect(run.stdout, run.stderr).toContain('> The lock gate at Granville opens two hours either side of high water.');
    // A hidden file is no document; a removed one leaves the index.
    writeFileSync(join(docs, '.draft.md'), '# Draft\n\nNot yet.\n');
    unlinkSync(fresh);
    await until(() => /cli-docs: 0 added, 0 updated, 1 unchanged, 1 removed/.test(output));
    watcher.kill('SIGINT');
    expect(await exited, output).toBe(0);
  } finally {
    watcher.kill('SIGKILL');
  }
});

it('quarry serve --watch indexes a file added to a document folder without a restart', {
  timeout: within(60_000),
}, async () => {
  const database = await sqliteHarness.create();
  const docs = join(home, 'serve-docs');
  mkdirSync(docs);
  let server: RunningServer | undefined;
  try {
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_DOCS: docs, QUARRY_PORT: '0' }),
      runner: false,
      log: () => undefined,
      watch: true,
    });
    writeFileSync(join(docs, 'fees.md'), '# Fees\n\nVisitors pay by the metre.\n');
    await eventually(
      async () =>
        (await database.store.listDocuments({ pathPrefix: docs })).some((each) => each.path.endsWith('fees.md')),
      30_000,
    );
  } finally {
    await server?.close();
    await database.destroy();
  }
});
