import type { Clock } from '../../shared/clock.ts';
import { parseRetryAfter, withRetry } from '../../shared/retry.ts';
import { SearchError } from './search-error.ts';
import type { SearchOptions, SearchProvider, SearchResult } from './search-provider.ts';

export interface HttpSearchRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: unknown;
}

export interface HttpSearchOptions {
  /** Per-request time limit. Default 20 s. */
  timeoutMs?: number;
  /** Attempts after the first for retryable failures (429, 5xx, network). Default 2. */
  retries?: number;
  /** Longest wait honoured from `Retry-After` (and the backoff cap). Default 10 s. */
  maxRetryDelayMs?: number;
  /** What waits between tries; tests pass a `ManualClock`. */
  clock?: Clock;
}

/**
 * The shared HTTP path of every web search adapter: an adapter says how to build its request and
 * read its response; this class sends it with a timeout and the caller's signal, maps failures to
 * `SearchError` (429 and 5xx retryable, honouring `Retry-After`; 4xx not), and retries.
 */
export abstract class HttpSearch implements SearchProvider {
  abstract readonly name: string;
  /** What the vendors' APIs take (Tavily and Brave refuse queries over 400 characters). */
  readonly maxQueryChars: number = 400;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly maxRetryDelayMs: number;
  private readonly clock: Clock | undefined;

  constructor(options: HttpSearchOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 20_000;
    this.retries = options.retries ?? 2;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 10_000;
    this.clock = options.clock;
  }

  protected abstract buildRequest(query: string, maxResults: number): HttpSearchRequest;
  protected abstract readResults(body: unknown): SearchResult[];

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const results = await withRetry(() => this.once(query, options), {
      attempts: this.retries + 1,
      maxDelayMs: this.maxRetryDelayMs,
      clock: this.clock,
      signal: options.signal,
    });
    return results.slice(0, options.maxResults);
  }

  private async once(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const request = this.buildRequest(query, options.maxResults);
    const signals = [AbortSignal.timeout(this.timeoutMs), ...(options.signal ? [options.signal] : [])];
    let response: Response;
    try {
      response = await fetch(request.url, {
        method: request.method,
        headers: {
          accept: 'application/json',
          ...request.headers,
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: AbortSignal.any(signals),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new SearchError({
        provider: this.name,
        status: null,
        message: timedOut ? `no answer within ${this.timeoutMs} ms` : (error as Error).message,
        isRetryable: true,
        cause: error,
      });
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      const retryable = response.status === 429 || response.status >= 500;
      const hint = response.status === 401 || response.status === 403 ? ' (check the API key)' : '';
      throw new SearchError({
        provider: this.name,
        status: response.status,
        message: `HTTP ${response.status}${hint}${text ? `: ${text.slice(0, 200)}` : ''}`,
        isRetryable: retryable,
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
      });
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new SearchError({
        provider: this.name,
        status: response.status,
        message: 'the response is not JSON',
        isRetryable: false,
        cause: error,
      });
    }
    try {
      return this.readResults(body);
    } catch (error) {
      throw new SearchError({
        provider: this.name,
        status: response.status,
        message: `unexpected response shape: ${(error as Error).message}`,
        isRetryable: false,
        cause: error,
      });
    }
  }
}

/** Reads a required array field, or throws a message naming it. */
export function requireArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`"${field}" is not a list`);
  return value;
}

export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
