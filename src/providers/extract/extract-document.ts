import { basename } from 'node:path';
import {
  extractDocx,
  extractEpub,
  extractOds,
  extractOpenDocument,
  extractPptx,
  extractXlsx,
} from './extract-archive.ts';
import { extractHtml, normalizeText } from './extract-html.ts';
import { extractPdf } from './extract-pdf.ts';
import { extractTable } from './extract-table.ts';
import { type DocumentKind, type ExtractedDocument, markdownWithoutLinkUrls } from './extracted-document.ts';

/** True when the bytes look binary (a NUL in the first 8 KB): not text, whatever the name says. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

function markdownTitle(text: string): string | undefined {
  const withoutFrontMatter = text.replace(/^---\n[\s\S]*?\n---\n/, '');
  const frontTitle = /^---\n[\s\S]*?^title:\s*["']?(.+?)["']?\s*$/m.exec(text)?.[1];
  const heading = /^#\s+(.+)$/m.exec(withoutFrontMatter)?.[1] ?? /^(.+)\n=+\s*$/m.exec(withoutFrontMatter)?.[1];
  return (frontTitle ?? heading)?.trim();
}

/** Extracts title and text from a file's bytes, by kind. Throws on malformed input. */
export async function extractDocument(bytes: Uint8Array, kind: DocumentKind, name: string): Promise<ExtractedDocument> {
  const fallbackTitle = basename(name).replace(/(\.[^.]+)?\.gz$|\.[^.]+$/i, '');
  if (kind === 'pdf') return extractPdf(bytes, fallbackTitle);
  if (kind === 'docx') return extractDocx(bytes, fallbackTitle);
  if (kind === 'epub') return extractEpub(bytes, fallbackTitle);
  if (kind === 'odt' || kind === 'odp') return extractOpenDocument(bytes, fallbackTitle, kind);
  if (kind === 'pptx') return extractPptx(bytes, fallbackTitle);
  if (kind === 'xlsx') return extractXlsx(bytes, fallbackTitle);
  if (kind === 'ods') return extractOds(bytes, fallbackTitle);
  if (kind === 'man') {
    const { manPageText, manToMarkdown } = await import('./extract-markup.ts');
    const text = manPageText(bytes, name);
    if (text.includes('\u0000')) throw new Error('binary content (NUL bytes) in a man page');
    const { markdown, title } = manToMarkdown(normalizeText(text));
    return { ...markdownWithoutLinkUrls(markdown), title, kind };
  }
  if (looksBinary(bytes)) throw new Error('binary content (NUL bytes) in a text file');
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  if (kind === 'html') return extractHtml(text, { mode: 'document' });
  if (kind === 'csv') return extractTable(text, fallbackTitle, name.toLowerCase().endsWith('.tsv') ? '\t' : undefined);
  const normalized = normalizeText(text);
  if (kind === 'rst' || kind === 'asciidoc') {
    const { asciidocToMarkdown, rstToMarkdown } = await import('./extract-markup.ts');
    const { markdown, title } = (kind === 'rst' ? rstToMarkdown : asciidocToMarkdown)(normalized);
    return { ...markdownWithoutLinkUrls(markdown), title: title ?? fallbackTitle, kind };
  }
  if (kind === 'markdown') {
    return { ...markdownWithoutLinkUrls(normalized), title: markdownTitle(normalized) ?? fallbackTitle, kind };
  }
  const firstLine = normalized.split('\n', 1)[0]?.trim();
  const title = firstLine && firstLine.length <= 120 ? firstLine : fallbackTitle;
  return { title, text: normalized, linkRanges: [], kind };
}
