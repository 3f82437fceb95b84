import * as z from 'zod';
import { optional } from 'zod';
import type { ErrorInfo } from '../shared/errors.ts';
import type { CheckpointSnapshot } from './checkpoint-tables.ts';
import {
  admission,
  bigText,
  errorInfo,
  fence,
  id,
  int,
  limits,
  maybe,
  message,
  nonEmpty,
  ownerScope,
  payload,
  phase,
  role,
  settings,
  sha256Hex,
  someOf,
  status,
  stepKey,
  text,
  traceparent,
  workflow,
} from './schema-parts.ts';
import { asNarrowAs, type CheckedTable, type SchemaTable } from './schema-table.ts';
import { sessionSnapshotSchema } from './snapshot-schema.ts';
import type {
  Admission,
  Fence,
  Message,
  MessageRole,
  OwnerScope,
  Run,
  Session,
  SessionSnapshot,
  SessionStatus,
  Source,
  WorkflowRef,
} from './store-entities.ts';

/**
 * Sessions as their people see them — the session rows, their messages, runs and sources, and the
 * operations on whole sessions — as one of the store's concerns (`Store` extends `SessionStore`): the
 * interface, its input types, and each operation's argument schemas, which the validating store
 * applies in front of every backend.
 */

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

export type StopResult = 'interrupted' | 'requested' | 'not-running';

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

/** The SessionStore operations' argument schemas, one per positional argument (see `validating-store.ts`). */
export const sessionSchemas = {
  createSession: [
    z.object({
      id: optional(id()),
      ownerId: id(),
      title: nonEmpty(limits.titleChars),
      question: bigText(limits.questionChars).check(z.trim(), z.minLength(1, 'must not be empty')),
      settings: optional(settings()),
      workflow: workflow(),
      status: optional(z.enum(['queued', 'interrupted'])),
      message: optional(message()),
      run: optional(
        z.object({ kind: nonEmpty(50), input: payload(limits.payloadBytes), traceContext: maybe(traceparent()) }),
      ),
      externalId: optional(nonEmpty(200)),
      admission: admission(),
    }),
  ],
  getSession: [id(), ownerScope()],
  findSessionByExternalId: [nonEmpty(200), z.object({ ownerId: id() })],
  listForks: [id(), ownerScope()],
  setShareLink: [id(), maybe(sha256Hex('must be a sha-256 hex digest')), ownerScope()],
  shareLinkOf: [id(), ownerScope()],
  findSharedSession: [text(128)],
  listSessions: [
    optional(
      z.object({
        ownerId: optional(id()),
        status: optional(z.array(status())),
        search: optional(text(500)),
        limit: optional(int(1, limits.listLimit)),
        cursor: optional(text(1000)),
      }),
    ),
  ],
  countSessions: [ownerScope()],
  countSessionsByStatus: [],
  findSessionIds: [id(), optional(z.object({ ownerId: optional(id()), limit: optional(int(1, 100)) }))],
  updateSession: [
    id(),
    z.object({
      title: optional(nonEmpty(limits.titleChars)),
      settings: optional(settings()),
      status: optional(status()),
      error: maybe(errorInfo()),
      fence: optional(fence()),
    }),
    ownerScope(),
  ],
  deleteSession: [id(), ownerScope()],
  appendMessage: [
    z.object({
      sessionId: id(),
      role: role(),
      content: bigText(limits.messageChars),
      runId: maybe(id()),
      phase: phase(),
      fence: optional(fence()),
    }),
  ],
  listMessages: [
    id(),
    optional(z.object({ runId: optional(id()), phase: optional(text(100)), ownerId: optional(id()) })),
  ],
  startRun: [
    z.object({
      sessionId: id(),
      kind: nonEmpty(50),
      input: payload(limits.payloadBytes),
      message: optional(message()),
      ownerId: optional(id()),
      status: optional(z.enum(['queued', 'interrupted'])),
      admission: admission(),
      traceContext: maybe(traceparent()),
      settings: optional(settings()),
    }),
  ],
  getRun: [id()],
  listRuns: [id(), ownerScope()],
  upsertSource: [
    z.object({
      sessionId: id(),
      url: nonEmpty(4000),
      title: optional(text(1000)),
      contentHash: maybe(text(128)),
      considered: optional(int(0)),
      selected: optional(int(0)),
      citation: optional(int(1)),
      metadata: optional(settings()),
      runId: maybe(id()),
      fence: optional(fence()),
    }),
  ],
  listSources: [id(), ownerScope()],
  listCheckpointSnapshots: [id(), ownerScope()],
  // An export never holds superseded steps (they are left out when it is written): narrower on purpose.
  importSession: [
    asNarrowAs<SessionSnapshot>()(sessionSnapshotSchema),
    z.object({ ownerId: id(), admission: admission() }),
  ],
  forkSession: [
    z.object({
      sessionId: id(),
      beforeStep: optional(stepKey()),
      throughRun: optional(int(1)),
      ownerId: optional(id()),
      newSessionId: optional(id()),
      title: optional(nonEmpty(limits.titleChars)),
      workflow: optional(workflow()),
      admission: admission(),
    }),
  ],
  deleteFinishedSessions: [
    z.object({
      olderThanMs: int(0),
      statuses: optional(someOf(z.enum(finishedStatuses))),
      ownerId: optional(id()),
      dryRun: optional(z.boolean()),
      batchSize: optional(int(1, 10_000)),
      signal: optional(z.instanceof(AbortSignal)),
    }),
  ],
  requestStop: [id(), optional(z.object({ ownerId: optional(id()), reason: optional(text(200)) }))],
} as const satisfies SchemaTable<SessionStore>;

/** Each schema checked against its operation's signature: a missing or drifting one does not compile. */
const checkedAgainstSessionStore: CheckedTable<SessionStore, typeof sessionSchemas> = sessionSchemas;
void checkedAgainstSessionStore;
