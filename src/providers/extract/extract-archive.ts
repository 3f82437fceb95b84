import { type Unzipped, unzipSync, zipSync } from 'fflate';
import { extractHtml } from './extract-html.ts';
import { sheetsDocument } from './extract-table.ts';
import type { DocumentKind, ExtractedDocument } from './extracted-document.ts';
import { openDocumentHtml, slideHtml } from './office-xml.ts';
import { odsSheets, xlsxSheets } from './spreadsheet-xml.ts';

/**
 * Word files, EPUB books, OpenDocument and PowerPoint files are zip archives of XML. Each is read
 * through the HTML extraction the corpus already trusts (a Word file converted by mammoth, keeping
 * headings, lists, tables and footnotes; a book's XHTML chapters in reading order; OpenDocument's
 * headings, lists and tables; slides in order), so their passages are cut as a web page's are. An archive is refused before anything is inflated when it would unpack past a cap or at a
 * ratio only a zip bomb has; XML is read without a DTD, so no entity can expand.
 */

/** What an archive may unpack to, in all. */
const MAX_UNPACKED_BYTES = 200 * 1024 * 1024;
/** Unpacked size over packed size beyond which an entry is a bomb, not a document (text packs ~10×). */
const MAX_RATIO = 200;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[char]!);
}

/** The archive's entries (only those `wanted`), refused whole when its declared sizes say bomb. */
export function unpack(bytes: Uint8Array, wanted: (name: string) => boolean = () => true): Unzipped {
  // A password-protected Office or OpenDocument file is no zip but an OLE compound file of encrypted
  // parts (so is a pre-2007 .doc renamed): say so, rather than that the zip is broken.
  if (bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0)
    throw new Error('encrypted (password-protected) or an old binary Office file: save it without a password');
  let total = 0;
  try {
    return unzipSync(bytes, {
      filter: (file) => {
        total += file.originalSize;
        if (total > MAX_UNPACKED_BYTES)
          throw new Error(`the archive unpacks to more than ${MAX_UNPACKED_BYTES / 1024 / 1024} MB`);
        if (file.size > 0 && file.originalSize / file.size > MAX_RATIO)
          throw new Error(
            `${file.name} unpacks ${Math.round(file.originalSize / file.size)} times its size: a zip bomb`,
          );
        return wanted(file.name);
      },
    });
  } catch (error) {
    const message = (error as Error).message;
    if (/unpacks|zip bomb/.test(message)) throw error;
    throw new Error(`not a readable zip archive (${message})`);
  }
}

const utf8 = (bytes: Uint8Array | undefined) => (bytes ? new TextDecoder('utf-8').decode(bytes) : '');

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The Dublin Core title of a properties part (`docProps/core.xml`, `meta.xml`, an EPUB package), entities decoded. */
function titleOf(xml: string): string | undefined {
  const raw = /<dc:title\b[^>]*>([^<]*)<\/dc:title>/i.exec(xml)?.[1];
  return raw
    ?.replace(
      /&(amp|lt|gt|quot|apos);|&#(\d{1,7});|&#x([\da-f]{1,6});/gi,
      (whole, name?: string, decimal?: string, hex?: string) => {
        if (name) return entities[name.toLowerCase()] ?? whole;
        const code = Number.parseInt(decimal ?? hex!, decimal ? 10 : 16);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      },
    )
    .trim();
}

/** A Word (.docx) file: mammoth's HTML, titled by the file's own title property, else its first heading. */
export async function extractDocx(bytes: Uint8Array, fallbackTitle: string): Promise<ExtractedDocument> {
  const parts = unpack(bytes);
  if (!parts['word/document.xml']) throw new Error('not a Word document (no word/document.xml)');
  const title = titleOf(utf8(parts['docProps/core.xml']));
  const mammoth = await import('mammoth');
  // mammoth gets the parts as unpacked here, within the caps, stored again without compression: an
  // archive whose entries lie about their size can make it inflate nothing more than that.
  const { value } = await mammoth.convertToHtml({ buffer: Buffer.from(zipSync(parts, { level: 0 })) });
  return asDocument(value, title, fallbackTitle, 'docx');
}

/** The attribute `name` of the first `tag` element in `xml` (namespace prefixes ignored). */
function attribute(xml: string, tag: string, name: string): string | undefined {
  const element = new RegExp(`<(?:\\w+:)?${tag}\\b[^>]*>`, 'i').exec(xml)?.[0];
  return element ? new RegExp(`\\b${name}\\s*=\\s*"([^"]*)"`).exec(element)?.[1] : undefined;
}

function resolvePath(base: string, href: string): string {
  const parts = (base ? `${base}/${decodeURIComponent(href.split('#')[0]!)}` : decodeURIComponent(href)).split('/');
  const out: string[] = [];
  for (const part of parts) {
    if (part === '..') out.pop();
    else if (part && part !== '.') out.push(part);
  }
  return out.join('/');
}

/** An EPUB book: its chapters' XHTML in spine order, one document, titled by the book's metadata. */
export async function extractEpub(bytes: Uint8Array, fallbackTitle: string): Promise<ExtractedDocument> {
  const files = unpack(bytes, (name) => /\.(xml|opf|x?html?)$/i.test(name));
  const container = utf8(files['META-INF/container.xml']);
  const opfPath = attribute(container, 'rootfile', 'full-path');
  const opf = opfPath ? utf8(files[opfPath]) : '';
  if (!opf) throw new Error('not an EPUB book (no package document)');
  const base = opfPath!.includes('/') ? opfPath!.slice(0, opfPath!.lastIndexOf('/')) : '';
  const manifest = new Map<string, string>();
  for (const item of opf.match(/<(?:\w+:)?item\b[^>]*>/gi) ?? []) {
    const id = /\bid\s*=\s*"([^"]*)"/.exec(item)?.[1];
    const href = /\bhref\s*=\s*"([^"]*)"/.exec(item)?.[1];
    if (id && href) manifest.set(id, resolvePath(base, href));
  }
  const spine = (opf.match(/<(?:\w+:)?itemref\b[^>]*>/gi) ?? [])
    .map((itemref) => /\bidref\s*=\s*"([^"]*)"/.exec(itemref)?.[1])
    .flatMap((id) => (id && manifest.has(id) ? [manifest.get(id)!] : []));
  const bodies = spine.map((path) => /<body\b[^>]*>([\s\S]*)<\/body>/i.exec(utf8(files[path]))?.[1] ?? '');
  if (bodies.every((body) => !body.trim())) throw new Error('an EPUB book with no readable chapter');
  const title = titleOf(opf);
  return asDocument(bodies.map((body) => `<section>${body}</section>`).join('\n'), title, fallbackTitle, 'epub');
}

/** The HTML page of an office document's body, titled. */
async function asDocument(
  body: string,
  title: string | undefined,
  fallbackTitle: string,
  kind: DocumentKind,
): Promise<ExtractedDocument> {
  const html = `<html><head><title>${escapeHtml(title || '')}</title></head><body>${body}</body></html>`;
  const extracted = await extractHtml(html, { mode: 'document' });
  return { ...extracted, title: title || extracted.title || fallbackTitle, kind };
}

/** An OpenDocument text or presentation (`.odt`, `.odp`): its `content.xml`, titled by `meta.xml`. */
export async function extractOpenDocument(
  bytes: Uint8Array,
  fallbackTitle: string,
  kind: 'odt' | 'odp',
): Promise<ExtractedDocument> {
  const parts = unpack(bytes, (name) => name === 'content.xml' || name === 'meta.xml');
  if (!parts['content.xml']) throw new Error('not an OpenDocument file (no content.xml)');
  const title = titleOf(utf8(parts['meta.xml']));
  return asDocument(await openDocumentHtml(utf8(parts['content.xml'])), title, fallbackTitle, kind);
}

/** A PowerPoint presentation (`.pptx`): its slides in order, each a section, titled by its properties. */
export async function extractPptx(bytes: Uint8Array, fallbackTitle: string): Promise<ExtractedDocument> {
  const parts = unpack(bytes, (name) => /^ppt\/slides\/slide\d+\.xml$/.test(name) || name === 'docProps/core.xml');
  const slides = Object.keys(parts)
    .flatMap((name) => {
      const number = /^ppt\/slides\/slide(\d+)\.xml$/.exec(name)?.[1];
      return number ? [{ name, number: Number(number) }] : [];
    })
    .sort((a, b) => a.number - b.number);
  if (slides.length === 0) throw new Error('not a PowerPoint presentation (no slides)');
  const title = titleOf(utf8(parts['docProps/core.xml']));
  const body = (await Promise.all(slides.map((slide) => slideHtml(utf8(parts[slide.name]), slide.number)))).join('');
  return asDocument(body, title, fallbackTitle, 'pptx');
}

/** An Excel workbook (`.xlsx`): each worksheet a section of row blocks under its header row. */
export async function extractXlsx(bytes: Uint8Array, fallbackTitle: string): Promise<ExtractedDocument> {
  const parts = unpack(bytes, (name) => name.endsWith('.xml') || name.endsWith('.rels'));
  const title = titleOf(utf8(parts['docProps/core.xml']));
  const sheets = await xlsxSheets((name) => utf8(parts[name]));
  return sheetsDocument(sheets, title || fallbackTitle, 'xlsx');
}

/** An OpenDocument spreadsheet (`.ods`): each sheet a section of row blocks under its header row. */
export async function extractOds(bytes: Uint8Array, fallbackTitle: string): Promise<ExtractedDocument> {
  const parts = unpack(bytes, (name) => name === 'content.xml' || name === 'meta.xml');
  if (!parts['content.xml']) throw new Error('not an OpenDocument file (no content.xml)');
  const title = titleOf(utf8(parts['meta.xml']));
  return sheetsDocument(await odsSheets(utf8(parts['content.xml'])), title || fallbackTitle, 'ods');
}
