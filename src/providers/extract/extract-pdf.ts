import { normalizeText } from './extract-html.ts';
import type { ExtractedDocument } from './extracted-document.ts';

/** Lines at the top and bottom of a page that may be its running header or footer. */
const EDGE_LINES = 2;
/** A line is a running header or footer when it opens or closes at least this share of the pages. */
const RUNNING_SHARE = 0.5;
/** Fewer pages than this, and nothing is judged running (a line on two of three pages is not a pattern). */
const RUNNING_MIN_PAGES = 4;

/** A line as a running header compares it: digits (page numbers) and spacing aside. */
function runningKey(line: string): string {
  return line.replace(/\d+/g, '#').replace(/\s+/g, ' ').trim().toLowerCase();
}

/**
 * The pages without their running headers and footers: lines among the first or last two of a page
 * that open or close most pages once page numbers are set aside ("Debian Reference 37 / 233", a
 * chapter title repeated on every page, a bare page number).
 */
export function withoutRunningLines(pages: readonly string[]): string[] {
  if (pages.length < RUNNING_MIN_PAGES) return [...pages];
  const edges = (page: string) => {
    const lines = page.split('\n').filter((line) => line.trim());
    return new Set([...lines.slice(0, EDGE_LINES), ...lines.slice(-EDGE_LINES)].map(runningKey));
  };
  const counts = new Map<string, number>();
  for (const page of pages) for (const key of edges(page)) counts.set(key, (counts.get(key) ?? 0) + 1);
  const running = new Set(
    [...counts.entries()].filter(([, count]) => count >= RUNNING_SHARE * pages.length).map(([key]) => key),
  );
  if (running.size === 0) return [...pages];
  return pages.map((page) => {
    const lines = page.split('\n');
    const nonEmpty = lines.map((line, index) => ({ line, index })).filter(({ line }) => line.trim());
    const edgeIndexes = new Set(
      [...nonEmpty.slice(0, EDGE_LINES), ...nonEmpty.slice(-EDGE_LINES)].map(({ index }) => index),
    );
    return lines.filter((line, index) => !(edgeIndexes.has(index) && running.has(runningKey(line)))).join('\n');
  });
}

/** The text of a PDF, page by page without running headers and footers, with its title from the metadata or the first line. */
export async function extractPdf(bytes: Uint8Array, fallbackTitle: string): Promise<ExtractedDocument> {
  const { extractText, getDocumentProxy, getMeta } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    const meta = await getMeta(pdf).catch(() => null);
    const info = (meta?.info ?? {}) as Record<string, unknown>;
    // Each page under its number, so a passage never spans two pages and is cited where a reader
    // finds it ("Page 12"); a one-page PDF needs no such heading.
    const pages = withoutRunningLines(text as string[]);
    const body = normalizeText(
      pages.length > 1
        ? pages.map((page, index) => (page.trim() ? `## Page ${index + 1}\n\n${page}` : '')).join('\n\n')
        : pages.join('\n\n'),
    );
    const firstLine = pages
      .join('\n')
      .split('\n')
      .find((line) => line.trim().length > 0)
      ?.trim();
    const title = (typeof info.Title === 'string' && info.Title.trim()) || firstLine?.slice(0, 200) || fallbackTitle;
    const author = typeof info.Author === 'string' && info.Author.trim() ? info.Author.trim() : undefined;
    return { title, text: body, linkRanges: [], byline: author, kind: 'pdf' };
  } finally {
    await pdf.destroy();
  }
}
