import type TurndownService from 'turndown';
import { type ExtractedDocument, LINK_END, LINK_START, withLinkRanges } from './extracted-document.ts';

type Libraries = {
  parseHTML: typeof import('linkedom').parseHTML;
  Readability: typeof import('@mozilla/readability').Readability;
  turndown: TurndownService;
};

let libraries: Promise<Libraries> | null = null;

/**
 * The HTML libraries, loaded on first use (they slow every command's start otherwise), and the
 * conversion rules: text as a reader sees it. Links keep their words (marked for link density) and
 * lose their URLs, emphasis is plain text, permalink anchors vanish, preformatted blocks become
 * fenced code, and nothing is backslash-escaped: the text is searched and quoted, not re-rendered.
 */
function loadLibraries(): Promise<Libraries> {
  libraries ??= (async () => {
    const [{ parseHTML }, { Readability }, { default: Turndown }] = await Promise.all([
      import('linkedom'),
      import('@mozilla/readability'),
      import('turndown'),
    ]);
    const turndown = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
    turndown.escape = (text: string) => text;
    turndown.remove(['script', 'style', 'noscript', 'iframe', 'form', 'nav', 'footer', 'button']);
    turndown.addRule('permalinks', {
      filter: (node) =>
        node.nodeName === 'A' &&
        (/\bheaderlink\b/.test(node.getAttribute('class') ?? '') || (node.textContent ?? '').trim() === '¶'),
      replacement: () => '',
    });
    turndown.addRule('links', {
      filter: (node) => node.nodeName === 'A',
      replacement: (content) => (content.trim() ? `${LINK_START}${content}${LINK_END}` : ''),
    });
    turndown.addRule('emphasis', {
      filter: ['em', 'i', 'strong', 'b', 'cite', 'dfn'],
      replacement: (content) => content,
    });
    // A term of a definition list (a glossary entry, an API signature) heads what defines it.
    turndown.addRule('definitionTerm', {
      filter: 'dt',
      replacement: (content) => `\n\n##### ${content.replace(/\s+/g, ' ').trim()}\n\n`,
    });
    // Tables as one line per row, so a row is never read as a sentence and stays searchable.
    turndown.addRule('tableCell', {
      filter: ['th', 'td'],
      replacement: (content) => `${content.replace(/\s+/g, ' ').trim()} | `,
    });
    turndown.addRule('tableRow', { filter: 'tr', replacement: (content) => `| ${content.trim()}\n` });
    turndown.addRule('table', { filter: 'table', replacement: (content) => `\n\n${content.trim()}\n\n` });
    turndown.addRule('tableSection', { filter: ['thead', 'tbody', 'tfoot'], replacement: (content) => content });
    turndown.addRule('preformatted', {
      filter: (node) => node.nodeName === 'PRE',
      replacement: (_content, node) => `\n\n\`\`\`\n${(node.textContent ?? '').replace(/\n+$/, '')}\n\`\`\`\n\n`,
    });
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

const clean = (text: string | null | undefined) => (text ?? '').replace(/¶/g, '').replace(/\s+/g, ' ').trim();

/**
 * The main text of an HTML page, with what is known about it. The page is parsed once: metadata
 * is read first, then Readability picks the article from the same document and turndown converts
 * that element (no second parse). Pages Readability cannot read fall back to the body's text.
 */
export async function extractHtml(html: string, url?: string): Promise<ExtractedDocument> {
  const { parseHTML, Readability, turndown } = await loadLibraries();
  const { document } = parseHTML(html);
  const pageTitle = clean(document.querySelector('title')?.textContent);
  const heading = clean(document.querySelector('h1')?.textContent);
  const byline = metaContent(document, ['author', 'article:author', 'og:article:author']);
  const publishedAt = isoDate(
    metaContent(document, ['article:published_time', 'date', 'pubdate', 'dc.date', 'og:published_time']),
  );
  // Readability changes the document it reads; everything above was read before it runs.
  const article = new Readability(document as unknown as Document, {
    charThreshold: 200,
    serializer: (element: Node) => element,
  }).parse() as {
    title?: string | null;
    content?: Node | null;
    byline?: string | null;
    publishedTime?: string | null;
  } | null;
  let marked: string;
  if (article?.content) {
    marked = turndown.turndown(article.content as unknown as HTMLElement);
  } else {
    for (const element of document.querySelectorAll('script, style, noscript')) element.remove();
    marked = (document.body?.textContent ?? '').replace(/[ \t]+/g, ' ');
  }
  // A page's own heading names it better than a <title> that carries the site's name too.
  const title = (
    heading && heading.length <= 200 ? heading : clean(article?.title) || pageTitle || url || 'Untitled'
  ).slice(0, 300);
  return {
    ...withLinkRanges(normalizeText(marked)),
    title,
    byline: article?.byline?.trim() || byline,
    publishedAt: isoDate(article?.publishedTime ?? undefined) ?? publishedAt,
    kind: 'html',
  };
}

/** Unix newlines, no NUL or trailing spaces, at most one blank line in a row. */
export function normalizeText(text: string): string {
  return (
    text
      .replace(/\r\n?/g, '\n')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL characters are removed on purpose (a database cannot store them)
      .replace(/[\u0000¶]/g, '')
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  );
}
