import { QuarryError } from '../shared/errors.ts';
import { currentTraceContext } from '../shared/tracing.ts';
import type { EventListener, StepDetail, StepRecord, Store } from './store.ts';

/**
 * The store's operations a user reaches, each by the position of its parameter that carries
 * `ownerId` (its last). `OwnerStore` derives each one's signature from `Store`'s, and a position
 * that is not the last parameter's does not compile.
 */
const scopedAt = {
  createSession: 0,
  getSession: 1,
  findSessionByExternalId: 1,
  listForks: 1,
  listSessions: 0,
  countSessions: 0,
  findSessionIds: 1,
  updateSession: 2,
  deleteSession: 1,
  setShareLink: 2,
  shareLinkOf: 1,
  listMessages: 1,
  startRun: 0,
  listRuns: 1,
  listSteps: 1,
  listStepUsage: 1,
  listSources: 1,
  listCheckpointSnapshots: 1,
  readEvents: 1,
  requestStop: 1,
  deliverInput: 0,
  forkSession: 0,
  importSession: 1,
  claimSession: 0,
  deleteFinishedSessions: 0,
} as const satisfies { [K in keyof Store]?: LastPosition<Store[K]> };

type ScopedName = keyof typeof scopedAt;

/** The parameters with every optional one made required (so the last one can be matched). */
type AllParameters<F> = F extends (...args: infer P) => unknown ? Required<P> : never;
/** The index of an operation's last parameter. */
type LastPosition<F> = AllParameters<F> extends [...infer Head, unknown] ? Head['length'] : never;

/**
 * An operation as one owner calls it: its last parameter without `ownerId` (optional when all that
 * is left is optional; gone when nothing is left).
 */
type Scoped<F> = F extends (...args: infer P) => infer R
  ? Required<P> extends [...infer Head, infer Last]
    ? keyof Omit<Last, 'ownerId'> extends never
      ? (...args: Head) => R
      : Partial<Omit<Last, 'ownerId'>> extends Omit<Last, 'ownerId'>
        ? (...args: [...Head, options?: Omit<Last, 'ownerId'>]) => R
        : (...args: [...Head, input: Omit<Last, 'ownerId'>]) => R
    : never
  : never;

/**
 * One user's view of the store: every method acts on that user's sessions only (another user's
 * session is "not found"), and no method takes an owner, so a caller cannot forget it. Routes, CLI
 * commands and service functions get this handle, never the whole `Store`. Each scoped operation's
 * signature is `Store`'s, without the owner.
 */
export type OwnerStore = { readonly [K in ScopedName]: Scoped<Store[K]> } & Pick<
  Store,
  'info' | 'release' | 'supersedeSteps'
> & {
    readonly ownerId: string;
    /** The live journal of the session's current run (empty before its first run). */
    loadCurrentJournal(sessionId: string): Promise<StepRecord[]>;
    /** One step of one of the session's runs, with its prompt. */
    getStep(sessionId: string, runId: string, key: string): Promise<StepDetail>;
    /** Wakes the listener when the session has new events (read them with `readEvents`). */
    subscribe(sessionId: string, listener: EventListener): () => void;
  };

/** The store as `ownerId` sees it. */
export function ownerStore(store: Store, ownerId: string): OwnerStore {
  const scoped = Object.fromEntries(
    Object.entries(scopedAt).map(([name, position]) => [
      name,
      (...args: unknown[]) => {
        const call = Array.from({ length: position + 1 }, (_, index) => args[index]);
        call[position] = { ...(call[position] as object | undefined), ownerId };
        return (store[name as ScopedName] as (...callArgs: unknown[]) => unknown).apply(store, call);
      },
    ]),
  ) as { [K in ScopedName]: Scoped<Store[K]> };
  const scope = { ownerId };
  return {
    ...scoped,
    ownerId,
    // Passed as they are: the store's description, and writes fenced by the lease the caller holds.
    info: () => store.info(),
    release: (lease, input) => store.release(lease, input),
    supersedeSteps: (fence, input) => store.supersedeSteps(fence, input),
    // A run remembers the trace of the request that started it (null when tracing is off).
    createSession: (input) =>
      scoped.createSession(
        input.run ? { ...input, run: { ...input.run, traceContext: currentTraceContext() } } : input,
      ),
    startRun: (input) => scoped.startRun({ ...input, traceContext: currentTraceContext() }),
    async loadCurrentJournal(sessionId) {
      const session = await store.getSession(sessionId, scope);
      return session.currentRunId ? store.loadJournal(session.currentRunId) : [];
    },
    async getStep(sessionId, runId, key) {
      await store.getSession(sessionId, scope);
      const run = await store.getRun(runId).catch(() => null);
      if (!run || run.sessionId !== sessionId) {
        throw new QuarryError('RUN_NOT_FOUND', `Session ${sessionId} has no run "${runId}".`, { details: { runId } });
      }
      return store.getStep(runId, key);
    },
    // Deletions name their owner: another user's never reach this user's listeners.
    subscribe: (sessionId, listener) =>
      store.subscribe(sessionId, (id, offset, owner) => {
        if (offset !== 0 || owner === undefined || owner === ownerId) listener(id, offset, owner);
      }),
  };
}
