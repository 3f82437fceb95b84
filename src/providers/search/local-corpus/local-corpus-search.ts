import { pathToFileURL } from 'node:url';
import type { Store } from '../../../store/store.ts';
import type { SearchOptions, SearchProvider, SearchResult } from '../search-provider.ts';
import { folderPrefix } from './index-folders.ts';

/** Searches the indexed passages of the given folders (all indexed documents when none). */
export class LocalCorpusSearch implements SearchProvider {
  readonly name = 'local';
  private readonly prefixes: string[];

  constructor(
    private readonly store: Store,
    folders: string[] = [],
  ) {
    this.prefixes = folders.map(folderPrefix);
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    options.signal?.throwIfAborted();
    const hits = await this.store.searchPassages({ query, limit: options.maxResults, pathPrefixes: this.prefixes.length ? this.prefixes : undefined });
    return hits.map((hit) => ({
      url: pathToFileURL(hit.path).href,
      title: hit.title,
      snippet: hit.text,
      content: hit.text,
      provider: this.name,
      metadata: { passageId: hit.passageId, position: hit.position, start: hit.start, end: hit.end, score: hit.score },
    }));
  }
}
