import { HttpSearch, type HttpSearchOptions, type HttpSearchRequest, requireArray, text } from '../http-search.ts';
import type { SearchResult } from '../search-provider.ts';

/** Exa's search API: `POST /search` with `x-api-key`, asking for page text with each result. */
export class ExaSearch extends HttpSearch {
  readonly name = 'exa';

  constructor(
    private readonly apiKey: string,
    private readonly baseUrl = 'https://api.exa.ai',
    options: HttpSearchOptions = {},
  ) {
    super(options);
  }

  protected buildRequest(query: string, maxResults: number): HttpSearchRequest {
    return {
      url: `${this.baseUrl.replace(/\/$/, '')}/search`,
      method: 'POST',
      headers: { 'x-api-key': this.apiKey },
      body: { query, numResults: maxResults, contents: { text: { maxCharacters: 4000 } } },
    };
  }

  protected readResults(body: unknown): SearchResult[] {
    return requireArray((body as { results?: unknown }).results, 'results').map((item) => {
      const result = item as Record<string, unknown>;
      const content = text(result.text);
      return {
        url: text(result.url),
        title: text(result.title),
        snippet: content.slice(0, 300),
        content: content || undefined,
        provider: this.name,
        metadata: { publishedDate: result.publishedDate, author: result.author },
      };
    });
  }
}
