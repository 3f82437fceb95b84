import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { axeViolations } from '../support/axe.ts';
import { within } from '../support/bounds.ts';
import { browserSkipReason, launchBrowser } from '../support/browser.ts';
import { docxFile, zipBomb } from '../support/office-files.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const webRoot = join(root, 'web', 'dist');
const artifacts = join(root, 'test-artifacts');
const skip =
  browserSkipReason() ?? (existsSync(join(webRoot, 'index.html')) ? null : 'web/dist is not built (npm run build:web)');

/** Drops files on an element as a person dragging them from their desktop does. */
async function dropFiles(page: Page, testId: string, files: { name: string; bytes: Uint8Array }[]) {
  const transfer = await page.evaluateHandle(
    (given: { name: string; bytes: number[] }[]) => {
      const data = new DataTransfer();
      for (const file of given) data.items.add(new File([new Uint8Array(file.bytes)], file.name));
      return data;
    },
    files.map((file) => ({ name: file.name, bytes: [...file.bytes] })),
  );
  const zone = page.getByTestId(testId);
  await zone.dispatchEvent('dragover', { dataTransfer: transfer });
  await zone.dispatchEvent('drop', { dataTransfer: transfer });
}

describe.skipIf(skip !== null)(`the library in the web UI${skip ? ` (skipped: ${skip})` : ''} (issue 47)`, () => {
  let database: TestDatabase;
  let server: RunningServer;
  let browser: BrowserContext;
  let page: Page;
  let docs: string;

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    database = await sqliteHarness.create();
    docs = mkdtempSync(join(tmpdir(), 'quarry-ui-library-'));
    cpSync(join(root, 'test', 'fixtures', 'corpus'), docs, { recursive: true });
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_DOCS: docs, QUARRY_PORT: '0' }),
      runner: true,
      webRoot,
      log: () => undefined,
    });
    browser = await launchBrowser();
    page = await browser.newPage();
  }, within(60_000));
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await database?.destroy();
    rmSync(docs, { recursive: true, force: true });
  });

  it('adds dropped files with their progress, says why one is refused, and researches the added file alone', {
    timeout: within(90_000),
  }, async () => {
    await page.goto(server.url);
    const library = page.getByRole('group', { name: 'Your library' });
    await library.waitFor();
    await dropFiles(page, 'library-drop-zone', [
      {
        name: 'lock-gates.docx',
        bytes: docxFile({
          title: 'Lock gates of Granville',
          heading: 'Opening times',
          paragraphs: ['The lock gate at Granville opens two hours either side of high water.'],
        }),
      },
      { name: 'bomb.docx', bytes: zipBomb(2) },
    ]);
    const uploads = page.getByRole('list', { name: 'Files being added' });
    await uploads.getByText('Added', { exact: true }).waitFor({ timeout: within(20_000) });
    await uploads.getByRole('alert').waitFor({ timeout: within(20_000) });
    expect(await uploads.getByRole('alert').textContent()).toMatch(
      /^Not added: .*bomb\.docx cannot be read: .*zip bomb/,
    );
    const kept = page.getByRole('list', { name: 'Documents in your library' });
    await kept.getByText('Lock gates of Granville').waitFor();
    expect(await kept.locator('li').count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(artifacts, 'library.png'), fullPage: true });

    // Only the added file: every server folder unticked, the library document ticked.
    const folders = page.getByRole('group', { name: 'Documents on this server' });
    for (const box of await folders.getByRole('checkbox').all()) await box.uncheck();
    expect(await kept.getByRole('checkbox').isChecked()).toBe(true);
    await page.getByLabel('Question', { exact: true }).fill('When does the lock gate at Granville open?');
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.waitForURL(/\/sessions\/[A-Za-z0-9_-]+$/);
    await page.locator('header .badge.completed').waitFor({ timeout: within(60_000) });
    const report = page.locator('.report article');
    await report.getByText('The lock gate at Granville opens two hours either side of high water.').waitFor();
    const strip = page.getByRole('navigation', { name: 'Sources of this report' });
    const cards = await strip.getByRole('button', { name: /^\[\d+\]/ }).allTextContents();
    expect(cards.length).toBeGreaterThan(0);
    for (const card of cards) expect(card).toMatch(/lock-gates\.docx$/);

    // Removed from the library: gone from its list.
    await page.goto(server.url);
    await page.getByRole('button', { name: 'Remove lock-gates.docx' }).click();
    await page.getByRole('list', { name: 'Documents in your library' }).waitFor({ state: 'detached' });
  });
});
