import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Log } from '../config/log.ts';
import type { Clock } from '../shared/clock.ts';
import { raceAbort } from '../shared/concurrency.ts';
import { isQuarryError, QuarryError, toErrorInfo } from '../shared/errors.ts';
import { event } from '../shared/events.ts';
import { reportOperation } from '../shared/operations.ts';
import { thisProcess } from '../shared/process-identity.ts';
import { withRetry } from '../shared/retry.ts';
import { inSpan, SpanKind, traceContextFrom } from '../shared/tracing.ts';
import type { ErrorInfo, Lease, ReleaseInput, SessionStatus, Store } from '../store/store.ts';
import { claimOrTakeOver, keepLease } from './lease.ts';
import { computeResumePoint } from './resume-point.ts';
import { RunContext } from './run-context.ts';
import { endsOnPurpose, InterruptSignal, LeaseLostSignal, WaitForInputSignal } from './signals.ts';
import type { WorkflowRegistry } from './workflow.ts';

export interface RunnerOptions {
  store: Store;
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

/**
 * How an activation ended. `unrecorded`: it ended (with `error`) but the store could not record how
 * (a full disk, a database away for longer than the lease): the session still reads as running, and
 * resumes from its last recorded step once the store works again.
 */
export type ActivationStatus =
  | 'completed'
  | 'waiting'
  | 'queued'
  | 'interrupted'
  | 'failed'
  | 'lease-lost'
  | 'unrecorded';

export interface ActivationResult {
  sessionId: string;
  status: ActivationStatus;
  /** The workflow's return value, when completed. */
  output?: unknown;
  error?: ErrorInfo;
  /** With `waiting`: the request key of the input step. */
  waitingFor?: string;
  /** With `interrupted`: why (the stop request's reason). */
  reason?: string;
}

export interface RunSessionOptions {
  ownerId?: string;
  /** Stored statuses the claim accepts (a forced resume adds `completed`). */
  fromStatuses?: SessionStatus[];
  /** Runs under the fresh lease before the workflow (a rewind supersedes steps here). */
  prepare?: (lease: Lease) => Promise<void>;
}

interface Activation {
  /** Aborted to end the activation: a stop, a shutdown, a hand-over or a lost lease (its reason). */
  controller: AbortController;
  /**
   * Aborted only when the lease is lost, even after `controller` was aborted for another reason (a
   * stop during a partition): from then on no store call is waited for, since none can land as ours.
   */
  lost: AbortController;
  context: RunContext | null;
  done: Promise<ActivationResult>;
  /** The run, once read, and its trace when tracing is on: what the run's log line names. */
  runId?: string;
  traceId?: string;
}

/**
 * Executes sessions: one at a time in the foreground (`runSession`), or as a worker loop that claims
 * runnable sessions up to a concurrency limit (`start`). The same code serves the CLI, the server
 * and standalone workers. An activation claims, loads the journal once, replays the workflow, and
 * releases the lease with the status it ended in.
 */
export class Runner {
  readonly workerId: string;
  private readonly store: Store;
  private readonly workflows: WorkflowRegistry;
  private readonly concurrency: number;
  private readonly ttlMs: number;
  private readonly heartbeatMs: number;
  private readonly maxAttempts: number;
  private readonly retryClock: Clock | undefined;
  private readonly maxClaims: number;
  private readonly pollMs: number;
  private readonly log: NonNullable<RunnerOptions['log']>;
  private readonly active = new Map<string, Activation>();
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
    const controller = new AbortController();
    const lost = new AbortController();
    // Every step in flight (up to a research iteration's reads, each with its model or HTTP calls)
    // listens to these signals, and removes its listeners when it ends: more than Node's default of
    // ten at once is expected, not a leak.
    setMaxListeners(100, controller.signal, lost.signal);
    const activation: Activation = {
      controller,
      lost,
      context: null,
      done: Promise.resolve({ sessionId: lease.sessionId, status: 'failed' }),
    };
    this.active.set(lease.sessionId, activation);
    reportOperation({ type: 'run-start' });
    activation.done = this.activate(lease, activation).then((result) => {
      reportOperation({ type: 'run-end', status: result.status });
      return result;
    });
    activation.done = activation.done.finally(() => {
      this.active.delete(lease.sessionId);
      if (this.looping) this.wake();
    });
    return activation.done;
  }

  /** Interrupts a session running here; false when it is not running in this process. */
  stopSession(sessionId: string, reason = 'stop requested'): boolean {
    const activation = this.active.get(sessionId);
    if (!activation) return false;
    activation.controller.abort(new InterruptSignal(reason));
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
      for (const activation of this.active.values()) activation.context?.drainNewSteps();
    }
    // A claim in flight when the loop stopped must land (and be handed back) before we look; one the
    // store never answers (a silent network) is not waited for past a lease, which it would outlast.
    if (this.filling) await raceAbort(this.filling, AbortSignal.timeout(this.ttlMs)).catch(() => undefined);
    const activations = [...this.active.values()];
    if (options.handoff) {
      const grace = new Promise((resolve) => setTimeout(resolve, options.graceMs ?? 10_000).unref());
      await Promise.race([Promise.allSettled(activations.map((activation) => activation.done)), grace]);
    }
    for (const activation of this.active.values()) {
      activation.controller.abort(
        new InterruptSignal(
          options.handoff ? 'handing the session over' : 'the worker is shutting down',
          options.handoff,
        ),
      );
    }
    await Promise.allSettled(activations.map((activation) => activation.done));
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
      const lease = await inSpan('quarry.lease.claim', { 'quarry.worker.id': this.workerId }, async (span) => {
        const claimed = await this.store.claimNext({
          workerId: this.workerId,
          ttlMs: this.ttlMs,
          maxClaims: this.maxClaims,
          ...thisProcess,
        });
        span.setAttribute('quarry.session.id', claimed?.sessionId ?? '');
        if (claimed) {
          span.setAttributes({
            'quarry.lease.epoch': claimed.epoch,
            'quarry.lease.takeover': claimed.tookOver === true,
          });
          reportOperation({ type: 'lease-claim', takeover: claimed.tookOver === true });
        }
        return claimed;
      });
      if (!lease) return;
      const started = Date.now();
      if (!this.looping) {
        // Shut down while the claim was in flight: give the session straight back.
        await this.store.release(lease, { status: 'queued' });
        return;
      }
      // An activation settles its own errors; anything left is logged, never an unhandled rejection.
      const running = this.execute(lease);
      const activation = this.active.get(lease.sessionId);
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

  private async activate(lease: Lease, activation: Activation): Promise<ActivationResult> {
    const { controller, lost } = activation;
    const loseLease = () => {
      const signal = new LeaseLostSignal(lease.sessionId);
      lost.abort(signal);
      controller.abort(signal);
    };
    const keeper = keepLease({
      store: this.store,
      lease,
      ttlMs: this.ttlMs,
      intervalMs: this.heartbeatMs,
      onLost: loseLease,
      onStopRequested: (reason) => controller.abort(new InterruptSignal(reason ?? 'stop requested')),
    });
    // The store may stop answering altogether (a silent network partition): once the lease is lost,
    // nothing more is waited for. The store fences every write, so none can land as ours any more.
    const untilLost = <T>(work: Promise<T>) => raceAbort(work, lost.signal);
    try {
      const session = await untilLost(this.store.getSession(lease.sessionId));
      const workflow = this.workflows.get(session.workflow.name);
      if (workflow.version !== session.workflow.version) {
        throw new QuarryError(
          'WORKFLOW_VERSION_MISMATCH',
          `Session "${session.id}" was started with ${workflow.name} version ${session.workflow.version}; this Quarry runs version ${workflow.version} and cannot replay it. Fork it to continue under version ${workflow.version}: quarry fork ${session.id.slice(0, 8)} --from <step>.`,
          {
            details: {
              sessionId: session.id,
              sessionVersion: session.workflow.version,
              workflowVersion: workflow.version,
            },
          },
        );
      }
      if (!session.currentRunId)
        throw new QuarryError('RUN_NOT_FOUND', `Session "${session.id}" has no run to execute.`);
      const run = await untilLost(this.store.getRun(session.currentRunId));
      const journal = await untilLost(this.store.loadJournal(run.id));
      const context = new RunContext({
        store: this.store,
        lease,
        session,
        run,
        journal,
        signal: controller.signal,
        leaseLost: lost.signal,
        onLeaseLost: loseLease,
        maxAttempts: this.maxAttempts,
        retryClock: this.retryClock,
      });
      activation.context = context;
      if (this.handingOff) context.drainNewSteps();
      const resumePoint = computeResumePoint(journal);
      await untilLost(
        this.store.appendEvent({
          sessionId: session.id,
          fence: lease,
          event: event('run-start', {
            runId: run.id,
            number: run.number,
            workerId: this.workerId,
            resumeAt: resumePoint.nextStep,
            completedSteps: resumePoint.completedSteps,
          }),
        }),
      );
      let output: unknown;
      try {
        // The run's span continues the trace of the request that started the run (stored with it),
        // on whichever worker runs or resumes it.
        output = await inSpan(
          'quarry.run',
          {
            'quarry.session.id': session.id,
            'quarry.run.id': run.id,
            'quarry.run.number': run.number,
            'quarry.run.kind': run.kind,
            'quarry.workflow': `${workflow.name}@${workflow.version}`,
            'quarry.worker.id': this.workerId,
            'quarry.lease.epoch': lease.epoch,
            'quarry.run.replayed_steps': resumePoint.completedSteps,
          },
          (span) => {
            activation.runId = run.id;
            if (span.isRecording()) activation.traceId = span.spanContext().traceId;
            return workflow.run(context, run.input);
          },
          { parent: traceContextFrom(run.traceContext), kind: SpanKind.CONSUMER, expected: endsOnPurpose },
        );
      } finally {
        await context.settled();
      }
      if (controller.signal.aborted) throw controller.signal.reason;
      await untilLost(
        this.store.release(lease, {
          status: 'completed',
          runOutput: output,
          events: [event('run-end', { status: 'completed' })],
        }),
      );
      return { sessionId: lease.sessionId, status: 'completed', output };
    } catch (error) {
      const signal = lost.signal.aborted ? lost.signal : controller.signal;
      return await this.settle(lease, signal.aborted ? signal.reason : error);
    } finally {
      keeper.stop();
    }
  }

  /** Releases the lease in the state the activation ended in; a lost lease writes nothing. */
  private async settle(lease: Lease, reason: unknown): Promise<ActivationResult> {
    const sessionId = lease.sessionId;
    if (reason instanceof LeaseLostSignal || isQuarryError(reason, 'LEASE_LOST'))
      return { sessionId, status: 'lease-lost' };
    let result: ActivationResult;
    let release: ReleaseInput;
    if (reason instanceof WaitForInputSignal) {
      result = { sessionId, status: 'waiting', waitingFor: reason.requestKey };
      release = {
        status: 'waiting',
        waitingFor: reason.requestKey,
        events: [event('run-end', { status: 'waiting', waitingFor: reason.requestKey })],
      };
    } else if (reason instanceof InterruptSignal) {
      const status = reason.handoff ? 'queued' : 'interrupted';
      result = { sessionId, status, reason: reason.reason };
      release = { status, events: [event('run-end', { status, reason: reason.reason })] };
    } else {
      const error = toErrorInfo(reason);
      if (!isQuarryError(reason))
        this.log(`quarry: session ${sessionId} failed with an unexpected error`, reason, {
          workerId: this.workerId,
          sessionId,
        });
      result = { sessionId, status: 'failed', error };
      release = { status: 'failed', error, events: [event('run-error', error)] };
    }
    try {
      // A store that is restarting is waited out while the lease lasts; after that, the session's
      // lease expires by itself and any worker (this one too) takes it up again.
      const giveUp = AbortSignal.timeout(Math.max(1_000, this.ttlMs));
      const unanswered = () =>
        new QuarryError(
          'STORE_UNAVAILABLE',
          `The store did not answer while recording how session ${sessionId} ended.`,
        );
      const released = await withRetry(
        () =>
          raceAbort(this.store.release(lease, release), giveUp).catch((error: unknown) => {
            throw giveUp.aborted ? unanswered() : error;
          }),
        {
          attempts: Number.POSITIVE_INFINITY,
          baseDelayMs: 250,
          maxDelayMs: 5_000,
          signal: giveUp,
        },
      );
      // An answer that arrived while the activation was ending turns `waiting` into `queued`.
      if (result.status === 'waiting' && released.status === 'queued') return { ...result, status: 'queued' };
      return result;
    } catch (error) {
      if (isQuarryError(error, 'LEASE_LOST') || isQuarryError(error, 'SESSION_NOT_FOUND'))
        return { sessionId, status: 'lease-lost' };
      if (!isQuarryError(error))
        this.log(`quarry: recording how session ${sessionId} ended failed unexpectedly`, error, {
          workerId: this.workerId,
          sessionId,
        });
      // The cause worth telling is the store's failure (a step's own error may be the same one).
      const cause = isQuarryError(reason) && reason.code.startsWith('STORE_') ? reason : error;
      return { sessionId, status: 'unrecorded', error: toErrorInfo(cause) };
    }
  }
}
