import type { CheckpointTables } from '../checkpoint-tables.ts';
import type {
  AppendMessageInput,
  BeginStepInput,
  ClaimNextInput,
  ClaimSessionInput,
  CompleteStepInput,
  CreateSessionInput,
  DeleteFinishedOptions,
  DeliverInputInput,
  EventInput,
  EventListener,
  FailStepInput,
  Fence,
  ForkSessionInput,
  Lease,
  ListSessionsOptions,
  ListStepsOptions,
  OwnerScope,
  RecordStepInput,
  ReleaseInput,
  SearchPassagesInput,
  SessionSnapshot,
  StartRunInput,
  Store,
  StoreInfo,
  UpdateSessionInput,
  UpsertDocumentInput,
  UpsertSourceInput,
} from '../store.ts';
import { checkpointTables, listCheckpointSnapshots } from './checkpoints.ts';
import { putBlobInTx } from './codec.ts';
import { readSession, type SqlContext, touchSession } from './context.ts';
import {
  documentSketches,
  listDocuments,
  markDuplicates,
  readPassages,
  refreshCorpusStatistics,
  removeDocuments,
  searchPassages,
  touchDocument,
  upsertDocument,
} from './corpus.ts';
import { appendEvent, EVENTS_CHANNEL, readEvents } from './events.ts';
import { forkSession } from './fork.ts';
import { importSession } from './import.ts';
import { deliverInput, readInput } from './inbox.ts';
import { getStep, listSteps, listStepUsage, loadJournal, supersedeSteps } from './journal.ts';
import { beginStep, completeStep, failStep, recordStep } from './journal-writes.ts';
import { claimNext, claimSession, heartbeat, release, requestStop } from './leases.ts';
import { deleteFinishedSessions } from './retention.ts';
import { appendMessage, getRun, listMessages, listRuns, startRun } from './runs.ts';
import {
  countSessions,
  countSessionsByStatus,
  createSession,
  deleteSession,
  findSessionByExternalId,
  findSessionIds,
  findSharedSession,
  listForks,
  listSessions,
  setShareLink,
  shareLinkOf,
  updateSession,
} from './sessions.ts';
import { listSources, upsertSource } from './sources.ts';
import type { SqlDriver } from './sql-driver.ts';
import {
  addApiToken,
  adoptSessions,
  createUser,
  deleteApiToken,
  deleteUser,
  findToken,
  hasUsers,
  listApiTokens,
  listUsers,
} from './users.ts';

/**
 * The store on any SQL database: every query is written once here, and a `SqlDriver` (SQLite or
 * PostgreSQL) runs it. Inputs are assumed valid; `openStore` wraps this in `validatingStore`.
 */
export class SqlStore implements Store {
  private readonly ctx: SqlContext;
  private readonly schemaVersion: number;
  private readonly eventWatchers = new Map<string, Set<EventListener>>();
  private readonly knownOffsets = new Map<string, number>();
  private stopExternalWatch: (() => void) | null = null;
  private listeningForEvents = false;

  constructor(
    private readonly driver: SqlDriver,
    schemaVersion: number,
  ) {
    this.ctx = { driver, now: driver.dialect.nowMs };
    this.schemaVersion = schemaVersion;
  }

  /**
   * Starts hearing event notifications at the first subscription, not at open: a command that only
   * reads (`quarry ls`) opens no notification connection on PostgreSQL.
   */
  private listenForEvents(): void {
    if (this.listeningForEvents) return;
    this.listeningForEvents = true;
    // `id:offset`, or `id:0:owner` for a deletion (session ids never hold a colon).
    this.driver.listen(EVENTS_CHANNEL, (payload) => {
      const [sessionId, offset, ...owner] = payload.split(':');
      if (sessionId && offset !== undefined)
        this.emitEvents(sessionId, Number(offset), owner.length > 0 ? owner.join(':') : undefined);
      else void this.pollSubscribedOffsets();
    });
  }

  /** LangGraph's checkpoint tables on this store's connection (`quarry/langgraph`), outside the Store interface. */
  checkpointTables(): CheckpointTables {
    return checkpointTables(this.ctx);
  }

  info(): StoreInfo {
    return {
      backend: this.driver.dialect.name,
      location: this.driver.location,
      schemaVersion: this.schemaVersion,
      crossProcessNotifications: this.driver.dialect.crossProcessNotifications,
    };
  }

  async close(): Promise<void> {
    this.stopExternalWatch?.();
    await this.driver.close();
  }

  createSession = (input: CreateSessionInput) => createSession(this.ctx, input);
  getSession = (sessionId: string, scope?: OwnerScope) => readSession(this.ctx, this.driver, sessionId, scope);
  findSessionByExternalId = (externalId: string, scope: Required<OwnerScope>) =>
    findSessionByExternalId(this.ctx, externalId, scope);
  listForks = (sessionId: string, scope?: OwnerScope) => listForks(this.ctx, sessionId, scope);
  listSessions = (options?: ListSessionsOptions) => listSessions(this.ctx, options);
  countSessions = (scope?: OwnerScope) => countSessions(this.ctx, scope);
  countSessionsByStatus = () => countSessionsByStatus(this.ctx);
  findSessionIds = (prefix: string, options?: OwnerScope & { limit?: number }) =>
    findSessionIds(this.ctx, prefix, options);
  updateSession = (sessionId: string, patch: UpdateSessionInput, scope?: OwnerScope) =>
    updateSession(this.ctx, sessionId, patch, scope);
  deleteSession = (sessionId: string, scope?: OwnerScope) => deleteSession(this.ctx, sessionId, scope);
  setShareLink = (sessionId: string, tokenHash: string | null, scope?: OwnerScope) =>
    setShareLink(this.ctx, sessionId, tokenHash, scope);
  shareLinkOf = (sessionId: string, scope?: OwnerScope) => shareLinkOf(this.ctx, sessionId, scope);
  findSharedSession = (tokenHash: string) => findSharedSession(this.ctx, tokenHash);

  appendMessage = (input: AppendMessageInput) => appendMessage(this.ctx, input);
  listMessages = (sessionId: string, options?: { runId?: string; phase?: string } & OwnerScope) =>
    listMessages(this.ctx, sessionId, options);
  startRun = (input: StartRunInput) => startRun(this.ctx, input);
  getRun = (runId: string) => getRun(this.ctx, runId);
  listRuns = (sessionId: string, scope?: OwnerScope) => listRuns(this.ctx, sessionId, scope);

  beginStep = (fence: Fence, input: BeginStepInput) => beginStep(this.ctx, fence, input);
  completeStep = (fence: Fence, input: CompleteStepInput) => completeStep(this.ctx, fence, input);
  failStep = (fence: Fence, input: FailStepInput) => failStep(this.ctx, fence, input);
  recordStep = (fence: Fence, input: RecordStepInput) => recordStep(this.ctx, fence, input);
  supersedeSteps = (fence: Fence, input: { runId: string; fromSeq: number; events?: EventInput[] }) =>
    supersedeSteps(this.ctx, fence, input);
  loadJournal = (runId: string, options?: { includeSuperseded?: boolean }) => loadJournal(this.ctx, runId, options);
  listSteps = (sessionId: string, options?: ListStepsOptions & OwnerScope) => listSteps(this.ctx, sessionId, options);
  listStepUsage = (sessionId: string, scope?: OwnerScope) => listStepUsage(this.ctx, sessionId, scope);
  getStep = (runId: string, key: string) => getStep(this.ctx, runId, key);

  putBlob = (sessionId: string, data: Uint8Array) =>
    this.driver.transaction(async (tx) => {
      await touchSession(this.ctx, tx, sessionId);
      return putBlobInTx(tx, this.ctx.now, sessionId, data);
    });

  getBlob = async (hash: string) => {
    const rows = await this.driver.query<{ data: Uint8Array }>('SELECT data FROM blobs WHERE hash = ?', [hash]);
    return rows[0] ? Buffer.from(rows[0].data) : null;
  };

  upsertSource = (input: UpsertSourceInput) => upsertSource(this.ctx, input);
  listSources = (sessionId: string, scope?: OwnerScope) => listSources(this.ctx, sessionId, scope);
  listCheckpointSnapshots = (sessionId: string, scope?: OwnerScope) =>
    listCheckpointSnapshots(this.ctx, sessionId, scope);

  appendEvent = (input: { sessionId: string; fence?: Fence; event: EventInput }) => appendEvent(this.ctx, input);
  readEvents = (sessionId: string, options?: { after?: number; limit?: number } & OwnerScope) =>
    readEvents(this.ctx, sessionId, options);

  subscribe(sessionId: string | '*', listener: EventListener): () => void {
    let set = this.eventWatchers.get(sessionId);
    if (!set) {
      set = new Set();
      this.eventWatchers.set(sessionId, set);
    }
    set.add(listener);
    this.listenForEvents();
    this.watchExternalChanges();
    return () => {
      set.delete(listener);
      if (set.size === 0) this.eventWatchers.delete(sessionId);
    };
  }

  onRunnable(listener: () => void): () => void {
    const stopListening = this.driver.listen('runnable', () => listener());
    const stopExternal = this.driver.onExternalChange(() => listener());
    return () => {
      stopListening();
      stopExternal();
    };
  }

  claimSession = (input: ClaimSessionInput) => claimSession(this.ctx, input);
  claimNext = (input: ClaimNextInput) => claimNext(this.ctx, input);
  heartbeat = (lease: Lease, ttlMs: number) => heartbeat(this.ctx, lease, ttlMs);
  release = (lease: Lease, input: ReleaseInput) => release(this.ctx, lease, input);
  requestStop = (sessionId: string, scope?: OwnerScope) => requestStop(this.ctx, sessionId, scope);

  deliverInput = (input: DeliverInputInput) => deliverInput(this.ctx, input);
  readInput = (runId: string, requestKey: string) => readInput(this.ctx, runId, requestKey);

  createUser = (input: { id?: string; name: string }) => createUser(this.ctx, input);
  listUsers = () => listUsers(this.ctx);
  deleteUser = (userId: string) => deleteUser(this.ctx, userId);
  adoptSessions = (input: { fromOwnerId: string; toUserId: string }) => adoptSessions(this.ctx, input);
  hasUsers = () => hasUsers(this.ctx);
  addApiToken = (input: {
    userId: string;
    tokenHash: string;
    label?: string;
    expiresAt?: number | null;
    parentId?: string;
  }) => addApiToken(this.ctx, input);
  listApiTokens = (userId?: string) => listApiTokens(this.ctx, userId);
  deleteApiToken = (tokenId: string) => deleteApiToken(this.ctx, tokenId);
  findToken = (tokenHash: string) => findToken(this.ctx, tokenHash);

  upsertDocument = (input: UpsertDocumentInput) => upsertDocument(this.ctx, input);
  touchDocument = (input: { path: string; mtimeMs: number; size: number }) => touchDocument(this.ctx, input);
  listDocuments = (options?: { pathPrefix?: string }) => listDocuments(this.ctx, options);
  documentSketches = (options: { pathPrefix: string }) => documentSketches(this.ctx, options);
  markDuplicates = (entries: { path: string; duplicateOf: string | null }[]) => markDuplicates(this.ctx, entries);
  removeDocuments = (paths: string[]) => removeDocuments(this.ctx, paths);
  refreshCorpusStatistics = () => refreshCorpusStatistics(this.ctx);
  searchPassages = (input: SearchPassagesInput) => searchPassages(this.ctx, input);
  readPassages = (input: { path: string; positions: number[] }) => readPassages(this.ctx, input);

  importSession = (snapshot: SessionSnapshot, options: { ownerId: string }) =>
    importSession(this.ctx, snapshot, options);
  forkSession = (input: ForkSessionInput) => forkSession(this.ctx, input);
  deleteFinishedSessions = (options: DeleteFinishedOptions) => deleteFinishedSessions(this.ctx, options);

  private emitEvents(sessionId: string, offset: number, ownerId?: string): void {
    const known = this.knownOffsets.get(sessionId) ?? 0;
    if (offset > known) this.knownOffsets.set(sessionId, offset);
    for (const key of [sessionId, '*']) {
      for (const listener of this.eventWatchers.get(key) ?? []) {
        try {
          listener(sessionId, offset, ownerId);
        } catch {
          // A subscriber's bug must not break the writer that notified it.
        }
      }
    }
  }

  /** Without cross-process notifications, another process's commit is seen by polling offsets. */
  private watchExternalChanges(): void {
    if (this.stopExternalWatch || this.driver.dialect.crossProcessNotifications) return;
    this.stopExternalWatch = this.driver.onExternalChange(() => void this.pollSubscribedOffsets());
  }

  private async pollSubscribedOffsets(): Promise<void> {
    if (this.eventWatchers.size === 0) return;
    const watchAll = this.eventWatchers.has('*');
    const ids = [...this.eventWatchers.keys()].filter((key) => key !== '*');
    const rows = watchAll
      ? await this.driver.query<{ id: string; last_event_offset: number }>(
          `SELECT id, last_event_offset FROM sessions WHERE updated_at > ${this.ctx.now} - 60000`,
        )
      : await this.driver.query<{ id: string; last_event_offset: number }>(
          `SELECT id, last_event_offset FROM sessions WHERE id IN (${ids.map(() => '?').join(', ')})`,
          ids,
        );
    for (const row of rows) {
      const offset = Number(row.last_event_offset);
      if (offset > (this.knownOffsets.get(row.id) ?? 0)) this.emitEvents(row.id, offset);
    }
  }
}
