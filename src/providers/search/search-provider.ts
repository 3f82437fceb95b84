/**
 * One interface for every place research can search: the local corpus and the web search APIs.
 * Adapters live beside this file; only `cli/` and `server/` choose them.
 */
export interface SearchResult {
  /** `https://…`, or `file:///…` for a local document. */
  url: string;
  title: string;
  /** A short extract that matched; for the local corpus, the whole passage. */
  snippet: string;
  /** Full text when the provider returns it (the local corpus, Tavily with raw content). */
  content?: string;
  /** The provider's name: `local`, `searxng`, `tavily`, `brave`, `exa`, `jina`. */
  provider: string;
  /** Provider-specific extras (passage id and offsets for local documents). */
  metadata?: Record<string, unknown>;
}

export interface SearchOptions {
  /** At most this many results. */
  maxResults: number;
  signal?: AbortSignal;
}

/** What research reads of a result a provider reads itself (the local corpus). */
export interface ReadText {
  text: string;
  /** The passages the text is made of: where each starts in `text`, in the document, and its headings. */
  segments?: { at: number; start: number; headings: string }[];
}

export interface SearchProvider {
  readonly name: string;
  /** Results best first. Throws `SearchError` (with `isRetryable`) on provider failures. */
  search(query: string, options: SearchOptions): Promise<SearchResult[]>;
  /**
   * The text research reads for one of this provider's results, when the provider reads it itself
   * (a local document: the matched passage with its section and the page's opening). Absent: the
   * result's `content`, else the page fetched from its URL.
   */
  read?(result: SearchResult, signal?: AbortSignal): Promise<ReadText>;
}
