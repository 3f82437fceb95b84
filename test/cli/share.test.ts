import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { eventually } from '../../src/store/conformance/harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'corpus');
let home: string | undefined;
let serve: ChildProcess | undefined;

afterEach(async () => {
  if (serve && serve.exitCode === null && serve.signalCode === null) {
    serve.kill('SIGKILL');
    await new Promise((resolve) => serve!.once('exit', resolve));
  }
  if (home) rmSync(home, { recursive: true, force: true });
});

it('quarry share prints a link that opens the report without signing in, until --stop', {
  timeout: within(60_000),
}, async () => {
  home = mkdtempSync(join(tmpdir(), 'quarry-share-'));
  const quarry = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [join(root, 'bin', 'quarry'), ...args], {
      env: childEnv({ QUARRY_HOME: home, ...env }),
      encoding: 'utf8',
      timeout: within(30_000),
    });
  const run = quarry(['--json', 'run', 'How do tides work?', '--docs', fixtures]);
  expect(run.status, run.stderr).toBe(0);
  const id = (JSON.parse(run.stdout.split('\n')[0]!) as { sessionId: string }).sessionId;
  // No server of this store runs here: the link is a path, and the output says why.
  const unserved = quarry(['share', id.slice(0, 8)]);
  expect(unserved.status, unserved.stderr).toBe(0);
  expect(unserved.stdout).toMatch(/^\/share\/qsh_\S+\n/);
  expect(unserved.stdout).toContain('No `quarry serve` of this store runs on this machine');

  // `quarry serve` on a port of its own choosing: share names it (issue 46: it printed port 7777).
  serve = spawn(process.execPath, [join(root, 'bin', 'quarry'), 'serve', '--port', '0', '--no-runner'], {
    env: childEnv({ QUARRY_HOME: home }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  serve.stdout!.on('data', (chunk) => (said += chunk));
  serve.stderr!.on('data', (chunk) => (said += chunk));
  await eventually(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(said), 10_000);
  const serverUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(said)![1]!;
  expect(serverUrl).not.toBe('http://127.0.0.1:7777');

  const shared = quarry(['share', id.slice(0, 8)]);
  expect(shared.status, shared.stderr).toBe(0);
  const url = /^(http:\/\/\S+\/share\/qsh_\S+)$/m.exec(shared.stdout)?.[1];
  expect(url, shared.stdout).toBeDefined();
  expect(url!.startsWith(`${serverUrl}/share/`)).toBe(true);
  expect(shared.stdout).toContain('only this machine can open it');
  const page = await fetch(url!);
  expect(page.status).toBe(200);
  const shown = await page.text();
  expect(shown).toContain('Sources');
  // A reader is shown where a source lies in the documents folder, never the server's own paths (issue 44).
  expect(shown).not.toContain(fixtures);
  expect(shown).toMatch(/&lt;(energy|nature|reports)\/[\w.-]+&gt;/);

  const json = quarry(['--json', 'share', id], { QUARRY_PUBLIC_URL: 'https://research.example.org/' });
  expect(JSON.parse(json.stdout)).toMatchObject({
    type: 'share',
    sessionId: id,
    url: expect.stringMatching(/^https:\/\/research\.example\.org\/share\/qsh_/),
  });
  // A new link replaces the old one.
  expect((await fetch(url!)).status).toBe(404);
  const newest = `${serverUrl}${(JSON.parse(json.stdout) as { path: string }).path}`;
  expect((await fetch(newest)).status).toBe(200);

  const stopped = quarry(['share', id, '--stop']);
  expect(stopped.status, stopped.stderr).toBe(0);
  expect(stopped.stdout).toMatch(/no longer shared/);
  expect((await fetch(newest)).status).toBe(404);

  // Stopped, the server withdraws itself: share no longer names it.
  serve.kill('SIGTERM');
  await new Promise((resolve) => serve!.once('exit', resolve));
  expect(quarry(['share', id]).stdout).toContain('No `quarry serve` of this store runs on this machine');
});
