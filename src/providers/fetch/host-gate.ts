import { type Clock, systemClock } from '../../shared/clock.ts';

export interface HostGateOptions {
  /** Requests to one host in flight at once. Default 2. */
  perHost?: number;
  /** Least time between the starts of two requests to one host, in ms. Default 250. */
  intervalMs?: number;
  clock?: Clock;
}

interface HostState {
  active: number;
  /** When the next request may start (interval, or a server's Retry-After). */
  nextStart: number;
  waiting: (() => void)[];
}

/**
 * Politeness toward the sites research reads: at most `perHost` requests to one host at a time, at
 * least `intervalMs` between their starts, and none before a time the host asked for (a 429 or 503
 * with `Retry-After` pauses every request to that host, not just the one that got it). One gate per
 * process; fetches to different hosts never wait for each other.
 */
export class HostGate {
  private readonly hosts = new Map<string, HostState>();
  private readonly perHost: number;
  private readonly intervalMs: number;
  private readonly clock: Clock;

  constructor(options: HostGateOptions = {}) {
    this.perHost = options.perHost ?? 2;
    this.intervalMs = options.intervalMs ?? 250;
    this.clock = options.clock ?? systemClock;
  }

  /** Runs `work` when the host allows it; the slot is freed when it settles. */
  async run<T>(host: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const state = this.state(host);
    while (state.active >= this.perHost) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal?.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        state.waiting.push(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
    state.active += 1;
    try {
      // Claimed before waiting, so two requests that start together are spaced, not both delayed alike.
      const start = Math.max(this.clock.now(), state.nextStart);
      state.nextStart = start + this.intervalMs;
      const wait = start - this.clock.now();
      if (wait > 0) await this.clock.sleep(wait, signal);
      return await work();
    } finally {
      state.active -= 1;
      state.waiting.shift()?.();
      if (state.active === 0 && state.waiting.length === 0 && state.nextStart <= this.clock.now())
        this.hosts.delete(host);
    }
  }

  /** The host asked for a pause (Retry-After): no request to it starts before `ms` from now. */
  pause(host: string, ms: number): void {
    const state = this.state(host);
    state.nextStart = Math.max(state.nextStart, this.clock.now() + ms);
  }

  private state(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { active: 0, nextStart: 0, waiting: [] };
      this.hosts.set(host, state);
    }
    return state;
  }
}
