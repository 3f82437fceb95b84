import { QuarryError } from '../../shared/errors.ts';
import type { Admission } from '../store.ts';
import { effectiveStatusSql } from './codec.ts';
import type { SqlContext } from './context.ts';
import type { SqlExecutor } from './sql-driver.ts';

/**
 * Checks a write that adds a session or makes one runnable against its owner's limits, inside the
 * write's transaction and under the owner's lock (the dialect's `ownerLock`; SQLite's one writer at
 * a time is that lock already), so two concurrent requests can never both take the last place.
 * `RATE_LIMITED` (HTTP 429) otherwise, naming the limit. `sessionId`: the session being made
 * runnable, which never counts against itself.
 */
export async function admit(
  ctx: SqlContext,
  tx: SqlExecutor,
  input: { ownerId: string; admission?: Admission; sessionId?: string },
): Promise<void> {
  const { admission, ownerId } = input;
  if (!admission || (admission.sessions === undefined && admission.activeRuns === undefined)) return;
  if (ctx.driver.dialect.ownerLock) await tx.query(ctx.driver.dialect.ownerLock, [ownerId]);
  if (admission.sessions !== undefined) {
    const [row] = await tx.query<{ n: number }>('SELECT COUNT(*) AS n FROM sessions WHERE owner_id = ?', [ownerId]);
    const count = Number(row?.n ?? 0);
    if (count >= admission.sessions) {
      throw new QuarryError(
        'RATE_LIMITED',
        `You have ${count} sessions; the limit is ${admission.sessions}. Delete some (quarry gc, or DELETE /api/sessions/{id}) first.`,
        { details: { limit: admission.sessions } },
      );
    }
  }
  if (admission.activeRuns !== undefined) {
    const [row] = await tx.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM sessions
       WHERE owner_id = ? AND id <> ? AND ${effectiveStatusSql(ctx.driver.dialect)} IN ('queued', 'running')`,
      [ownerId, input.sessionId ?? ''],
    );
    const count = Number(row?.n ?? 0);
    if (count >= admission.activeRuns) {
      throw new QuarryError(
        'RATE_LIMITED',
        `You have ${count} sessions queued or running; the limit is ${admission.activeRuns}. Wait for one to finish, or stop one.`,
        { details: { limit: admission.activeRuns }, isRetryable: true, retryAfterMs: 30_000 },
      );
    }
  }
}
