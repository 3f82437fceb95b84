import { sessionNotFound } from '../../shared/errors.ts';
import type { EventInput, Fence, OwnerScope, StoredEvent } from '../store.ts';
import { decodeJson, encodeJson, type Statement } from './codec.ts';
import { fenceRefusal, readSession, type SqlContext } from './context.ts';
import {
  EVENTS_CHANNEL,
  eventStatements,
  fenced,
  lockFenced,
  lockSession,
  sessionExists,
  sessionUpdate,
} from './script-parts.ts';
import type { SqlExecutor } from './sql-driver.ts';

/** Channel of "session X has events up to offset N" notifications; payload `sessionId:offset`. */
export { EVENTS_CHANNEL };

/** An event with its number; the pair type/data stays as the writer built it. */
function stored(sessionId: string, offset: number, event: EventInput, createdAt: number): StoredEvent {
  return { sessionId, offset, createdAt, ...event };
}

/**
 * Appends events with consecutive offsets. The offset counter lives on the session row, which the
 * caller has locked (fence or touch), so concurrent appends queue up and never leave gaps.
 */
export async function appendEventsInTx(
  ctx: SqlContext,
  tx: SqlExecutor,
  sessionId: string,
  events: readonly EventInput[],
): Promise<StoredEvent[]> {
  if (events.length === 0) return [];
  const rows = await tx.query<{ last_event_offset: number; now: number }>(
    `UPDATE sessions SET last_event_offset = last_event_offset + ? WHERE id = ? RETURNING last_event_offset, ${ctx.now} AS now`,
    [events.length, sessionId],
  );
  const last = Number(rows[0]!.last_event_offset);
  const first = last - events.length + 1;
  const createdAt = Number(rows[0]!.now);
  const insert = eventsStatement(sessionId, first, events, createdAt);
  await tx.query(insert.sql, insert.params);
  tx.notify(EVENTS_CHANNEL, `${sessionId}:${last}`);
  return events.map((event, index) => stored(sessionId, first + index, event, createdAt));
}

/**
 * The write of events at offsets `first`, `first + 1`, … that the session row already counts
 * (`appendEventsInTx`, or a session made with them): one multi-row insert, one round trip however
 * many events a write carries. `createdAt`: a time, or an SQL expression for the database's clock.
 * Whoever runs it tells listeners (`EVENTS_CHANNEL`).
 */
export function eventsStatement(
  sessionId: string,
  first: number,
  events: readonly EventInput[],
  createdAt: number | { sql: string },
): Statement {
  const time = typeof createdAt === 'number' ? '?' : createdAt.sql;
  return {
    sql: `INSERT INTO events (session_id, event_offset, type, data, created_at) VALUES ${events.map(() => `(?, ?, ?, ?, ${time})`).join(', ')}`,
    params: events.flatMap((event, index) => [
      sessionId,
      first + index,
      event.type,
      encodeJson(event.data ?? null),
      ...(typeof createdAt === 'number' ? [createdAt] : []),
    ]),
  };
}

/** One event, in one script: the session row locked (by its fence when given), counted, the event written. */
export async function appendEvent(
  ctx: SqlContext,
  input: { sessionId: string; fence?: Fence; event: EventInput },
): Promise<StoredEvent> {
  const { sessionId, fence } = input;
  const when = fence ? fenced(fence) : sessionExists(sessionId);
  const [locked, , inserted] = await ctx.driver.script([
    fence ? lockFenced(ctx, fence) : lockSession(ctx, sessionId),
    sessionUpdate(ctx, sessionId, null, 1, when),
    ...eventStatements(ctx, sessionId, [input.event], when),
  ]);
  if (locked!.length === 0) throw fence ? await fenceRefusal(ctx.driver, fence) : sessionNotFound(sessionId);
  const row = inserted![0]!;
  return stored(sessionId, Number(row.event_offset), input.event, Number(row.created_at));
}

export async function readEvents(
  ctx: SqlContext,
  sessionId: string,
  options: { after?: number; limit?: number } & OwnerScope = {},
): Promise<StoredEvent[]> {
  if (options.ownerId !== undefined) await readSession(ctx, ctx.driver, sessionId, options);
  const rows = await ctx.driver.query<Record<string, unknown>>(
    'SELECT * FROM events WHERE session_id = ? AND event_offset > ? ORDER BY event_offset LIMIT ?',
    [sessionId, options.after ?? 0, options.limit ?? 1000],
  );
  if (rows.length === 0 && options.ownerId === undefined) await readSession(ctx, ctx.driver, sessionId);
  // Written through the typed union only (the validating store checks the type), so the pair is sound.
  return rows.map((row) =>
    stored(
      String(row.session_id),
      Number(row.event_offset),
      { type: row.type, data: decodeJson(row.data) ?? null } as EventInput,
      Number(row.created_at),
    ),
  );
}
