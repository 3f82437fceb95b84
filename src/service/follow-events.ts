import type { StoredEvent } from '../shared/events.ts';
import type { OwnerStore } from '../store/owner-store.ts';

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
      const events = await store.readEvents(sessionId, { after: offset, limit: 500 });
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
