/** Text pulled out of a file or a fetched page, with what is known about it. */
export interface ExtractedDocument {
  title: string;
  /**
   * The text as a reader sees it, paragraphs separated by blank lines: light Markdown (headings,
   * lists, fenced code, inline code), with links reduced to their words and no escaping.
   */
  text: string;
  /** Character ranges of `text` that were link text: how navigation pages and link lists are told apart. */
  linkRanges: [number, number][];
  byline?: string;
  /**
   * The page says it is only a way elsewhere: a redirect (`<meta http-equiv="refresh">`, Texinfo's
   * "The node you are looking for is at…"). Such a page is navigation, never quoted.
   */
  redirect?: boolean;
  /** Publication date as the source states it (ISO when parseable). */
  publishedAt?: string;
  kind: DocumentKind;
}

export type DocumentKind =
  | 'markdown'
  | 'text'
  | 'html'
  | 'pdf'
  | 'docx'
  | 'epub'
  | 'odt'
  | 'odp'
  | 'pptx'
  | 'csv'
  | 'xlsx'
  | 'ods'
  | 'rst'
  | 'asciidoc'
  | 'man';

/** The kind of a file by its name, or null for files the corpus does not read. */
export function kindFromPath(path: string): DocumentKind | null {
  const parts = path.toLowerCase().split(/[/\\]/).pop()!.split('.');
  const extension = parts.length > 1 ? parts.at(-1)! : '';
  // A man page by its section (`ls.1`, `printf.3p`, `ls.1.gz`).
  const section = extension === 'gz' && parts.length > 2 ? parts.at(-2)! : extension;
  if (/^[1-9][a-z]{0,3}$/.test(section) && parts.length > (extension === 'gz' ? 2 : 1)) return 'man';
  if (['md', 'markdown', 'mdx'].includes(extension)) return 'markdown';
  if (['txt', 'text'].includes(extension)) return 'text';
  if (extension === 'rst' || extension === 'rest') return 'rst';
  if (extension === 'adoc' || extension === 'asciidoc' || extension === 'asc') return 'asciidoc';
  if (['html', 'htm', 'xhtml'].includes(extension)) return 'html';
  if (extension === 'pdf') return 'pdf';
  if (extension === 'docx') return 'docx';
  if (extension === 'epub') return 'epub';
  if (extension === 'odt' || extension === 'odp' || extension === 'pptx') return extension;
  if (extension === 'xlsx' || extension === 'ods') return extension;
  if (extension === 'csv' || extension === 'tsv') return 'csv';
  return null;
}

/** The kind of a fetched body by its Content-Type, or null for types Quarry does not read. */
export function kindFromContentType(contentType: string): DocumentKind | null {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'application/pdf') return 'pdf';
  if (type === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document') return 'docx';
  if (type === 'application/epub+zip') return 'epub';
  if (type === 'text/csv' || type === 'text/tab-separated-values') return 'csv';
  if (type === 'text/markdown' || type === 'text/x-markdown') return 'markdown';
  if (type.startsWith('text/') || type === 'application/json') return 'text';
  return null;
}

/** Marks the text of a link while converting, so link density can be measured after the URLs are gone. */
export const LINK_START = '\uE000';
export const LINK_END = '\uE001';

/** Removes the link markers from text, returning the clean text and where the link text was. */
export function withLinkRanges(marked: string): { text: string; linkRanges: [number, number][] } {
  const ranges: [number, number][] = [];
  let text = '';
  let open = -1;
  for (const char of marked) {
    if (char === LINK_START) open = text.length;
    else if (char === LINK_END) {
      if (open >= 0 && text.length > open) ranges.push([open, text.length]);
      open = -1;
    } else text += char;
  }
  return { text, linkRanges: ranges };
}

/**
 * Markdown links reduced to their words, marked as link text; images dropped. Text inside code
 * fences and code spans is left alone.
 */
export function markdownWithoutLinkUrls(markdown: string): { text: string; linkRanges: [number, number][] } {
  const marked = markdown
    .split(/(```[\s\S]*?```|`[^`\n]*`)/)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : part
            .replace(/!\[([^\]]*)\]\([^)]*\)/g, '')
            .replace(/\[([^\]]+)\]\((?:[^()\s]|\([^)]*\))+(?:\s+"[^"]*")?\)/g, `${LINK_START}$1${LINK_END}`),
    )
    .join('');
  return withLinkRanges(marked);
}

/** The share of `[start, end)` that is link text (0 to 1). */
export function linkDensity(ranges: readonly [number, number][], start: number, end: number): number {
  if (end <= start) return 0;
  let linked = 0;
  for (const [from, to] of ranges) {
    if (to <= start || from >= end) continue;
    linked += Math.min(to, end) - Math.max(from, start);
  }
  return linked / (end - start);
}
