import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { QuarryError, isQuarryError } from '../store/errors.ts';
import type { ErrorInfo, EventInput, Lease, ReleaseInput, SessionStatus, Store } from '../store/store.ts';
import { keepLease } from './lease.ts';
import { computeResumePoint } from './resume-point.ts';
import { RunContext } from './run-context.ts';
import { InterruptSignal, LeaseLostSignal, WaitForInputSignal } from './signals.ts';
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
  /** Where unexpected errors of the worker loop go. Default `console.error`. */
  log?: (message: string, error?: unknown) => void;
}

export type ActivationStatus = 'completed' | 'waiting' | 'queued' | 'interrupted' | 'failed' | 'lease-lost';

export interface ActivationResult {
  sessionId: string;
  status: ActivationStatus;
  /** The workflow's return value, when completed. */
  output?: unknown;
  error?: ErrorInfo;
  /** With `waiting`: the request key of the input step. */
  waitingFor?: string;
}

export interface RunSessionOptions {
  ownerId?: string;
  /** Stored statuses the claim accepts (a forced resume adds `completed`). */
  fromStatuses?: SessionStatus[];
  /** Runs under the fresh lease before the workflow (a rewind supersedes steps here). */
  prepare?: (lease: Lease) => Promise<void>;
}

interface Activation {
  controller: AbortController;
  context: RunContext | null;
  done: Promise<ActivationResult>;
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
  private readonly maxClaims: number;
  private readonly pollMs: number;
  private readonly log: (message: string, error?: unknown) => void;
  private readonly active = new Map<string, Activation>();
  private looping = false;
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
    this.maxClaims = options.maxClaims ?? 5;
    // An expired lease sends no notification: polling at least once per lease length bounds how
    // long a dead worker's sessions wait (about ttl + poll).
    this.pollMs = options.pollMs ?? Math.min(5_000, this.ttlMs);
    this.log = options.log ?? ((message, error) => console.error(message, error ?? ''));
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
    let lease = await this.store.claimSession({ sessionId, workerId: this.workerId, ttlMs: this.ttlMs, fromStatuses: options.fromStatuses, ownerId: options.ownerId });
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
      lease = await this.store.claimSession({ sessionId, workerId: this.workerId, ttlMs: this.ttlMs, fromStatuses: ['queued'] });
    }
  }

  /** Runs one activation under a lease this runner already holds. */
  execute(lease: Lease): Promise<ActivationResult> {
    const controller = new AbortController();
    const activation: Activation = { controller, context: null, done: Promise.resolve({ sessionId: lease.sessionId, status: 'failed' }) };
    this.active.set(lease.sessionId, activation);
    activation.done = this.activate(lease, activation).finally(() => {
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
    // A claim in flight when the loop stopped must land (and be handed back) before we look.
    await this.filling?.catch(() => undefined);
    const activations = [...this.active.values()];
    if (options.handoff) {
      for (const activation of activations) activation.context?.drainNewSteps();
      const grace = new Promise((resolve) => setTimeout(resolve, options.graceMs ?? 10_000).unref());
      await Promise.race([Promise.allSettled(activations.map((activation) => activation.done)), grace]);
    }
    for (const activation of this.active.values()) {
      activation.controller.abort(new InterruptSignal(options.handoff ? 'handing the session over' : 'the worker is shutting down', options.handoff));
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
      .catch((error: unknown) => this.log(`quarry worker ${this.workerId}: claiming failed`, error))
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
      const lease = await this.store.claimNext({ workerId: this.workerId, ttlMs: this.ttlMs, maxClaims: this.maxClaims });
      if (!lease) return;
      if (!this.looping) {
        // Shut down while the claim was in flight: give the session straight back.
        await this.store.release(lease, { status: 'queued' });
        return;
      }
      void this.execute(lease);
    }
  }

  private async activate(lease: Lease, activation: Activation): Promise<ActivationResult> {
    const { controller } = activation;
    const keeper = keepLease({
      store: this.store,
      lease,
      ttlMs: this.ttlMs,
      intervalMs: this.heartbeatMs,
      onLost: () => controller.abort(new LeaseLostSignal(lease.sessionId)),
      onStopRequested: () => controller.abort(new InterruptSignal('stop requested')),
    });
    try {
      const session = await this.store.getSession(lease.sessionId);
      const workflow = this.workflows.get(session.workflow.name);
      if (workflow.version !== session.workflow.version) {
        throw new QuarryError(
          'WORKFLOW_VERSION_MISMATCH',
          `Session "${session.id}" was started with ${workflow.name} version ${session.workflow.version}; this Quarry runs version ${workflow.version} and cannot replay it. Fork it to continue under version ${workflow.version}: quarry fork ${session.id.slice(0, 8)} --from <step>.`,
          { details: { sessionId: session.id, sessionVersion: session.workflow.version, workflowVersion: workflow.version } },
        );
      }
      if (!session.currentRunId) throw new QuarryError('RUN_NOT_FOUND', `Session "${session.id}" has no run to execute.`);
      const run = await this.store.getRun(session.currentRunId);
      const journal = await this.store.loadJournal(run.id);
      const context = new RunContext({
        store: this.store,
        lease,
        session,
        run,
        journal,
        signal: controller.signal,
        onLeaseLost: () => controller.abort(new LeaseLostSignal(lease.sessionId)),
        maxAttempts: this.maxAttempts,
      });
      activation.context = context;
      const resumePoint = computeResumePoint(journal);
      await this.store.appendEvent({
        sessionId: session.id,
        fence: lease,
        type: 'run-start',
        data: { runId: run.id, number: run.number, workerId: this.workerId, resumeAt: resumePoint.nextStep, completedSteps: resumePoint.completedSteps },
      });
      let output: unknown;
      try {
        output = await workflow.run(context, run.input);
      } finally {
        await context.settled();
      }
      if (controller.signal.aborted) throw controller.signal.reason;
      await this.store.release(lease, { status: 'completed', runOutput: output, events: [{ type: 'run-end', data: { status: 'completed' } }] });
      return { sessionId: lease.sessionId, status: 'completed', output };
    } catch (error) {
      return await this.settle(lease, controller.signal.aborted ? controller.signal.reason : error);
    } finally {
      keeper.stop();
    }
  }

  /** Releases the lease in the state the activation ended in; a lost lease writes nothing. */
  private async settle(lease: Lease, reason: unknown): Promise<ActivationResult> {
    const sessionId = lease.sessionId;
    if (reason instanceof LeaseLostSignal || isQuarryError(reason, 'LEASE_LOST')) return { sessionId, status: 'lease-lost' };
    let result: ActivationResult;
    let release: ReleaseInput;
    if (reason instanceof WaitForInputSignal) {
      result = { sessionId, status: 'waiting', waitingFor: reason.requestKey };
      release = { status: 'waiting', waitingFor: reason.requestKey, events: [{ type: 'run-end', data: { status: 'waiting', waitingFor: reason.requestKey } }] };
    } else if (reason instanceof InterruptSignal) {
      result = { sessionId, status: reason.handoff ? 'queued' : 'interrupted' };
      release = { status: reason.handoff ? 'queued' : 'interrupted', events: [{ type: 'run-end', data: { status: result.status, reason: reason.reason } }] };
    } else {
      const error: ErrorInfo = isQuarryError(reason)
        ? { code: reason.code, message: reason.message }
        : { code: 'ERROR', message: reason instanceof Error ? reason.message : String(reason) };
      if (!isQuarryError(reason)) this.log(`quarry: session ${sessionId} failed with an unexpected error`, reason);
      result = { sessionId, status: 'failed', error };
      const events: EventInput[] = [{ type: 'run-error', data: error }];
      release = { status: 'failed', error, events };
    }
    try {
      const released = await this.store.release(lease, release);
      // An answer that arrived while the activation was ending turns `waiting` into `queued`.
      if (result.status === 'waiting' && released.status === 'queued') return { ...result, status: 'queued' };
      return result;
    } catch (error) {
      if (isQuarryError(error, 'LEASE_LOST') || isQuarryError(error, 'SESSION_NOT_FOUND')) return { sessionId, status: 'lease-lost' };
      throw error;
    }
  }
}
