import { setMaxListeners } from 'node:events';
import type { Log } from '../config/log.ts';
import type { Clock } from '../shared/clock.ts';
import { raceAbort } from '../shared/concurrency.ts';
import { isQuarryError, QuarryError, toErrorInfo } from '../shared/errors.ts';
import { event } from '../shared/events.ts';
import { withRetry } from '../shared/retry.ts';
import { inSpan, SpanKind, traceContextFrom } from '../shared/tracing.ts';
import type { EngineStore, ErrorInfo, Lease, ReleaseInput } from '../store/store.ts';
import { keepLease } from './lease.ts';
import { computeResumePoint } from './resume-point.ts';
import { RunContext } from './run-context.ts';
import { endsOnPurpose, InterruptSignal, LeaseLostSignal, WaitForInputSignal } from './signals.ts';
import type { WorkflowRegistry } from './workflow.ts';

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

/** What an activation needs of the runner that starts it. */
export interface ActivationOptions {
  store: EngineStore;
  workflows: WorkflowRegistry;
  workerId: string;
  ttlMs: number;
  heartbeatMs: number;
  maxAttempts: number;
  retryClock?: Clock;
  log: Log;
  /** Whether a graceful shutdown has begun: a context made then begins no new step. */
  handingOff: () => boolean;
}

/**
 * One run of a session's workflow under a lease this process holds: keeps the lease, loads the
 * journal once, replays and continues the workflow, and releases the lease with the status it ended
 * in (completed, waiting, interrupted, handed back, failed; nothing when the lease was lost).
 */
export class Activation {
  /** Aborted to end the activation: a stop, a shutdown, a hand-over or a lost lease (its reason). */
  readonly controller = new AbortController();
  /**
   * Aborted only when the lease is lost, even after `controller` was aborted for another reason (a
   * stop during a partition): from then on no store call is waited for, since none can land as ours.
   */
  readonly lost = new AbortController();
  /** Set once the run is loaded; a hand-over drains it. */
  context: RunContext | null = null;
  /** The run, once read, and its trace when tracing is on: what the run's log line names. */
  runId?: string;
  traceId?: string;

  constructor(
    readonly lease: Lease,
    private readonly options: ActivationOptions,
  ) {
    // Every step in flight (up to a research iteration's reads, each with its model or HTTP calls)
    // listens to these signals, and removes its listeners when it ends: more than Node's default of
    // ten at once is expected, not a leak.
    setMaxListeners(100, this.controller.signal, this.lost.signal);
  }

  /** Runs the workflow to its end here and releases the lease in the state it ended in; never rejects. */
  async run(): Promise<ActivationResult> {
    const { controller, lost, lease } = this;
    const keeper = keepLease({
      store: this.options.store,
      lease,
      ttlMs: this.options.ttlMs,
      intervalMs: this.options.heartbeatMs,
      onLost: this.loseLease,
      onStopRequested: (reason) => controller.abort(new InterruptSignal(reason ?? 'stop requested')),
    });
    try {
      const { workflow, run, context, resumePoint } = await this.load();
      let output: unknown;
      try {
        // The run's span continues the trace of the request that started the run (stored with it),
        // on whichever worker runs or resumes it.
        output = await inSpan(
          'quarry.run',
          {
            'quarry.session.id': lease.sessionId,
            'quarry.run.id': run.id,
            'quarry.run.number': run.number,
            'quarry.run.kind': run.kind,
            'quarry.workflow': `${workflow.name}@${workflow.version}`,
            'quarry.worker.id': this.options.workerId,
            'quarry.lease.epoch': lease.epoch,
            'quarry.run.replayed_steps': resumePoint.completedSteps,
          },
          (span) => {
            this.runId = run.id;
            if (span.isRecording()) this.traceId = span.spanContext().traceId;
            return workflow.run(context, run.input);
          },
          { parent: traceContextFrom(run.traceContext), kind: SpanKind.CONSUMER, expected: endsOnPurpose },
        );
      } finally {
        await context.settled();
      }
      if (controller.signal.aborted) throw controller.signal.reason;
      await this.untilLost(
        this.options.store.release(lease, {
          status: 'completed',
          runOutput: output,
          events: [event('run-end', { status: 'completed' })],
        }),
      );
      return { sessionId: lease.sessionId, status: 'completed', output };
    } catch (error) {
      const signal = lost.signal.aborted ? lost.signal : controller.signal;
      return await this.settle(signal.aborted ? signal.reason : error);
    } finally {
      keeper.stop();
    }
  }

  /** Reads the session's current run and its journal once, and says where the run starts. */
  private async load() {
    const { store, workerId } = this.options;
    const { lease } = this;
    const session = await this.untilLost(store.getSession(lease.sessionId));
    const workflow = this.options.workflows.get(session.workflow.name);
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
    if (!session.currentRunId) throw new QuarryError('RUN_NOT_FOUND', `Session "${session.id}" has no run to execute.`);
    const run = await this.untilLost(store.getRun(session.currentRunId));
    const journal = await this.untilLost(store.loadJournal(run.id));
    const context = new RunContext({
      store,
      lease,
      session,
      run,
      journal,
      signal: this.controller.signal,
      leaseLost: this.lost.signal,
      onLeaseLost: this.loseLease,
      maxAttempts: this.options.maxAttempts,
      retryClock: this.options.retryClock,
    });
    this.context = context;
    if (this.options.handingOff()) context.drainNewSteps();
    const resumePoint = computeResumePoint(journal);
    await this.untilLost(
      store.appendEvent({
        sessionId: session.id,
        fence: lease,
        event: event('run-start', {
          runId: run.id,
          number: run.number,
          workerId,
          resumeAt: resumePoint.nextStep,
          completedSteps: resumePoint.completedSteps,
        }),
      }),
    );
    return { workflow, run, context, resumePoint };
  }

  /** The lease is gone: everything stops, and no store call is waited for from now on. */
  private readonly loseLease = () => {
    const signal = new LeaseLostSignal(this.lease.sessionId);
    this.lost.abort(signal);
    this.controller.abort(signal);
  };

  /**
   * `work`, until the lease is lost. The store may stop answering altogether (a silent network
   * partition); once the lease is lost nothing more is waited for, since the store fences every
   * write: none can land as ours any more.
   */
  private untilLost<T>(work: Promise<T>): Promise<T> {
    return raceAbort(work, this.lost.signal);
  }

  /** Releases the lease in the state the activation ended in; a lost lease writes nothing. */
  private async settle(reason: unknown): Promise<ActivationResult> {
    const { lease } = this;
    const { store, workerId, log } = this.options;
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
        log(`quarry: session ${sessionId} failed with an unexpected error`, reason, {
          workerId,
          sessionId,
        });
      result = { sessionId, status: 'failed', error };
      release = { status: 'failed', error, events: [event('run-error', error)] };
    }
    try {
      // A store that is restarting is waited out while the lease lasts; after that, the session's
      // lease expires by itself and any worker (this one too) takes it up again.
      const giveUp = AbortSignal.timeout(Math.max(1_000, this.options.ttlMs));
      const unanswered = () =>
        new QuarryError(
          'STORE_UNAVAILABLE',
          `The store did not answer while recording how session ${sessionId} ended.`,
        );
      const released = await withRetry(
        () =>
          raceAbort(store.release(lease, release), giveUp).catch((error: unknown) => {
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
        log(`quarry: recording how session ${sessionId} ended failed unexpectedly`, error, {
          workerId,
          sessionId,
        });
      // The cause worth telling is the store's failure (a step's own error may be the same one).
      const cause = isQuarryError(reason) && reason.code.startsWith('STORE_') ? reason : error;
      return { sessionId, status: 'unrecorded', error: toErrorInfo(cause) };
    }
  }
}
