import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isQuarryError, type ErrorCode } from '../store/errors.ts';

/** HTTP statuses of error codes, in one place. */
const statuses: Partial<Record<ErrorCode, ContentfulStatusCode>> = {
  INVALID_INPUT: 400,
  PAYLOAD_TOO_LARGE: 413,
  SESSION_NOT_FOUND: 404,
  STEP_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  WORKFLOW_NOT_FOUND: 404,
  SESSION_ALREADY_RUNNING: 409,
  SESSION_COMPLETED: 409,
  SESSION_NOT_WAITING: 409,
  SESSION_WAITING: 409,
  WORKFLOW_VERSION_MISMATCH: 409,
  CONFLICT: 409,
  STORE_BUSY: 503,
  STORE_UNAVAILABLE: 503,
};

/** `{ "error": { "code", "message" } }` with the status for the code; unknown errors are logged and become 500. */
export function errorToResponse(error: unknown, c: Context): Response {
  if (isQuarryError(error)) {
    return c.json({ error: { code: error.code, message: error.message, ...(error.details.field ? { field: error.details.field } : {}) } }, statuses[error.code] ?? 500);
  }
  console.error('quarry serve: unexpected error', error);
  return c.json({ error: { code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.' } }, 500);
}

export function errorBody(code: string, message: string) {
  return { error: { code, message } };
}
