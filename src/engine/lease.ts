import { isQuarryError } from '../shared/errors.ts';
import { reportOperation } from '../shared/operations.ts';
import { holderIsDead, thisProcess } from '../shared/process-identity.ts';
import { inSpan } from '../shared/tracing.ts';
import type { ClaimSessionInput, Journal, Lease, Session, Store } from '../store/store.ts';

export interface LeaseKeeperOptions {
  store: Journal;
  lease: Lease;
  ttlMs: number;
  /** How often to extend the lease; independent of step progress. */
  intervalMs: number;
  /** The lease is gone (taken over, released, session deleted, or expired while unreachable). */
  onLost: () => void;
  /** Someone asked the session to stop (from any process), saying why when they did. */
  onStopRequested: (reason: string | null) => void;
}

/**
 * Heartbeats a lease on a timer until stopped. A heartbeat that fails for a transient reason is
 * tried again on the next tick; once the lease has expired without a successful heartbeat (failed,
 * or still unanswered), the worker can no longer know it is the owner, so it gives up (`onLost`,
 * once).
 */
export function keepLease(options: LeaseKeeperOptions): { stop(): void } {
  // Expiry is judged on this process's monotonic clock from the last renewal the store confirmed
  // (the store's times are the database's clock, which this machine's may not agree with).
  let renewedAt = performance.now();
  let beating = false;
  let stopped = false;
  let lost = false;
  const lose = () => {
    if (lost) return;
    lost = true;
    options.onLost();
  };
  const timer = setInterval(async () => {
    if (stopped) return;
    // A heartbeat that never comes back (a connection gone silent) must not hold the lease forever
    // in this process's eyes: past the TTL without a confirmed renewal, the lease is given up.
    if (beating) {
      if (performance.now() - renewedAt > options.ttlMs) lose();
      return;
    }
    beating = true;
    try {
      const started = performance.now();
      const beat = await options.store.heartbeat(options.lease, options.ttlMs);
      renewedAt = started;
      if (beat.stopRequested && !stopped) options.onStopRequested(beat.stopReason);
    } catch (error) {
      if (stopped) return;
      if (
        isQuarryError(error, 'LEASE_LOST') ||
        isQuarryError(error, 'SESSION_NOT_FOUND') ||
        performance.now() - renewedAt > options.ttlMs
      )
        lose();
    } finally {
      beating = false;
    }
  }, options.intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/**
 * Claims a session for this process. When another holds it, and that holder was a process on this
 * machine that no longer exists (killed, crashed), its lease is taken over at once instead of after
 * it expires: the claim names the exact lease it replaces, so a live holder is never displaced.
 */
export async function claimOrTakeOver(
  store: Pick<Store, 'claimSession'> & { getSession(sessionId: string): Promise<Session> },
  input: ClaimSessionInput,
): Promise<Lease> {
  try {
    return await store.claimSession({ ...input, ...thisProcess });
  } catch (error) {
    if (!isQuarryError(error, 'SESSION_ALREADY_RUNNING')) throw error;
    const session = await store.getSession(input.sessionId);
    if (!holderIsDead(session.lease)) throw error;
    const lease = session.lease!;
    reportOperation({ type: 'lease-claim', takeover: true });
    return inSpan(
      'quarry.lease.takeover',
      {
        'quarry.session.id': input.sessionId,
        'quarry.lease.previous_worker': lease.workerId,
        'quarry.lease.epoch': lease.epoch,
      },
      () => store.claimSession({ ...input, ...thisProcess, takeOverEpoch: lease.epoch }),
    );
  }
}
