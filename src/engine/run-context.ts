import type { Clock } from '../shared/clock.ts';
import { raceAbort } from '../shared/concurrency.ts';
import { isQuarryError, QuarryError, toErrorInfo } from '../shared/errors.ts';
import { type EventDataMap, type EventType, event } from '../shared/events.ts';
import { reportOperation } from '../shared/operations.ts';
import { withRetry } from '../shared/retry.ts';
import { inSpan } from '../shared/tracing.ts';
import type {
  EngineStore,
  ErrorInfo,
  EventInput,
  Lease,
  Run,
  Session,
  StepKind,
  StepPrompt,
  StepRecord,
  StepUsage,
} from '../store/store.ts';
import { RunSession } from './run-session.ts';
import { endsOnPurpose, InterruptSignal, LeaseLostSignal, WaitForInputSignal } from './signals.ts';

export interface StepOptions<Phase extends string = string> {
  /** Unique within the run; the journal is memoized by it. Use paths: `iteration-2/search-0`. */
  key: string;
  /** The stage the UI shows: `plan`, `search`, `read`… (a workflow names its own: see `RunContext`). */
  phase?: Phase;
  /** Recorded with the step (shown in the UI, kept by forks); not used for memoization. */
  input?: unknown;
  /** Attempts that may crash (begun, never ended) before the run fails. Default: the runner's. */
  maxAttempts?: number;
}

export interface LlmCallOptions<Phase extends string = string> {
  key: string;
  phase?: Phase;
  /** `provider:model`, recorded with the usage. */
  model: string;
  system?: string;
  /** The user input sent to the model. */
  prompt: string;
  maxAttempts?: number;
}

export interface LlmResult<T> {
  output: T;
  /** Tokens and cost; the model and the latency are filled in by the context. */
  usage?: Omit<StepUsage, 'model' | 'latencyMs'>;
}

export interface WaitForInputOptions<Phase extends string = string> {
  key: string;
  phase?: Phase;
  /** What the person is asked to look at (an outline to review); shown in the `input-request` event. */
  payload?: unknown;
}

export interface RunContextOptions {
  store: EngineStore;
  lease: Lease;
  session: Session;
  run: Run;
  /** The run's live journal, loaded once per activation. */
  journal: readonly StepRecord[];
  /** Aborted on interrupt or lease loss; its reason is the signal. */
  signal: AbortSignal;
  /**
   * Aborted when the lease is lost, also after `signal` was aborted for another reason: a write
   * still unanswered then (a silent network) is not waited for, since the store fences it.
   */
  leaseLost: AbortSignal;
  /** Called when a write discovers that the lease is gone, so the activation stops everywhere. */
  onLeaseLost: () => void;
  maxAttempts: number;
  /** How a step waits before trying again after a passing outage. Default: real time. */
  retryClock?: Clock;
}

interface JournaledSpec {
  key: string;
  phase: string | null;
  kind: StepKind;
  input?: unknown;
  prompt?: StepPrompt;
  maxAttempts?: number;
}

/** A step's input as progress events show it: small JSON values only (a query, a URL), else nothing. */
function smallInput(input: unknown): unknown {
  if (input === undefined) return undefined;
  const text = JSON.stringify(input);
  return text !== undefined && text.length <= 500 ? input : undefined;
}

/** JSON round trip, so a live result and its replay are the same value (Dates become strings both times). */
function asRecorded<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Why a step's work failed: its own code when it threw a `QuarryError`, `STEP_FAILED` otherwise. */
/**
 * A completed step's output, to replay. One the store cannot give back (damaged on disk) stops the
 * run with a clear error naming the step, never a wrong value: redoing from that step recovers.
 */
function replayed(record: StepRecord): unknown {
  if (record.damage?.output === undefined) return record.output;
  throw new QuarryError(
    'STORE_CORRUPT',
    `The journal's step "${record.key}" is damaged in the store (its output: ${record.damage.output}). Redo from it: quarry resume <session> --from ${record.key}`,
    { details: { runId: record.runId, key: record.key } },
  );
}

function stepErrorInfo(error: unknown): ErrorInfo {
  if (isQuarryError(error)) return { code: error.code, message: error.message };
  return { code: 'STEP_FAILED', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Lets the process's pending I/O run: a socket write, an SSE client's next read. SQLite answers
 * synchronously, so an activation that only journals and computes would otherwise hold the event
 * loop until its run ends, and the server that runs it would show its progress in late batches.
 */
function letIoRun(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * What a workflow sees of the engine. Every method is journaled: a completed record returns its
 * output without running anything, and a live result is committed (fenced by the lease) before it
 * is returned. `Phase` is the workflow's own vocabulary of stages (the research workflow's
 * `ResearchPhase`): a step under a misspelled phase does not compile.
 */
export class RunContext<Phase extends string = string> {
  readonly sessionId: string;
  readonly runId: string;
  readonly runNumber: number;
  readonly settings: Record<string, unknown>;
  readonly signal: AbortSignal;
  private readonly leaseLost: AbortSignal;
  /** The session as this run may read and change it; every write is fenced by the lease. */
  readonly session: RunSession;
  private readonly store: EngineStore;
  private readonly lease: Lease;
  private readonly records = new Map<string, StepRecord>();
  private readonly usedKeys = new Set<string>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly onLeaseLost: () => void;
  private readonly maxAttempts: number;
  private readonly retryClock: Clock | undefined;
  private lastPhase: string | null = null;
  private draining = false;

  constructor(options: RunContextOptions) {
    this.store = options.store;
    this.lease = options.lease;
    this.sessionId = options.session.id;
    this.runId = options.run.id;
    this.runNumber = options.run.number;
    this.settings = options.session.settings;
    this.signal = options.signal;
    this.leaseLost = options.leaseLost;
    this.onLeaseLost = options.onLeaseLost;
    this.maxAttempts = options.maxAttempts;
    this.retryClock = options.retryClock;
    this.session = new RunSession(options.store, { sessionId: this.sessionId, runId: this.runId, fence: this.fence });
    for (const record of options.journal) this.records.set(record.key, record);
  }

  /** The lease this activation holds. */
  private get fence(): { sessionId: string; epoch: number } {
    return { sessionId: this.lease.sessionId, epoch: this.lease.epoch };
  }

  /** A journaled unit of work. `work` receives the activation's abort signal. */
  step<T>(options: StepOptions<Phase>, work: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
    const spec: JournaledSpec = {
      key: options.key,
      phase: options.phase ?? null,
      kind: 'task',
      input: options.input,
      maxAttempts: options.maxAttempts,
    };
    return this.journaled(spec, async (signal) => ({ output: await work(signal) }));
  }

  /** A model call: records model, prompts, output, token usage, cost and latency. */
  llm<T>(options: LlmCallOptions<Phase>, work: (signal: AbortSignal) => Promise<LlmResult<T>>): Promise<T> {
    const spec: JournaledSpec = {
      key: options.key,
      phase: options.phase ?? null,
      kind: 'llm',
      input: { model: options.model },
      prompt: { model: options.model, system: options.system, user: options.prompt },
      maxAttempts: options.maxAttempts,
    };
    return this.journaled(spec, async (signal) => {
      const started = performance.now();
      const result = await work(signal);
      const usage: StepUsage = {
        ...result.usage,
        model: options.model,
        latencyMs: Math.round(performance.now() - started),
      };
      return { output: result.output, usage };
    });
  }

  /**
   * Asks a person. The first time, records the request, and the activation ends with the session
   * `waiting`. Once an answer is in the inbox, replay returns it here.
   */
  async waitForInput<T = unknown>(options: WaitForInputOptions<Phase>): Promise<T> {
    this.claimKey(options.key);
    const record = this.records.get(options.key);
    if (record?.status === 'completed') return replayed(record) as T;
    this.throwIfAborted();
    const answer = await this.write(() => this.store.readInput(this.runId, options.key));
    const phase = options.phase ?? null;
    if (answer) {
      const events: EventInput[] = [event('step-end', { key: options.key, phase, kind: 'input', status: 'completed' })];
      const value = asRecorded(answer.value);
      if (record)
        await this.write(() =>
          this.store.completeStep(this.lease, { runId: this.runId, key: options.key, output: value, events }),
        );
      else
        await this.write(() =>
          this.store.recordStep(this.lease, {
            runId: this.runId,
            key: options.key,
            phase,
            kind: 'input',
            input: options.payload,
            output: value,
            events,
          }),
        );
      return value as T;
    }
    if (!record) {
      const events: EventInput[] = [
        event('input-request', { key: options.key, phase, payload: options.payload ?? null }),
      ];
      await this.write(() =>
        this.store.beginStep(this.lease, {
          runId: this.runId,
          key: options.key,
          phase,
          kind: 'input',
          input: options.payload,
          events,
        }),
      );
    }
    throw new WaitForInputSignal(options.key);
  }

  /** The clock, journaled: replay returns the recorded reading. */
  now(key: string): Promise<number> {
    return this.recordValue(key, 'clock', () => Date.now());
  }

  /** A random number in [0, 1), journaled. */
  random(key: string): Promise<number> {
    return this.recordValue(key, 'random', () => Math.random());
  }

  /**
   * Emits a progress event (`source-found`, `report-delta`…). Not journaled: call it from inside a
   * step's work, which runs only live, never on replay.
   */
  async emit<Type extends EventType>(type: Type, data: EventDataMap[Type]): Promise<void> {
    await this.write(() =>
      this.store.appendEvent({ sessionId: this.sessionId, fence: this.lease, event: event(type, data) }),
    );
  }

  /** Stops new steps from starting (a graceful handoff); steps in flight may finish. */
  drainNewSteps(): void {
    this.draining = true;
  }

  /** Resolves when every step started by this context has settled. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async recordValue(key: string, kind: 'clock' | 'random', read: () => number): Promise<number> {
    this.claimKey(key);
    const record = this.records.get(key);
    if (record?.status === 'completed') return replayed(record) as number;
    this.throwIfAborted();
    const value = read();
    await this.write(
      () => this.store.recordStep(this.lease, { runId: this.runId, key, kind, output: value }),
      this.completedAfterAll(key),
    );
    return value;
  }

  private journaled<T>(
    spec: JournaledSpec,
    work: (signal: AbortSignal) => Promise<{ output: T; usage?: StepUsage }>,
  ): Promise<T> {
    try {
      this.claimKey(spec.key);
    } catch (error) {
      return Promise.reject(error);
    }
    const record = this.records.get(spec.key);
    if (record?.status === 'completed') {
      try {
        return Promise.resolve(replayed(record) as T);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    // Live steps get a span (a replayed step returned above; the run's span counts those).
    const promise = inSpan(
      'quarry.step',
      {
        'quarry.step.key': spec.key,
        'quarry.step.kind': spec.kind,
        'quarry.step.phase': spec.phase ?? '',
        'quarry.step.attempt': (record?.attempts ?? 0) + 1,
      },
      () => this.runLive(spec, record, work),
      { expected: endsOnPurpose },
    );
    this.inFlight.add(promise);
    void promise.catch(() => undefined).finally(() => this.inFlight.delete(promise));
    return promise;
  }

  private async runLive<T>(
    spec: JournaledSpec,
    record: StepRecord | undefined,
    work: (signal: AbortSignal) => Promise<{ output: T; usage?: StepUsage }>,
  ): Promise<T> {
    this.throwIfAborted();
    if (this.draining) throw new InterruptSignal('handing the session over', true);
    const { key, phase, kind } = spec;
    const maxAttempts = spec.maxAttempts ?? this.maxAttempts;
    if (record?.status === 'running' && record.attempts >= maxAttempts) {
      const message = `Step "${key}" was started ${record.attempts} times without completing (the process died each time); giving up. Fix the cause, then resume to try again.`;
      await this.write(() =>
        this.store.failStep(this.lease, { runId: this.runId, key, error: { code: 'STEP_ATTEMPTS_EXCEEDED', message } }),
      );
      throw new QuarryError('STEP_ATTEMPTS_EXCEEDED', message, { details: { key, attempts: record.attempts } });
    }
    const events: EventInput[] = [];
    if (phase && phase !== this.lastPhase) {
      this.lastPhase = phase;
      events.push(event('phase-start', { phase }));
    }
    const attempt = (record?.attempts ?? 0) + 1;
    const shown = smallInput(spec.input);
    events.push(
      event('step-start', {
        key,
        phase,
        kind,
        attempt,
        ...(shown === undefined ? {} : { input: shown }),
        ...(spec.prompt ? { prompt: { ...spec.prompt, model: spec.prompt.model ?? '' } } : {}),
      }),
    );
    // The prompt is stored as the step begins, so a running or failed model step shows what it sent.
    await this.write(() =>
      this.store.beginStep(this.lease, {
        runId: this.runId,
        key,
        phase,
        kind,
        input: spec.input,
        prompt: spec.prompt,
        events,
      }),
    );
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let result: { output: T; usage?: StepUsage };
    try {
      // A step whose work meets a passing outage (a busy or restarting store, a provider's 429 or
      // 5xx) runs again after a back-off instead of failing the run.
      result = await withRetry(
        () =>
          raceAbort(
            Promise.resolve().then(() => work(this.signal)),
            this.signal,
          ),
        {
          // A passing outage (the store, a model or search provider down, overloaded or rate-limiting)
          // pauses the step, never fails the run: it is tried again, back-offs doubling to a minute,
          // for as long as the run goes on (a stop, a shutdown or a lost lease aborts the signal).
          // Each wait is a `step-retry` event ("waiting for the model" in every interface).
          attempts: Number.POSITIVE_INFINITY,
          // Long enough to honor a site's Retry-After; back-offs of their own stay short.
          maxDelayMs: 60_000,
          signal: this.signal,
          clock: this.retryClock,
          // Recorded before the wait begins: every interface shows the wait while it lasts.
          onRetry: ({ attempt, delayMs, error }) =>
            this.emit('step-retry', { key, attempt, delayMs, error: toErrorInfo(error) }).catch(() => undefined),
        },
      );
    } catch (error) {
      throw await this.recordFailure(spec, error, elapsed());
    }
    const output = asRecorded(result.output);
    const end = event('step-end', {
      key,
      phase,
      kind,
      status: 'completed',
      durationMs: elapsed(),
      usage: result.usage ?? null,
    });
    const completed = await this.write(
      () => this.store.completeStep(this.lease, { runId: this.runId, key, output, usage: result.usage, events: [end] }),
      this.completedAfterAll(key),
    );
    this.records.set(key, completed);
    reportOperation({
      type: 'step-end',
      kind,
      status: 'completed',
      durationMs: elapsed(),
      model: result.usage?.model,
      inputTokens: result.usage?.inputTokens,
      outputTokens: result.usage?.outputTokens,
      costUsd: result.usage?.costUsd,
    });
    return output;
  }

  /** Journals why a step ended without output, and returns what the workflow should see thrown. */
  private async recordFailure(spec: JournaledSpec, error: unknown, durationMs: number): Promise<unknown> {
    const { key, phase, kind } = spec;
    const reason: unknown = this.signal.aborted ? this.signal.reason : error;
    if (reason instanceof LeaseLostSignal) return reason;
    if (reason instanceof InterruptSignal) {
      // Interrupted steps are retried on resume like failed ones, without counting as crashes.
      const info: ErrorInfo = { code: 'INTERRUPTED', message: reason.message };
      reportOperation({ type: 'step-end', kind, status: 'interrupted', durationMs });
      const events = [event('step-end', { key, phase, kind, status: 'interrupted', durationMs })];
      await this.write(() => this.store.failStep(this.lease, { runId: this.runId, key, error: info, events })).catch(
        () => undefined,
      );
      return reason;
    }
    const info = stepErrorInfo(error);
    reportOperation({ type: 'step-end', kind, status: 'failed', durationMs });
    const events = [event('step-end', { key, phase, kind, status: 'failed', durationMs, error: info })];
    await this.write(() => this.store.failStep(this.lease, { runId: this.runId, key, error: info, events }));
    return new QuarryError('STEP_FAILED', `Step "${key}" failed: ${info.message}`, {
      details: { key, phase, cause: info.code },
      isRetryable: isQuarryError(error) ? error.isRetryable : false,
      cause: error,
    });
  }

  /**
   * Runs a store call. A store that is busy or unreachable (a restart, a network blip) is waited out
   * with back-off for as long as the lease lasts (the lease keeper gives up, and aborts, once it has
   * expired unrenewed). A lost lease stops the whole activation and surfaces as its signal.
   * `recover` answers a retry that finds its first attempt did land after all (its reply was lost).
   */
  private async write<T>(call: () => Promise<T>, recover?: (error: unknown) => Promise<T | undefined>): Promise<T> {
    let retried = false;
    try {
      return await withRetry(
        async () => {
          try {
            // A write that gets no answer (a connection gone silent) is not waited for once the
            // lease is lost: the store fences it, so it cannot land as this worker's any more.
            const value = await raceAbort(call(), this.leaseLost);
            await letIoRun();
            return value;
          } catch (error) {
            const landed = retried && recover ? await recover(error) : undefined;
            if (landed !== undefined) return landed;
            throw error;
          }
        },
        {
          attempts: Number.POSITIVE_INFINITY,
          baseDelayMs: 250,
          maxDelayMs: 5_000,
          signal: this.signal,
          onRetry: ({ error }) => {
            retried = true;
            reportOperation({ type: 'store-retry', code: isQuarryError(error) ? error.code : 'INTERNAL' });
          },
        },
      );
    } catch (error) {
      if (isQuarryError(error, 'LEASE_LOST') || isQuarryError(error, 'SESSION_NOT_FOUND')) {
        this.onLeaseLost();
        throw new LeaseLostSignal(this.sessionId);
      }
      if (this.signal.aborted) throw this.signal.reason;
      throw error;
    }
  }

  /** The step as stored when a retried write finds it already completed (the first try landed). */
  private completedAfterAll(key: string) {
    return async (error: unknown): Promise<StepRecord | undefined> => {
      if (!isQuarryError(error, 'CONFLICT')) return undefined;
      const stored = (await this.store.loadJournal(this.runId)).find((record) => record.key === key);
      return stored?.status === 'completed' ? stored : undefined;
    };
  }

  private claimKey(key: string): void {
    if (this.usedKeys.has(key)) {
      throw new QuarryError(
        'DUPLICATE_STEP_KEY',
        `Step key "${key}" is used twice in one run; step keys must be unique.`,
        { details: { key } },
      );
    }
    this.usedKeys.add(key);
  }

  private throwIfAborted(): void {
    if (this.signal.aborted) throw this.signal.reason;
  }
}
