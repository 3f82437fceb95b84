import { QuarryError } from '../../shared/errors.ts';

/** A search provider failed; `isRetryable` and `retryAfterMs` say whether and when to try again. */
export class SearchError extends QuarryError {
  readonly provider: string;
  readonly status: number | null;

  constructor(options: {
    provider: string;
    status: number | null;
    message: string;
    isRetryable: boolean;
    retryAfterMs?: number | null;
    cause?: unknown;
  }) {
    super('STEP_FAILED', `${options.provider} search failed: ${options.message}`, {
      isRetryable: options.isRetryable,
      retryAfterMs: options.retryAfterMs,
      details: { provider: options.provider, status: options.status },
      cause: options.cause,
    });
    this.name = 'SearchError';
    this.provider = options.provider;
    this.status = options.status;
  }
}
