import { type Clock, systemClock } from './clock.ts';
import { isRetryable, type QuarryError } from './errors.ts';

export interface RetryOptions {
  /**
   * Tries in all, the first included; `Infinity` keeps trying until the signal aborts. Default 3. A
   * function decides per error (a store outage may be waited out longer than a provider's 429).
   */
  attempts?: number | ((error: QuarryError) => number);
  /** First back-off; each later one doubles. Default 500 ms. */
  baseDelayMs?: number;
  /** Longest single wait, also the cap on a `Retry-After`. Default 10 s. */
  maxDelayMs?: number;
  clock?: Clock;
  signal?: AbortSignal;
  /** Told before each wait (for a log line or a status event); a promise it returns is awaited first. */
  onRetry?: (info: { attempt: number; delayMs: number; error: QuarryError }) => void | Promise<void>;
}

/**
 * The one retry policy: runs `work` again after errors that say `isRetryable` (a busy database, a
 * lost connection, a 429 or 5xx), waiting the other side's `retryAfterMs` when it gave one, else an
 * exponential back-off. Anything else, or the last failure, is thrown as it is.
 */
export async function withRetry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 3;
  const base = options.baseDelayMs ?? 500;
  const max = options.maxDelayMs ?? 10_000;
  const clock = options.clock ?? systemClock;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (error) {
      if (!isRetryable(error) || options.signal?.aborted) throw error;
      const retryable = error as QuarryError;
      if (attempt >= (typeof attempts === 'function' ? attempts(retryable) : attempts)) throw error;
      const backoff = Math.min(max, base * 2 ** Math.min(attempt - 1, 20));
      const delayMs = Math.min(max, retryable.retryAfterMs ?? backoff);
      await options.onRetry?.({ attempt, delayMs, error: retryable });
      await clock.sleep(delayMs, options.signal);
    }
  }
}

/** The longest `Retry-After` honored: a server asking for more is as good as down. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * A `Retry-After` header as milliseconds: delta seconds or an HTTP date; null when absent or
 * unreadable. Capped at ten minutes.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const seconds = Number(value.trim());
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms)) return null;
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}
