import { normalizeText } from './extract-html.ts';
import type { ExtractedDocument } from './extracted-document.ts';

/** The text of a PDF, page by page, with its title from the metadata or the first line. */
export async function extractPdf(bytes: Uint8Array, fallbackTitle: string): Promise<ExtractedDocument> {
  const { extractText, getDocumentProxy, getMeta } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    const meta = await getMeta(pdf).catch(() => null);
    const info = (meta?.info ?? {}) as Record<string, unknown>;
    const body = normalizeText((text as string[]).join('\n\n'));
    const firstLine = body
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
