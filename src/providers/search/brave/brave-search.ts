import { HttpSearch, type HttpSearchOptions, type HttpSearchRequest, requireArray, text } from '../http-search.ts';
import type { SearchResult } from '../search-provider.ts';

/** Brave Search's web API: `GET /res/v1/web/search` with `X-Subscription-Token`. */
export class BraveSearch extends HttpSearch {
  readonly name = 'brave';

  constructor(
    private readonly apiKey: string,
    private readonly baseUrl = 'https://api.search.brave.com',
    options: HttpSearchOptions = {},
  ) {
    super(options);
  }

  protected buildRequest(query: string, maxResults: number): HttpSearchRequest {
    const url = new URL('/res/v1/web/search', this.baseUrl);
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(Math.min(20, maxResults)));
    return { url: url.href, method: 'GET', headers: { 'x-subscription-token': this.apiKey } };
  }

  protected readResults(body: unknown): SearchResult[] {
    const { type, web } = body as { type?: unknown; web?: { results?: unknown } };
    if (type !== 'search') throw new Error('"type" is not "search"');
    // A query with no web results has no "web" section at all.
    if (!web) return [];
    return requireArray(web.results, 'web.results').map((item) => {
      const result = item as Record<string, unknown>;
      return {
        url: text(result.url),
        title: text(result.title),
        snippet: text(result.description).replace(/<\/?strong>/g, ''),
        provider: this.name,
        metadata: { age: result.age },
      };
    });
  }
}
