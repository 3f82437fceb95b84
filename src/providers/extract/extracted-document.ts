/** Text pulled out of a file or a fetched page, with what is known about it. */
export interface ExtractedDocument {
  title: string;
  /** Plain text (Markdown for web pages, so structure survives), paragraphs separated by blank lines. */
  text: string;
  byline?: string;
  /** Publication date as the source states it (ISO when parseable). */
  publishedAt?: string;
  kind: DocumentKind;
}

export type DocumentKind = 'markdown' | 'text' | 'html' | 'pdf';

/** The kind of a file by its name, or null for files the corpus does not read. */
export function kindFromPath(path: string): DocumentKind | null {
  const extension = path.toLowerCase().split('.').pop() ?? '';
  if (['md', 'markdown', 'mdx'].includes(extension)) return 'markdown';
  if (['txt', 'text', 'rst', 'adoc'].includes(extension)) return 'text';
  if (['html', 'htm', 'xhtml'].includes(extension)) return 'html';
  if (extension === 'pdf') return 'pdf';
  return null;
}

/** The kind of a fetched body by its Content-Type, or null for types Quarry does not read. */
export function kindFromContentType(contentType: string): DocumentKind | null {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'application/pdf') return 'pdf';
  if (type === 'text/markdown' || type === 'text/x-markdown') return 'markdown';
  if (type.startsWith('text/') || type === 'application/json') return 'text';
  return null;
}
