import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;
let database: TestDatabase;
let server: RunningServer;
let folder: string;

beforeAll(async () => {
  database = await sqliteHarness.create();
  server = await startServer({ store: database.store, config: testConfig({ QUARRY_PORT: '0' }), runner: false });
  folder = mkdtempSync(join(tmpdir(), 'quarry-openapi-'));
});
afterAll(async () => {
  await server?.close();
  await database?.destroy();
  rmSync(folder, { recursive: true, force: true });
});

type Operation = { operationId?: string; security?: unknown[] };

it('documents every route with an operationId, its security and the server, and passes Redocly’s linter (issue 45)', {
  timeout: within(60_000),
}, async () => {
  const document = await (await fetch(`${server.url}/api/openapi.json`)).json();
  // Generated once and kept: a later request gets the same document.
  expect(await (await fetch(`${server.url}/api/openapi.json`)).json()).toEqual(document);
  expect(document.servers).toEqual([{ url: server.url }]);
  expect(document.security).toEqual([{ bearer: [] }, { cookie: [] }]);
  const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(
    ([path, item]) => methods.filter((method) => item[method]).map((method) => ({ path, method, ...item[method]! })),
  );
  const ids = operations.map((operation) => operation.operationId);
  expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9_]*$/.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  // The routes served outside the typed routers are listed too, open ones saying so.
  for (const [path, method] of [
    ['/healthz', 'get'],
    ['/readyz', 'get'],
    ['/metrics', 'get'],
    ['/mcp', 'post'],
    ['/share/{token}', 'get'],
    ['/.well-known/oauth-protected-resource', 'get'],
  ] as const)
    expect(
      operations.find((operation) => operation.path === path && operation.method === method),
      path,
    ).toBeDefined();
  const open = operations.filter((operation) => operation.security?.length === 0).map((operation) => operation.path);
  expect(open).toEqual(expect.arrayContaining(['/healthz', '/share/{token}', '/api/auth/session']));
  expect(open).not.toContain('/api/sessions');
  // Every parameterless GET it lists is a route the server has (never "No route").
  for (const operation of operations.filter((each) => each.method === 'get' && !each.path.includes('{'))) {
    const response = await fetch(`${server.url}${operation.path}`, { signal: AbortSignal.timeout(within(5_000)) });
    expect(response.status, operation.path).not.toBe(404);
    await response.body?.cancel();
  }

  const file = join(folder, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const lint = spawnSync(
    process.execPath,
    [join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js'), 'lint', file, '--format=summary'],
    {
      env: childEnv({ REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }),
      encoding: 'utf8',
      timeout: within(30_000),
    },
  );
  expect(lint.status, `${lint.stdout}${lint.stderr}`).toBe(0);
  expect(lint.stdout + lint.stderr).not.toMatch(/^error /m);
});
