import type { StoredEvent } from '../shared/events.ts';

/**
 * How long a run has been waiting on a passing outage (a model server that refuses connections, a
 * search provider that is down), read from its events: a `step-retry` starts the wait, anything that
 * shows the run going on again (a step ending or starting, text being written, the run ending) ends
 * it. A client that waits on the run gives up once the wait passes its bound (`overdue`), always
 * before a server, proxy or client timeout would cut it; a run nobody waits on keeps trying.
 */
export class OutageWatch {
  private since: number | null = null;
  private cause = '';

  constructor(
    /** How long a client waits on an outage, in ms. */
    readonly boundMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  see(event: StoredEvent): void {
    if (event.type === 'step-retry') {
      this.since ??= this.now();
      this.cause = event.data.error.message;
      return;
    }
    if (['step-end', 'step-start', 'report-delta', 'run-end', 'run-error', 'run-start'].includes(event.type))
      this.since = null;
  }

  /** Ms until the wait passes the bound (null: no outage now). */
  remainingMs(): number | null {
    return this.since === null ? null : Math.max(0, this.since + this.boundMs - this.now());
  }

  /** The outage going on, with what it is and how long it has lasted, or null. */
  current(): { cause: string; waitedMs: number } | null {
    return this.since === null ? null : { cause: this.cause, waitedMs: this.now() - this.since };
  }

  /** The outage that has lasted past the bound, with what it is, or null. */
  overdue(): { cause: string; waitedMs: number } | null {
    if (this.since === null) return null;
    const waitedMs = this.now() - this.since;
    return waitedMs >= this.boundMs ? { cause: this.cause, waitedMs } : null;
  }
}

/** What a client is told when it stops waiting on an outage: what is down, and how to go on. */
export function outageMessage(overdue: { cause: string; waitedMs: number }): string {
  return `${overdue.cause.replace(/\.$/, '')} (waited ${Math.round(overdue.waitedMs / 1000)} s). The research is stopped and keeps everything it did: send the same message again, or resume the session, once it is back.`;
}

/** How the stop reason of a run a waiting client gave up on ends: a failure to report, not a cancel. */
const GAVE_UP = '(a waiting client gave up)';

/** The stop reason of a run stopped because its client gave up waiting on an outage. */
export function outageStopReason(cause: string): string {
  return `${cause.replace(/\.$/, '')} ${GAVE_UP}`;
}

/** True for a run-end reason `outageStopReason` wrote. */
export function isOutageStop(reason: string | undefined): boolean {
  return reason?.endsWith(GAVE_UP) ?? false;
}
