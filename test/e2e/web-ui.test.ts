import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { browserSkipReason, launchBrowser } from '../support/browser.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const webRoot = join(root, 'web', 'dist');
const artifacts = join(root, 'test-artifacts');
const skip =
  browserSkipReason() ?? (existsSync(join(webRoot, 'index.html')) ? null : 'web/dist is not built (npm run build:web)');

describe.skipIf(skip !== null)(`web UI in headless Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let database: TestDatabase;
  let server: RunningServer;
  let fake: FakeOpenAiServer;
  let browser: BrowserContext;
  let page: Page;
  let docs: string;
  const dialogs: string[] = [];
  const env = () => ({ QUARRY_LLM_BASE_URL: fake.baseUrl, QUARRY_LLM_API_KEY: 'k' });
  const start = async () => {
    server = await startServer({
      store: database.store,
      config: testConfig({ ...env(), QUARRY_DOCS: docs, QUARRY_PORT: String(port ?? 0) }),
      runner: true,
      webRoot,
      heartbeatSeconds: 1,
    });
    port = server.port;
  };
  let port: number | undefined;
  const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    database = await sqliteHarness.create();
    fake = await new FakeOpenAiServer(schemaFakeModel(), { delayMs: 400 }).start();
    docs = mkdtempSync(join(tmpdir(), 'quarry-ui-'));
    cpSync(join(root, 'test', 'fixtures', 'corpus'), docs, { recursive: true });
    writeFileSync(
      join(docs, 'hostile.md'),
      '# Tidal <script>alert("title")</script> barrages\n\nA hostile page about tidal barrages wrote <img src=x onerror=alert("xss")> and <script>alert("body")</script> inside its tidal power sentence.\n',
    );
    await start();
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept(dialog.type() === 'prompt' ? 'plan' : undefined);
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fake?.stop();
    await database?.destroy();
    rmSync(docs, { recursive: true, force: true });
  });

  it('starts a research, shows live progress across a reload, and shows the report with linked citations', {
    timeout: 90_000,
  }, async () => {
    await page.goto(server.url);
    await page.getByLabel('Question').fill('How does tidal power generate electricity?');
    await page.getByLabel('Model').fill('openai-compatible:fake');
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.waitForURL(/\/sessions\/[A-Za-z0-9_-]+$/);
    await page.locator('.step.running').first().waitFor({ timeout: 20_000 });
    await shot('progress');
    const stepsBefore = await page.locator('.step').count();
    await page.reload();
    await page.locator('.step').first().waitFor();
    expect(await page.locator('.step').count()).toBeGreaterThanOrEqual(stepsBefore);
    await page.locator('.badge.completed').first().waitFor({ timeout: 60_000 });
    await page.getByRole('tab', { name: 'report' }).click();
    await page.locator('.report article a.citation').first().waitFor();
    expect(await page.locator('.report article a.citation').first().getAttribute('href')).toBe('#source-1');
    await shot('report');
    await page.getByRole('tab', { name: 'prompts' }).click();
    const card = page.locator('details.prompt').first();
    await card.locator('summary').click();
    await card.getByText('User input').waitFor();
    await shot('prompts');
  });

  it('stops and resumes a run, and recovers when the server restarts mid-run', { timeout: 120_000 }, async () => {
    await page.goto(server.url);
    await page.getByLabel('Question').fill('Where are tidal stations?');
    await page.getByLabel('Model').fill('openai-compatible:fake');
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.waitForURL(/\/sessions\//);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.locator('.badge.interrupted').first().waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.locator('.step.running').first().waitFor({ timeout: 20_000 });
    await server.close();
    await page.getByText('reconnecting…').waitFor({ timeout: 20_000 });
    await start();
    await page.getByText(/· live$/).waitFor({ timeout: 30_000 });
    await page.locator('header .badge.completed').waitFor({ timeout: 60_000 });
    await shot('recovered');
  });

  it('answers an outline review and asks a follow-up', { timeout: 90_000 }, async () => {
    await page.goto(server.url);
    await page.getByLabel('Question').fill('How do tidal barrages work?');
    await page.getByLabel('Let me review the outline before the report is written').check();
    await page.getByRole('button', { name: 'Start research' }).click();
    const review = page.getByRole('region', { name: 'Outline review' });
    await review.waitFor({ timeout: 30_000 });
    await shot('outline-review');
    await review.getByRole('button', { name: 'Approve' }).click();
    await page.locator('header .badge.completed').waitFor({ timeout: 30_000 });
    await page.getByRole('tab', { name: 'conversation' }).click();
    await page.getByLabel('Follow-up question').fill('When did La Rance open?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('.message.user').nth(1).waitFor({ timeout: 10_000 });
    await page
      .locator('.message.assistant')
      .nth(1)
      .waitFor({ timeout: 30_000 })
      .catch(async (error: Error) => {
        await shot('follow-up-failure');
        throw error;
      });
    expect(await page.locator('.message.assistant').nth(1).textContent()).toContain('1966');
  });

  it('shows hostile source text as text, never running it', { timeout: 60_000 }, async () => {
    await page.goto(server.url);
    await page.getByLabel('Question').fill('What did the hostile page say about tidal barrages?');
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.locator('header .badge.completed').waitFor({ timeout: 30_000 });
    await page.getByRole('tab', { name: 'report' }).click();
    await page.locator('.report article').waitFor();
    await page.getByRole('tab', { name: 'sources' }).click();
    await page.getByText('Tidal <script>alert("title")</script> barrages').first().waitFor();
    await page.getByRole('tab', { name: 'report' }).click();
    const report = await page.locator('.report article').innerHTML();
    expect(report).not.toContain('<script');
    expect(report).not.toContain('<img');
    expect(await page.locator('.report article').textContent()).toContain('onerror=alert("xss")');
    expect(dialogs.filter((message) => /xss|title|body/.test(message))).toEqual([]);
    await shot('hostile');
  });

  it('renames, forks, exports and deletes from the page and the sidebar', { timeout: 60_000 }, async () => {
    const first = page.locator('.sidebar li.session').first();
    await first.locator('summary').click();
    await first.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('New title').fill('Renamed in the browser');
    await page.getByLabel('New title').press('Enter');
    await page.locator('.sidebar').getByText('Renamed in the browser').waitFor();
    await page.locator('.sidebar').getByText('Renamed in the browser').click();
    const exported = await page.request.get(
      await page
        .getByRole('link', { name: 'Markdown' })
        .getAttribute('href')
        .then((href) => `${server.url}${href}`),
    );
    expect(await exported.text()).toContain('## Sources');
    await page.getByRole('button', { name: 'Fork from…' }).click();
    await page.waitForURL(/\/sessions\//);
    await page.locator('header .badge.completed').waitFor({ timeout: 30_000 });
    const sessionsBefore = await page.locator('.sidebar li.session').count();
    await page.locator('.actions').getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${server.url}/`);
    await page.waitForFunction(
      (count) => document.querySelectorAll('.sidebar li.session').length === count - 1,
      sessionsBefore,
    );
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('phone');
  });
});
