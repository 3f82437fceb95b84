import { isQuarryError } from '../shared/errors.ts';
import type { Journal, Lease } from '../store/store.ts';

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
 * tried again on the next tick; once the lease has expired without a successful heartbeat, the
 * worker can no longer know it is the owner, so it gives up (`onLost`).
 */
export function keepLease(options: LeaseKeeperOptions): { stop(): void } {
  // Expiry is judged on this process's monotonic clock from the last renewal the store confirmed
  // (the store's times are the database's clock, which this machine's may not agree with).
  let renewedAt = performance.now();
  let beating = false;
  let stopped = false;
  const timer = setInterval(async () => {
    if (beating || stopped) return;
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
        options.onLost();
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
