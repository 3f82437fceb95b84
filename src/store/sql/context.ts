import { leaseLost, sessionNotFound } from '../../shared/errors.ts';
import type { Fence, OwnerScope, Session } from '../store.ts';
import { sessionColumns, toSession } from './codec.ts';
import type { SqlDriver, SqlExecutor } from './sql-driver.ts';

export interface SqlContext {
  driver: SqlDriver;
  /** The dialect's database-clock expression, in ms. */
  now: string;
}

export async function readSession(
  ctx: SqlContext,
  tx: SqlExecutor,
  sessionId: string,
  scope: OwnerScope = {},
): Promise<Session> {
  const rows = await tx.query(`SELECT ${sessionColumns(ctx.driver.dialect)} FROM sessions WHERE id = ?`, [sessionId]);
  const row = rows[0];
  if (!row || (scope.ownerId !== undefined && row.owner_id !== scope.ownerId)) throw sessionNotFound(sessionId);
  return toSession(row);
}

/**
 * Checks the fence and locks the session row for the rest of the transaction (the UPDATE takes the
 * row lock on PostgreSQL; SQLite's write lock is already held). Bumps `updated_at`.
 */
export async function checkFence(ctx: SqlContext, tx: SqlExecutor, fence: Fence): Promise<void> {
  const rows = await tx.query(
    `UPDATE sessions SET updated_at = ${ctx.now} WHERE id = ? AND lease_epoch = ? AND lease_owner IS NOT NULL RETURNING id`,
    [fence.sessionId, fence.epoch],
  );
  if (rows.length > 0) return;
  throw await fenceRefusal(tx, fence);
}

/** Why a fenced write found its fence gone: there is no such session, or its lease moved on. */
export async function fenceRefusal(executor: SqlExecutor, fence: Fence): Promise<Error> {
  const rows = await executor.query('SELECT id FROM sessions WHERE id = ?', [fence.sessionId]);
  return rows.length === 0 ? sessionNotFound(fence.sessionId) : leaseLost(fence.sessionId, fence.epoch);
}

/** Locks the session row (owner-scoped) for an unfenced write; throws SESSION_NOT_FOUND. */
export async function touchSession(
  ctx: SqlContext,
  tx: SqlExecutor,
  sessionId: string,
  scope: OwnerScope = {},
): Promise<void> {
  const rows = await tx.query(
    `UPDATE sessions SET updated_at = ${ctx.now} WHERE id = ?${scope.ownerId === undefined ? '' : ' AND owner_id = ?'} RETURNING id`,
    scope.ownerId === undefined ? [sessionId] : [sessionId, scope.ownerId],
  );
  if (rows.length === 0) throw sessionNotFound(sessionId);
}

export function notifyRunnable(tx: SqlExecutor): void {
  tx.notify('runnable', '');
}
