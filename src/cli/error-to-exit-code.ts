import { type ErrorCode, isQuarryError } from '../shared/errors.ts';

/** Exit codes, in one place. */
export const exitCodes = {
  completed: 0,
  unexpected: 1,
  usage: 2,
  waiting: 3,
  notFound: 4,
  conflict: 5,
  interrupted: 130,
} as const;

export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

/** The exit code of every error code; a new code does not compile until it is here. */
const exitCodeOf: Record<ErrorCode, ExitCode> = {
  INVALID_INPUT: exitCodes.usage,
  PAYLOAD_TOO_LARGE: exitCodes.usage,
  UNSUPPORTED_MEDIA_TYPE: exitCodes.usage,
  MODEL_NOT_CONFIGURED: exitCodes.usage,
  FEATURE_UNAVAILABLE: exitCodes.usage,
  UNAUTHORIZED: exitCodes.usage,
  FORBIDDEN: exitCodes.usage,
  METHOD_NOT_ALLOWED: exitCodes.usage,
  RATE_LIMITED: exitCodes.conflict,
  NOT_FOUND: exitCodes.notFound,
  SESSION_NOT_FOUND: exitCodes.notFound,
  STEP_NOT_FOUND: exitCodes.notFound,
  RUN_NOT_FOUND: exitCodes.notFound,
  USER_NOT_FOUND: exitCodes.notFound,
  TOKEN_NOT_FOUND: exitCodes.notFound,
  DOCUMENT_NOT_FOUND: exitCodes.notFound,
  WORKFLOW_NOT_FOUND: exitCodes.notFound,
  SESSION_ALREADY_RUNNING: exitCodes.conflict,
  SESSION_COMPLETED: exitCodes.conflict,
  SESSION_NOT_WAITING: exitCodes.conflict,
  SESSION_WAITING: exitCodes.conflict,
  WORKFLOW_VERSION_MISMATCH: exitCodes.conflict,
  CONFLICT: exitCodes.conflict,
  LEASE_LOST: exitCodes.conflict,
  INTERRUPTED: exitCodes.interrupted,
  DUPLICATE_STEP_KEY: exitCodes.unexpected,
  STEP_ATTEMPTS_EXCEEDED: exitCodes.unexpected,
  STEP_FAILED: exitCodes.unexpected,
  CLAIM_LIMIT: exitCodes.unexpected,
  STORE_BUSY: exitCodes.unexpected,
  STORE_UNAVAILABLE: exitCodes.unexpected,
  OVERLOADED: exitCodes.unexpected,
  STORE_CORRUPT: exitCodes.unexpected,
  SCHEMA_TOO_NEW: exitCodes.unexpected,
  INTERNAL: exitCodes.unexpected,
};

export function errorToExitCode(error: unknown): ExitCode {
  return isQuarryError(error) ? exitCodeOf[error.code] : exitCodes.unexpected;
}
