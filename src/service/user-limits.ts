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
