import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Log } from '../config/log.ts';
import type { Clock } from '../shared/clock.ts';
import { raceAbort } from '../shared/concurrency.ts';
import { reportOperation } from '../shared/operations.ts';
import { thisProcess } from '../shared/process-identity.ts';
import { recordSpan } from '../shared/tracing.ts';
import type { EngineStore, Lease, SessionStatus } from '../store/store.ts';
import { Activation, type ActivationResult } from './activation.ts';
import { claimOrTakeOver } from './lease.ts';
import { InterruptSignal } from './signals.ts';
import type { WorkflowRegistry } from './workflow.ts';

export type { ActivationResult, ActivationStatus } from './activation.ts';

export interface RunnerOptions {
  store: EngineStore;
  workflows: WorkflowRegistry;
  /** Names this worker in leases; default `host:pid:random`. */
  workerId?: string;
  /** Sessions run at once by the worker loop. Default 4. */
  concurrency?: number;
  /** Lease length. Default 15 s. */
  leaseTtlMs?: number;
  /** Heartbeat period. Default min(ttl / 3, 2 s). */
  heartbeatMs?: number;
  /** Crashed attempts of one step before the run fails. Default 3. */
  maxAttempts?: number;
  /** Claims without a clean end before a session is parked as failed. Default 5. */
  maxClaims?: number;
  /** Safety-net poll for runnable sessions when no notification arrives. Default min(5 s, lease TTL). */
  pollMs?: number;
  /** How steps wait between tries after a passing outage (tests inject one). Default: real time. */
  retryClock?: Clock;
  /** Where the worker loop's lines go (a line per run, and unexpected errors), with what they are about. Default `console.error`. */
  log?: Log;
}

export interface RunSessionOptions {
  ownerId?: string;
  /** Stored statuses the claim accepts (a forced resume adds `completed`). */
  fromStatuses?: SessionStatus[];
  /** Runs under the fresh lease before the workflow (a rewind supersedes steps here). */
  prepare?: (lease: Lease) => Promise<void>;
}

/**
 * Executes sessions: one at a time in the foreground (`runSession`), or as a worker loop that claims
 * runnable sessions up to a concurrency limit (`start`). The same code serves the CLI, the server
 * and standalone workers. An activation claims, loads the journal once, replays the workflow, and
 * releases the lease with the status it ended in.
 */
export class Runner {
  readonly workerId: string;
  private readonly store: EngineStore;
  private readonly workflows: WorkflowRegistry;
  private readonly concurrency: number;
  private readonly ttlMs: number;
  private readonly heartbeatMs: number;
  private readonly maxAttempts: number;
  private readonly retryClock: Clock | undefined;
  private readonly maxClaims: number;
  private readonly pollMs: number;
  private readonly log: NonNullable<RunnerOptions['log']>;
  /** Activations under way, by session, each with its end as the runner records it. */
  private readonly active = new Map<string, { activation: Activation; done: Promise<ActivationResult> }>();
  private looping = false;
  /** Set by a graceful shutdown: no context started from now on begins a new step. */
  private handingOff = false;
  private filling: Promise<void> | null = null;
  private refill = false;
  private stopLoop: (() => void) | null = null;

  constructor(options: RunnerOptions) {
    this.store = options.store;
    this.workflows = options.workflows;
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 6)}`;
    this.concurrency = options.concurrency ?? 4;
    this.ttlMs = options.leaseTtlMs ?? 15_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.min(this.ttlMs / 3, 2_000);
    this.maxAttempts = options.maxAttempts ?? 3;
    this.retryClock = options.retryClock;
    this.maxClaims = options.maxClaims ?? 5;
    // An expired lease sends no notification: polling at least once per lease length bounds how
    // long a dead worker's sessions wait (about ttl + poll).
    this.pollMs = options.pollMs ?? Math.min(5_000, this.ttlMs);
    this.log = options.log ?? ((message, error) => console.error(message, error ?? ''));
  }

  /** Whether the worker loop is claiming sessions (started, not shut down). */
  get running(): boolean {
    return this.looping;
  }

  /** How many sessions it runs at once. */
  get concurrencyLimit(): number {
    return this.concurrency;
  }

  /** Sessions this runner is executing now. */
  activeSessions(): string[] {
    return [...this.active.keys()];
  }

  /**
   * Claims the session and runs it here until it completes, waits, fails, is interrupted or loses
   * its lease. An answer that arrived while the run was finishing is picked up at once.
   */
  async runSession(sessionId: string, options: RunSessionOptions = {}): Promise<ActivationResult> {
    let lease = await claimOrTakeOver(this.store, {
      sessionId,
      workerId: this.workerId,
      ttlMs: this.ttlMs,
      fromStatuses: options.fromStatuses,
      ownerId: options.ownerId,
    });
    if (options.prepare) {
      try {
        await options.prepare(lease);
      } catch (error) {
        await this.store.release(lease, { status: 'interrupted' }).catch(() => undefined);
        throw error;
      }
    }
    for (;;) {
      const result = await this.execute(lease);
      if (result.status !== 'queued') return result;
      lease = await this.store.claimSession({
        sessionId,
        workerId: this.workerId,
        ttlMs: this.ttlMs,
        fromStatuses: ['queued'],
        ...thisProcess,
      });
    }
  }

  /** Runs one activation under a lease this runner already holds. */
  execute(lease: Lease): Promise<ActivationResult> {
    const activation = new Activation(lease, {
      store: this.store,
      workflows: this.workflows,
      workerId: this.workerId,
      ttlMs: this.ttlMs,
      heartbeatMs: this.heartbeatMs,
      maxAttempts: this.maxAttempts,
      retryClock: this.retryClock,
      log: this.log,
      handingOff: () => this.handingOff,
    });
    reportOperation({ type: 'run-start' });
    const done = activation
      .run()
      .then((result) => {
        reportOperation({ type: 'run-end', status: result.status });
        return result;
      })
      .finally(() => {
        this.active.delete(lease.sessionId);
        if (this.looping) this.wake();
      });
    this.active.set(lease.sessionId, { activation, done });
    return done;
  }

  /** Interrupts a session running here; false when it is not running in this process. */
  stopSession(sessionId: string, reason = 'stop requested'): boolean {
    const running = this.active.get(sessionId);
    if (!running) return false;
    running.activation.controller.abort(new InterruptSignal(reason));
    return true;
  }

  /** Starts the worker loop: claim runnable sessions while below the concurrency limit. */
  start(): void {
    if (this.looping) return;
    this.looping = true;
    this.handingOff = false;
    const stopListening = this.store.onRunnable(() => this.wake());
    const poll = setInterval(() => this.wake(), this.pollMs);
    poll.unref();
    this.stopLoop = () => {
      stopListening();
      clearInterval(poll);
    };
    this.wake();
  }

  /**
   * Stops claiming, then ends every activation. `handoff`: steps in flight may finish for up to
   * `graceMs`, and sessions are released `queued` so other workers continue them at once.
   * Otherwise they are interrupted now and released `interrupted`.
   */
  async shutdown(options: { handoff?: boolean; graceMs?: number } = {}): Promise<void> {
    this.looping = false;
    this.stopLoop?.();
    this.stopLoop = null;
    // Set before the first await: a step that would start while we wait below must not.
    if (options.handoff) {
      this.handingOff = true;
      for (const { activation } of this.active.values()) activation.context?.drainNewSteps();
    }
    // A claim in flight when the loop stopped must land (and be handed back) before we look; one the
    // store never answers (a silent network) is not waited for past a lease, which it would outlast.
    if (this.filling) await raceAbort(this.filling, AbortSignal.timeout(this.ttlMs)).catch(() => undefined);
    const ends = [...this.active.values()].map((running) => running.done);
    if (options.handoff) {
      const grace = new Promise((resolve) => setTimeout(resolve, options.graceMs ?? 10_000).unref());
      await Promise.race([Promise.allSettled(ends), grace]);
    }
    for (const { activation } of this.active.values()) {
      activation.controller.abort(
        new InterruptSignal(
          options.handoff ? 'handing the session over' : 'the worker is shutting down',
          options.handoff,
        ),
      );
    }
    await Promise.allSettled(ends);
  }

  private wake(): void {
    if (!this.looping) return;
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = this.fill()
      .catch((error: unknown) =>
        this.log(`quarry worker ${this.workerId}: claiming failed`, error, { workerId: this.workerId }),
      )
      .finally(() => {
        this.filling = null;
        if (this.refill) {
          this.refill = false;
          this.wake();
        }
      });
  }

  private async fill(): Promise<void> {
    while (this.looping && this.active.size < this.concurrency) {
      // A claim is traced when it claims (or fails): the idle polls between are not a trace each.
      const start = new Date();
      const claimed = await this.store
        .claimNext({ workerId: this.workerId, ttlMs: this.ttlMs, maxClaims: this.maxClaims, ...thisProcess })
        .catch((error: unknown) => {
          recordSpan('quarry.lease.claim', start, { 'quarry.worker.id': this.workerId }, error);
          throw error;
        });
      if (claimed) {
        recordSpan('quarry.lease.claim', start, {
          'quarry.worker.id': this.workerId,
          'quarry.session.id': claimed.sessionId,
          'quarry.lease.epoch': claimed.epoch,
          'quarry.lease.takeover': claimed.tookOver === true,
        });
        reportOperation({ type: 'lease-claim', takeover: claimed.tookOver === true });
      }
      const lease = claimed;
      if (!lease) return;
      const started = Date.now();
      if (!this.looping) {
        // Shut down while the claim was in flight: give the session straight back.
        await this.store.release(lease, { status: 'queued' });
        return;
      }
      // An activation settles its own errors; anything left is logged, never an unhandled rejection.
      const running = this.execute(lease);
      const activation = this.active.get(lease.sessionId)?.activation;
      void running
        .then((result) => {
          // One line per run for the operator: which session and run, how it ended, how long, its trace.
          this.log(
            `quarry worker ${this.workerId}: session ${lease.sessionId} ${result.status}${result.error ? ` (${result.error.code})` : ''} after ${((Date.now() - started) / 1000).toFixed(1)} s`,
            undefined,
            {
              workerId: this.workerId,
              sessionId: lease.sessionId,
              runId: activation?.runId,
              traceId: activation?.traceId,
              status: result.status,
              durationMs: Date.now() - started,
            },
          );
          // Nobody waits for a claimed session's result: what could not be recorded is said here.
          if (result.status === 'unrecorded')
            this.log(
              `quarry worker ${this.workerId}: could not record how session ${lease.sessionId} ended (${result.error?.message}); it resumes from its last recorded step`,
              undefined,
              { workerId: this.workerId, sessionId: lease.sessionId },
            );
        })
        .catch((error: unknown) =>
          this.log(`quarry worker ${this.workerId}: session ${lease.sessionId} ended abnormally`, error, {
            workerId: this.workerId,
            sessionId: lease.sessionId,
          }),
        );
    }
  }
}
