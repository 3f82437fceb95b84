import type { AnyNode, Element, Document as HtmlDocument } from 'domhandler';
import { type ExtractedDocument, withLinkRanges } from './extracted-document.ts';
import { htmlToText, textOf } from './html-to-text.ts';

type Libraries = {
  parseDocument: typeof import('htmlparser2').parseDocument;
  selectAll: (query: string, root: AnyNode) => Element[];
  selectOne: (query: string, root: AnyNode) => Element | null;
};

let libraries: Promise<Libraries> | null = null;

/** The HTML libraries, loaded on first use (they slow every command's start otherwise). */
function loadLibraries(): Promise<Libraries> {
  libraries ??= (async () => {
    const [{ parseDocument }, { selectAll, selectOne }] = await Promise.all([
      import('htmlparser2'),
      import('css-select'),
    ]);
    return {
      parseDocument,
      selectAll: (query, root) => selectAll<AnyNode, Element>(query, root),
      selectOne: (query, root) => selectOne<AnyNode, Element>(query, root),
    };
  })();
  return libraries;
}

type Readability = typeof import('@mozilla/readability').Readability;
let articleLibraries: Promise<{ parseHTML: typeof import('linkedom').parseHTML; Readability: Readability }> | null =
  null;

/** Readability and the DOM it needs, loaded only when a web page is read. */
function loadArticleLibraries() {
  articleLibraries ??= (async () => {
    const [{ parseHTML }, { Readability }] = await Promise.all([import('linkedom'), import('@mozilla/readability')]);
    return { parseHTML, Readability };
  })();
  return articleLibraries;
}

const clean = (text: string | null | undefined) => (text ?? '').replace(/¶/g, '').replace(/\s+/g, ' ').trim();

function metaContent(libs: Libraries, document: HtmlDocument, names: string[]): string | undefined {
  for (const name of names) {
    const element = libs.selectOne(`meta[name="${name}"], meta[property="${name}"]`, document);
    const content = element?.attribs.content?.trim();
    if (content) return content;
  }
  return undefined;
}

function isoDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}

/** Least text a page's marked main element must hold to be taken as the page's content. */
const MAIN_MIN_CHARS = 200;

/**
 * The element a page marks as its main content (`<main>`, `role="main"`, or a lone `<article>`),
 * when there is exactly one and it holds text: documentation builders (Sphinx, MkDocs, Docusaurus…)
 * mark it.
 */
function markedMain(libs: Libraries, document: HtmlDocument): Element | null {
  for (const selector of ['main, [role="main"]', 'article']) {
    const found = libs.selectAll(selector, document);
    if (found.length !== 1) continue;
    if (textOf(found[0]!).trim().length >= MAIN_MIN_CHARS) return found[0]!;
  }
  return null;
}

/** Page furniture that is never content: site navigation, headers and footers, tables of contents. */
const FURNITURE = [
  'nav',
  'aside',
  'header',
  'footer',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="search"]',
  '[role="complementary"]',
  // DocBook (the PostgreSQL manual…), Sphinx and common site templates name theirs.
  '.navheader',
  '.navfooter',
  '.navbar',
  '.toc',
  '#toc',
  '.sphinxsidebar',
  '.related',
  '.breadcrumb',
  '.breadcrumbs',
  // Texinfo's node links (Next, Previous, Up) above and below each node; Publican's page links.
  '.nav-panel',
  'div.header',
  '.docnav',
].join(', ');

/**
 * The content of a local documentation page: its marked main element, else its body without the
 * page furniture. Documentation builders mark both consistently, so this finds what Readability
 * would, at a fraction of its cost (Readability was two thirds of indexing a manual).
 */
function documentContent(libs: Libraries, document: HtmlDocument): AnyNode {
  const main = markedMain(libs, document);
  if (main) return main;
  const remove = (element: Element) => {
    const siblings = element.parent?.children;
    if (siblings) siblings.splice(siblings.indexOf(element), 1);
  };
  for (const element of libs.selectAll(FURNITURE, document)) remove(element);
  // A site's menu that no class names (Node.js's list of every module on every page): a long list
  // that is nothing but links. Nested lists go with the outermost.
  for (const list of libs.selectAll('ul, ol', document).filter((list) => isMenu(libs, list))) remove(list);
  return libs.selectOne('body', document) ?? document;
}

/** Fewest items a list of nothing but links must have to be taken as a menu. */
const MENU_ITEMS = 8;
/** Share of a menu's text inside its links. */
const MENU_LINK_SHARE = 0.9;

/** True for a long list whose items are links and little else: a site's menu, not the page's content. */
function isMenu(libs: Libraries, list: Element): boolean {
  const items = list.children.filter((child) => child.type === 'tag' && (child as Element).name === 'li');
  if (items.length < MENU_ITEMS) return false;
  const all = textOf(list).replace(/\s+/g, '').length;
  if (all === 0) return false;
  const linked = libs
    .selectAll('a', list)
    .filter((link) => !libs.selectAll('a', link).length)
    .reduce((sum, link) => sum + textOf(link).replace(/\s+/g, '').length, 0);
  return linked / all >= MENU_LINK_SHARE;
}

interface Article {
  title?: string | null;
  content?: string | null;
  byline?: string | null;
  publishedTime?: string | null;
}

/** Readability's article of a web page (its content as HTML), or null when it finds none. */
async function readArticle(html: string): Promise<Article | null> {
  const { parseHTML, Readability } = await loadArticleLibraries();
  const { document } = parseHTML(html);
  return new Readability(document as unknown as Document, { charThreshold: 200 }).parse() as Article | null;
}

export interface ExtractHtmlOptions {
  /** The page's address, the title of last resort. */
  url?: string;
  /**
   * `document` for local documentation (the marked main element, or the body without navigation);
   * `article` for pages from the web, where Readability finds the article among comments, related
   * links and advertising. Default `article`.
   */
  mode?: 'document' | 'article';
}

/**
 * The main text of an HTML page, with what is known about it: title, byline, publication date.
 * Local documents are parsed once; a web page's article is found by Readability first. A page
 * whose content cannot be found falls back to all of its body's text.
 */
export async function extractHtml(html: string, options: ExtractHtmlOptions = {}): Promise<ExtractedDocument> {
  const libs = await loadLibraries();
  const document = libs.parseDocument(html);
  const text = (element: Element | null) => (element ? clean(textOf(element)) : '');
  const pageTitle = text(libs.selectOne('title', document));
  const heading = text(libs.selectOne('h1', document));
  const byline = metaContent(libs, document, ['author', 'article:author', 'og:article:author']);
  const publishedAt = isoDate(
    metaContent(libs, document, ['article:published_time', 'date', 'pubdate', 'dc.date', 'og:published_time']),
  );
  const article = options.mode === 'document' ? null : await readArticle(html);
  const content =
    options.mode === 'document'
      ? documentContent(libs, document)
      : article?.content
        ? libs.parseDocument(article.content)
        : (libs.selectOne('body', document) ?? document);
  const title =
    options.mode === 'document'
      ? pageTitleOf({ pageTitle, heading, url: options.url })
      : // An article's own heading names it better than a <title> that carries the site's name too.
        (heading && heading.length <= 200
          ? heading
          : clean(article?.title) || pageTitle || options.url || 'Untitled'
        ).slice(0, 300);
  const extracted = withLinkRanges(normalizeText(htmlToText(content)));
  return {
    ...extracted,
    ...(isRedirect(libs, document, extracted.text) ? { redirect: true } : {}),
    title,
    byline: article?.byline?.trim() || byline,
    publishedAt: isoDate(article?.publishedTime ?? undefined) ?? publishedAt,
    kind: 'html',
  };
}

/** Most text a redirect page holds besides its pointer, in characters. */
const REDIRECT_TEXT_CHARS = 400;

/**
 * True for a page that only sends the reader elsewhere: it refreshes to another address, or says
 * the page moved ("The node you are looking for is at…", as Texinfo's redirection pages do), and
 * holds little else.
 */
function isRedirect(libs: Libraries, document: HtmlDocument, text: string): boolean {
  if (text.length > REDIRECT_TEXT_CHARS) return false;
  const refresh = libs.selectOne('meta[http-equiv="refresh" i], meta[http-equiv="Refresh"]', document);
  if (refresh && /url\s*=/i.test(refresh.attribs.content ?? '')) return true;
  return /\b(?:the (?:node|page|section|document) you are looking for is (?:at|now at|in)|(?:this page|this document) (?:has )?moved to)\b/i.test(
    text,
  );
}

/**
 * What a local document page is called: its `<title>`, the page's own name for itself. Its first
 * `<h1>` only when the title opens with that heading and goes on with the site's name ("json — JSON
 * encoder and decoder — Python 3.11 documentation" titles a page headed "json — JSON encoder and
 * decoder"); a heading the title does not open with names a part of the page ("1. Overview"), or
 * the site (a banner's "Node.js v18 documentation"), not the page.
 */
export function pageTitleOf(input: { pageTitle: string; heading: string; url?: string }): string {
  const { pageTitle, heading, url } = input;
  const opens = heading && heading.length <= 200 && pageTitle.toLowerCase().startsWith(heading.toLowerCase());
  return ((opens ? heading : pageTitle || heading) || url || 'Untitled').slice(0, 300);
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
