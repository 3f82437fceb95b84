import type { EventInput, Fence } from '../store.ts';
import { type BlobToStore, encodeJson } from './codec.ts';
import type { SqlContext } from './context.ts';
import type { ScriptStatement } from './sql-driver.ts';

/**
 * The parts of the writes that run as one script (`SqlDriver.script`): a script has no code between
 * its statements, so each statement carries, in SQL, the condition under which the write it belongs
 * to goes ahead. A condition reads the rows as they are when its statement runs; a script orders its
 * statements so that every one of a write's conditions is read before the statement that changes
 * what it reads (the step's own row comes last).
 */

export const EVENTS_CHANNEL = 'events';

/** An SQL condition and its parameters, in order. */
export interface Condition {
  sql: string;
  params: unknown[];
}

export const all = (...conditions: Condition[]): Condition => ({
  sql: conditions.map((condition) => `(${condition.sql})`).join(' AND '),
  params: conditions.flatMap((condition) => condition.params),
});

export const either = (...conditions: Condition[]): Condition => ({
  sql: conditions.map((condition) => `(${condition.sql})`).join(' OR '),
  params: conditions.flatMap((condition) => condition.params),
});

export const not = (condition: Condition): Condition => ({ sql: `NOT (${condition.sql})`, params: condition.params });

/** The session's lease still has this epoch. */
export const fenced = (fence: Fence): Condition => ({
  sql: 'EXISTS (SELECT 1 FROM sessions WHERE id = ? AND lease_epoch = ? AND lease_owner IS NOT NULL)',
  params: [fence.sessionId, fence.epoch],
});

/** The session exists. */
export const sessionExists = (sessionId: string): Condition => ({
  sql: 'EXISTS (SELECT 1 FROM sessions WHERE id = ?)',
  params: [sessionId],
});

/**
 * The first statement of a fenced script: the session row if the fence holds, locked until the
 * script ends, so every later statement sees the session's journal as the last writer left it.
 */
export function lockFenced(ctx: SqlContext, fence: Fence): ScriptStatement {
  return {
    sql: `SELECT id FROM sessions WHERE id = ? AND lease_epoch = ? AND lease_owner IS NOT NULL${ctx.driver.dialect.rowLock}`,
    params: [fence.sessionId, fence.epoch],
  };
}

/** The same for an unfenced write: the session row, locked, if it exists. */
export function lockSession(ctx: SqlContext, sessionId: string): ScriptStatement {
  return { sql: `SELECT id FROM sessions WHERE id = ?${ctx.driver.dialect.rowLock}`, params: [sessionId] };
}

/**
 * The statements that store these blobs (each once, by hash) and the session's references to them,
 * when `when` holds; in ascending hash order, so two writers of the same new blobs never deadlock.
 */
export function blobStatementsWhen(
  ctx: SqlContext,
  sessionId: string,
  blobs: ReadonlyArray<BlobToStore | null>,
  when: Condition,
): ScriptStatement[] {
  const unique = new Map(blobs.filter((blob) => blob !== null).map((blob) => [blob.hash, blob.data]));
  return [...unique.keys()].sort().flatMap((hash) => [
    {
      sql: `INSERT INTO blobs (hash, size, data, created_at) SELECT ?, ?, ?, ${ctx.now} WHERE ${when.sql}
        ON CONFLICT (hash) DO NOTHING`,
      params: [hash, unique.get(hash)!.byteLength, unique.get(hash)!, ...when.params],
    },
    {
      sql: `INSERT INTO blob_refs (session_id, hash) SELECT ?, ? WHERE ${when.sql} ON CONFLICT (session_id, hash) DO NOTHING`,
      params: [sessionId, hash, ...when.params],
    },
  ]);
}

/** `column = expression` assignments for the session row, with their parameters. */
export type Assignments = Condition;

/**
 * The session row's update, when `when` holds: `updated_at`, the assignments given, and the event
 * counter moved past `events` new offsets (written by `eventStatements` right after it).
 */
export function sessionUpdate(
  ctx: SqlContext,
  sessionId: string,
  assignments: Assignments | null,
  events: number,
  when: Condition,
): ScriptStatement {
  return {
    sql: `UPDATE sessions SET updated_at = ${ctx.now}${assignments ? `, ${assignments.sql}` : ''},
      last_event_offset = last_event_offset + ? WHERE id = ? AND ${when.sql}`,
    params: [...(assignments?.params ?? []), events, sessionId, ...when.params],
  };
}

/**
 * Each event's row at the offsets `sessionUpdate` counted (the last offsets of the session), when
 * `when` holds, each returning its `event_offset` and `created_at`; then the notification that
 * tells listeners (none for no events).
 */
export function eventStatements(
  ctx: SqlContext,
  sessionId: string,
  events: readonly EventInput[],
  when: Condition,
): ScriptStatement[] {
  if (events.length === 0) return [];
  return [
    ...events.map((event, index) => ({
      sql: `INSERT INTO events (session_id, event_offset, type, data, created_at)
        SELECT ?, s.last_event_offset - ?, ?, ?, ${ctx.now} FROM sessions s WHERE s.id = ? AND ${when.sql}
        RETURNING event_offset, created_at`,
      params: [
        sessionId,
        events.length - 1 - index,
        event.type,
        encodeJson(event.data ?? null),
        sessionId,
        ...when.params,
      ],
    })),
    // Told even when the write was refused: a listener then finds nothing new, as after any wake-up.
    {
      sql: "SELECT CAST(? AS TEXT) || ':' || CAST(last_event_offset AS TEXT) AS payload FROM sessions WHERE id = ?",
      params: [sessionId, sessionId],
      notify: EVENTS_CHANNEL,
    },
  ];
}
