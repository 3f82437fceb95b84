/**
 * Typed errors with stable machine codes. Every layer throws these; `server/` maps codes to HTTP
 * statuses and `cli/` maps them to exit codes, each in one place.
 */
export const errorCodes = [
  'INVALID_INPUT',
  'PAYLOAD_TOO_LARGE',
  'SESSION_NOT_FOUND',
  'STEP_NOT_FOUND',
  'RUN_NOT_FOUND',
  'USER_NOT_FOUND',
  'SESSION_ALREADY_RUNNING',
  'SESSION_COMPLETED',
  'SESSION_NOT_WAITING',
  'SESSION_WAITING',
  'WORKFLOW_VERSION_MISMATCH',
  'WORKFLOW_NOT_FOUND',
  'DUPLICATE_STEP_KEY',
  'STEP_ATTEMPTS_EXCEEDED',
  'STEP_FAILED',
  'LEASE_LOST',
  'CONFLICT',
  'STORE_BUSY',
  'STORE_UNAVAILABLE',
  'SCHEMA_TOO_NEW',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export interface QuarryErrorOptions {
  /** Structured fields that explain the error (`field`, `sessionId`, `path`, ...). */
  details?: Record<string, unknown>;
  /** True when the same call may succeed if tried again (a busy database, a lost connection). */
  isRetryable?: boolean;
  cause?: unknown;
}

export class QuarryError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly isRetryable: boolean;

  constructor(code: ErrorCode, message: string, options: QuarryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'QuarryError';
    this.code = code;
    this.details = options.details ?? {};
    this.isRetryable = options.isRetryable ?? false;
  }
}

export function isQuarryError(error: unknown, code?: ErrorCode): error is QuarryError {
  return error instanceof QuarryError && (code === undefined || error.code === code);
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
