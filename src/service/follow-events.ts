import { raceAbort } from '../shared/concurrency.ts';
import { isQuarryError } from '../shared/errors.ts';
import type { StoredEvent } from '../shared/events.ts';
import { withRetry } from '../shared/retry.ts';
import type { OwnerStore } from '../store/owner-store.ts';
import type { Session } from '../store/store.ts';

/** What following needs of a store: reading a session's events and hearing of new ones. */
export type EventLog = Pick<OwnerStore, 'readEvents' | 'subscribe'>;

export interface FollowEventsOptions {
  /** Start after this offset (0: from the beginning). */
  after?: number;
  signal?: AbortSignal;
  /** Look again at least this often even without a notification. Default 2 s. */
  pollMs?: number;
}

/**
 * A read a follower makes, waited out while the store is away (a database restart or outage): the
 * follower pauses and goes on where it was once the store answers, instead of ending its stream.
 */
function untilAnswered<T>(read: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  // A read that never answers (a connection gone silent) is not waited for once the follower stops.
  const attempt = signal ? () => raceAbort(read(), signal) : read;
  return withRetry(attempt, { attempts: Number.POSITIVE_INFINITY, baseDelayMs: 250, maxDelayMs: 5_000, signal });
}

/**
 * A session's events from an offset on, then live as they are committed (by any process sharing the
 * store), until the signal aborts. Gapless and in order: events are read from the store, and
 * notifications only say when to read.
 */
export async function* followEvents(
  store: EventLog,
  sessionId: string,
  options: FollowEventsOptions = {},
): AsyncGenerator<StoredEvent> {
  let offset = options.after ?? 0;
  let dirty = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  const unsubscribe = store.subscribe(sessionId, poke);
  options.signal?.addEventListener('abort', poke);
  try {
    while (!options.signal?.aborted) {
      dirty = false;
      const events = await untilAnswered(
        () => store.readEvents(sessionId, { after: offset, limit: 500 }),
        options.signal,
      ).catch((error: unknown) => {
        if (options.signal?.aborted) return [];
        throw error;
      });
      for (const event of events) {
        offset = event.offset;
        yield event;
      }
      if (events.length === 500 || dirty) continue;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, options.pollMs ?? 2_000);
        timer.unref();
      });
      clearTimeout(timer);
      wake = null;
    }
  } finally {
    unsubscribe();
    options.signal?.removeEventListener('abort', poke);
  }
}

/** A change to one of a user's sessions, as their live session list hears it. */
export type SessionChange = { type: 'session'; session: Session } | { type: 'session-delete'; id: string };

/** What following a user's sessions needs of a store. */
export type SessionLog = Pick<OwnerStore, 'getSession' | 'subscribe'>;

/**
 * Sessions are read at most this often: a running session writes many events a second. A change after
 * a quiet moment is read at once (a new session shows up without delay); the ones that follow it
 * within this time are gathered and read together.
 */
const SESSION_CHANGE_BATCH_MS = 250;

/**
 * Every change to the user's sessions, live, until the signal aborts: a session created, renamed,
 * moving on or changing status, and a session deleted. Each change is read from the store (the
 * notification only says which session); other users' sessions are never read, and never said to
 * be deleted.
 */
export async function* followSessionChanges(
  store: SessionLog,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<SessionChange> {
  const dirty = new Map<string, boolean>();
  let wake: (() => void) | null = null;
  const unsubscribe = store.subscribe('*', (sessionId, offset) => {
    // Offset 0 says the session was deleted; a later event means it lives again (an import).
    dirty.set(sessionId, offset === 0);
    wake?.();
  });
  const stop = () => wake?.();
  options.signal?.addEventListener('abort', stop);
  let lastRead = Number.NEGATIVE_INFINITY;
  try {
    while (!options.signal?.aborted) {
      if (dirty.size === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
        continue;
      }
      const wait = lastRead + SESSION_CHANGE_BATCH_MS - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
      lastRead = performance.now();
      const batch = [...dirty];
      dirty.clear();
      for (const [id, deleted] of batch) {
        const session = await untilAnswered(() => store.getSession(id), options.signal).catch((error: unknown) => {
          if (isQuarryError(error, 'SESSION_NOT_FOUND') || options.signal?.aborted) return null;
          throw error;
        });
        if (session) yield { type: 'session', session };
        else if (deleted) yield { type: 'session-delete', id };
      }
    }
  } finally {
    unsubscribe();
    options.signal?.removeEventListener('abort', stop);
  }
}

/**
 * The offset just before the current run's first event: following from there, a client that joins
 * a running run (a retried request) gets all of its text.
 */
export async function runBeginning(store: EventLog, session: Session): Promise<number> {
  const runId = session.currentRunId;
  for (let from = 0; runId && from < session.lastEventOffset; ) {
    const events = await store.readEvents(session.id, { after: from, limit: 1000 });
    if (events.length === 0) break;
    const start = events.find((event) => event.type === 'run-start' && event.data.runId === runId);
    if (start) return start.offset - 1;
    from = events.at(-1)!.offset;
  }
  return session.lastEventOffset;
}
