import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

/**
 * Prints an HTML page to PDF with headless Chromium: the same page the HTML export writes (no script,
 * nothing loaded from any host), its links kept as PDF links. The page and a throwaway browser
 * profile live in a temporary folder removed afterwards.
 */
export async function printPdf(html: string, env: NodeJS.ProcessEnv = process.env): Promise<Uint8Array<ArrayBuffer>> {
  const chromium = findChromium(env);
  if (!chromium)
    throw new QuarryError(
      'FEATURE_UNAVAILABLE',
      env.QUARRY_CHROMIUM
        ? `PDF export prints with Chromium, and QUARRY_CHROMIUM (${env.QUARRY_CHROMIUM}) is not an executable file.`
        : 'PDF export prints with Chromium, which is not installed here: install it (apt-get install chromium) or set QUARRY_CHROMIUM to its path. HTML export needs nothing.',
      { details: { field: 'format' } },
    );
  const folder = mkdtempSync(join(tmpdir(), 'quarry-pdf-'));
  try {
    const page = join(folder, 'report.html');
    const output = join(folder, 'report.pdf');
    writeFileSync(page, html);
    const args = [
      '--headless',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${join(folder, 'profile')}`,
      '--no-pdf-header-footer',
      `--print-to-pdf=${output}`,
      // Chromium refuses to start as root with its sandbox; the page runs no script either way.
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      pathToFileURL(page).href,
    ];
    await new Promise<void>((resolve, reject) => {
      execFile(chromium, args, { timeout: PRINT_TIMEOUT_MS }, (error, _stdout, stderr) => {
        if (!error) return resolve();
        reject(
          new QuarryError(
            'INTERNAL',
            `Chromium (${chromium}) could not print the report: ${stderr.trim() || error.message}`,
            {
              cause: error,
            },
          ),
        );
      });
    });
    const pdf = readFileSync(output);
    if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-')
      throw new QuarryError('INTERNAL', `Chromium (${chromium}) wrote no PDF.`);
    return new Uint8Array(pdf);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
