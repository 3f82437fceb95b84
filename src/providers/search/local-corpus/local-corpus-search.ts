import { pathToFileURL } from 'node:url';
import type { PassageHit, Store } from '../../../store/store.ts';
import type { SearchOptions, SearchProvider, SearchResult } from '../search-provider.ts';
import { folderPrefix } from './index-folders.ts';

/** A piece of a result's content: where it starts in the content, and in the document's text. */
export interface ContentSegment {
  /** Offset in the result's `content`. */
  at: number;
  /** Offset in the document's extracted text. */
  start: number;
  headings: string;
}

/** What a local result carries besides its text: where the passage is, and how prose-like it is. */
export interface LocalResultMetadata {
  passageId: number;
  position: number;
  start: number;
  end: number;
  headings: string;
  linkDensity: number;
  navigation: boolean;
  score: number;
  /** The passages the content is made of, in order. */
  segments: ContentSegment[];
}

/** Characters of a page a result carries at most: its opening, and the matched passage with its neighbours. */
const CONTENT_CHARS = 5000;

/**
 * Pages ranked by their passages: the best passage's score, plus half the second's and a quarter of
 * the third's. A page with many passages on the question is more likely about it than a page that
 * mentions it once. Each page is represented by its best passage.
 */
export function rankDocuments(hits: readonly PassageHit[]): { hit: PassageHit; score: number }[] {
  const pages = new Map<number, PassageHit[]>();
  for (const hit of hits) pages.set(hit.documentId, [...(pages.get(hit.documentId) ?? []), hit]);
  return [...pages.values()]
    .map((passages) => {
      const sorted = [...passages].sort((a, b) => b.score - a.score || a.passageId - b.passageId);
      const score = (sorted[0]?.score ?? 0) + 0.5 * (sorted[1]?.score ?? 0) + 0.25 * (sorted[2]?.score ?? 0);
      return { hit: sorted[0]!, score: Number(score.toFixed(6)) };
    })
    .sort((a, b) => b.score - a.score || a.hit.passageId - b.hit.passageId);
}

/**
 * Searches the indexed passages of the given folders (all indexed documents when none): one result
 * per document, so a page is never read twice for one query. A result's content is what a reader
 * skims: the page's opening, and the best passage with the passages around it.
 */
export class LocalCorpusSearch implements SearchProvider {
  readonly name = 'local';
  private readonly prefixes: string[];

  constructor(
    private readonly store: Store,
    private readonly folders: string[] = [],
    private readonly options: { ready?: (folders: string[], signal?: AbortSignal) => Promise<void> } = {},
  ) {
    this.prefixes = folders.map(folderPrefix);
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    options.signal?.throwIfAborted();
    await this.options.ready?.(this.folders, options.signal);
    const hits = await this.store.searchPassages({
      query,
      limit: 100,
      pathPrefixes: this.prefixes.length ? this.prefixes : undefined,
    });
    const results: SearchResult[] = [];
    for (const { hit, score } of rankDocuments(hits).slice(0, options.maxResults)) {
      const { content, segments } = await this.readAround(hit);
      const metadata: LocalResultMetadata = {
        passageId: hit.passageId,
        position: hit.position,
        start: hit.start,
        end: hit.end,
        headings: hit.headings,
        linkDensity: hit.linkDensity,
        navigation: hit.navigation,
        score,
        segments,
      };
      results.push({
        url: pathToFileURL(hit.path).href,
        title: hit.title,
        snippet: hit.text,
        content,
        provider: this.name,
        metadata: { ...metadata },
      });
    }
    return results;
  }

  /** The page's first two passages and the hit with its neighbours, in page order, within the size cap. */
  private async readAround(hit: PassageHit): Promise<{ content: string; segments: ContentSegment[] }> {
    const wanted = [hit.position, hit.position - 1, hit.position + 1, 0, 1].filter((position) => position >= 0);
    const passages = await this.store.readPassages({ documentId: hit.documentId, positions: [...new Set(wanted)] });
    // The hit first, then its neighbours, then the opening, as long as they fit.
    const kept: PassageHit[] = [];
    let size = 0;
    for (const position of wanted) {
      const passage = passages.find((each) => each.position === position);
      if (!passage || kept.includes(passage) || (kept.length > 0 && size + passage.text.length > CONTENT_CHARS))
        continue;
      kept.push(passage);
      size += passage.text.length + 2;
    }
    kept.sort((a, b) => a.position - b.position);
    const segments: ContentSegment[] = [];
    let content = '';
    for (const passage of kept) {
      if (content) content += '\n\n';
      segments.push({ at: content.length, start: passage.start, headings: passage.headings });
      content += passage.text;
    }
    return { content, segments };
  }
}
