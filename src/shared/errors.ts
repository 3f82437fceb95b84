/**
 * Typed errors with stable machine codes: one closed list. Every layer throws these; `server/`
 * maps codes to HTTP statuses and `cli/` to exit codes, each with an exhaustive map, so a new code
 * does not compile until both say what it means. `ErrorInfo` records in journals and events use the
 * same codes.
 */
export const errorCodes = [
  // The request or its input
  'INVALID_INPUT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  /** A path that exists, asked with a method it does not take (HTTP 405). */
  'METHOD_NOT_ALLOWED',
  'RATE_LIMITED',
  'MODEL_NOT_CONFIGURED',
  /** Something this installation lacks (a browser to print PDFs with). */
  'FEATURE_UNAVAILABLE',
  // Things that do not exist (or belong to another user)
  'SESSION_NOT_FOUND',
  'STEP_NOT_FOUND',
  'RUN_NOT_FOUND',
  'USER_NOT_FOUND',
  'TOKEN_NOT_FOUND',
  'DOCUMENT_NOT_FOUND',
  'WORKFLOW_NOT_FOUND',
  // The session is not in a state that allows it
  'SESSION_ALREADY_RUNNING',
  'SESSION_COMPLETED',
  'SESSION_NOT_WAITING',
  'SESSION_WAITING',
  'WORKFLOW_VERSION_MISMATCH',
  'CONFLICT',
  // How runs and steps end
  'DUPLICATE_STEP_KEY',
  'STEP_ATTEMPTS_EXCEEDED',
  'STEP_FAILED',
  'INTERRUPTED',
  'CLAIM_LIMIT',
  'LEASE_LOST',
  // The store
  'STORE_BUSY',
  'STORE_UNAVAILABLE',
  /** The server has too much of some work in hand (PDFs to print) to take more now; retryable (503). */
  'OVERLOADED',
  'STORE_CORRUPT',
  'SCHEMA_TOO_NEW',
  // Anything not foreseen: a bug, logged in full
  'INTERNAL',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (errorCodes as readonly string[]).includes(value);
}

/** An error as journals, events and API bodies carry it. */
export interface ErrorInfo {
  code: ErrorCode;
  message: string;
}

export interface QuarryErrorOptions {
  /** Structured fields that explain the error (`field`, `sessionId`, `path`, ...). */
  details?: Record<string, unknown>;
  /** True when the same call may succeed if tried again (a busy database, a lost connection). */
  isRetryable?: boolean;
  /** With `isRetryable`: how long to wait before trying again, when the other side said so. */
  retryAfterMs?: number | null;
  cause?: unknown;
}

export class QuarryError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly isRetryable: boolean;
  readonly retryAfterMs: number | null;

  constructor(code: ErrorCode, message: string, options: QuarryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'QuarryError';
    this.code = code;
    this.details = options.details ?? {};
    this.isRetryable = options.isRetryable ?? false;
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}

export function isQuarryError(error: unknown, code?: ErrorCode): error is QuarryError {
  return error instanceof QuarryError && (code === undefined || error.code === code);
}

/** True for errors that say a second try may succeed (the one retry policy reads only this). */
export function isRetryable(error: unknown): boolean {
  return isQuarryError(error) && error.isRetryable;
}

/** The `ErrorInfo` of anything thrown: its code when it is a `QuarryError`, else `INTERNAL`. */
export function toErrorInfo(error: unknown): ErrorInfo {
  if (isQuarryError(error)) return { code: error.code, message: error.message };
  return { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) };
}

export function sessionNotFound(sessionId: string): QuarryError {
  return new QuarryError('SESSION_NOT_FOUND', `No session with id "${sessionId}".`, {
    details: { sessionId },
  });
}

export function invalidInput(field: string, message: string): QuarryError {
  return new QuarryError('INVALID_INPUT', `Invalid ${field}: ${message}`, { details: { field } });
}

export function leaseLost(sessionId: string, epoch: number): QuarryError {
  return new QuarryError(
    'LEASE_LOST',
    `This worker no longer holds the lease on session "${sessionId}" (epoch ${epoch}); another worker has claimed it or it was released.`,
    { details: { sessionId, epoch } },
  );
}

/** A call on a store after its `close()`: nothing was read or written. */
export function storeClosed(location: string): QuarryError {
  return new QuarryError('STORE_UNAVAILABLE', `The store at ${location} is closed.`, { details: { location } });
}
