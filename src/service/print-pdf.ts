import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Browser } from 'playwright-core';
import { QuarryError } from '../shared/errors.ts';

/** Browsers that print a page to PDF headless, looked up on PATH when `QUARRY_CHROMIUM` is unset. */
const BROWSERS = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
const PRINT_TIMEOUT_MS = 60_000;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The browser to print with: `QUARRY_CHROMIUM`, else the first of `BROWSERS` on PATH. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.QUARRY_CHROMIUM) return executable(env.QUARRY_CHROMIUM) ? env.QUARRY_CHROMIUM : null;
  const folders = (env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of BROWSERS)
    for (const folder of folders) if (executable(join(folder, name))) return join(folder, name);
  return null;
}

function noBrowser(env: NodeJS.ProcessEnv): QuarryError {
  return new QuarryError(
    'FEATURE_UNAVAILABLE',
    env.QUARRY_CHROMIUM
      ? `PDF export prints with Chromium, and QUARRY_CHROMIUM (${env.QUARRY_CHROMIUM}) is not an executable file.`
      : 'PDF export prints with Chromium, which is not installed here: install it (apt-get install chromium) or set QUARRY_CHROMIUM to its path. HTML export needs nothing.',
    { details: { field: 'format' } },
  );
}

export interface PdfPrinterOptions {
  /** Pages printed at once. Default 2. */
  concurrency?: number;
  /** Prints waiting for a turn beyond those; past it, `OVERLOADED` (503). Default 8. */
  queue?: number;
  /** How long the browser stays open with nothing to print, in ms. Default a minute. */
  idleMs?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * Prints HTML pages to PDF with one headless Chromium, started on the first print and reused: a
 * bounded number print at once, a bounded queue waits for a turn, and each requester (a user) has
 * at most one print in flight (`RATE_LIMITED`, 429, for a second); past the queue, `OVERLOADED`
 * (503). A page prints in a context of its own, offline and without script (the page is the HTML
 * export, which loads nothing from any host); links stay links. The browser closes when idle, and
 * with `close()`.
 */
export class PdfPrinter {
  private readonly concurrency: number;
  private readonly queueLimit: number;
  private readonly idleMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private browser: Promise<Browser> | null = null;
  private idle: NodeJS.Timeout | null = null;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly busy = new Set<string>();
  private closed = false;

  constructor(options: PdfPrinterOptions = {}) {
    this.concurrency = options.concurrency ?? 2;
    this.queueLimit = options.queue ?? 8;
    this.idleMs = options.idleMs ?? 60_000;
    this.env = options.env ?? process.env;
  }

  /** Prints `html` for `requester` (a user id); see the class for the limits. */
  async print(html: string, requester = 'local'): Promise<Uint8Array<ArrayBuffer>> {
    if (this.closed) throw new QuarryError('OVERLOADED', 'The server is shutting down; print the report later.');
    const chromium = findChromium(this.env);
    if (!chromium) throw noBrowser(this.env);
    if (this.busy.has(requester))
      throw new QuarryError('RATE_LIMITED', 'A PDF of yours is being printed; ask again once it is done.', {
        isRetryable: true,
        retryAfterMs: 5_000,
      });
    if (this.running >= this.concurrency && this.waiting.length >= this.queueLimit)
      throw new QuarryError('OVERLOADED', 'Too many PDFs are being printed here at once; try again in a minute.', {
        isRetryable: true,
        retryAfterMs: 30_000,
      });
    this.busy.add(requester);
    try {
      if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
      this.running += 1;
      if (this.idle) clearTimeout(this.idle);
      this.idle = null;
      try {
        return await this.render(chromium, html);
      } finally {
        this.running -= 1;
        this.waiting.shift()?.();
        if (this.running === 0 && this.waiting.length === 0) {
          this.idle = setTimeout(() => void this.stopBrowser(), this.idleMs);
          this.idle.unref();
        }
      }
    } finally {
      this.busy.delete(requester);
    }
  }

  /** How many prints run and wait now (for tests and metrics). */
  load(): { running: number; waiting: number; browser: boolean } {
    return { running: this.running, waiting: this.waiting.length, browser: this.browser !== null };
  }

  /** Closes the browser; prints asked for afterwards are refused. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idle) clearTimeout(this.idle);
    await this.stopBrowser();
  }

  private async stopBrowser(): Promise<void> {
    const browser = this.browser;
    this.browser = null;
    if (browser) await (await browser.catch(() => null))?.close().catch(() => undefined);
  }

  private launch(chromium: string): Promise<Browser> {
    if (!this.browser) {
      const launching = import('playwright-core').then(({ chromium: driver }) =>
        driver.launch({
          executablePath: chromium,
          args: [
            '--disable-gpu',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            // Chromium refuses to start as root with its sandbox; the pages run no script either way.
            ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
          ],
          timeout: PRINT_TIMEOUT_MS,
        }),
      );
      this.browser = launching;
      // A browser that fails to start, or dies, is started again on the next print.
      launching.then(
        (browser) =>
          browser.on('disconnected', () => {
            if (this.browser === launching) this.browser = null;
          }),
        () => {
          if (this.browser === launching) this.browser = null;
        },
      );
    }
    return this.browser;
  }

  private async render(chromium: string, html: string): Promise<Uint8Array<ArrayBuffer>> {
    let browser: Browser;
    try {
      browser = await this.launch(chromium);
    } catch (error) {
      throw new QuarryError('INTERNAL', `Chromium (${chromium}) could not start: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const context = await browser.newContext({ javaScriptEnabled: false, offline: true });
    try {
      const page = await context.newPage();
      // Nothing leaves the machine: the page's own resources are inline, anything else is refused.
      await page.route('**/*', (route) => route.abort());
      await page.setContent(html, { waitUntil: 'load', timeout: PRINT_TIMEOUT_MS });
      const pdf = await page.pdf({ printBackground: true, displayHeaderFooter: false });
      if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-')
        throw new QuarryError('INTERNAL', `Chromium (${chromium}) wrote no PDF.`);
      return new Uint8Array(pdf);
    } catch (error) {
      if (error instanceof QuarryError) throw error;
      throw new QuarryError(
        'INTERNAL',
        `Chromium (${chromium}) could not print the report: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    } finally {
      await context.close().catch(() => undefined);
    }
  }
}

/**
 * Prints one page and closes the browser (the command line's `export --format pdf`). A server keeps
 * one `PdfPrinter` instead.
 */
export async function printPdf(html: string, env: NodeJS.ProcessEnv = process.env): Promise<Uint8Array<ArrayBuffer>> {
  const printer = new PdfPrinter({ env, concurrency: 1, queue: 0 });
  try {
    return await printer.print(html);
  } finally {
    await printer.close();
  }
}
