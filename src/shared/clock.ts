import { setTimeout as delay } from 'node:timers/promises';

/**
 * Time as code that waits sees it. Retry back-offs, lease clocks and heartbeats take a `Clock`, so a
 * test of a 429 or a database outage runs without sleeping for real.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason if it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    await delay(ms, undefined, { signal });
  },
};

/** A clock for tests: `sleep` returns at once and moves `now` forward; every wait is recorded. */
export class ManualClock implements Clock {
  readonly waits: number[] = [];
  constructor(private current = 0) {}
  now(): number {
    return this.current;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.waits.push(ms);
    this.current += ms;
  }
}
