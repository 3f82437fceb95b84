import { HttpSearch, type HttpSearchOptions, type HttpSearchRequest, requireArray, text } from '../http-search.ts';
import type { SearchResult } from '../search-provider.ts';

/** A self-hosted SearXNG instance's JSON API (`/search?q=…&format=json`; JSON must be enabled in its settings). */
export class SearxngSearch extends HttpSearch {
  readonly name = 'searxng';

  constructor(
    private readonly baseUrl: string,
    options: HttpSearchOptions = {},
  ) {
    super(options);
  }

  protected buildRequest(query: string): HttpSearchRequest {
    const url = new URL('search', this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    return { url: url.href, method: 'GET', headers: {} };
  }

  protected readResults(body: unknown): SearchResult[] {
    return requireArray((body as { results?: unknown }).results, 'results').map((item) => {
      const result = item as Record<string, unknown>;
      return {
        url: text(result.url),
        title: text(result.title),
        snippet: text(result.content),
        provider: this.name,
        metadata: { engine: result.engine },
      };
    });
  }
}
