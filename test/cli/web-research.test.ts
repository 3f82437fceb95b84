import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '../support/child-env.ts';
import type { FakeHttpServer } from '../support/fake-http-server.ts';
import { quotedParagraphs, startFakeWebSite } from '../support/fake-web-site.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'quarry');

/**
 * Web research through the built command (dist/, as installed users run it): a SearXNG search on a
 * local server, and the pages it finds fetched and read with Readability (issue 34: the build could
 * not read any HTML page while every test ran the sources).
 */
describe('web research with the built command', () => {
  let site: FakeHttpServer;
  let home: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'quarry-web-'));
    site = await startFakeWebSite();
  });
  afterAll(async () => {
    await site.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('fetches and reads the pages a search finds, and cites them', async () => {
    const env = childEnv({ QUARRY_HOME: home, SEARXNG_URL: site.baseUrl, QUARRY_FETCH_ALLOW: '127.0.0.1' });
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [bin, 'run', 'How do tidal power plants generate electricity?', '--search', 'searxng'],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/not a constructor/i);
    expect(site.requests.some((request) => request.url.pathname !== '/search')).toBe(true);
    expect(quotedParagraphs(result.stdout).length).toBeGreaterThan(0);
    expect(result.stdout).toContain(`${site.baseUrl}/`);
    expect(result.stdout).not.toContain('All rights reserved');
  });
});
