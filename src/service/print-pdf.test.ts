import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { within } from '../../test/support/bounds.ts';
import { PdfPrinter, printPdf } from './print-pdf.ts';

const page = `<!doctype html><html><head><meta charset="utf-8"><title>Tides</title></head><body>
<h1>Tidal power</h1><p>La Rance opened in 1966 <a href="https://example.org/la-rance">[1]</a>.</p></body></html>`;

it('prints a page to a PDF that keeps its text and its links', { timeout: within(90_000) }, async () => {
  const pdf = await printPdf(page);
  const folder = mkdtempSync(join(tmpdir(), 'quarry-pdf-test-'));
  try {
    const file = join(folder, 'report.pdf');
    writeFileSync(file, pdf);
    const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
    expect(text).toContain('Tidal power');
    expect(text).toContain('La Rance opened in 1966 [1]');
    // The citation stays a link in the PDF.
    expect(Buffer.from(pdf).toString('latin1')).toContain('/URI (https://example.org/la-rance)');
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

it('says what to install when there is no browser to print with', async () => {
  await expect(printPdf(page, { QUARRY_CHROMIUM: '/nonexistent/chromium' })).rejects.toMatchObject({
    code: 'FEATURE_UNAVAILABLE',
    message: expect.stringContaining('QUARRY_CHROMIUM (/nonexistent/chromium) is not an executable file'),
  });
  await expect(printPdf(page, { PATH: '/nonexistent' })).rejects.toMatchObject({
    code: 'FEATURE_UNAVAILABLE',
    message: expect.stringContaining('install it (apt-get install chromium) or set QUARRY_CHROMIUM'),
  });
});

it('prints with one browser for many pages, one print per user at a time, and refuses past its queue (issue 44)', {
  timeout: within(120_000),
}, async () => {
  const printer = new PdfPrinter({ concurrency: 1, queue: 2, idleMs: 60_000 });
  try {
    // Another user's print waits its turn; a second print of the same user at once is refused.
    const first = printer.print(page, 'ada');
    await expect(printer.print(page, 'ada')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    const waiting = [printer.print(page, 'bob'), printer.print(page, 'cy')];
    await expect(printer.print(page, 'dee')).rejects.toMatchObject({ code: 'OVERLOADED' });
    for (const pdf of await Promise.all([first, ...waiting]))
      expect(Buffer.from(pdf).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(printer.load()).toEqual({ running: 0, waiting: 0, browser: true });
    // The same browser prints the next one. Only this process's browsers count: other test files
    // running beside this one start their own.
    const chromiumProcesses = () =>
      execFileSync('ps', ['-eo', 'ppid=,args='], { encoding: 'utf8' })
        .split('\n')
        .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
        .filter((match) => match !== null && Number(match[1]) === process.pid)
        .filter((match) => /chrom(e|ium)/.test(match![2]!) && match![2]!.includes('--remote-debugging-pipe')).length;
    expect(chromiumProcesses()).toBe(1);
    await printer.print(page, 'ada');
    expect(chromiumProcesses()).toBe(1);
  } finally {
    await printer.close();
  }
  expect(printer.load().browser).toBe(false);
  await expect(printer.print(page, 'ada')).rejects.toMatchObject({ code: 'OVERLOADED' });
});
