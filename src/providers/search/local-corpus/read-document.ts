import type { PassageInput } from '../../../store/store.ts';
import { extractDocument } from '../../extract/extract-document.ts';
import type { DocumentKind } from '../../extract/extracted-document.ts';
import { chunkText, isNavigationText } from './chunk-text.ts';
import { sketchOf } from './duplicates.ts';

/**
 * The version of how files are read into passages (extraction and chunking). Raise it whenever a
 * change would give a file other passages: the next index reads every file again.
 *   1: sketches of every document (migration 12).
 *   2: note boxes as blockquotes; Texinfo's and Publican's page links left out; redirect pages as
 *      navigation; symbols (`$@`, `-F`, `.PHONY`, `10.0.0.1`) searchable; PDFs without running
 *      headers and footers.
 *   3: spreadsheets (`.xlsx`, `.ods`); a CSV table as wide as its widest row; an office file's title
 *      read when its properties declare their namespace on the element (as openpyxl writes them);
 *      reStructuredText and AsciiDoc with their headings; man pages; a PDF's pages under their numbers.
 *   4: terms in a row that share one description (Texinfo's `@deffnx`) are one passage with it; the
 *      first of them was dropped as a heading with nothing under it.
 *   5: a symbol quoted as code and followed by punctuation ("`$*`,", "`-n`.") is searchable as itself;
 *      the punctuation was read as part of it.
 *   6: a long list of nothing but links (a site's menu that no class names, as on Node.js's API
 *      pages) and an element with the id `toc` are left out; a heading's own `#` or `§` mark too.
 */
export const READER_VERSION = 6;

/** A file as the index stores it: its title, its text's length, its passages, whether it is navigation, its sketch. */
export interface ReadDocument {
  title: string;
  chars: number;
  navigation: boolean;
  passages: PassageInput[];
  /** Sampled shingle hashes of its text, to find mirrors and aggregates (`duplicates.ts`). */
  sketch: string;
}

/** Extracts a file's text and cuts it into passages: the CPU-heavy part of indexing. Throws on malformed input. */
export async function readDocument(bytes: Uint8Array, kind: DocumentKind, path: string): Promise<ReadDocument> {
  const extracted = await extractDocument(bytes, kind, path);
  return {
    title: extracted.title,
    chars: extracted.text.length,
    navigation: extracted.redirect === true || isNavigationText(extracted.text, extracted.linkRanges),
    passages: chunkText(extracted.text, { linkRanges: extracted.linkRanges }),
    sketch: sketchOf(extracted.text),
  };
}
