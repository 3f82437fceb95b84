import { HttpSearch, type HttpSearchOptions, type HttpSearchRequest, requireArray, text } from '../http-search.ts';
import type { SearchResult } from '../search-provider.ts';

/** Tavily's search API: `POST /search` with a bearer key. */
export class TavilySearch extends HttpSearch {
  readonly name = 'tavily';

  constructor(
    private readonly apiKey: string,
    private readonly baseUrl = 'https://api.tavily.com',
    options: HttpSearchOptions = {},
  ) {
    super(options);
  }

  protected buildRequest(query: string, maxResults: number): HttpSearchRequest {
    return {
      url: `${this.baseUrl.replace(/\/$/, '')}/search`,
      method: 'POST',
      headers: { authorization: `Bearer ${this.apiKey}` },
      body: {
        query,
        max_results: maxResults,
        search_depth: 'basic',
        include_answer: false,
        include_raw_content: false,
      },
    };
  }

  protected readResults(body: unknown): SearchResult[] {
    return requireArray((body as { results?: unknown }).results, 'results').map((item) => {
      const result = item as Record<string, unknown>;
      return {
        url: text(result.url),
        title: text(result.title),
        snippet: text(result.content),
        provider: this.name,
        metadata: { score: result.score },
      };
    });
  }
}
