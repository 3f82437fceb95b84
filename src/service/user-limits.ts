import { QuarryError } from '../store/errors.ts';
import type { ServiceContext } from './service-context.ts';

/**
 * Refuses a new session when the user already has as many as the limit allows (`RATE_LIMITED`,
 * HTTP 429): creating, forking and importing all count. The CLI's local user has no such limit.
 */
export async function checkSessionCount(context: ServiceContext): Promise<void> {
  const { sessions } = context.config.server.limits;
  if (!context.enforceLimits) return;
  const count = await context.store.countSessions();
  if (count >= sessions) {
    throw new QuarryError(
      'RATE_LIMITED',
      `You have ${count} sessions; the limit is ${sessions}. Delete some (quarry gc, or DELETE /api/sessions/{id}) first.`,
      { details: { limit: sessions } },
    );
  }
}

/**
 * Refuses a new run when the user already has as many queued or running sessions as the limit
 * allows (`RATE_LIMITED`, HTTP 429); the CLI's local user has no such limit.
 */
export async function checkActiveRuns(context: ServiceContext): Promise<void> {
  const { activeRuns } = context.config.server.limits;
  if (!context.enforceLimits) return;
  const page = await context.store.listSessions({ status: ['queued', 'running'], limit: activeRuns });
  if (page.sessions.length >= activeRuns) {
    throw new QuarryError(
      'RATE_LIMITED',
      `You have ${page.sessions.length} sessions queued or running; the limit is ${activeRuns}. Wait for one to finish, or stop one.`,
      { details: { limit: activeRuns }, isRetryable: true, retryAfterMs: 30_000 },
    );
  }
}
