import { isQuarryError } from '../store/errors.ts';

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

export function errorToExitCode(error: unknown): number {
  if (!isQuarryError(error)) return exitCodes.unexpected;
  switch (error.code) {
    case 'INVALID_INPUT':
    case 'PAYLOAD_TOO_LARGE':
      return exitCodes.usage;
    case 'SESSION_NOT_FOUND':
    case 'STEP_NOT_FOUND':
    case 'RUN_NOT_FOUND':
    case 'USER_NOT_FOUND':
    case 'WORKFLOW_NOT_FOUND':
      return exitCodes.notFound;
    case 'SESSION_ALREADY_RUNNING':
    case 'SESSION_COMPLETED':
    case 'SESSION_NOT_WAITING':
    case 'SESSION_WAITING':
    case 'WORKFLOW_VERSION_MISMATCH':
    case 'CONFLICT':
      return exitCodes.conflict;
    default:
      return exitCodes.unexpected;
  }
}
