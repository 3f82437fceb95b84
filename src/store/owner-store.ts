import { QuarryError } from '../shared/errors.ts';
import { currentTraceContext } from '../shared/tracing.ts';
import type {
  Admission,
  CheckpointSnapshot,
  ClaimSessionInput,
  CreateSessionInput,
  DeleteFinishedOptions,
  DeliverInputInput,
  DeliverInputResult,
  EventListener,
  Fence,
  ForkSessionInput,
  Lease,
  ListSessionsOptions,
  ListStepsOptions,
  Message,
  ReleaseInput,
  Run,
  Session,
  SessionPage,
  SessionSnapshot,
  Source,
  StartRunInput,
  StepDetail,
  StepRecord,
  StepUsageRecord,
  StopResult,
  Store,
  StoredEvent,
  StoreInfo,
  UpdateSessionInput,
} from './store.ts';

/**
 * One user's view of the store: every method acts on that user's sessions only (another user's
 * session is "not found"), and no method takes an owner, so a caller cannot forget it. Routes, CLI
 * commands and service functions get this handle, never the whole `Store`.
 */
export interface OwnerStore {
  readonly ownerId: string;
  info(): StoreInfo;
  createSession(input: Omit<CreateSessionInput, 'ownerId'>): Promise<Session>;
  getSession(sessionId: string): Promise<Session>;
  findSessionByExternalId(externalId: string): Promise<Session | null>;
  listForks(sessionId: string): Promise<Session[]>;
  listSessions(options?: Omit<ListSessionsOptions, 'ownerId'>): Promise<SessionPage>;
  countSessions(): Promise<number>;
  findSessionIds(prefix: string, options?: { limit?: number }): Promise<string[]>;
  updateSession(sessionId: string, patch: UpdateSessionInput): Promise<Session>;
  deleteSession(sessionId: string): Promise<void>;
  setShareLink(sessionId: string, tokenHash: string | null): Promise<number | null>;
  shareLinkOf(sessionId: string): Promise<number | null>;
  listMessages(sessionId: string, options?: { runId?: string; phase?: string }): Promise<Message[]>;
  startRun(input: Omit<StartRunInput, 'ownerId'>): Promise<{ run: Run; message: Message | null }>;
  listRuns(sessionId: string): Promise<Run[]>;
  /** The live journal of the session's current run (empty before its first run). */
  loadCurrentJournal(sessionId: string): Promise<StepRecord[]>;
  listSteps(sessionId: string, options?: ListStepsOptions): Promise<StepDetail[]>;
  listStepUsage(sessionId: string): Promise<StepUsageRecord[]>;
  /** One step of one of the session's runs, with its prompt. */
  getStep(sessionId: string, runId: string, key: string): Promise<StepDetail>;
  listSources(sessionId: string): Promise<Source[]>;
  /** A LangGraph thread's checkpoints as export files carry them (none for a research session). */
  listCheckpointSnapshots(sessionId: string): Promise<CheckpointSnapshot[]>;
  readEvents(sessionId: string, options?: { after?: number; limit?: number }): Promise<StoredEvent[]>;
  /** Wakes the listener when the session has new events (read them with `readEvents`). */
  subscribe(sessionId: string, listener: EventListener): () => void;
  requestStop(sessionId: string, reason?: string): Promise<StopResult>;
  deliverInput(input: Omit<DeliverInputInput, 'ownerId'>): Promise<DeliverInputResult>;
  forkSession(input: Omit<ForkSessionInput, 'ownerId'>): Promise<Session>;
  importSession(snapshot: SessionSnapshot, admission?: Pick<Admission, 'sessions'>): Promise<Session>;
  claimSession(input: Omit<ClaimSessionInput, 'ownerId'>): Promise<Lease>;
  /** Fenced by the lease the caller holds (from `claimSession`). */
  release(lease: Lease, input: ReleaseInput): Promise<Session>;
  /** Fenced by the lease the caller holds (a rewind under a fresh claim). */
  supersedeSteps(fence: Fence, input: Parameters<Store['supersedeSteps']>[1]): Promise<number>;
  deleteFinishedSessions(options: Omit<DeleteFinishedOptions, 'ownerId'>): Promise<{ deleted: number }>;
}

/** The store as `ownerId` sees it. */
export function ownerStore(store: Store, ownerId: string): OwnerStore {
  const scope = { ownerId };
  return {
    ownerId,
    info: () => store.info(),
    // A run remembers the trace of the request that started it (null when tracing is off).
    createSession: (input) =>
      store.createSession({
        ...input,
        ownerId,
        ...(input.run ? { run: { ...input.run, traceContext: currentTraceContext() } } : {}),
      }),
    getSession: (sessionId) => store.getSession(sessionId, scope),
    findSessionByExternalId: (externalId) => store.findSessionByExternalId(externalId, scope),
    listForks: (sessionId) => store.listForks(sessionId, scope),
    listSessions: (options = {}) => store.listSessions({ ...options, ownerId }),
    countSessions: () => store.countSessions(scope),
    findSessionIds: (prefix, options = {}) => store.findSessionIds(prefix, { ...options, ownerId }),
    updateSession: (sessionId, patch) => store.updateSession(sessionId, patch, scope),
    deleteSession: (sessionId) => store.deleteSession(sessionId, scope),
    setShareLink: (sessionId, tokenHash) => store.setShareLink(sessionId, tokenHash, scope),
    shareLinkOf: (sessionId) => store.shareLinkOf(sessionId, scope),
    listMessages: (sessionId, options = {}) => store.listMessages(sessionId, { ...options, ownerId }),
    startRun: (input) => store.startRun({ ...input, ownerId, traceContext: currentTraceContext() }),
    listRuns: (sessionId) => store.listRuns(sessionId, scope),
    async loadCurrentJournal(sessionId) {
      const session = await store.getSession(sessionId, scope);
      return session.currentRunId ? store.loadJournal(session.currentRunId) : [];
    },
    listSteps: (sessionId, options = {}) => store.listSteps(sessionId, { ...options, ownerId }),
    listStepUsage: (sessionId) => store.listStepUsage(sessionId, { ownerId }),
    async getStep(sessionId, runId, key) {
      await store.getSession(sessionId, scope);
      const run = await store.getRun(runId).catch(() => null);
      if (!run || run.sessionId !== sessionId) {
        throw new QuarryError('RUN_NOT_FOUND', `Session ${sessionId} has no run "${runId}".`, { details: { runId } });
      }
      return store.getStep(runId, key);
    },
    listSources: (sessionId) => store.listSources(sessionId, scope),
    listCheckpointSnapshots: (sessionId) => store.listCheckpointSnapshots(sessionId, scope),
    readEvents: (sessionId, options = {}) => store.readEvents(sessionId, { ...options, ownerId }),
    // Deletions name their owner: another user's never reach this user's listeners.
    subscribe: (sessionId, listener) =>
      store.subscribe(sessionId, (id, offset, owner) => {
        if (offset !== 0 || owner === undefined || owner === ownerId) listener(id, offset, owner);
      }),
    requestStop: (sessionId, reason) => store.requestStop(sessionId, { ownerId, reason }),
    deliverInput: (input) => store.deliverInput({ ...input, ownerId }),
    forkSession: (input) => store.forkSession({ ...input, ownerId }),
    importSession: (snapshot, admission) => store.importSession(snapshot, { ownerId, admission }),
    claimSession: (input) => store.claimSession({ ...input, ownerId }),
    release: (lease, input) => store.release(lease, input),
    supersedeSteps: (fence, input) => store.supersedeSteps(fence, input),
    deleteFinishedSessions: (options) => store.deleteFinishedSessions({ ...options, ownerId }),
  };
}
