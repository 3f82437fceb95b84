import * as z from 'zod';
import { optional } from 'zod';
import type { ErrorInfo } from '../shared/errors.ts';
import {
  admission,
  beginStep,
  errorInfo,
  events,
  fence,
  id,
  int,
  lease,
  limits,
  maybe,
  nonEmpty,
  payload,
  sha256Hex,
  someOf,
  status,
  stepKey,
  ttlMs,
  usage,
} from './schema-parts.ts';
import { asNarrowAs, type CheckedTable, type SchemaTable } from './schema-table.ts';
import type {
  Admission,
  EventInput,
  Fence,
  Lease,
  OwnerScope,
  Session,
  SessionStatus,
  StepDetail,
  StepKind,
  StepPrompt,
  StepRecord,
  StepUsage,
  StepUsageRecord,
} from './store-entities.ts';

/**
 * How runs execute — leases, the journal of steps with its blobs, and the inbox of human answers —
 * as one of the store's concerns (`Store` extends `Journal`): the interface, its input types, and
 * each operation's argument schemas, which the validating store applies in front of every backend.
 */

export interface BeginStepInput {
  runId: string;
  key: string;
  phase?: string | null;
  kind: StepKind;
  input?: unknown;
  /** What a model step sends; stored as it begins (each attempt replaces it), loaded only on request. */
  prompt?: StepPrompt;
  events?: EventInput[];
}

export interface CompleteStepInput {
  runId: string;
  key: string;
  output: unknown;
  usage?: StepUsage;
  events?: EventInput[];
}

export interface FailStepInput {
  runId: string;
  key: string;
  error: ErrorInfo;
  events?: EventInput[];
}

/** A step begun and completed in one transaction (clock readings, random draws, fast work). */
export interface RecordStepInput extends BeginStepInput {
  output: unknown;
  usage?: StepUsage;
}

export interface ListStepsOptions {
  runId?: string;
  phase?: string;
  includeSuperseded?: boolean;
  /** Adds the prompt of each LLM step. */
  includePrompts?: boolean;
}

export interface ClaimSessionInput {
  sessionId: string;
  workerId: string;
  ttlMs: number;
  /** Stored statuses the claim accepts; default: every status but `completed`. */
  fromStatuses?: SessionStatus[];
  ownerId?: string;
  /** Where the claimer runs, recorded with the lease so a crash can be recognized at once. */
  host?: string;
  pid?: number;
  /**
   * Take the lease even though it has not expired, provided it still has exactly this epoch: for a
   * claimer that has seen its holder is a dead process on its own machine. Fencing is unchanged
   * (the epoch moves on, so the dead holder's writes could never land).
   */
  takeOverEpoch?: number;
  /** `activeRuns`, checked as the claim makes the session running (a user's resume; never a worker's claim). */
  admission?: Pick<Admission, 'activeRuns'>;
}

export interface ClaimNextInput {
  workerId: string;
  ttlMs: number;
  host?: string;
  pid?: number;
  /**
   * A runnable session already claimed this many times without ending cleanly is parked as
   * `failed` with a `CLAIM_LIMIT` error instead of being claimed again. Default 5.
   */
  maxClaims?: number;
}

export interface HeartbeatResult {
  expiresAt: number;
  /** Set by `requestStop`; the worker should interrupt the session. */
  stopRequested: boolean;
  /** Why, when the request said (`requestStop`'s `reason`). */
  stopReason: string | null;
}

export interface ReleaseInput {
  status: 'completed' | 'failed' | 'interrupted' | 'waiting' | 'queued';
  error?: ErrorInfo | null;
  /** With `completed`/`failed`: closes the current run with this output or error. */
  runOutput?: unknown;
  /**
   * With `waiting`: the request key of the current run's input step. If its answer is already in the inbox (it
   * arrived while the worker was still finishing), the session is released `queued` instead, in
   * the same transaction, so an early answer is never stranded.
   */
  waitingFor?: string;
  events?: EventInput[];
}

export interface DeliverInputInput {
  sessionId: string;
  /** The run that asked; answers belong to one run (a follow-up asking again is a new request). */
  runId: string;
  /** The key of the `input` step that waits for it. */
  requestKey: string;
  value: unknown;
  ownerId?: string;
}

export interface DeliverInputResult {
  /** False when an answer for this request was already recorded (that one stands). */
  accepted: boolean;
  /** The answer that stands. */
  value: unknown;
  /** True when the delivery moved the session from `waiting` to `queued`. */
  queued: boolean;
}

/** How runs execute: leases, the journal of steps (with its blobs), and the inbox of human answers. */
export interface Journal {
  /**
   * Claims the session for `workerId` until now + `ttlMs` (database clock). Throws
   * `SESSION_ALREADY_RUNNING` when another live lease holds it, `SESSION_COMPLETED` when its
   * stored status is not in `fromStatuses`. The new epoch is the previous epoch + 1.
   */
  claimSession(input: ClaimSessionInput): Promise<Lease>;
  /**
   * Claims the least recently updated runnable session (`queued`, or `running` with an expired
   * lease), skipping rows other workers are claiming; null when there is none.
   */
  claimNext(input: ClaimNextInput): Promise<Lease | null>;
  /** Extends a lease that still holds its epoch; throws `LEASE_LOST` otherwise. */
  heartbeat(lease: Lease, ttlMs: number): Promise<HeartbeatResult>;
  /** Ends the lease (fenced) and sets the session status; `completed`/`waiting`/`interrupted` reset the claim count. */
  release(lease: Lease, input: ReleaseInput): Promise<Session>;

  // Journal --------------------------------------------------------------------------------
  /**
   * Records that a step starts. The first record of a key gets the next `seq`; beginning a key
   * that is `running` or `failed` again counts another attempt. Beginning a completed key throws
   * `CONFLICT`.
   */
  beginStep(fence: Fence, input: BeginStepInput): Promise<StepRecord>;
  /** Marks a begun step completed with its output; throws `STEP_NOT_FOUND` if it was not begun. */
  completeStep(fence: Fence, input: CompleteStepInput): Promise<StepRecord>;
  failStep(fence: Fence, input: FailStepInput): Promise<StepRecord>;
  /** `beginStep` and `completeStep` in one transaction. */
  recordStep(fence: Fence, input: RecordStepInput): Promise<StepRecord>;
  /**
   * Marks every live step of the run with `seq >= fromSeq` superseded, forgets the answers to the
   * input steps among them, and reopens the run; returns how many steps.
   */
  supersedeSteps(fence: Fence, input: { runId: string; fromSeq: number; events?: EventInput[] }): Promise<number>;
  /** The run's journal in one query, `seq` order; live steps only unless asked. */
  loadJournal(runId: string, options?: { includeSuperseded?: boolean }): Promise<StepRecord[]>;
  /** Steps of a session across its runs (run order, then `seq`). */
  listSteps(sessionId: string, options?: ListStepsOptions & OwnerScope): Promise<StepDetail[]>;
  /** Every completed step of every run (superseded ones too: their tokens were spent), key and usage only. */
  listStepUsage(sessionId: string, scope?: OwnerScope): Promise<StepUsageRecord[]>;
  /** One live step with its prompt; throws `STEP_NOT_FOUND`. */
  getStep(runId: string, key: string): Promise<StepDetail>;

  // Blobs ----------------------------------------------------------------------------------
  /** Stores bytes once by sha-256 and records that the session refers to them; returns the hex hash. */
  putBlob(sessionId: string, data: Uint8Array): Promise<string>;
  /** Null when no such blob exists. */
  getBlob(hash: string): Promise<Buffer | null>;

  // Inbox ----------------------------------------------------------------------------------
  /**
   * Records a human answer once per (run, request); a waiting session becomes `queued` in the same
   * transaction. Rewinding past the request's step (`supersedeSteps`) forgets the answer.
   */
  deliverInput(input: DeliverInputInput): Promise<DeliverInputResult>;
  /** The recorded answer, or `undefined` when none has arrived. */
  readInput(runId: string, requestKey: string): Promise<{ value: unknown } | undefined>;
}

/** The Journal operations' argument schemas, one per positional argument (see `validating-store.ts`). */
export const journalSchemas = {
  claimSession: [
    z.object({
      sessionId: id(),
      workerId: nonEmpty(200),
      ttlMs: ttlMs(),
      fromStatuses: optional(someOf(status())),
      ownerId: optional(id()),
      host: optional(nonEmpty(500)),
      pid: optional(int(0)),
      takeOverEpoch: optional(int(0)),
      admission: admission(),
    }),
  ],
  claimNext: [
    z.object({
      workerId: nonEmpty(200),
      ttlMs: ttlMs(),
      maxClaims: optional(int(1)),
      host: optional(nonEmpty(500)),
      pid: optional(int(0)),
    }),
  ],
  heartbeat: [lease(), ttlMs()],
  release: [
    lease(),
    z.object({
      status: z.enum(['completed', 'failed', 'interrupted', 'waiting', 'queued']),
      error: maybe(errorInfo()),
      runOutput: payload(limits.payloadBytes),
      waitingFor: optional(stepKey()),
      events: events(),
    }),
  ],
  beginStep: [fence(), beginStep()],
  completeStep: [
    fence(),
    z.object({ runId: id(), key: stepKey(), output: payload(limits.payloadBytes), usage: usage(), events: events() }),
  ],
  failStep: [fence(), z.object({ runId: id(), key: stepKey(), error: errorInfo(), events: events() })],
  recordStep: [fence(), beginStep().extend({ output: payload(limits.payloadBytes), usage: usage() })],
  supersedeSteps: [fence(), z.object({ runId: id(), fromSeq: int(1), events: events() })],
  loadJournal: [id()],
  listSteps: [id()],
  listStepUsage: [id()],
  getStep: [id(), stepKey()],
  putBlob: [
    id(),
    // (`instanceof` types its value as a Uint8Array over an ArrayBuffer; any Uint8Array is taken.)
    asNarrowAs<Uint8Array>()(
      z.instanceof(Uint8Array).check(
        z.refine((data) => data.byteLength <= limits.blobBytes, {
          message: `exceeds ${limits.blobBytes} bytes`,
          params: { tooLarge: true },
        }),
      ),
    ),
  ],
  getBlob: [sha256Hex('must be a sha-256 hex digest')],
  deliverInput: [
    z.object({
      sessionId: id(),
      runId: id(),
      requestKey: stepKey(),
      value: payload(limits.messageChars),
      ownerId: optional(id()),
    }),
  ],
  readInput: [id(), stepKey()],
} as const satisfies SchemaTable<Journal>;

/** Each schema checked against its operation's signature: a missing or drifting one does not compile. */
const checkedAgainstJournal: CheckedTable<Journal, typeof journalSchemas> = journalSchemas;
void checkedAgainstJournal;
