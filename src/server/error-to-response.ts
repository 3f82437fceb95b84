import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Log } from '../config/log.ts';
import { type ErrorCode, isQuarryError, QuarryError } from '../shared/errors.ts';

/** The HTTP status of every error code, in one place; a new code does not compile until it is here. */
export const httpStatusOf: Record<ErrorCode, ContentfulStatusCode> = {
  INVALID_INPUT: 400,
  MODEL_NOT_CONFIGURED: 400,
  FEATURE_UNAVAILABLE: 501,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RATE_LIMITED: 429,
  SESSION_NOT_FOUND: 404,
  STEP_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  TOKEN_NOT_FOUND: 404,
  DOCUMENT_NOT_FOUND: 404,
  WORKFLOW_NOT_FOUND: 404,
  SESSION_ALREADY_RUNNING: 409,
  SESSION_COMPLETED: 409,
  SESSION_NOT_WAITING: 409,
  SESSION_WAITING: 409,
  WORKFLOW_VERSION_MISMATCH: 409,
  CONFLICT: 409,
  DUPLICATE_STEP_KEY: 500,
  STEP_ATTEMPTS_EXCEEDED: 500,
  STEP_FAILED: 502,
  INTERRUPTED: 409,
  CLAIM_LIMIT: 500,
  LEASE_LOST: 409,
  STORE_BUSY: 503,
  STORE_UNAVAILABLE: 503,
  OVERLOADED: 503,
  STORE_CORRUPT: 500,
  SCHEMA_TOO_NEW: 500,
  INTERNAL: 500,
};

/** Standard error, for a server started without a process log (tests). */
const defaultLog: Log = (message, error) => console.error(message, ...(error === undefined ? [] : [error]));

/** The body of every error answer. */
export function errorBody(code: ErrorCode, message: string, field?: unknown) {
  return { error: { code, message, ...(typeof field === 'string' ? { field } : {}) } };
}

function isClientHttpError(error: unknown): error is HTTPException {
  return error instanceof HTTPException && error.status >= 400 && error.status < 500;
}

/**
 * `{ "error": { "code", "message", "field"? } }` with the status for its code. Errors that are not
 * the caller's fault (5xx) are logged in full; unknown errors become `INTERNAL`, with a message
 * that leaks nothing.
 */
export function errorToResponse(error: unknown, c: Context, log: Log = defaultLog): Response {
  const known = isQuarryError(error)
    ? error
    : isClientHttpError(error)
      ? // Hono's own refusals of a request (an empty or malformed JSON body its validator reads).
        new QuarryError('INVALID_INPUT', 'The request body is not valid JSON (an empty body is not JSON either).', {
          details: { field: 'body' },
        })
      : new QuarryError('INTERNAL', 'Something went wrong on the server; it has been logged.', { cause: error });
  const status = httpStatusOf[known.code];
  // A research that failed is the answer to the request, not a fault of the server.
  const researchOutcome = ['STEP_FAILED', 'STEP_ATTEMPTS_EXCEEDED', 'CLAIM_LIMIT'].includes(known.code);
  if (status >= 500 && !researchOutcome)
    log(`quarry serve: ${c.req.method} ${new URL(c.req.url).pathname} failed`, error);
  if (status === 401) {
    // RFC 6750; an MCP client also learns where the resource's metadata is (RFC 9728).
    const { origin, pathname } = new URL(c.req.url);
    c.header(
      'www-authenticate',
      pathname === '/mcp'
        ? `Bearer realm="quarry", resource_metadata="${origin}/.well-known/oauth-protected-resource"`
        : 'Bearer realm="quarry"',
    );
  }
  if (known.isRetryable && known.retryAfterMs !== null)
    c.header('retry-after', String(Math.ceil(known.retryAfterMs / 1000)));
  if (new URL(c.req.url).pathname.startsWith('/v1/')) return c.json(openAiErrorBody(known, status), status);
  return c.json(errorBody(known.code, known.message, known.details.field), status);
}

/**
 * An error as OpenAI's API writes it (`/v1/*`, so its SDKs raise the right exception): a type by
 * status, the parameter at fault, and a code (`unsupported_parameter`, `model_not_found`, or Quarry's).
 */
export function openAiErrorBody(error: QuarryError, status: number) {
  const type =
    status === 401
      ? 'authentication_error'
      : status === 403
        ? 'permission_error'
        : status === 429
          ? 'rate_limit_error'
          : status >= 500
            ? 'server_error'
            : 'invalid_request_error';
  const code = typeof error.details.code === 'string' ? error.details.code : error.code.toLowerCase();
  const param = typeof error.details.field === 'string' ? error.details.field : null;
  return { error: { message: error.message, type, param, code } };
}
