import { HttpSearch, type HttpSearchOptions, type HttpSearchRequest, requireArray, text } from '../http-search.ts';
import type { SearchResult } from '../search-provider.ts';

/** Jina's search endpoint (`s.jina.ai`), JSON responses, bearer key. */
export class JinaSearch extends HttpSearch {
  readonly name = 'jina';

  constructor(
    private readonly apiKey: string,
    private readonly baseUrl = 'https://s.jina.ai',
    options: HttpSearchOptions = {},
  ) {
    super(options);
  }

  protected buildRequest(query: string): HttpSearchRequest {
    const url = new URL('/', this.baseUrl);
    url.searchParams.set('q', query);
    return {
      url: url.href,
      method: 'GET',
      headers: { authorization: `Bearer ${this.apiKey}`, 'x-respond-with': 'no-content' },
    };
  }

  protected readResults(body: unknown): SearchResult[] {
    return requireArray((body as { data?: unknown }).data, 'data').map((item) => {
      const result = item as Record<string, unknown>;
      return {
        url: text(result.url),
        title: text(result.title),
        snippet: text(result.description),
        provider: this.name,
      };
    });
  }
}
