import { QuarryError } from '../../shared/errors.ts';
import { parseRetryAfter } from '../../shared/retry.ts';

/** The fields of the AI SDK's `APICallError` this reads (read by shape: `ai` loads only with a model). */
interface ApiCallFailure {
  message: string;
  isRetryable: boolean;
  statusCode?: number;
  responseHeaders?: Record<string, string>;
}

function apiCallFailure(error: unknown): ApiCallFailure | null {
  if (!(error instanceof Error)) return null;
  // A RetryError (the SDK's own retries spent) says why through its last error.
  const last = (error as { lastError?: unknown }).lastError;
  const failure = last instanceof Error ? last : error;
  return typeof (failure as Partial<ApiCallFailure>).isRetryable === 'boolean'
    ? (failure as unknown as ApiCallFailure)
    : null;
}

/**
 * A model call's failure as Quarry's retry policy reads it: a model server that is down, refusing
 * connections, overloaded (5xx) or rate-limiting (429) is a passing failure — the step runs again
 * after a back-off, waiting a `Retry-After` when given — instead of failing the run once the SDK's
 * own retries (none: every try is a step retry). Anything else is returned unchanged.
 */
export function asModelError(error: unknown, modelId: string): unknown {
  const failure = apiCallFailure(error);
  if (!failure?.isRetryable) return error;
  const retryAfterMs = parseRetryAfter(failure.responseHeaders?.['retry-after']);
  return new QuarryError('STEP_FAILED', `The model ${modelId} is unavailable: ${failure.message}`, {
    isRetryable: true,
    ...(retryAfterMs === null ? {} : { retryAfterMs }),
    details: { model: modelId, status: failure.statusCode ?? null },
    cause: error,
  });
}
