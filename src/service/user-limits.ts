import type { Admission } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';

/**
 * The limits a request's writes are admitted under (`Admission`): the server's per-user limits on
 * sessions kept and sessions queued or running, which the store checks in the same transaction as
 * the write (creating, forking, importing, following up, resuming); none for the CLI's local user.
 */
export function admissionFor(context: Pick<ServiceContext, 'config' | 'enforceLimits'>): Admission | undefined {
  if (!context.enforceLimits) return undefined;
  const { sessions, activeRuns } = context.config.server.limits;
  return { sessions, activeRuns };
}

/** The limit on queued and running sessions only: for a write that makes an existing session runnable. */
export function runAdmission(
  context: Pick<ServiceContext, 'config' | 'enforceLimits'>,
): Pick<Admission, 'activeRuns'> | undefined {
  return context.enforceLimits ? { activeRuns: context.config.server.limits.activeRuns } : undefined;
}

/** The limit on how many sessions a user keeps only: for a write that adds a session without running it. */
export function sessionAdmission(
  context: Pick<ServiceContext, 'config' | 'enforceLimits'>,
): Pick<Admission, 'sessions'> | undefined {
  return context.enforceLimits ? { sessions: context.config.server.limits.sessions } : undefined;
}
