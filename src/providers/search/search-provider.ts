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

/** `query` cut to whole words within `maxChars` (unchanged when it fits). */
export function shortenQuery(query: string, maxChars: number): string {
  const trimmed = query.trim();
  if (trimmed.length <= maxChars) return trimmed;
  const cut = trimmed.slice(0, maxChars + 1);
  const space = cut.lastIndexOf(' ');
  return (space > maxChars / 2 ? cut.slice(0, space) : cut.slice(0, maxChars)).trim();
}

/** What research reads of a result a provider reads itself (the local corpus). */
export interface ReadText {
  text: string;
  /** The passages the text is made of: where each starts in `text`, in the document, and its headings. */
  segments?: { at: number; start: number; headings: string }[];
}

export interface SearchProvider {
  readonly name: string;
  /**
   * Longest query the provider takes, in characters (web search APIs refuse longer ones). Research
   * shortens a longer query to whole words within it; the question itself is kept whole.
   */
  readonly maxQueryChars: number;
  /** Results best first. Throws `SearchError` (with `isRetryable`) on provider failures. */
  search(query: string, options: SearchOptions): Promise<SearchResult[]>;
  /**
   * The text research reads for one of this provider's results, when the provider reads it itself
   * (a local document: the matched passage with its section and the page's opening). Absent: the
   * result's `content`, else the page fetched from its URL.
   */
  read?(result: SearchResult, signal?: AbortSignal): Promise<ReadText>;
}
