import type { PassageInput } from '../../../store/store.ts';
import { extractDocument } from '../../extract/extract-document.ts';
import type { DocumentKind } from '../../extract/extracted-document.ts';
import { chunkText, isNavigationText } from './chunk-text.ts';

/** A file as the index stores it: its title, its text's length, its passages, and whether it is navigation. */
export interface ReadDocument {
  title: string;
  chars: number;
  navigation: boolean;
  passages: PassageInput[];
}

/** Extracts a file's text and cuts it into passages: the CPU-heavy part of indexing. Throws on malformed input. */
export async function readDocument(bytes: Uint8Array, kind: DocumentKind, path: string): Promise<ReadDocument> {
  const extracted = await extractDocument(bytes, kind, path);
  return {
    title: extracted.title,
    chars: extracted.text.length,
    navigation: isNavigationText(extracted.text, extracted.linkRanges),
    passages: chunkText(extracted.text, { linkRanges: extracted.linkRanges }),
  };
}
