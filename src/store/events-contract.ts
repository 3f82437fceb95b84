import * as z from 'zod';
import { optional } from 'zod';
import type { StoredEvent } from '../shared/events.ts';
import { event, fence, id, int } from './schema-parts.ts';
import type { CheckedTable, SchemaTable } from './schema-table.ts';
import type { EventInput, Fence, OwnerScope } from './store-entities.ts';

/**
 * Each session's ordered event log and the notifications that something was written, as one of the
 * store's concerns (`Store` extends `EventLog`): the interface and each operation's argument schemas.
 */

/**
 * Listener for new events; `offset` is the newest known offset (a hint; read to be sure). Offset 0
 * says the session was deleted, and then `ownerId` names whose it was.
 */
export type EventListener = (sessionId: string, offset: number, ownerId?: string) => void;

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

/** The EventLog operations' argument schemas, one per positional argument (see `validating-store.ts`). */
export const eventSchemas = {
  appendEvent: [z.object({ sessionId: id(), fence: optional(fence()), event: event() })],
  readEvents: [
    id(),
    optional(z.object({ after: optional(int(0)), limit: optional(int(1, 10_000)), ownerId: optional(id()) })),
  ],
  // Nothing a caller sends to check: listeners.
  subscribe: null,
  onRunnable: null,
} as const satisfies SchemaTable<EventLog>;

/** Each schema checked against its operation's signature: a missing or drifting one does not compile. */
const checkedAgainstEventLog: CheckedTable<EventLog, typeof eventSchemas> = eventSchemas;
void checkedAgainstEventLog;
