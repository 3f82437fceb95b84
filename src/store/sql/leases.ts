import { leaseLost, QuarryError, sessionNotFound } from '../../shared/errors.ts';
import {
  type ClaimNextInput,
  type ClaimSessionInput,
  type HeartbeatResult,
  type Lease,
  type OwnerScope,
  type ReleaseInput,
  type Session,
  type StopResult,
  sessionStatuses,
} from '../store.ts';
import { admit } from './admission.ts';
import { encodeJson } from './codec.ts';
import { checkFence, notifyRunnable, readSession, type SqlContext } from './context.ts';
import { appendEventsInTx } from './events.ts';
import type { SqlExecutor } from './sql-driver.ts';

const DEFAULT_MAX_CLAIMS = 5;

/** Takes the lease on a row the caller has chosen; the WHERE clause re-checks that it is free. */
async function takeLease(
  ctx: SqlContext,
  tx: SqlExecutor,
  input: {
    sessionId: string;
    workerId: string;
    ttlMs: number;
    fromStatuses: readonly string[];
    ownerId?: string;
    host?: string;
    pid?: number;
    takeOverEpoch?: number;
  },
): Promise<Lease | null> {
  const params: unknown[] = [input.workerId, input.host ?? null, input.pid ?? null, input.ttlMs, input.sessionId];
  // Free (released or over), or — for a takeover from a dead holder — still exactly that lease.
  const dialect = ctx.driver.dialect;
  let free = `(${dialect.leaseOver}`;
  if (input.takeOverEpoch !== undefined) {
    free += ' OR lease_epoch = ?';
    params.push(input.takeOverEpoch);
  }
  free += ')';
  params.push(...input.fromStatuses);
  let ownerFilter = '';
  if (input.ownerId !== undefined) {
    ownerFilter = ' AND owner_id = ?';
    params.push(input.ownerId);
  }
  const rows = await tx.query<{ lease_epoch: number; lease_expires_at: number }>(
    `UPDATE sessions SET lease_owner = ?, lease_host = ?, lease_pid = ?, lease_epoch = lease_epoch + 1,
       lease_expires_at = ${dialect.leaseNowMs} + ?, status = 'running',
       claim_count = claim_count + 1, stop_requested = 0, stop_reason = NULL, error_code = NULL, error_message = NULL, updated_at = ${ctx.now}
     WHERE id = ? AND ${free}
       AND status IN (${input.fromStatuses.map(() => '?').join(', ')})${ownerFilter}
     RETURNING lease_epoch, ${dialect.leaseExpiresAtMs} AS lease_expires_at`,
    params,
  );
  const row = rows[0];
  if (!row) return null;
  return {
    sessionId: input.sessionId,
    workerId: input.workerId,
    epoch: Number(row.lease_epoch),
    expiresAt: Number(row.lease_expires_at),
  };
}

export async function claimSession(ctx: SqlContext, input: ClaimSessionInput): Promise<Lease> {
  const fromStatuses = input.fromStatuses ?? sessionStatuses.filter((status) => status !== 'completed');
  return ctx.driver.transaction(async (tx) => {
    if (input.admission) {
      const owner = await readSession(ctx, tx, input.sessionId, input);
      await admit(ctx, tx, { ownerId: owner.ownerId, admission: input.admission, sessionId: owner.id });
    }
    const lease = await takeLease(ctx, tx, { ...input, fromStatuses });
    if (lease) return lease;
    const session = await readSession(ctx, tx, input.sessionId, input);
    if (session.lease && session.status === 'running') {
      throw new QuarryError(
        'SESSION_ALREADY_RUNNING',
        `Session "${session.id}" is already running on worker "${session.lease.workerId}". Wait for it, or stop it first.`,
        { details: { sessionId: session.id, workerId: session.lease.workerId } },
      );
    }
    if (session.storedStatus === 'completed') {
      throw new QuarryError(
        'SESSION_COMPLETED',
        `Session "${session.id}" is completed. Rewind it, force it, or ask a follow-up.`,
        {
          details: { sessionId: session.id },
        },
      );
    }
    throw new QuarryError('CONFLICT', `Session "${session.id}" is ${session.status} and cannot be claimed now.`, {
      details: { sessionId: session.id, status: session.status },
    });
  });
}

export async function claimNext(ctx: SqlContext, input: ClaimNextInput): Promise<Lease | null> {
  const maxClaims = input.maxClaims ?? DEFAULT_MAX_CLAIMS;
  // A few rounds: parked poison sessions do not count as a claim.
  for (let round = 0; round < 10; round++) {
    const outcome = await ctx.driver.transaction(async (tx): Promise<Lease | null | 'parked'> => {
      // A dead worker's sessions first: they were running, someone waits on them, and they would
      // otherwise wait behind the whole queue. Then the queue, oldest first.
      const [orphan] = await tx.query<{ id: string; claim_count: number }>(
        `SELECT id, claim_count FROM sessions
         WHERE status = 'running' AND ${ctx.driver.dialect.leaseOver}
         ORDER BY updated_at, id LIMIT 1${ctx.driver.dialect.claimLock}`,
      );
      const row =
        orphan ??
        (
          await tx.query<{ id: string; claim_count: number }>(
            `SELECT id, claim_count FROM sessions WHERE status = 'queued'
             ORDER BY updated_at, id LIMIT 1${ctx.driver.dialect.claimLock}`,
          )
        )[0];
      if (!row) return null;
      if (Number(row.claim_count) >= maxClaims) {
        const message = `Parked after ${row.claim_count} claims that never ended cleanly (a worker crashed on it each time).`;
        await tx.query(
          `UPDATE sessions SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL, error_code = 'CLAIM_LIMIT', error_message = ?,
             updated_at = ${ctx.now} WHERE id = ?`,
          [message, row.id],
        );
        await appendEventsInTx(ctx, tx, row.id, [{ type: 'run-error', data: { code: 'CLAIM_LIMIT', message } }]);
        return 'parked';
      }
      const lease = await takeLease(ctx, tx, {
        sessionId: row.id,
        workerId: input.workerId,
        ttlMs: input.ttlMs,
        host: input.host,
        pid: input.pid,
        fromStatuses: ['queued', 'running'],
      });
      return lease && { ...lease, tookOver: orphan !== undefined };
    });
    if (outcome !== 'parked') return outcome;
  }
  return null;
}

export async function heartbeat(ctx: SqlContext, lease: Lease, ttlMs: number): Promise<HeartbeatResult> {
  const rows = await ctx.driver.query<{ lease_expires_at: number; stop_requested: number; stop_reason: string | null }>(
    `UPDATE sessions SET lease_expires_at = ${ctx.driver.dialect.leaseNowMs} + ? WHERE id = ? AND lease_epoch = ? AND lease_owner IS NOT NULL
     RETURNING ${ctx.driver.dialect.leaseExpiresAtMs} AS lease_expires_at, stop_requested, stop_reason`,
    [ttlMs, lease.sessionId, lease.epoch],
  );
  const row = rows[0];
  if (!row) {
    const exists = await ctx.driver.query('SELECT id FROM sessions WHERE id = ?', [lease.sessionId]);
    if (exists.length === 0) throw sessionNotFound(lease.sessionId);
    throw leaseLost(lease.sessionId, lease.epoch);
  }
  return {
    expiresAt: Number(row.lease_expires_at),
    stopRequested: Number(row.stop_requested) === 1,
    stopReason: row.stop_reason ?? null,
  };
}

export async function release(ctx: SqlContext, lease: Lease, input: ReleaseInput): Promise<Session> {
  return ctx.driver.transaction(async (tx) => {
    await checkFence(ctx, tx, lease);
    let status = input.status;
    if (status === 'waiting' && input.waitingFor !== undefined) {
      const answered = await tx.query(
        'SELECT 1 AS found FROM inbox WHERE run_id = (SELECT current_run_id FROM sessions WHERE id = ?) AND request_key = ?',
        [lease.sessionId, input.waitingFor],
      );
      if (answered.length > 0) status = 'queued';
    }
    await tx.query(
      `UPDATE sessions SET status = ?, lease_owner = NULL, lease_expires_at = NULL, stop_requested = 0, stop_reason = NULL, claim_count = 0,
         error_code = ?, error_message = ? WHERE id = ?`,
      [status, input.error?.code ?? null, input.error?.message ?? null, lease.sessionId],
    );
    if (status === 'completed' || status === 'failed') {
      await tx.query(
        `UPDATE runs SET status = ?, output = ?, ended_at = ${ctx.now}
         WHERE id = (SELECT current_run_id FROM sessions WHERE id = ?)`,
        [input.status, encodeJson(input.runOutput), lease.sessionId],
      );
    }
    await appendEventsInTx(ctx, tx, lease.sessionId, input.events ?? []);
    if (status === 'queued') notifyRunnable(tx);
    return readSession(ctx, tx, lease.sessionId);
  });
}

export async function requestStop(
  ctx: SqlContext,
  sessionId: string,
  scope: OwnerScope & { reason?: string } = {},
): Promise<StopResult> {
  return ctx.driver.transaction(async (tx) => {
    const session = await readSession(ctx, tx, sessionId, scope);
    if (session.status === 'running') {
      await tx.query(`UPDATE sessions SET stop_requested = 1, stop_reason = ?, updated_at = ${ctx.now} WHERE id = ?`, [
        scope.reason ?? null,
        sessionId,
      ]);
      tx.notify('stop', sessionId);
      return 'requested';
    }
    if (['queued', 'waiting', 'interrupted'].includes(session.status) && session.storedStatus !== 'interrupted') {
      await tx.query(
        `UPDATE sessions SET status = 'interrupted', lease_owner = NULL, lease_expires_at = NULL, updated_at = ${ctx.now} WHERE id = ?`,
        [sessionId],
      );
      await appendEventsInTx(ctx, tx, sessionId, [
        { type: 'run-end', data: { status: 'interrupted', reason: scope.reason ?? 'stop requested' } },
      ]);
      return 'interrupted';
    }
    return 'not-running';
  });
}
