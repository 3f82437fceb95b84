import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { createTestSession, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { axeViolations } from '../support/axe.ts';
import { within } from '../support/bounds.ts';
import { browserSkipReason, launchBrowser } from '../support/browser.ts';
import { testConfig } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const webRoot = join(root, 'web', 'dist');
const artifacts = join(root, 'test-artifacts');
const skip =
  browserSkipReason() ?? (existsSync(join(webRoot, 'index.html')) ? null : 'web/dist is not built (npm run build:web)');
const TOKEN = 'alice-browser-token-0123456789';
const SESSIONS = 300;

/**
 * The web UI on a server with users, as a signed-in user would meet it: the sign-in page, a sidebar
 * of 300 sessions that scrolls while the server pushes changes, a phone's screen, and signing out.
 */
describe.skipIf(skip !== null)(`web UI with users in headless Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let database: TestDatabase;
  let server: RunningServer;
  let browser: BrowserContext;
  let page: Page;
  let docs: string;
  /** Sessions made before the server had users: the local user's. */
  const earlier: string[] = [];
  const shot = (name: string, on: Page = page) =>
    on.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
  const api = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    });
    return response.json();
  };

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    database = await sqliteHarness.create();
    docs = mkdtempSync(join(tmpdir(), 'quarry-ui-users-'));
    cpSync(join(root, 'test', 'fixtures', 'corpus'), docs, { recursive: true });
    for (const question of ['An earlier question about tides?', 'Another one, from before accounts?'])
      earlier.push((await createTestSession(database.store, { ownerId: 'local', question, title: question })).id);
    const alice = await database.store.createUser({ name: 'alice' });
    await database.store.addApiToken({ userId: alice.id, tokenHash: createHash('sha256').update(TOKEN).digest('hex') });
    server = await startServer({
      store: database.store,
      config: testConfig({ QUARRY_DOCS: docs, QUARRY_PORT: '0' }),
      runner: true,
      webRoot,
      heartbeatSeconds: 1,
    });
    for (let index = 0; index < SESSIONS; index++)
      await api('/api/sessions', {
        method: 'POST',
        body: JSON.stringify({ question: `Stored question number ${index} about tidal power?`, start: false }),
      });
    browser = await launchBrowser();
    page = await browser.newPage();
  }, within(120_000));
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await database?.destroy();
    rmSync(docs, { recursive: true, force: true });
  });

  it('asks for a token, refuses a wrong one, and keeps the right one only in an HttpOnly cookie', {
    timeout: within(60_000),
  }, async () => {
    await page.goto(server.url);
    await page.getByRole('heading', { name: 'Sign in to Quarry' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('API token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await shot('sign-in-refused');
    await page.getByLabel('API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.locator('.who').textContent()).toContain('alice');
    const cookies = await browser.cookies(server.url);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookies[0]?.value).not.toContain(TOKEN);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    // A reload keeps the sign-in for the browser session.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  });

  it('loads all 300 sessions by scrolling, and applies pushed changes in place without moving the list', {
    timeout: within(90_000),
  }, async () => {
    const sidebar = page.locator('.sidebar');
    const sessions = sidebar.locator('li.session');
    await sessions.first().waitFor();
    for (let tries = 0; tries < 40 && (await sessions.count()) < SESSIONS; tries++) {
      await sidebar.evaluate((element) => element.scrollTo(0, element.scrollHeight));
      await page.waitForTimeout(150);
    }
    expect(await sessions.count()).toBe(SESSIONS);
    // Park the reader in the middle of the list and note what is at the top of their view.
    await sidebar.evaluate((element) => element.scrollTo(0, element.scrollHeight / 2));
    const topTitle = () =>
      sidebar.evaluate((element) => {
        const top = element.getBoundingClientRect().top;
        const first = [...element.querySelectorAll('li.session')].find(
          (item) => item.getBoundingClientRect().bottom > top + 1,
        );
        return first?.querySelector('.title')?.textContent ?? null;
      });
    const before = await topTitle();
    // Changes from elsewhere: a new session, and a rename of one that is loaded far down the list.
    const listed = (await api('/api/sessions?limit=100')).sessions as { id: string }[];
    const renamed = listed[90]!;
    const created = await api('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ question: 'How does tidal power generate electricity?' }),
    });
    await api(`/api/sessions/${renamed.id}`, { method: 'PATCH', body: JSON.stringify({ title: 'Renamed elsewhere' }) });
    await sidebar.getByText('Renamed elsewhere').waitFor({ timeout: within(10_000) });
    const fresh = sidebar.locator(`li.session[data-session-id="${created.id}"]`);
    await fresh.waitFor({ timeout: within(10_000) });
    expect(await sessions.count()).toBe(SESSIONS + 1);
    expect(await topTitle()).toBe(before);
    // The new session's status moves on by itself, pushed, without a reload.
    await fresh.locator('.badge.completed').waitFor({ timeout: within(30_000) });
    await shot('sidebar-live');
  });

  it('fits a phone: no horizontal scroll, the sidebar a drawer, the report readable', {
    timeout: within(60_000),
  }, async () => {
    const phone = await browser.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    // As many phone users set it; it also keeps the drawer's slide out of the screenshots.
    await phone.emulateMedia({ reducedMotion: 'reduce' });
    const [done] = (await api('/api/sessions?status=completed')).sessions as { id: string }[];
    await phone.goto(`${server.url}/sessions/${done!.id}`);
    await phone.locator('.report article').waitFor();
    // Answer first: the report's first paragraph starts on the first screen (issue 46: it was at y = 897).
    const firstText = phone.locator('.report article :is(p, blockquote, li)').first();
    expect((await firstText.boundingBox())!.y).toBeLessThan(844 - 60);
    // And on a desktop's first screen.
    await page.goto(`${server.url}/sessions/${done!.id}`);
    const onDesktop = page.locator('.report article :is(p, blockquote, li)').first();
    await onDesktop.waitFor();
    expect((await onDesktop.boundingBox())!.y).toBeLessThan(800 - 60);
    const width = () => phone.evaluate(() => document.documentElement.scrollWidth);
    expect(await width()).toBeLessThanOrEqual(390);
    expect(await phone.locator('.sidebar').isVisible()).toBe(false);
    await shot('phone-report', phone);
    await phone.locator('.report article button.citation').first().click();
    await phone.locator('.citation-panel mark').first().waitFor();
    expect(await width()).toBeLessThanOrEqual(390);
    await shot('phone-citation', phone);
    await phone.getByRole('button', { name: 'Close the source' }).click();
    // The reading and sharing pieces fit too: the contents, the share menu open, the export menu open
    // (on a phone, in the one Actions menu).
    expect(await phone.getByRole('navigation', { name: 'Contents' }).count()).toBeLessThanOrEqual(1);
    await phone.locator('details.menu.actions-menu > summary').click();
    await phone.locator('details.menu.share summary').click();
    await phone.getByRole('button', { name: /Create link|New link/ }).waitFor();
    expect(await width()).toBeLessThanOrEqual(390);
    await phone.locator('details.menu.share summary').click();
    await phone.locator('details.menu.export summary').click();
    await phone.getByRole('link', { name: 'PDF' }).waitFor();
    expect(await width()).toBeLessThanOrEqual(390);
    await shot('phone-menus', phone);
    await phone.locator('details.menu.export summary').click();
    await phone.locator('details.menu.actions-menu > summary').click();
    await phone.getByRole('button', { name: 'Sessions' }).click();
    await phone.locator('.sidebar').waitFor({ state: 'visible' });
    expect(await width()).toBeLessThanOrEqual(390);
    await shot('phone-drawer', phone);
    await phone.locator('.sidebar li.session a').nth(3).click();
    await expect.poll(() => phone.locator('.sidebar').isVisible()).toBe(false);
    await phone.goto(server.url);
    await phone.getByLabel('Question', { exact: true }).waitFor();
    expect(await width()).toBeLessThanOrEqual(390);
    await phone.close();
  });

  it('signs out: the page returns to sign-in and the browser token no longer works', {
    timeout: within(30_000),
  }, async () => {
    const [cookie] = await browser.cookies(server.url);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Quarry' }).waitFor();
    const me = await fetch(`${server.url}/api/auth/me`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
    expect(me.status).toBe(401);
    // The API token itself still works: signing out of a browser revokes only that browser's sign-in.
    expect((await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      200,
    );
  });

  it('says where the sessions made before accounts went, until they are handed over (issue 46)', {
    timeout: within(60_000),
  }, async () => {
    await page.goto(server.url);
    await page.getByLabel('API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const notice = page.getByRole('region', { name: 'Earlier sessions' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('2 earlier sessions were made on this server before it had accounts');
    expect(await notice.textContent()).toContain('quarry users adopt alice');
    expect(await axeViolations(page)).toEqual([]);
    // Not the reader's yet: its address says there is no such session.
    await page.goto(`${server.url}/sessions/${earlier[0]}`);
    await page.getByRole('heading', { name: 'No such session' }).waitFor();

    const alice = (await database.store.listUsers()).find((user) => user.name === 'alice')!;
    expect(await database.store.adoptSessions({ fromOwnerId: 'local', toUserId: alice.id })).toEqual({
      adopted: 2,
      kept: 0,
      threads: 0,
    });
    await page.reload();
    await expect.poll(() => page.locator('input.title').inputValue()).toBe('An earlier question about tides?');
    expect(await page.getByRole('region', { name: 'Earlier sessions' }).count()).toBe(0);
  });
});
