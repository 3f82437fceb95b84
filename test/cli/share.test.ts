import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'corpus');
let home: string | undefined;
let server: RunningServer | undefined;
let store: Store | undefined;

afterEach(async () => {
  await server?.close();
  await store?.close();
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
  store = await openStore({ db: join(home, 'quarry.db') });
  server = await startServer({
    store,
    config: testConfig({ QUARRY_HOME: home, QUARRY_PORT: '0' }),
    runner: false,
    log: () => undefined,
  });

  const shared = quarry(['share', id.slice(0, 8)], { QUARRY_PORT: String(server.port) });
  expect(shared.status, shared.stderr).toBe(0);
  const url = /^(http:\/\/\S+\/share\/qsh_\S+)$/m.exec(shared.stdout)?.[1];
  expect(url, shared.stdout).toBeDefined();
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
  const newest = `${server.url}${(JSON.parse(json.stdout) as { path: string }).path}`;
  expect((await fetch(newest)).status).toBe(200);

  const stopped = quarry(['share', id, '--stop']);
  expect(stopped.status, stopped.stderr).toBe(0);
  expect(stopped.stdout).toMatch(/no longer shared/);
  expect((await fetch(newest)).status).toBe(404);
});
