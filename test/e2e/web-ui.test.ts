import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { reportSections } from '../../web/src/render-report.ts';
import { axeViolations } from '../support/axe.ts';
import { within } from '../support/bounds.ts';
import { browserSkipReason, launchBrowser } from '../support/browser.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Notifications allowed in `page`, recorded in `window.shown` instead of shown; `hidden`: a tab in the background. */
function recordNotifications(page: Page, options: { hidden: boolean }) {
  return page.addInitScript((hidden: boolean) => {
    if (hidden) Object.defineProperty(document, 'hidden', { get: () => true });
    const shown: { title: string; body?: string }[] = [];
    (window as unknown as { shown: typeof shown }).shown = shown;
    class RecordedNotification {
      static permission = 'granted';
      static requestPermission = async () => 'granted';
      constructor(title: string, options: { body?: string } = {}) {
        shown.push({ title, body: options.body });
      }
    }
    (window as unknown as { Notification: unknown }).Notification = RecordedNotification;
  }, options.hidden);
}
const webRoot = join(root, 'web', 'dist');
const artifacts = join(root, 'test-artifacts');
const skip =
  browserSkipReason() ?? (existsSync(join(webRoot, 'index.html')) ? null : 'web/dist is not built (npm run build:web)');

/**
 * The single-user web UI on a loopback server without users (zero clicks to start), driven in
 * Debian's Chromium against a fake OpenAI-compatible model that answers from each request's schema.
 */
describe.skipIf(skip !== null)(`web UI in headless Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let database: TestDatabase;
  let server: RunningServer;
  let fake: FakeOpenAiServer;
  let browser: BrowserContext;
  let page: Page;
  let docs: string;
  /** Another local server that a hostile page's images point at: it must never be asked. */
  let bait: Server;
  const baitRequests: string[] = [];
  const dialogs: string[] = [];
  let port: number | undefined;
  const start = async () => {
    server = await startServer({
      store: database.store,
      config: testConfig({
        QUARRY_LLM_BASE_URL: fake.baseUrl,
        QUARRY_LLM_API_KEY: 'k',
        QUARRY_SERVER_MODELS: 'openai-compatible:fake',
        QUARRY_DOCS: docs,
        QUARRY_PORT: String(port ?? 0),
      }),
      runner: true,
      webRoot,
      heartbeatSeconds: 1,
    });
    port = server.port;
  };
  const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
  const startResearch = async (
    question: string,
    options: { model?: boolean; review?: boolean; clarify?: boolean } = {},
  ) => {
    await page.goto(server.url);
    await page.getByLabel('Question', { exact: true }).fill(question);
    if (options.model) {
      await page.getByLabel('Model').fill('openai-compatible:fake');
      // With a model the form offers clarifying questions, on by default (the fake always asks).
      const clarify = page.getByLabel('Ask me clarifying questions first if the question is ambiguous');
      if (options.clarify) expect(await clarify.isChecked()).toBe(true);
      else await clarify.uncheck();
    }
    if (options.review) await page.getByLabel('Let me review the outline before the report is written').check();
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.waitForURL(/\/sessions\/[A-Za-z0-9_-]+$/);
  };

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    database = await sqliteHarness.create();
    fake = await new FakeOpenAiServer(schemaFakeModel(), { delayMs: 300 }).start();
    bait = createServer((request, response) => {
      baitRequests.push(request.url ?? '');
      response.end('gotcha');
    });
    await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve));
    const baitUrl = `http://127.0.0.1:${(bait.address() as AddressInfo).port}`;
    docs = mkdtempSync(join(tmpdir(), 'quarry-ui-'));
    cpSync(join(root, 'test', 'fixtures', 'corpus'), docs, { recursive: true });
    writeFileSync(
      join(docs, 'hostile.md'),
      [
        '# Tidal <script>alert("title")</script> barrages',
        '',
        `A hostile page about tidal barrages wrote <img src=x onerror=alert("xss")> and <script>alert("body")</script> inside its tidal power sentence, with a tracking image <img src="${baitUrl}/html-img"> in tidal barrage text.`,
        '',
        `Tidal barrages hold water behind a dam, says the hostile page, ![tidal barrage pixel](${baitUrl}/markdown-img) beside it.`,
        '',
      ].join('\n'),
    );
    await start();
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
  }, within(60_000));
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fake?.stop();
    await new Promise((resolve) => bait?.close(resolve));
    await database?.destroy();
    rmSync(docs, { recursive: true, force: true });
  });

  it('shows progress in research terms, then the report, whose citations open their passage', {
    timeout: within(90_000),
  }, async () => {
    await startResearch('How does tidal power generate electricity?', { model: true });
    // Progress: the stages, the queries asked and the sources read, never step keys.
    const searches = page.getByRole('region', { name: 'Searches' });
    await searches
      .locator('li')
      .first()
      .waitFor({ timeout: within(20_000) });
    await page
      .getByRole('region', { name: 'Sources read' })
      .locator('li')
      .first()
      .waitFor({ timeout: within(20_000) });
    expect(await searches.textContent()).not.toMatch(/iteration-\d|notes-\d/);
    await shot('progress');
    await page.reload();
    await page.getByRole('list', { name: 'Research stages' }).waitFor();
    await page.locator('header .badge.completed').waitFor({ timeout: within(60_000) });
    // Once finished the report is what shows; its citations are buttons that open the passage.
    const citation = page.locator('.report article button.citation').first();
    await citation.waitFor();
    expect(await page.locator('.report article code button.citation, .report article pre button').count()).toBe(0);
    await citation.click();
    const panel = page.getByRole('complementary', { name: /^Source \d+$/ });
    await panel.locator('.source-title').waitFor();
    await panel.locator('blockquote.passage mark').first().waitFor();
    expect((await panel.locator('mark').first().textContent())?.length).toBeGreaterThan(10);
    await shot('citation-panel');
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    // Focus goes back to the citation that opened the panel (issue 46: it was lost).
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-citation'))).toMatch(/^\d+$/);
    // Above the report, a strip of the sources it cites: each opens its passage too.
    const strip = page.getByRole('navigation', { name: 'Sources of this report' });
    const cards = strip.getByRole('button', { name: /^\[\d+\]/ });
    expect(await cards.count()).toBeGreaterThan(0);
    const first = (await cards.first().textContent())!;
    expect(first).toMatch(/^\[(\d+)\].+\.(txt|md|html?)$/);
    await cards.first().click();
    await page.getByRole('complementary', { name: `Source ${/^\[(\d+)\]/.exec(first)![1]}` }).waitFor();
    await page.keyboard.press('Escape');
    // The report's source list: a local document opens its source beside the report (issue 46: a bare path).
    const local = page.locator('.report article button.source-link').first();
    const opens = await local.getAttribute('data-citation');
    await local.click();
    await page.getByRole('complementary', { name: `Source ${opens}` }).waitFor();
    await page.keyboard.press('Escape');
    // From the top of the page, two Tab presses and Enter reach the follow-up box, whatever the
    // sessions list and the report hold (issue 46: it took 253 with 50 sessions).
    await page.reload();
    await page.locator('.report article').waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the follow-up question');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('follow-up');
  });

  it('says once that the connection is lost, stops the live pulse, and catches up when the server is back', {
    timeout: within(120_000),
  }, async () => {
    await startResearch('Where are tidal stations?', { model: true });
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.locator('header .badge.interrupted').waitFor({ timeout: within(20_000) });
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByText(/· live · running for/).waitFor({ timeout: within(20_000) });
    await server.close();
    // The server comes back whatever happens here: the tests after this one need it.
    try {
      const banner = page.getByRole('status').filter({ hasText: 'The server does not answer' });
      await banner.waitFor({ timeout: within(20_000) });
      expect(await page.getByText('Failed to fetch').count()).toBe(0);
      expect(await page.locator('.layout.offline').count()).toBe(1);
      await shot('offline');
    } finally {
      await start();
    }
    await page
      .getByRole('status')
      .filter({ hasText: 'Connected again' })
      .waitFor({ timeout: within(30_000) });
    // The note goes away by itself (issue 33: it stayed).
    await page
      .getByRole('status')
      .filter({ hasText: 'Connected again' })
      .waitFor({ state: 'detached', timeout: within(10_000) });
    await page.locator('header .badge.completed').waitFor({ timeout: within(60_000) });
    await shot('recovered');
  });

  it('answers an outline review and sends a follow-up with Enter, on the report page', {
    timeout: within(90_000),
  }, async () => {
    await startResearch('How do tidal barrages work?', { review: true });
    const review = page.getByRole('region', { name: 'Outline review' });
    await review.waitFor({ timeout: within(30_000) });
    // The sidebar says so too (its feed and the page's events travel on one stream).
    await page
      .locator('.sidebar li.session .badge.waiting')
      .first()
      .waitFor({ timeout: within(5_000) });
    await shot('outline-review');
    // Before any report exists, the offline research shows what it searched and read.
    await page.getByRole('tab', { name: 'Progress' }).click();
    expect(await page.getByRole('region', { name: 'Searches' }).locator('li').count()).toBeGreaterThan(0);
    expect(await page.getByRole('region', { name: 'Sources read' }).locator('li').count()).toBeGreaterThan(0);
    expect(await page.locator('.report article').count()).toBe(0);
    await page.getByRole('tab', { name: 'Report' }).click();
    await review.getByRole('button', { name: 'Approve' }).click();
    await page.locator('header .badge.completed').waitFor({ timeout: within(30_000) });
    // The ledger counts the whole session (both activations of the run), as the API does.
    const id = /\/sessions\/([^/]+)$/.exec(page.url())?.[1];
    const { ledger, title } = await (await fetch(`${server.url}/api/sessions/${id}`)).json();
    await page.getByRole('tab', { name: 'Progress' }).click();
    await page.getByText(`${ledger.searches} searches · ${ledger.sourcesRead} sources read · 0 tokens`).waitFor();
    expect(await page.title()).toBe(`${title} (completed) · Quarry`);
    await page.getByRole('tab', { name: 'Report' }).click();
    const question = page.getByLabel('Follow-up question');
    await question.waitFor();
    await expect.poll(() => question.isEnabled(), { timeout: within(10_000) }).toBe(true);
    await question.fill('When did La Rance open?');
    await question.press('Enter');
    const answers = page.locator('.conversation .message.assistant');
    await answers.first().waitFor({ timeout: within(30_000) });
    expect(await page.locator('.conversation .message.user').first().textContent()).toContain(
      'When did La Rance open?',
    );
    expect(await answers.first().textContent()).toContain('1966');
  });

  it('asks clarifying questions before research when a model can, and researches once they are answered', {
    timeout: within(90_000),
  }, async () => {
    await startResearch('How big are they?', { model: true, clarify: true });
    const questions = page.getByRole('region', { name: 'Clarifying questions' });
    await questions.waitFor({ timeout: within(30_000) });
    expect(await questions.locator('li').count()).toBeGreaterThan(0);
    // Nothing is researched until the person answers.
    const id = /\/sessions\/([^/]+)$/.exec(page.url())![1]!;
    const steps = async () =>
      ((await (await fetch(`${server.url}/api/sessions/${id}/steps`)).json()).steps as { key: string }[]).map(
        (step) => step.key,
      );
    expect(await steps()).toEqual(['clarify', 'clarify/answer']);
    await shot('clarifying-questions');
    await questions.getByLabel('Your answers').fill('Tidal barrages, by installed capacity.');
    await questions.getByRole('button', { name: 'Answer and start' }).click();
    await page.locator('header .badge.completed').waitFor({ timeout: within(60_000) });
    expect(await steps()).toContain('plan');
  });

  it('shows hostile source text as text: no script runs, no image is fetched, the export forbids both', {
    timeout: within(60_000),
  }, async () => {
    await startResearch('What did the hostile page say about tidal barrages?');
    await page.locator('header .badge.completed').waitFor({ timeout: within(30_000) });
    await page.getByRole('tab', { name: 'Sources' }).click();
    await page.getByText('Tidal <script>alert("title")</script> barrages').first().waitFor();
    await page.getByRole('tab', { name: 'Report' }).click();
    const article = page.locator('.report article');
    await article.waitFor();
    const html = await article.innerHTML();
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(await article.textContent()).toContain('hostile');
    expect(dialogs.filter((message) => /xss|title|body/.test(message))).toEqual([]);
    await page.waitForTimeout(500);
    expect(baitRequests).toEqual([]);
    const id = /\/sessions\/([^/]+)$/.exec(page.url())?.[1];
    const exported = await fetch(`${server.url}/api/sessions/${id}/export?format=html`);
    const policy = exported.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    const body = await exported.text();
    expect(body).not.toMatch(/<script|<img/i);
    await shot('hostile');
  });

  it('resumes and forks from a step chosen in a dialog, renames, and deletes', {
    timeout: within(90_000),
  }, async () => {
    await startResearch('How much electricity does La Rance make?');
    await page.locator('header .badge.completed').waitFor({ timeout: within(30_000) });
    const id = /\/sessions\/([^/]+)$/.exec(page.url())?.[1];
    await page.getByRole('button', { name: 'Resume from…' }).click();
    const resume = page.getByRole('dialog', { name: 'Resume from' });
    await resume.waitFor();
    await resume.getByLabel('the start of write').check();
    await shot('resume-picker');
    await resume.getByRole('button', { name: /Resume from write/ }).click();
    await resume.waitFor({ state: 'detached' });
    // Resuming from a phase rewinds in place: the steps from there on are superseded and run again.
    await expect
      .poll(
        async () =>
          ((await (await fetch(`${server.url}/api/sessions/${id}/steps`)).json()).steps as { status: string }[]).some(
            (step) => step.status === 'superseded',
          ),
        { timeout: within(30_000) },
      )
      .toBe(true);
    await page.locator('header .badge.completed').waitFor({ timeout: within(30_000) });
    expect(page.url()).toContain(`/sessions/${id}`);

    await page.getByRole('button', { name: 'Fork from…' }).click();
    const fork = page.getByRole('dialog', { name: 'Fork from' });
    await fork.getByLabel('the start of outline').check();
    await fork.getByRole('button', { name: /Fork from outline/ }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(id ?? ''));
    await page.getByText('its parent session').waitFor();
    await page.locator('header .badge.completed').waitFor({ timeout: within(30_000) });

    // Escape closes a menu.
    const exportMenu = page.locator('details.menu.export');
    await exportMenu.locator('summary').click();
    expect(await exportMenu.getAttribute('open')).not.toBeNull();
    await page.keyboard.press('Escape');
    await expect.poll(() => exportMenu.getAttribute('open')).toBeNull();
    await page.getByLabel('Title', { exact: true }).fill('Renamed in the browser');
    await page.getByLabel('Title', { exact: true }).press('Enter');
    await page.locator('.sidebar').getByText('Renamed in the browser').waitFor();
    const before = await page.locator('.sidebar li.session').count();
    await page.locator('.actions').getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${server.url}/`);
    await expect.poll(() => page.locator('.sidebar li.session').count()).toBe(before - 1);
    // The sidebar searches once typing pauses, not once a key.
    const searches: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (/\/api\/sessions\?.*q=/.test(request.url())) searches.push(request.url());
    };
    page.on('request', onRequest);
    await page.getByLabel('Search sessions').pressSequentially('electricity');
    await expect
      .poll(() => searches.some((url) => url.includes('q=electricity')), { timeout: within(5_000) })
      .toBe(true);
    page.off('request', onRequest);
    expect(searches.length).toBeLessThanOrEqual(3);
  });

  it('has an icon of its own, and answers a file it does not have with 404, never the app page', async () => {
    const icon = await fetch(`${server.url}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toContain('image/svg+xml');
    for (const path of ['/favicon.ico', '/robots.txt', '/sessions/x/report.pdf']) {
      const missing = await fetch(`${server.url}${path}`);
      expect(missing.status, path).toBe(404);
      expect(await missing.text(), path).not.toContain('<div id="root">');
    }
    expect((await fetch(`${server.url}/sessions/some-id`)).status).toBe(200);
  });

  it('passes axe-core (WCAG 2.1 AA) in light and dark themes, on a desktop and a phone', {
    timeout: within(120_000),
  }, async () => {
    const [session] = (await (await fetch(`${server.url}/api/sessions?status=completed`)).json()).sessions;
    for (const [screen, size] of [
      ['desktop', { width: 1280, height: 800 }],
      ['phone', { width: 390, height: 844 }],
    ] as const) {
      await page.setViewportSize(size);
      for (const theme of ['light', 'dark'] as const) {
        const where = `${screen}, ${theme}`;
        await page.emulateMedia({ colorScheme: theme });
        await page.goto(`${server.url}/sessions/${session.id}`);
        await page.locator('.report article').waitFor();
        expect(await axeViolations(page), `${where}: session page`).toEqual([]);
        // The pieces that open over the report: a source's passage, the share and export menus.
        await page.getByRole('navigation', { name: 'Sources of this report' }).getByRole('button').first().click();
        await page.locator('.citation-panel blockquote.passage').first().waitFor();
        expect(await axeViolations(page), `${where}: a source's passage`).toEqual([]);
        await page.keyboard.press('Escape');
        for (const menu of ['share', 'export']) {
          const summary = page.locator(`details.menu.${menu} summary`);
          if (!(await summary.isVisible())) continue;
          await summary.click();
          expect(await axeViolations(page), `${where}: the ${menu} menu`).toEqual([]);
          await summary.click();
        }
        await page.getByRole('tab', { name: 'Progress' }).click();
        expect(await axeViolations(page), `${where}: progress`).toEqual([]);
        await page.goto(server.url);
        await page.getByLabel('Question', { exact: true }).waitFor();
        expect(await axeViolations(page), `${where}: new research`).toEqual([]);
        await shot(`theme-${screen}-${theme}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
  it('lists the report’s sections, jumps to one, and copies a section and the whole report as Markdown', {
    timeout: within(60_000),
  }, async () => {
    const [session] = (await (await fetch(`${server.url}/api/sessions?status=completed`)).json()).sessions;
    const report: string = (await (await fetch(`${server.url}/api/sessions/${session.id}`)).json()).report.latest;
    const sections = reportSections(report);
    expect(sections.length).toBeGreaterThan(1);
    await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.goto(`${server.url}/sessions/${session.id}`);
    const contents = page.getByRole('navigation', { name: 'Contents' });
    await contents.waitFor();
    expect(await contents.locator('li').allTextContents()).toEqual(sections.map((section) => section.title));
    const last = sections.at(-1)!;
    await contents.getByRole('link', { name: last.title }).click();
    await expect.poll(() => page.locator(`#${last.id}`).isVisible()).toBe(true);
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    await page.locator(`#${sections[0]!.id}`).getByRole('button', { name: 'Copy this section as Markdown' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Copied “${sections[0]!.title}” as Markdown.` })
      .waitFor();
    expect(await clipboard()).toBe(sections[0]!.markdown);
    await page.getByRole('button', { name: 'Copy report' }).click();
    await expect.poll(clipboard).toBe(report);
  });
  it('shares a report read-only: the link opens in a fresh browser without signing in, and stops when revoked', {
    timeout: within(60_000),
  }, async () => {
    const [session] = (await (await fetch(`${server.url}/api/sessions?status=completed`)).json()).sessions;
    await page.goto(`${server.url}/sessions/${session.id}`);
    await page.locator('details.menu.share summary').click();
    await page.getByRole('button', { name: 'Create link' }).click();
    const link = await page.getByLabel('Read-only link').inputValue();
    expect(link).toMatch(new RegExp(`^${server.url}/share/qsh_`));
    const reader = await launchBrowser();
    try {
      const other = await reader.newPage();
      const opened = await other.goto(link);
      expect(opened?.status()).toBe(200);
      await other.getByRole('heading', { name: 'Sources' }).waitFor();
      // Read-only: the report, no app, no controls.
      expect(await other.locator('button, form, input, script').count()).toBe(0);
      expect(await axeViolations(other)).toEqual([]);
      await page.getByRole('button', { name: 'Stop sharing' }).click();
      await page.getByRole('status').filter({ hasText: 'no longer opens anything' }).waitFor();
      expect((await other.goto(link))?.status()).toBe(404);
    } finally {
      await reader.close();
    }
  });
  it('imports a session file from the browser, and says what is wrong with a bad one', {
    timeout: within(60_000),
  }, async () => {
    // A session of its own, finished, whatever ran before.
    await startResearch('What do tidal barrages hold behind a dam?');
    const session = { id: page.url().split('/').at(-1)! };
    await page.locator('header .badge.completed').waitFor({ timeout: within(30_000) });
    const file = await (await fetch(`${server.url}/api/sessions/${session.id}/export?format=json`)).text();
    expect((await fetch(`${server.url}/api/sessions/${session.id}`, { method: 'DELETE' })).status).toBe(204);
    await page.goto(server.url);
    const input = page.getByLabel(/Or import a session file/);
    await input.setInputFiles({
      name: 'broken.json',
      mimeType: 'application/json',
      buffer: Buffer.from('{"format": 1'),
    });
    await page.getByRole('alert').filter({ hasText: 'broken.json' }).waitFor();
    await input.setInputFiles({ name: 'session.quarry.json', mimeType: 'application/json', buffer: Buffer.from(file) });
    await page.waitForURL(`${server.url}/sessions/${session.id}`);
    await page.locator('.report article').waitFor();
    const imported = await (await fetch(`${server.url}/api/sessions/${session.id}`)).json();
    expect(imported.status).toBe('completed');
    // Its journal and progress are told from the steps it brought (issue 46: "No steps yet.").
    const { steps } = await (await fetch(`${server.url}/api/sessions/${session.id}/steps`)).json();
    expect(steps.length).toBeGreaterThan(0);
    await page.getByRole('tab', { name: 'Journal' }).click();
    await page.locator('.timeline .step').first().waitFor();
    expect(await page.locator('.timeline .step').count()).toBe(
      steps.filter((step: { status: string }) => step.status !== 'superseded').length,
    );
    await page.getByRole('tab', { name: 'Progress' }).click();
    await page.locator('.queries li').first().waitFor();
    expect(await page.locator('.queries li').count()).toBe(imported.ledger.searches);
    expect(await page.locator('.sources-read li').count()).toBe(imported.ledger.sourcesRead);
  });
  it('shows how long a run has been going, and says when it finishes in a background tab', {
    timeout: within(90_000),
  }, async () => {
    const background = await browser.newPage();
    try {
      // A tab the person left: hidden, with notifications allowed (recorded instead of shown).
      await recordNotifications(background, { hidden: true });
      await background.goto(server.url);
      await background.getByLabel('Question', { exact: true }).fill('What limits tidal barrages?');
      await background.getByLabel('Model').fill('openai-compatible:fake');
      await background.getByLabel('Ask me clarifying questions first if the question is ambiguous').uncheck();
      await background.getByRole('button', { name: 'Start research' }).click();
      await background.waitForURL(/\/sessions\/[A-Za-z0-9_-]+$/);
      await background.getByText(/running for \d+ s/).waitFor({ timeout: within(20_000) });
      await background.locator('header .badge.completed').waitFor({ timeout: within(60_000) });
      await expect
        .poll(() => background.evaluate(() => (window as unknown as { shown: unknown[] }).shown))
        .toEqual([{ title: 'Research finished', body: expect.stringContaining('tidal barrages') }]);
      expect(await background.title()).toMatch(/^● .*finished · Quarry$/);
      expect(await background.getByText(/running for/).count()).toBe(0);
    } finally {
      await background.close();
    }
  });
  it('says a run finished from any page of the app, not only the session’s own (issue 46)', {
    timeout: within(90_000),
  }, async () => {
    const elsewhere = await browser.newPage();
    try {
      await recordNotifications(elsewhere, { hidden: false });
      await elsewhere.goto(server.url);
      await elsewhere.getByLabel('Question', { exact: true }).fill('Where do tidal streams run fastest?');
      await elsewhere.getByLabel('Model').fill('openai-compatible:fake');
      await elsewhere.getByLabel('Ask me clarifying questions first if the question is ambiguous').uncheck();
      await elsewhere.getByRole('button', { name: 'Start research' }).click();
      await elsewhere.waitForURL(/\/sessions\/[A-Za-z0-9_-]+$/);
      const id = elsewhere.url().split('/').at(-1)!;
      await elsewhere.getByText(/running for \d+ s/).waitFor({ timeout: within(20_000) });
      // Off to write another question while it runs: the tab is in view, the session is not.
      await elsewhere.getByRole('link', { name: 'Quarry' }).click();
      await elsewhere.getByLabel('Question', { exact: true }).waitFor();
      await expect
        .poll(async () => (await (await fetch(`${server.url}/api/sessions/${id}`)).json()).status, {
          timeout: within(60_000),
        })
        .toBe('completed');
      await expect
        .poll(() => elsewhere.evaluate(() => (window as unknown as { shown: unknown[] }).shown), {
          timeout: within(10_000),
        })
        .toEqual([{ title: 'Research finished', body: expect.stringContaining('tidal streams') }]);
    } finally {
      await elsewhere.close();
    }
  });
  it('shows a flag’s reason on screen on a phone, however far down the report the flag is', {
    timeout: within(60_000),
  }, async () => {
    const { sessions } = await (await fetch(`${server.url}/api/sessions?status=completed`)).json();
    let flaggedId: string | undefined;
    for (const each of sessions) {
      const detail = await (await fetch(`${server.url}/api/sessions/${each.id}`)).json();
      const claims = detail.report.versions.at(-1)?.claims ?? [];
      if (claims.some((claim: { verdict: string }) => claim.verdict !== 'supported')) flaggedId = each.id;
    }
    expect(flaggedId).toBeDefined();
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${server.url}/sessions/${flaggedId}`);
      const flag = page.locator('.report article button.flag').last();
      await flag.scrollIntoViewIfNeeded();
      await flag.click();
      const reason = page.locator('.flag-reason');
      await reason.waitFor();
      const box = (await reason.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(844);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
  it('shows a card with the source and its quoted words when the pointer or focus is on a citation', {
    timeout: within(60_000),
  }, async () => {
    // A finished session whose report cites a source it has.
    const { sessions } = await (await fetch(`${server.url}/api/sessions?status=completed`)).json();
    let session: { id: string } | undefined;
    for (const each of sessions) {
      const detail = await (await fetch(`${server.url}/api/sessions/${each.id}`)).json();
      const cited = detail.sources.filter((source: { citation: number | null }) => source.citation !== null);
      if (cited.some((source: { citation: number }) => detail.report.latest?.includes(`[${source.citation}]`))) {
        session = each;
        break;
      }
    }
    await page.goto(`${server.url}/sessions/${session!.id}`);
    const citation = page.locator('.report article button.citation').first();
    await citation.waitFor();
    const number = Number(await citation.getAttribute('data-citation'));
    const expected = await (await fetch(`${server.url}/api/sessions/${session!.id}/citations/${number}`)).json();
    await citation.hover();
    const card = page.getByRole('tooltip');
    await card.locator('.source-title').waitFor();
    expect(await card.locator('.source-title').textContent()).toBe(expected.title);
    if (expected.passages[0])
      expect(await card.locator('q').textContent()).toContain(expected.passages[0].quote.slice(0, 40));
    await page.mouse.move(0, 0);
    await card.waitFor({ state: 'detached' });
    // The keyboard too: focus shows it, Escape hides it.
    await citation.focus();
    await card.locator('.source-title').waitFor();
    await page.keyboard.press('Escape');
    await card.waitFor({ state: 'detached' });
  });
  it('switches report versions, fetching an earlier version’s text only when it is chosen', {
    timeout: within(90_000),
  }, async () => {
    await startResearch('How do tidal barrages hold back the sea?');
    await page.locator('header .badge.completed').waitFor({ timeout: within(30_000) });
    const id = /\/sessions\/([^/]+)$/.exec(page.url())?.[1];
    const question = page.getByLabel('Follow-up question');
    // A follow-up the notes cover is answered from them, citing by the numbers of version 1 then.
    await expect.poll(() => question.isEnabled(), { timeout: within(10_000) }).toBe(true);
    await question.fill('How do tidal barrages hold back the sea at high tide?');
    await question.press('Enter');
    await page
      .locator('.conversation li.message.assistant')
      .first()
      .waitFor({ timeout: within(30_000) });
    // A follow-up the notes do not cover is researched further, into report version 2.
    await expect.poll(() => question.isEnabled(), { timeout: within(30_000) }).toBe(true);
    await question.fill('How do solar panels generate electricity?');
    await question.press('Enter');
    const version = page.getByLabel('Version');
    await version.waitFor({ timeout: within(30_000) });
    await page.locator('header .badge.completed').waitFor({ timeout: within(30_000) });
    const detail = await (await fetch(`${server.url}/api/sessions/${id}`)).json();
    const first = await (await fetch(`${server.url}/api/sessions/${id}/reports/1`)).json();
    const heading = (report: string) =>
      report
        .split('\n')
        .find((line) => line.startsWith('# '))!
        .slice(2);
    expect(heading(detail.report.latest)).not.toBe(heading(first.report));
    const article = page.locator('.report article');
    expect(await version.inputValue()).toBe('2');
    await expect.poll(() => article.locator('h1').first().textContent()).toBe(heading(detail.report.latest));

    const fetched: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (/\/reports\/\d+$/.test(request.url())) fetched.push(request.url());
    };
    page.on('request', onRequest);
    await version.selectOption('1');
    // Version 1's heading only repeats the session's title, shown above it: the page leaves it out
    // (the answer starts higher); its first section is there.
    await expect.poll(() => article.locator('h1').count()).toBe(0);
    expect(heading(first.report).toLowerCase()).toContain('tidal barrages hold back the sea');
    await expect
      .poll(() => article.locator('h2').first().textContent())
      .toContain(
        first.report
          .split('\n')
          .find((line: string) => line.startsWith('## '))!
          .slice(3),
      );
    // Its sources are its own: the strip above it names what version 1's numbers point to.
    const strip = page.getByRole('navigation', { name: 'Sources of this report' });
    const numbers = [...new Set([...first.report.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1])))];
    const titles = await Promise.all(
      numbers
        .sort((a, b) => a - b)
        .slice(0, 6)
        .map(
          async (number) =>
            (await (await fetch(`${server.url}/api/sessions/${id}/citations/${number}?version=1`)).json()).title,
        ),
    );
    expect(titles.length).toBeGreaterThan(0);
    await expect.poll(() => strip.locator('.title').allTextContents()).toEqual(titles);
    await version.selectOption('2');
    await expect.poll(() => article.locator('h1').first().textContent()).toBe(heading(detail.report.latest));
    page.off('request', onRequest);
    // The latest text came with the session; only the earlier one was asked for, once.
    expect(fetched).toEqual([`${server.url}/api/sessions/${id}/reports/1`]);

    // Version 2 answers the side question, and says so; it is never "the report" of the session's (issue 46).
    expect(await version.locator('option[value="2"]').textContent()).toContain(
      'follow-up: How do solar panels generate electricity?',
    );
    expect(await page.locator('.version-question').textContent()).toContain(
      'How do solar panels generate electricity?',
    );
    expect(await page.locator('input.title').inputValue()).not.toContain('solar');
    // Each version exports as itself: the one on screen.
    await version.selectOption('1');
    await page.locator('details.menu.export summary').click();
    expect(await page.locator('details.menu.export a', { hasText: 'Markdown' }).getAttribute('href')).toContain(
      'version=1',
    );
    await page.locator('details.menu.export summary').click();

    // Every answer cites by its own numbers: each [n] opens the source its own list names, though a
    // later version numbers its sources otherwise (issue 46).
    const answers = (await (await fetch(`${server.url}/api/sessions/${id}`)).json()).messages.filter(
      (message: { role: string; citations?: unknown[] }) => message.role === 'assistant' && message.citations?.length,
    ) as { id: string; content: string; citations: { number: number; title: string }[] }[];
    expect(answers.length).toBeGreaterThan(0);
    let opened = 0;
    for (const answer of answers) {
      const shown = page.locator(`.conversation li[data-message="${answer.id}"]`);
      // Its list shows the numbers its text uses.
      for (const source of answer.citations)
        expect(await shown.locator('.content').textContent()).toContain(`[${source.number}] ${source.title}`);
      for (const source of answer.citations) {
        const button = shown.locator(`button.citation[data-citation="${source.number}"]`).first();
        if ((await button.count()) === 0) continue;
        await button.click();
        const panel = page.getByRole('complementary', { name: `Source ${source.number}` });
        await expect.poll(() => panel.locator('.source-title').textContent()).toBe(source.title);
        await panel.getByRole('button', { name: 'Close the source' }).click();
        opened++;
      }
    }
    expect(opened).toBeGreaterThan(0);
  });

  it('keeps an error until it is read, stops a running session to delete it after saying so, and says when one was deleted elsewhere (issue 46)', {
    timeout: within(90_000),
  }, async () => {
    fake.holdAfter(1);
    try {
      await startResearch('How high does the tide rise at La Rance?', { model: true });
      await fake.waitUntilHeld();
      const id = /\/sessions\/([^/]+)$/.exec(page.url())![1]!;
      // A title the server refuses: the error stays while the run goes on and the page refreshes.
      await page.getByLabel('Title', { exact: true }).fill('x'.repeat(1_000));
      await page.getByLabel('Title', { exact: true }).press('Enter');
      const refused = page.locator('.action-error');
      await refused.waitFor();
      const steps = page.locator('.session-main header .muted.small').first();
      const before = await steps.textContent();
      fake.release();
      fake.holdAfter(2);
      await fake.waitUntilHeld();
      // The page has read the session again since (its step count moved on)…
      await expect.poll(() => steps.textContent(), { timeout: within(10_000) }).not.toBe(before);
      // …and the error is still there.
      expect(await refused.isVisible()).toBe(true);
      await refused.getByRole('button', { name: 'Dismiss' }).click();
      await refused.waitFor({ state: 'detached' });

      // Delete while it runs: the confirmation says it will be stopped, and it is.
      dialogs.length = 0;
      await page.locator('.actions').getByRole('button', { name: 'Delete' }).click();
      await page.waitForURL(`${server.url}/`, { timeout: within(30_000) });
      expect(dialogs.at(-1)).toContain('is running. Stop it and delete it?');
      expect((await fetch(`${server.url}/api/sessions/${id}`)).status).toBe(404);
    } finally {
      fake.release();
    }

    // Deleted by another client while its page is open: the page says so and offers nothing.
    const { id: other } = await (
      await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'What turns the turbines of a tidal barrage?', start: false }),
      })
    ).json();
    await page.goto(`${server.url}/sessions/${other}`);
    await page.getByLabel('Title', { exact: true }).waitFor();
    expect((await fetch(`${server.url}/api/sessions/${other}`, { method: 'DELETE' })).status).toBe(204);
    await page.getByRole('heading', { name: 'This session was deleted' }).waitFor({ timeout: within(10_000) });
    expect(await page.locator('.actions').count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('offers no follow-up and no report export on a session that never ran, and says why', async () => {
    const created = await fetch(`${server.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'What powers a tidal stream generator?', start: false }),
    });
    const { id } = await created.json();
    try {
      await page.goto(`${server.url}/sessions/${id}`);
      await page.getByRole('tab', { name: 'Report' }).click();
      const question = page.getByLabel('Follow-up question');
      await question.waitFor();
      expect(await question.isDisabled()).toBe(true);
      expect(await question.getAttribute('placeholder')).toMatch(/has a report/);
      await page.locator('details.menu.export summary').click();
      const markdown = page.locator('details.menu.export').getByRole('button', { name: 'Markdown' });
      expect(await markdown.isDisabled()).toBe(true);
      expect(await page.locator('details.menu.export').getByRole('link', { name: 'JSON' }).count()).toBe(1);
    } finally {
      await fetch(`${server.url}/api/sessions/${id}`, { method: 'DELETE' });
    }
  });
  it('keeps ten tabs live on one connection the tabs share (issue 33: a fourth tab never loaded)', {
    timeout: within(120_000),
  }, async () => {
    const create = async (question: string) => {
      const response = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question, start: false }),
      });
      return ((await response.json()) as { id: string }).id;
    };
    const ids: string[] = [];
    for (let index = 0; index < 9; index++) ids.push(await create(`Tab ${index}: where are tidal stations?`));
    const tabs: Page[] = [];
    try {
      // The test's own tab first: it holds the lock and leads. Then nine more, each following its own
      // session and the feed.
      await page.goto(server.url);
      await page.getByLabel('Question', { exact: true }).waitFor();
      for (const id of ids) {
        const tab = await browser.newPage();
        await tab.goto(`${server.url}/sessions/${id}`);
        tabs.push(tab);
      }
      for (const tab of tabs) await tab.locator('header .badge.interrupted').waitFor({ timeout: within(20_000) });
      // Every tab hears of a new session from the feed.
      const fresh = await create('Ten tabs: how do tidal barrages work?');
      ids.push(fresh);
      for (const tab of [page, ...tabs])
        await tab.locator(`.sidebar li[data-session-id="${fresh}"]`).waitFor({ timeout: within(20_000) });
      // A run started elsewhere goes live in the tenth tab.
      await fetch(`${server.url}/api/sessions/${ids[8]}/resume`, { method: 'POST' });
      await tabs[8]!.locator('header .badge.completed').waitFor({ timeout: within(30_000) });
      // One connection for the browser: a replaced one lingers for a moment after its successor is
      // ready (the watch list changed as tabs opened), so the count settles rather than holds at once.
      const streams = async () =>
        Number(/^quarry_event_streams (\d+)/m.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1]);
      await expect.poll(streams, { timeout: within(5_000) }).toBeLessThanOrEqual(1);
      // The leading tab (the first opened, holding the lock) closes: another takes over, and every tab
      // left stays live.
      await page.close();
      page = await browser.newPage();
      const after = await create('After the leader left: what is a tidal lagoon?');
      ids.push(after);
      for (const tab of tabs)
        await tab.locator(`.sidebar li[data-session-id="${after}"]`).waitFor({ timeout: within(20_000) });
    } finally {
      for (const tab of tabs) await tab.close();
      for (const id of ids) await fetch(`${server.url}/api/sessions/${id}`, { method: 'DELETE' });
    }
  });
});
