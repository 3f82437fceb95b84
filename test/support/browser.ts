import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';

/** Why browser tests cannot run here, or null. Under CI=true a missing browser is an error. */
export function browserSkipReason(): string | null {
  if (existsSync(chromiumPath)) return null;
  if (process.env.CI === 'true')
    throw new Error(`CI=true but ${chromiumPath} is missing: .ci/run must install Debian's chromium.`);
  return `${chromiumPath} is not installed (apt-get install chromium)`;
}

/** Debian's Chromium, headless, with a fresh profile and no background network traffic. */
export function launchBrowser(): Promise<BrowserContext> {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'quarry-chromium-')), {
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 800 },
  });
}
