import type TurndownService from 'turndown';
import type { ExtractedDocument } from './extracted-document.ts';

let libraries: Promise<{ parseHTML: typeof import('linkedom').parseHTML; Readability: typeof import('@mozilla/readability').Readability; turndown: TurndownService }> | null = null;

/** The HTML libraries, loaded on first use (they slow every command's start otherwise). */
function loadLibraries() {
  libraries ??= (async () => {
    const [{ parseHTML }, { Readability }, { default: Turndown }] = await Promise.all([import('linkedom'), import('@mozilla/readability'), import('turndown')]);
    const turndown = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
    turndown.remove(['script', 'style', 'noscript', 'iframe', 'form', 'nav', 'footer']);
    return { parseHTML, Readability, turndown };
  })();
  return libraries;
}

function metaContent(document: Document, names: string[]): string | undefined {
  for (const name of names) {
    const element = document.querySelector(`meta[name="${name}"], meta[property="${name}"]`);
    const content = element?.getAttribute('content')?.trim();
    if (content) return content;
  }
  return undefined;
}

function isoDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}

/**
 * The main text of an HTML page as Markdown: Readability picks the article, turndown keeps its
 * structure. Pages Readability cannot read fall back to the body's text.
 */
export async function extractHtml(html: string, url?: string): Promise<ExtractedDocument> {
  const { parseHTML, Readability, turndown } = await loadLibraries();
  const { document } = parseHTML(html);
  const pageTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  const byline = metaContent(document, ['author', 'article:author', 'og:article:author']);
  const publishedAt = isoDate(metaContent(document, ['article:published_time', 'date', 'pubdate', 'dc.date', 'og:published_time']));
  // Readability mutates the document it reads; give it its own copy.
  const article = new Readability(parseHTML(html).document as unknown as Document, { charThreshold: 200 }).parse();
  let text: string;
  if (article?.content) {
    text = turndown.turndown(article.content);
  } else {
    for (const element of document.querySelectorAll('script, style, noscript')) element.remove();
    text = (document.body?.textContent ?? '').replace(/[ \t]+/g, ' ');
  }
  const heading = document.querySelector('h1')?.textContent?.trim();
  return {
    title: (article?.title?.trim() || pageTitle || heading || url || 'Untitled').slice(0, 300),
    text: normalizeText(text),
    byline: article?.byline?.trim() || byline,
    publishedAt: isoDate(article?.publishedTime ?? undefined) ?? publishedAt,
    kind: 'html',
  };
}

/** Unix newlines, no trailing spaces, at most one blank line in a row. */
export function normalizeText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
