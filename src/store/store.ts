/**
 * The session store: the one interface every backend implements and the conformance suite checks
 * (`src/store/conformance/`). Types and contracts only; no implementation lives here.
 *
 * Conventions that hold for every method:
 * - Times are milliseconds since the Unix epoch, read from the database clock.
 * - Unknown session ids throw `SESSION_NOT_FOUND`; invalid fields throw `INVALID_INPUT` naming the
 *   field; oversized payloads throw `PAYLOAD_TOO_LARGE`. A rejected call changes nothing.
 * - Methods that take an `ownerId` only see sessions of that owner; another owner's session is
 *   "not found". Omitting `ownerId` means "any owner" (trusted callers: the engine, workers).
 * - Methods that take a `fence` are writes by the worker that holds the session's lease. They check
 *   the lease epoch in the same transaction as the write and throw `LEASE_LOST` when another claim or
 *   a release happened since, without writing anything.
 */

import type { ErrorInfo } from '../shared/errors.ts';
import type { QuarryEvent, StoredEvent } from '../shared/events.ts';
import type { StepKind } from '../shared/step-kinds.ts';
import type { Accounts } from './accounts-contract.ts';
import type { CheckpointSnapshot } from './checkpoint-tables.ts';
import type { Corpus } from './corpus-contract.ts';

export const sessionStatuses = ['queued', 'running', 'waiting', 'completed', 'failed', 'interrupted'] as const;
export type SessionStatus = (typeof sessionStatuses)[number];

export const messageRoles = ['user', 'assistant', 'system'] as const;
export type MessageRole = (typeof messageRoles)[number];

export { type StepKind, stepKinds } from '../shared/step-kinds.ts';

/** `running`: begun and not yet ended (or its worker died). `superseded`: rewound; kept, never replayed. */
export type StepStatus = 'running' | 'completed' | 'failed' | 'superseded';

export interface WorkflowRef {
  name: string;
  /** Incremented when a change makes old journals unreplayable. */
  version: number;
}

/** Where a session stands, kept on the session row so listings never read journals. */
export interface SessionProgress {
  /** Phase of the most recently completed step of the current run, or null before any. */
  phase: string | null;
  /** Completed, not superseded steps of the current run. */
  completedSteps: number;
  /** Recorded, not superseded steps of the current run (completed or not). */
  knownSteps: number;
  /** Key of the first recorded step that has not completed (by `seq`), or null. */
  nextStep: string | null;
}

export interface LeaseInfo {
  workerId: string;
  epoch: number;
  expiresAt: number;
  /** The machine (and process namespace) and process that hold it, when the claimer said so. */
  host: string | null;
  pid: number | null;
}

export type { ErrorInfo } from '../shared/errors.ts';
export type { Accounts, ApiToken, User } from './accounts-contract.ts';
export type {
  Corpus,
  CorpusDocument,
  PassageHit,
  PassageInput,
  SearchPassagesInput,
  UpsertDocumentInput,
} from './corpus-contract.ts';
export type { CheckpointSnapshot };

export interface Session {
  id: string;
  ownerId: string;
  title: string;
  question: string;
  /**
   * Effective status: a `running` session whose lease has expired is reported as `interrupted`
   * (see `storedStatus` for the raw column).
   */
  status: SessionStatus;
  storedStatus: SessionStatus;
  settings: Record<string, unknown>;
  workflow: WorkflowRef;
  currentRunId: string | null;
  progress: SessionProgress;
  /** The live or last lease; `null` when released. */
  lease: LeaseInfo | null;
  /** Epoch of the most recent claim; grows on every claim and never goes back. */
  leaseEpoch: number;
  /** Claims since the session last ended cleanly (completed, waiting, interrupted, failed by its run). */
  claimCount: number;
  stopRequested: boolean;
  error: ErrorInfo | null;
  /** Offset of the newest event, 0 when there are none. */
  lastEventOffset: number;
  /** The session this one was forked from. */
  forkedFrom: string | null;
  /** The caller's own id for it (a job id), unique per owner. */
  externalId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface Message {
  id: string;
  sessionId: string;
  /** 1, 2, 3… in order of appending within the session. */
  seq: number;
  role: MessageRole;
  content: string;
  runId: string | null;
  phase: string | null;
  createdAt: number;
}

export type RunStatus = 'open' | 'completed' | 'failed';

export interface Run {
  id: string;
  sessionId: string;
  /** 1 for the first run of a session, then 2, 3… */
  number: number;
  /** What started it: `initial`, `follow-up`, `feedback`, or any workflow-defined word. */
  kind: string;
  input: unknown;
  status: RunStatus;
  output: unknown;
  createdAt: number;
  endedAt: number | null;
  /** The W3C `traceparent` of the request that started it, when tracing was on. */
  traceContext: string | null;
}

export interface StepUsage {
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
  latencyMs?: number;
}

/** A completed step's key and what it spent, for sums over a session. */
export interface StepUsageRecord {
  key: string;
  usage: StepUsage | null;
}

/** One journaled step. `input` and `output` are decoded JSON values (`undefined` round-trips). */
export interface StepRecord {
  runId: string;
  key: string;
  /** Order of first recording within the run, from 1; a re-recorded key after a rewind gets a new seq. */
  seq: number;
  phase: string | null;
  kind: StepKind;
  status: StepStatus;
  /** How many times this step was begun. */
  attempts: number;
  input: unknown;
  output: unknown;
  error: ErrorInfo | null;
  usage: StepUsage | null;
  startedAt: number;
  endedAt: number | null;
  /** Parts the store holds but cannot give back (damage on disk), each with what is wrong. */
  damage?: StepDamage;
}

/** Which payloads of a step are damaged in the store, and how; a damaged payload reads as absent. */
export interface StepDamage {
  /** The whole row could not be read: the step is shown as failed, with only its place known. */
  row?: string;
  input?: string;
  output?: string;
  usage?: string;
  prompt?: string;
}

/** The prompt of an LLM step, stored apart from the journal and loaded only on request. */
export interface StepPrompt {
  /** `provider:model`. */
  model?: string;
  system?: string;
  user: string;
}

export interface StepDetail extends StepRecord {
  prompt: StepPrompt | null;
}

export interface Source {
  id: string;
  sessionId: string;
  /** A URL, or a `file://` URL for a local document. */
  url: string;
  title: string;
  contentHash: string | null;
  /** Number used in `[n]` markers once cited; null until then. */
  citation: number | null;
  timesConsidered: number;
  timesSelected: number;
  metadata: Record<string, unknown>;
  runId: string | null;
  createdAt: number;
}

export type { EventType, QuarryEvent, StoredEvent } from '../shared/events.ts';

export interface Lease {
  sessionId: string;
  workerId: string;
  epoch: number;
  expiresAt: number;
  /** Set by `claimNext` when the claim took a lapsed lease over (its holder died). */
  tookOver?: boolean;
}

/** What fenced writes carry: the claim they were made under. */
export interface Fence {
  sessionId: string;
  epoch: number;
}

/** A whole session as export files carry it; `importSession` recreates it. */
export interface SessionSnapshot {
  session: {
    id: string;
    /** A LangGraph thread's `langgraph:<thread id>`, which an import keeps (others are not exported). */
    externalId?: string | null;
    title: string;
    question: string;
    status: SessionStatus;
    settings: Record<string, unknown>;
    workflow: WorkflowRef;
    error: ErrorInfo | null;
    createdAt: number;
    updatedAt: number;
  };
  messages: Pick<Message, 'seq' | 'role' | 'content' | 'runId' | 'phase' | 'createdAt'>[];
  runs: Pick<Run, 'id' | 'number' | 'kind' | 'input' | 'status' | 'output' | 'createdAt' | 'endedAt'>[];
  /** Live steps of every run, with prompts. */
  steps: StepDetail[];
  sources: Pick<
    Source,
    | 'url'
    | 'title'
    | 'contentHash'
    | 'citation'
    | 'timesConsidered'
    | 'timesSelected'
    | 'metadata'
    | 'runId'
    | 'createdAt'
  >[];
  /** A LangGraph thread's checkpoints, oldest first (absent for a research session). */
  checkpoints?: CheckpointSnapshot[];
}

/** An event as it is written (type and its data), before the store numbers it. */
export type EventInput = QuarryEvent;

// ---------------------------------------------------------------------------------------------
// Inputs

/**
 * Limits a write that adds a session or makes one runnable is admitted under: checked with the
 * write, in its transaction, under a lock per owner, so concurrent writes cannot exceed them
 * (`RATE_LIMITED` otherwise). Omitted: no limit (the CLI's local user).
 */
export interface Admission {
  /** Sessions the owner may keep in all (checked when one is added). */
  sessions?: number;
  /** Sessions the owner may have queued or running at once (checked when one becomes runnable). */
  activeRuns?: number;
}

export interface CreateSessionInput {
  /** Chosen by the store when omitted. */
  id?: string;
  ownerId: string;
  title: string;
  question: string;
  settings?: Record<string, unknown>;
  workflow: WorkflowRef;
  /** Defaults to `queued`. */
  status?: 'queued' | 'interrupted';
  /** The first message, appended in the same transaction. */
  message?: { role: MessageRole; content: string };
  /** The first run, started in the same transaction (it becomes `currentRunId`). */
  run?: { kind: string; input?: unknown; traceContext?: string | null };
  /** The caller's own id; a second session with the same one for the same owner is a `CONFLICT`. */
  externalId?: string;
  /** Checked as the session is added (`activeRuns` only when it is created `queued`). */
  admission?: Admission;
}

export interface ListSessionsOptions {
  ownerId?: string;
  /** Matches the effective status. */
  status?: SessionStatus[];
  /** Case-insensitive substring of the title or the question. */
  search?: string;
  /** 1–500, default 50. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface SessionPage {
  /** Newest `updatedAt` first, ties by id. */
  sessions: Session[];
  /** Null on the last page. Keyset cursor: rows inserted or updated meanwhile never repeat a row. */
  nextCursor: string | null;
}

export interface UpdateSessionInput {
  title?: string;
  settings?: Record<string, unknown>;
  /** Only while no live lease is held; otherwise `SESSION_ALREADY_RUNNING`. */
  status?: SessionStatus;
  error?: ErrorInfo | null;
  /** Given by a worker (a run renaming its session): checked like every fenced write. */
  fence?: Fence;
}

export interface OwnerScope {
  ownerId?: string;
}

export interface AppendMessageInput {
  sessionId: string;
  role: MessageRole;
  content: string;
  runId?: string | null;
  phase?: string | null;
  /** Given by a worker: checked like every fenced write. */
  fence?: Fence;
}

export interface StartRunInput {
  sessionId: string;
  kind: string;
  input?: unknown;
  message?: { role: MessageRole; content: string };
  /** Only a session without a live lease gets a new run; otherwise `SESSION_ALREADY_RUNNING`. */
  ownerId?: string;
  /** `interrupted`: the run waits for its starter to claim it (no worker takes it first); default `queued`. */
  status?: 'queued' | 'interrupted';
  /** `activeRuns`, checked as the run is added (queued, or parked for its starter to claim at once). */
  admission?: Pick<Admission, 'activeRuns'>;
  /** The W3C `traceparent` the run continues (`OwnerStore` fills it in from the active span). */
  traceContext?: string | null;
  /** The session's settings from this run on, written with it (a server's budgets brought within its ceilings). */
  settings?: Record<string, unknown>;
}

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

export interface UpsertSourceInput {
  sessionId: string;
  url: string;
  title?: string;
  contentHash?: string | null;
  /** Added to the counters. */
  considered?: number;
  selected?: number;
  /** Sets the citation number (once cited, keep it stable). */
  citation?: number;
  metadata?: Record<string, unknown>;
  runId?: string | null;
  fence?: Fence;
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

export type StopResult = 'interrupted' | 'requested' | 'not-running';

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

export interface ForkSessionInput {
  sessionId: string;
  /**
   * The step to fork before, in the source's current run (in run `throughRun` when given: an
   * earlier turn). Omitted: copy the whole journal.
   */
  beforeStep?: string;
  /**
   * Copy the runs up to this number whole and nothing after (a branch at the end of a turn): the
   * copy is `completed` when that run completed. With `beforeStep`, that run is cut before it.
   */
  throughRun?: number;
  ownerId?: string;
  newSessionId?: string;
  title?: string;
  /** The workflow of the copy, when it differs (a fork under a newer version). */
  workflow?: WorkflowRef;
  /** `sessions`, checked as the copy is added. */
  admission?: Pick<Admission, 'sessions'>;
}

export const finishedStatuses = ['completed', 'failed', 'interrupted'] as const;
export type FinishedStatus = (typeof finishedStatuses)[number];

export interface DeleteFinishedOptions {
  /** Sessions whose `updatedAt` is at or before now minus this (0: every finished session). */
  olderThanMs: number;
  /** Which finished statuses; default `completed` and `failed` (an interrupted session can still be resumed). */
  statuses?: FinishedStatus[];
  /** Only this owner's sessions. */
  ownerId?: string;
  /** Count what would be deleted, deleting nothing. */
  dryRun?: boolean;
  /** Rows per transaction, default 100. */
  batchSize?: number;
  signal?: AbortSignal;
}

export interface StoreInfo {
  backend: 'sqlite' | 'postgres';
  /** File path or connection string without password. */
  location: string;
  schemaVersion: number;
  /** True when `subscribe` hears writes made by other processes without polling. */
  crossProcessNotifications: boolean;
}

/**
 * Listener for new events; `offset` is the newest known offset (a hint; read to be sure). Offset 0
 * says the session was deleted, and then `ownerId` names whose it was.
 */
export type EventListener = (sessionId: string, offset: number, ownerId?: string) => void;

// ---------------------------------------------------------------------------------------------

/**
 * Sessions as their people see them: the session rows, their messages, runs and sources, and the
 * operations on whole sessions (import, fork, retention, stop).
 */
export interface SessionStore {
  /** Creates a session (and, in the same transaction, its first message and run). */
  createSession(input: CreateSessionInput): Promise<Session>;
  getSession(sessionId: string, scope?: OwnerScope): Promise<Session>;
  /** The owner's session with this external id, or null. */
  findSessionByExternalId(externalId: string, scope: Required<OwnerScope>): Promise<Session | null>;
  /** Sessions forked from this one (the owner's), oldest first. */
  listForks(sessionId: string, scope?: OwnerScope): Promise<Session[]>;
  /** Reads session rows only. Newest `updatedAt` first; keyset pagination. */
  listSessions(options?: ListSessionsOptions): Promise<SessionPage>;
  /** How many sessions there are (the owner's, when scoped): for per-user limits. */
  countSessions(scope?: OwnerScope): Promise<number>;
  /** Every user's sessions by status as listings show it (a dead lease's `running` is `interrupted`): for an operator's metrics. */
  countSessionsByStatus(): Promise<Record<SessionStatus, number>>;
  /** Ids that start with `prefix` (at most `limit`, default 10), for short ids in the CLI. */
  findSessionIds(prefix: string, options?: OwnerScope & { limit?: number }): Promise<string[]>;
  updateSession(sessionId: string, patch: UpdateSessionInput, scope?: OwnerScope): Promise<Session>;
  /**
   * Removes the session and everything that belongs to it (messages, runs, steps, sources,
   * events, inbox, blob references, and blobs no other session refers to) in one transaction.
   */
  deleteSession(sessionId: string, scope?: OwnerScope): Promise<void>;
  /**
   * Gives the session a read-only share link by its token's hash (a link it had stops working), or
   * removes its link (`null`). Returns when the link was made (ms since the epoch), or null.
   */
  setShareLink(sessionId: string, tokenHash: string | null, scope?: OwnerScope): Promise<number | null>;
  /** When the session's share link was made, or null when it has none. */
  shareLinkOf(sessionId: string, scope?: OwnerScope): Promise<number | null>;
  /** The session a share link's token hash opens, with its owner, or null. */
  findSharedSession(tokenHash: string): Promise<{ sessionId: string; ownerId: string } | null>;

  // Messages -------------------------------------------------------------------------------
  appendMessage(input: AppendMessageInput): Promise<Message>;
  /** In `seq` order. */
  listMessages(sessionId: string, options?: { runId?: string; phase?: string } & OwnerScope): Promise<Message[]>;

  // Runs -----------------------------------------------------------------------------------
  /**
   * Starts a new run (and appends its message) in one transaction; the run becomes the session's
   * current run, progress restarts at zero and the session is `queued`.
   */
  startRun(input: StartRunInput): Promise<{ run: Run; message: Message | null }>;
  getRun(runId: string): Promise<Run>;
  /** Oldest first. */
  listRuns(sessionId: string, scope?: OwnerScope): Promise<Run[]>;

  // Sources --------------------------------------------------------------------------------
  /** Inserts or updates the session's source with this URL (unique per session). */
  upsertSource(input: UpsertSourceInput): Promise<Source>;
  /** Cited ones first by citation number, then by discovery. */
  listSources(sessionId: string, scope?: OwnerScope): Promise<Source[]>;

  // LangGraph checkpoints -------------------------------------------------------------------
  /** A LangGraph thread's checkpoints as export files carry them, oldest first (none for a research session). */
  listCheckpointSnapshots(sessionId: string, scope?: OwnerScope): Promise<CheckpointSnapshot[]>;

  // Import ---------------------------------------------------------------------------------
  /**
   * Recreates a session from a snapshot in one transaction, owned by `ownerId`. Keeps the
   * snapshot's ids when they are free, else gives the session and its runs new ones. A session that
   * was running arrives `interrupted` (ready to resume); payloads are stored as blobs as usual.
   */
  importSession(
    snapshot: SessionSnapshot,
    options: { ownerId: string; admission?: Pick<Admission, 'sessions'> },
  ): Promise<Session>;

  // Fork and retention ---------------------------------------------------------------------
  /**
   * Copies messages, runs, journal and sources (blobs shared, never copied) up to `beforeStep` into
   * a new `interrupted` session, ready to resume; the source session is not changed.
   */
  forkSession(input: ForkSessionInput): Promise<Session>;
  /**
   * Deletes finished sessions (`completed` and `failed` unless `statuses` says otherwise) not
   * updated for `olderThanMs`, in batches; never touches queued, running or waiting sessions.
   * `dryRun` counts them instead.
   */
  deleteFinishedSessions(options: DeleteFinishedOptions): Promise<{ deleted: number }>;
  /** Asks the session to stop: a queued session becomes `interrupted` at once; a leased one is flagged for its worker. */
  requestStop(sessionId: string, scope?: OwnerScope & { reason?: string }): Promise<StopResult>;
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

/** Each session's ordered event log, and the notifications that something was written. */
export interface EventLog {
  appendEvent(input: { sessionId: string; fence?: Fence; event: EventInput }): Promise<StoredEvent>;
  /** Events with `offset > after` (default 0), oldest first, at most `limit` (default 1000). */
  readEvents(sessionId: string, options?: { after?: number; limit?: number } & OwnerScope): Promise<StoredEvent[]>;
  /**
   * Calls `listener` after events are committed for the session (`'*'`: any session). Returns the
   * unsubscribe function. Never throws into the caller's code.
   */
  subscribe(sessionId: string | '*', listener: EventListener): () => void;
  /** Calls `listener` when a session may have become runnable (queued, released, answered). */
  onRunnable(listener: () => void): () => void;
}

/**
 * What the engine (runner, activation, run context) uses of the store: sessions, their journal and
 * their events; never the corpus or the accounts.
 */
export type EngineStore = SessionStore & Journal & EventLog;

/**
 * Everything a backend implements: each concern above, plus what the backend is and its closing.
 * Callers take the narrowest part they need (the indexer a `Corpus`, sign-in the `Accounts`).
 */
export interface Store extends SessionStore, Journal, EventLog, Corpus, Accounts {
  info(): StoreInfo;
  /** Closes the connections; any call after it throws `STORE_UNAVAILABLE`. */
  close(): Promise<void>;
}
